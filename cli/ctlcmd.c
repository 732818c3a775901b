/*
 * ctl.c - `sarnue ctl`: the operator's end of the plugin's control socket (status, reroute,
 * jobs FILE, topology).  It speaks the protocol through ctlclient.c, the same code the filter
 * daemon uses, and turns replies into readable text or, with --json, into JSON for scripts.
 * `jobs FILE` opens FILE here, with the caller's rights, and passes the open file to the plugin.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/promtext.h"
#include "lib/ctlclient.h"
#include "lib/json.h"
#include "lib/numbers.h"

static const char usage[] =
	"NAME\n"
	"    sarnue ctl - talk to the sarnue plugin inside a running OpenSM\n"
	"\n"
	"SYNOPSIS\n"
	"    sarnue ctl [-s PATH] [-t SECONDS] [-j] COMMAND [ARG]\n"
	"\n"
	"DESCRIPTION\n"
	"    Talks to the sarnue plugin inside a running OpenSM through its control socket.\n"
	"\n"
	"COMMANDS\n"
	"    status      engine, time and duration of the last routing, VLs, jobs in the job\n"
	"                map, fall-backs, whether a reroute is pending, update phase\n"
	"    reroute     make OpenSM route again at once (like its console's `reroute`)\n"
	"    jobs FILE   check the job map FILE ('hostname jobid' per line) and, when it\n"
	"                parses, make the plugin route with it from now on, then reroute; a\n"
	"                malformed file is refused with file:line and nothing changes.  FILE\n"
	"                is opened with your rights and its content sent; later edits need\n"
	"                another `jobs` (a regular file of at most 16 MiB)\n"
	"    topology    one line per HCA port: hostname, node GUID, port GUID, leaf switch\n"
	"                GUID\n"
	"    help        the commands the plugin understands\n"
	"    metrics     the status as Prometheus text (sarnue_up, sarnue_routings_total,\n"
	"                sarnue_multicast_refused, ..., sarnue_info with the engine and\n"
	"                phase as labels); with the socket unreachable it prints sarnue_up 0\n"
	"                and exits 4.  For node_exporter's textfile collector, e.g. every\n"
	"                minute: sarnue ctl metrics > DIR/sarnue.prom.tmp && mv ...\n"
	"\n"
	"OPTIONS\n"
	"    -s, --socket PATH     the plugin's socket (default " CTL_DEFAULT_SOCKET ",\n"
	"                          the plugin option ctl_socket)\n"
	"    -t, --timeout SECONDS give up when the plugin does not answer (default 10)\n"
	"    -j, --json            status: print the plugin's JSON as is; other commands:\n"
	"                          print {\"ok\":true|false,\"reply\":\"...\"}\n"
	"    -h, --help            this text\n"
	"    -V, --version         print the version\n"
	"\n"
	"EXIT STATUS\n"
	"    0 done, 1 the plugin refused the command, 2 usage, 3 unreadable FILE, 4 the socket\n"
	"    cannot be reached or did not answer\n";

enum {
	EXIT_UNREACHABLE = 4
};

struct ctl_args {
	const char *socket;
	double timeout;
	int json;
};

static int parse_args(int argc, char **argv, struct ctl_args *a)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->socket = CTL_DEFAULT_SOCKET;
	a->timeout = 10;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:s:t:jhV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			a->socket = optarg;
			break;
		case 't':
			if (num_parse_real(optarg, 0, 3600, &a->timeout) || a->timeout <= 0) {
				cli_usage("ctl",
					  "--timeout: '%s' is not a number of seconds in (0, 3600]",
					  optarg);
				return -1;
			}
			break;
		case 'j':
			a->json = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case 'V':
			exit(cli_version());
		default:
			cli_getopt_error("ctl", c, argv);
			return -1;
		}
	}
	return 0;
}

/*
 * Opens the job map with the caller's rights (the plugin never opens it by name) and names it
 * by its absolute path, which the plugin shows in its log and status.  O_NONBLOCK: a FIFO
 * given by mistake must not hang the open; the plugin takes regular files only.
 */
static int open_job_map(const char *file, char *cmd, size_t size, int *pass_fd)
{
	char path[PATH_MAX];
	struct stat sb;
	int fd;

	fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		cli_error("ctl", "%s: cannot read the job map: %s", file, strerror(errno));
		return EXIT_INPUT;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		cli_error("ctl", "%s: not a regular file", file);
		goto fail;
	}
	if (!realpath(file, path) || strlen(path) + 6 > size) {
		cli_error("ctl", "%s: cannot name the job map by an absolute path", file);
		goto fail;
	}
	strcpy(cmd, "jobs ");
	strcat(cmd, path);
	*pass_fd = fd;
	return 0;
fail:
	close(fd);
	return EXIT_INPUT;
}

