/*
 * traffic_estimate.c - a traffic matrix estimated from port counters (traffic.h): what each
 * host sent and received, as the switch port facing it counted, spread over the pairs of each
 * job by a gravity model.  The plugin feeds it OpenSM's PerfMgr counters (traffic=perfmgr,
 * plugin/perfmgr.c); the result is a struct traffic like a file's, bound and weighed by
 * traffic.c, so the engines see one kind of matrix whatever its source.
 */
#include <stdlib.h>
#include <string.h>

#include "fabric/traffic.h"

#define ESTIMATE_NAME "PerfMgr estimate"
/* A pair's bytes are kept below this, far beyond any window's traffic, so they convert. */
#define ESTIMATE_MAX_BYTES 1e18

struct host_bytes {
	double sent, recv;
	int switch_side; /* counted by the switch port facing the host */
};

struct job_members {
	uint32_t njobs;
	uint32_t *off;	  /* [njobs + 1] into node */
	uint32_t *node;	  /* members of each job */
	uint32_t *shares; /* [nnodes]: jobs a node is in (its bytes split over them) */
};

static void members_free(struct job_members *m)
{
	free(m->off);
	free(m->node);
	free(m->shares);
	memset(m, 0, sizeof(*m));
}

static int map_nodes(const struct fabric *f, struct fab_guid_map *map)
{
	uint32_t n;

	for (n = 0; n < f->nnodes; n++)
		if (fab_guid_map_put(map, f->nodes[n].guid, n))
			return -1;
	return 0;
}

/* One counter onto the host whose link it counts; 1 when it is of a host's link. */
static int add_counter(const struct fabric *f, const struct fab_guid_map *map,
		       const struct traffic_counter *c, struct host_bytes *hb)
{
	uint32_t node = fab_guid_map_get(map, c->guid), pi, remote, host;

	if (node == FAB_NONE || c->port == 0 || c->port > f->nodes[node].nports)
		return 0;
	pi = fabric_port_index(f, node, c->port);
	if (pi == FAB_NONE)
		return 0;
	if (!fabric_is_switch(f, node)) {
		if (!hb[node].switch_side) {
			hb[node].sent += (double)c->xmit;
			hb[node].recv += (double)c->rcv;
		}
		return 1;
	}
	remote = f->ports[pi].remote;
	if (remote == FAB_NONE || fabric_is_switch(f, f->ports[remote].node))
		return 0;
	host = f->ports[remote].node;
	if (!hb[host].switch_side) {
		/* The switch's view wins over the host's own: drop what the host reported. */
		hb[host].switch_side = 1;
		hb[host].sent = hb[host].recv = 0;
	}
	/* What the switch received from the host the host sent, and the other way round. */
	hb[host].sent += (double)c->rcv;
	hb[host].recv += (double)c->xmit;
	return 1;
}

static int busy(const struct host_bytes *hb)
{
	return hb->sent > 0 || hb->recv > 0;
}

/* The members of each job: the job map's jobs, or every busy host as one job. */
static int collect_members(const struct fabric *f, const struct job_map *jobs,
			   const struct host_bytes *hb, struct job_members *m)
{
	uint32_t n, k, nj, i, *fill = NULL;
	const uint32_t *js;

	m->njobs = jobs ? jobs->njobs : 1;
	m->off = calloc((size_t)m->njobs + 1, sizeof(*m->off));
	m->shares = calloc(f->nnodes ? f->nnodes : 1, sizeof(*m->shares));
	if (!m->off || !m->shares)
		return -1;
	for (n = 0; n < f->nnodes; n++) {
		if (fabric_is_switch(f, n) || !busy(&hb[n]))
			continue;
		if (!jobs) {
			m->shares[n] = 1;
			m->off[1]++;
			continue;
		}
		js = job_map_node_jobs(jobs, n, &nj);
		m->shares[n] = nj;
		for (i = 0; i < nj; i++)
			m->off[js[i] + 1]++;
	}
	for (k = 0; k < m->njobs; k++)
		m->off[k + 1] += m->off[k];
	m->node = malloc(((size_t)m->off[m->njobs] + 1) * sizeof(*m->node));
	fill = malloc(((size_t)m->njobs + 1) * sizeof(*fill));
	if (!m->node || !fill) {
		free(fill);
		return -1;
	}
	memcpy(fill, m->off, (size_t)m->njobs * sizeof(*fill));
	for (n = 0; n < f->nnodes; n++) {
		if (!m->shares[n])
			continue;
		if (!jobs) {
			m->node[fill[0]++] = n;
			continue;
		}
		js = job_map_node_jobs(jobs, n, &nj);
		for (i = 0; i < nj; i++)
			m->node[fill[js[i]]++] = n;
	}
	free(fill);
	return 0;
}

