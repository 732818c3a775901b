/*
 * topo.c - where the hosts sit, for sarnue-filterd: from --fabric (a net file, a subnet.lst or
 * an OpenSM dump directory, loaded as every sarnue program loads a topology and reread when it
 * changes), from Slurm's topology.conf, or from the plugin's `topology` command over the control
 * socket.  The leaf switch of each host is what tells multi-switch jobs apart.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabric/loaders.h"
#include "filterd/filterd_private.h"

/*
 * --fabric as its name says (fabric_load_topology()): a dump directory or a .lst file is a
 * subnet.lst, read with 15 VLs, anything else a net file with 8; LMC 0 either way, since only
 * which leaf each host sits under matters here.  subnet[size] receives the file read.
 */
int load_fabric(const struct filterd_args *a, struct fabric *f, char *subnet, size_t size,
		struct fab_error *err)
{
	struct topology_opts o = {
		.format = TOPOLOGY_BY_NAME,
		.net = { .lmc = 0, .op_vls = 8 },
		.lst_op_vls = 15,
	};

	fabric_init(f);
	return fabric_load_topology(f, a->fabric, &o, subnet, size, err);
}

static int mtime_of(const char *path, struct timespec *ts)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	*ts = st.st_mtim;
	return 0;
}

static int topo_from_file(struct filterd *d, struct fab_error *err)
{
	char subnet[PATH_MAX];
	struct timespec mt = { 0, 0 };
	enum topology_format kind;
	struct fabric f;
	int ret;

	if (topology_resolve(d->a.fabric, TOPOLOGY_BY_NAME, subnet, sizeof(subnet), &kind) ||
	    mtime_of(subnet, &mt)) {
		fab_error_set(err, "%s: %s", subnet, strerror(errno));
		return -1;
	}
	if (d->have_topo && mt.tv_sec == d->fabric_mtime.tv_sec &&
	    mt.tv_nsec == d->fabric_mtime.tv_nsec)
		return 0;
	if (load_fabric(&d->a, &f, subnet, sizeof(subnet), err)) {
		fabric_free(&f);
		return -1;
	}
	topo_free(&d->topo);
	ret = topo_from_fabric(&d->topo, &f, d->a.match, err);
	fabric_free(&f);
	if (ret)
		return -1;
	d->fabric_mtime = mt;
	d->topo_source = "fabric file";
	if (!d->have_topo || d->polls)
		logmsg(d, "topology from %s: %u hosts, %u HCA ports, %u leaf switches", subnet,
		       topo_hosts(&d->topo), d->topo.ports, d->topo.nleaves);
	d->have_topo = 1;
	return 0;
}

/* The plugin's `topology` command; on failure the last topology stays in use. */
static int topo_from_socket(struct filterd *d, struct fab_error *err)
{
	struct ctl_reply reply;
	struct topo t;
	int fd, ret = -1;

	fd = ctl_connect(d->a.socket, d->a.socket_timeout, err);
	if (fd < 0)
		return -1;
	if (ctl_request(fd, "topology", &reply, err))
		goto out;
	if (!reply.ok) {
		fab_error_set(err, "%s: topology: %s", d->a.socket, reply.final);
		goto free_reply;
	}
	topo_init(&t);
	if (topo_from_ctl(&t, reply.data ? reply.data : "", d->a.socket, err)) {
		topo_free(&t);
		goto free_reply;
	}
	if (!d->have_topo || t.names.n != d->topo.names.n || t.nleaves != d->topo.nleaves)
		logmsg(d, "topology from %s: %u hosts, %u HCA ports, %u leaf switches", d->a.socket,
		       topo_hosts(&t), t.ports, t.nleaves);
	topo_free(&d->topo);
	d->topo = t;
	d->have_topo = 1;
	d->topo_source = "control socket";
	ret = 0;
free_reply:
	ctl_reply_free(&reply);
out:
	close(fd);
	return ret;
}

int update_topology(struct filterd *d, struct fab_error *err)
{
	if (d->a.fabric)
		return topo_from_file(d, err);
	if (d->a.topology_conf) {
		if (d->have_topo)
			return 0;
		if (topo_from_slurm_conf(&d->topo, d->a.topology_conf, err))
			return -1;
		d->have_topo = 1;
		d->topo_source = "topology.conf";
		logmsg(d, "topology from %s: %u hosts, %u leaf switches", d->a.topology_conf,
		       topo_hosts(&d->topo), d->topo.nleaves);
		return 0;
	}
	if (!topo_from_socket(d, err))
		return 0;
	if (!d->have_topo)
		return -1;
	logprio(d, LOG_WARNING, "topology from the control socket failed (%s); using the last one",
		err->msg);
	return 0;
}
