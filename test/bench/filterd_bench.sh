#!/bin/bash
# filterd_bench.sh - how long sarnue-filterd takes for one poll plus decision with 10,000
# running jobs on 20,000 hosts, without Slurm's own time: a synthetic `squeue --json` answer
# (as verbose as Slurm 22.05's, some 3 KB per job) is served by a script that only cats it,
# and the figures are the daemon's own: total poll time, of which squeue (the cat) took.
#
#   test/bench/filterd_bench.sh [JOBS [HOSTS]]        (default 10000 20000)
#
# Two polls: the first finds every job new (reroute decided, job map written; no plugin is
# running, so the handoff is only attempted), the second starts from that job map (no change).
set -eu
jobs=${1:-10000}
hosts=${2:-20000}
top=$(cd -- "$(dirname -- "$0")/../.." && pwd)
bin=${SARNUE_BIN:-$top/sarnue}
filterd=${SARNUE_FILTERD:-$(dirname -- "$bin")/sarnue-filterd}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-fbench.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

"$bin" gen fattree --radix 48 --hosts "$hosts" --levels 3 -o "$tmp/fabric.net" 2>/dev/null

# Jobs of 1, 2 or 3 hosts (mean 2): odd jobs on a range of consecutive hosts (mostly one
# leaf), even jobs on hosts a third of the fabric apart (other leaves: multi-switch).  Filler members stand for the ~100 fields Slurm prints.
awk -v jobs="$jobs" -v hosts="$hosts" 'BEGIN {
	filler = ""
	for (f = 0; f < 90; f++)
		filler = filler sprintf("\"field_%02d\": %s, ", f, f % 3 ? f * 1000 : "\"some text value\"")
	printf "{\"meta\": {\"plugin\": {\"type\": \"openapi/v0.0.38\"}}, \"errors\": [], \"jobs\": [\n"
	h = 1
	for (j = 1; j <= jobs; j++) {
		n = 1 + j % 3
		if (h + n - 1 > hosts) h = 1
		# Even jobs get hosts far apart (other leaves), odd ones a contiguous range.
		step = j % 2 ? 1 : int(hosts / 3)
		nodes = ""
		alloc = ""
		for (k = 0; k < n; k++) {
			name = sprintf("node%04d", (h + k * step - 1) % hosts + 1)
			nodes = nodes (k ? "," : "") name
			alloc = alloc sprintf("%s{\"nodename\": \"%s\", \"cpus_used\": 1}", k ? ", " : "", name)
		}
		if (step == 1 && n > 1) nodes = sprintf("node[%04d-%04d]", h, h + n - 1)
		printf "%s{\"job_id\": %d, \"job_state\": \"RUNNING\", \"partition\": \"batch\", " \
			"\"time_limit\": %d, %s\"nodes\": \"%s\", \"job_resources\": {\"nodes\": \"%s\", " \
			"\"allocated_nodes\": [%s]}}\n", (j > 1 ? "," : ""), j, 60 + j % 600, filler, nodes, nodes, alloc
		h += n
	}
	printf "]}\n"
}' >"$tmp/squeue.json"
printf '#!/bin/sh\nexec cat %s\n' "$tmp/squeue.json" >"$tmp/squeue"
chmod +x "$tmp/squeue"

echo "filterd bench: $jobs running jobs on $hosts hosts, squeue JSON $(($(wc -c <"$tmp/squeue.json") / 1024)) KiB"
for run in 1 2; do
	"$filterd" --once --fabric "$tmp/fabric.net" --squeue "$tmp/squeue" --socket "$tmp/none.sock" \
		--job-map "$tmp/jobs" --log "$tmp/log.$run" || true
	line=$(grep ' poll 1:' "$tmp/log.$run")
	total=$(sed -n 's/.* poll 1: \([0-9.]*\) s (squeue \([0-9.]*\) s.*/\1/p' <<<"$line")
	sq=$(sed -n 's/.* poll 1: \([0-9.]*\) s (squeue \([0-9.]*\) s.*/\2/p' <<<"$line")
	decision=$(sed -n 's/.* on [0-9]* hosts[^;]*; \([a-z ]*\):.*/\1/p' <<<"$line")
	printf '  poll %d: %s s in all, squeue (cat) %s s, parsing + filter + decision %s s; decision: %s\n' \
		"$run" "$total" "$sq" "$(awk -v t="$total" -v s="$sq" 'BEGIN { printf "%.3f", t - s }')" "$decision"
done
grep -h ' poll 1:' "$tmp/log.2" | sed 's/^/  log: /'