/* The gravity model inside one job; *added counts the pairs it gave. */
static int estimate_job(struct traffic *t, const struct host_bytes *hb, const uint32_t *member,
			uint32_t k, const uint32_t *shares, const struct host_lookup *h,
			uint32_t *added, struct fab_error *err)
{
	double recv_total = 0;
	uint32_t a, b;

	for (a = 0; a < k; a++)
		recv_total += hb[member[a]].recv / shares[member[a]];
	for (a = 0; a < k; a++) {
		uint32_t s = member[a];
		double sent = hb[s].sent / shares[s];
		double others = recv_total - hb[s].recv / shares[s];
		size_t slen, dlen;
		const char *sname = host_lookup_name(h, s, &slen);

		if (sent <= 0 || others <= 0 || !sname)
			continue;
		for (b = 0; b < k; b++) {
			uint32_t d = member[b];
			double bytes = sent * (hb[d].recv / shares[d]) / others + 0.5;
			const char *dname = host_lookup_name(h, d, &dlen);

			if (d == s || bytes < 1.0 || !dname)
				continue;
			if (bytes > ESTIMATE_MAX_BYTES)
				bytes = ESTIMATE_MAX_BYTES;
			if (t->npairs >= TRAFFIC_ESTIMATE_MAX_PAIRS) {
				fab_error_set(err, "%s: more than %u host pairs", ESTIMATE_NAME,
					      TRAFFIC_ESTIMATE_MAX_PAIRS);
				return -1;
			}
			if (traffic_add(t, sname, slen, dname, dlen, (uint64_t)bytes, 0,
					ESTIMATE_NAME, err))
				return -1;
			(*added)++;
		}
	}
	return 0;
}

static void count_hosts(const struct fabric *f, const struct host_bytes *hb,
			struct traffic_estimate_report *rep)
{
	double sent = 0;
	uint32_t n;

	for (n = 0; n < f->nnodes; n++) {
		rep->hosts_sent += hb[n].sent > 0;
		rep->hosts_received += hb[n].recv > 0;
		sent += hb[n].sent;
	}
	rep->sent = (uint64_t)(sent < ESTIMATE_MAX_BYTES ? sent : ESTIMATE_MAX_BYTES);
}

int traffic_estimate(struct traffic *t, const struct fabric *f, const struct traffic_counter *c,
		     size_t n, const struct job_map *jobs, enum job_host_match match,
		     const struct node_name_map *names, struct traffic_estimate_report *rep,
		     struct fab_error *err)
{
	struct host_bytes *hb = calloc(f->nnodes ? f->nnodes : 1, sizeof(*hb));
	struct host_lookup *h = host_lookup_new(f, match, names);
	struct job_members m = { 0 };
	struct fab_guid_map map = { 0 };
	uint32_t j, added;
	size_t i;
	int rc = -1;

	traffic_free(t);
	memset(rep, 0, sizeof(*rep));
	if (!hb || !h || map_nodes(f, &map)) {
		fab_error_set(err, "%s: out of memory", ESTIMATE_NAME);
		goto out;
	}
	for (i = 0; i < n; i++)
		rep->counters_used += (uint32_t)add_counter(f, &map, &c[i], hb);
	count_hosts(f, hb, rep);
	if (collect_members(f, jobs && jobs->node_off ? jobs : NULL, hb, &m)) {
		fab_error_set(err, "%s: out of memory", ESTIMATE_NAME);
		goto out;
	}
	for (j = 0; j < m.njobs; j++) {
		added = 0;
		if (estimate_job(t, hb, m.node + m.off[j], m.off[j + 1] - m.off[j], m.shares, h,
				 &added, err))
			goto out;
		rep->jobs += added > 0;
	}
	rc = 0;
out:
	fab_guid_map_free(&map);
	if (rc)
		traffic_free(t);
	members_free(&m);
	host_lookup_free(h);
	free(hb);
	return rc;
}