/* Builds the command line; for jobs also the open job map to pass along. */
static int build_command(int argc, char **argv, char *cmd, size_t size, int *pass_fd)
{
	const char *verb = argv[0];

	if (!strcmp(verb, "jobs")) {
		if (argc != 2) {
			return cli_usage("ctl", "jobs needs exactly one FILE");
		}
		return open_job_map(argv[1], cmd, size, pass_fd);
	}
	if (strcmp(verb, "status") && strcmp(verb, "reroute") && strcmp(verb, "topology") &&
	    strcmp(verb, "help") && strcmp(verb, "metrics")) {
		return cli_usage("ctl", "unknown command '%s'", verb);
	}
	if (argc != 1) {
		return cli_usage("ctl", "%s takes no argument", verb);
	}
	/* metrics is the status, written for Prometheus on this side. */
	snprintf(cmd, size, "%s", strcmp(verb, "metrics") ? verb : "status");
	return 0;
}

/*
 * Human-readable status: one "key: value" line per JSON field, in the plugin's order; the
 * fields of a nested object get its name as prefix ("update.phase_number"), arrays stay whole.
 */
static void print_status_text(const char *json)
{
	const char *p = json, *q;
	char prefix[32] = "";

	while ((q = strchr(p, '"'))) {
		const char *key = q + 1, *kend = strchr(key, '"'), *v, *vend;
		char label[96];
		int quoted;

		if (memchr(p, '}', (size_t)(q - p)))
			prefix[0] = '\0'; /* the nested object ended before this key */
		if (!kend || kend[1] != ':')
			break;
		v = kend + 2;
		if (*v == '{') {
			snprintf(prefix, sizeof(prefix), "%.*s.", (int)(kend - key), key);
			p = v + 1;
			continue;
		}
		quoted = *v == '"';
		if (quoted) {
			v++;
			for (vend = v; *vend && !(*vend == '"' && vend[-1] != '\\'); vend++)
				;
		} else if (*v == '[') {
			vend = strchr(v, ']');
			vend = vend ? vend + 1 : v + strlen(v);
		} else {
			vend = v + strcspn(v, ",}");
		}
		snprintf(label, sizeof(label), "%s%.*s:", prefix, (int)(kend - key), key);
		printf("%-24s %.*s\n", label, (int)(vend - v), v);
		p = vend + (quoted ? 1 : 0);
	}
}

/* Prints the reply; 0, or -1 when a metrics reply could not be converted. */
static int print_reply(const char *verb, const struct ctl_args *a, const struct ctl_reply *r)
{
	if (r->ok && !strcmp(verb, "metrics")) {
		struct fab_error err = { "" };
		char *text = NULL;
		size_t len = 0;
		FILE *buf = open_memstream(&text, &len);
		int bad = !buf || prom_write_status(r->final, buf, &err);

		/* All or nothing: a scraper must not read half a status as the whole. */
		if (buf && fclose(buf))
			bad = 1;
		if (bad)
			cli_error("ctl", "the plugin's status does not parse: %s",
				  err.msg[0] ? err.msg : "out of memory");
		else
			fputs(text, stdout);
		free(text);
		return bad ? -1 : 0;
	}
	if (a->json) {
		if (r->ok && !strcmp(verb, "status")) {
			printf("%s\n", r->final);
			return 0;
		}
		printf("{\"ok\":%s,\"reply\":", r->ok ? "true" : "false");
		json_write_string(stdout, r->final);
		if (r->data_len) {
			printf(",\"data\":");
			json_write_string(stdout, r->data);
		}
		printf("}\n");
		return 0;
	}
	if (!r->ok) {
		cli_error("ctl", "the plugin refused '%s': %s", verb, r->final);
		return 0;
	}
	if (r->data_len)
		fputs(r->data, stdout);
	if (!strcmp(verb, "status"))
		print_status_text(r->final);
	else
		printf("%s\n", r->final);
	return 0;
}

int ctl_main(int argc, char **argv)
{
	struct fab_error err = { "" };
	struct ctl_reply reply;
	struct ctl_args a = { 0 };
	char cmd[CTL_LINE_MAX];
	int fd, rc, pass_fd = -1;

	if (parse_args(argc, argv, &a))
		return EXIT_USAGE;
	if (optind >= argc) {
		return cli_usage("ctl", "missing COMMAND");
	}
	rc = build_command(argc - optind, argv + optind, cmd, sizeof(cmd), &pass_fd);
	if (rc)
		return rc;
	rc = EXIT_UNREACHABLE;
	fd = ctl_connect(a.socket, a.timeout, &err);
	if (fd < 0 && !strcmp(argv[optind], "metrics"))
		prom_write_down(stdout); /* a scrape should see the plugin down, not nothing */
	if (fd < 0) {
		cli_error("ctl",
			  "cannot reach the plugin: %s (is OpenSM running with "
			  "event_plugin_name sarnue?)",
			  err.msg);
		goto out;
	}
	if (ctl_request_fd(fd, cmd, pass_fd, &reply, &err)) {
		cli_error("ctl", "%s: %s", a.socket, err.msg);
		goto out;
	}
	rc = print_reply(argv[optind], &a, &reply) ? EXIT_UNREACHABLE
	     : reply.ok				   ? 0
						   : EXIT_ROUTING_FAULT;
	ctl_reply_free(&reply);
out:
	if (fd >= 0)
		close(fd);
	if (pass_fd >= 0)
		close(pass_fd);
	return rc;
}
