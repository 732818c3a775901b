#!/bin/bash
# sarnue-filterd against a hostile squeue, a script given with --squeue, one poll each
# (--once --dry-run on a generated fabric; neither Slurm nor OpenSM is needed):
#
#   200 MB on stderr        -> bounded memory (run under ulimit -v), first and last line logged
#   stdout past --squeue-max-output -> squeue killed, the poll refused, saying why
#   100 jobs on node[1-1000000]     -> refused at once by the per-poll host budget
#   a NUL or a number as node list  -> refused, naming the job
#   plain JSON                      -> still works
#   long unknown hostnames          -> one bounded log line naming them
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-filterd-in.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
FILTERD=${SARNUE_FILTERD:-$(dirname -- "$SARNUE_BIN")/sarnue-filterd}
NET=$tmp/ft.net
"$SARNUE_BIN" gen fattree2 --leaves 2 --spines 2 --hosts-per-leaf 2 -o "$NET" 2>/dev/null ||
	{ t_fail "sarnue gen"; t_done; exit 1; }

# fake NAME BODY: an squeue script that runs BODY (for --json and for the text format alike).
fake() {
	printf '#!/bin/bash\n%s\n' "$2" >"$tmp/$1"
	chmod +x "$tmp/$1"
}

# poll NAME [OPTIONS...]: one poll with the fake squeue NAME; log in $tmp/NAME.log, status in $rc.
poll() {
	local name=$1
	shift
	"$FILTERD" --once --dry-run --squeue-format json --squeue "$tmp/$name" --fabric "$NET" \
		-m "$tmp/jobs" "$@" >"$tmp/$name.out" 2>"$tmp/$name.log"
	rc=$?
}

# expect_poll NAME STATUS PATTERN [OPTIONS...]
expect_poll() {
	local name=$1 want=$2 pattern=$3
	shift 3
	poll "$name" "$@"
	if [[ $rc == "$want" ]] && grep -qE -- "$pattern" "$tmp/$name.log"; then
		t_ok "$name: exit $want and /$pattern/"
	else
		t_fail "$name: expected exit $want and /$pattern/, got $rc: $(tail -c 400 "$tmp/$name.log")"
	fi
}

job='{"job_id": 7, "job_state": "RUNNING", "partition": "p", "time_limit": 60, "nodes": '
fake good "echo '{\"jobs\": [$job\"node[0002-0003]\"}]}'"
expect_poll good 0 "1 multi-switch on 2 hosts; reroute"
t_grep "good: the dry run prints the job map" "^node0002 7$" "$tmp/good.out"

# Six unknown hostnames of 300 characters each: the log line that lists them stops at its
# buffer (it once wrote past it), and the job's known hosts still make the job map.
long=$(printf 'h%.0s' {1..300})
names=node0002,node0003
for i in 1 2 3 4 5 6; do names+=",$i$long"; done
fake longnames "echo '{\"jobs\": [$job\"$names\"}]}'"
expect_poll longnames 0 "6 hostname\(s\) of running jobs not in the fabric"
t_grep "longnames: the known hosts still make the job map" "^node0003 7$" "$tmp/longnames.out"
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$tmp/longnames.log")
t_expect "longnames: no log line past 1,200 characters (longest $longest)" test "$longest" -le 1200

# 200 MB through the pipe (8333334 lines of 24 bytes between one of 31 and one of 30), yet the daemon stays within 100 MB of address space: it
# keeps the first line and the last 64 KiB.  Buffering stderr whole ran out of it.
fake flood 'echo "squeue: error: the first words" >&2
yes "squeue: error: flooding" | head -n 8333334 >&2
echo "squeue: error: the last words" >&2
exit 1'
expect_poll flood 1 "exit status 1: squeue: error: the first words \.\.\. squeue: error: the last words \(200000077 bytes on stderr\)"
(ulimit -v 100000 && "$FILTERD" --once --dry-run --squeue-format json --squeue "$tmp/flood" \
	--fabric "$NET" -m "$tmp/jobs" >/dev/null 2>"$tmp/flood-ulimit.log")
t_grep "flood: logged within 100 MB of address space" "the last words \(200000077 bytes" \
	"$tmp/flood-ulimit.log"

# stdout: up to the limit is read, past it squeue is killed without waiting for its end.
fake big "printf '{\"jobs\": [$job\"node0001\"}]'; head -c 900000 /dev/zero | tr '\\0' ' '; echo '}'"
expect_poll big 0 "poll 1: .*1 single-switch" --squeue-max-output 1
fake huge "printf '{\"jobs\": ['; head -c 3000000 /dev/zero | tr '\\0' ' '; sleep 30"
start=$SECONDS
expect_poll huge 1 "huge --json: printed more than --squeue-max-output \(1 MiB\); killed, output refused" \
	--squeue-max-output 1
t_expect "huge: refused without waiting for squeue to end" test $((SECONDS - start)) -lt 20
expect_poll good 2 "--squeue-max-output: bad value '0'" --squeue-max-output 0

# A hundred node[1-1000000] lists: each within the per-list limit, together far beyond the
# per-poll budget.  Expanding them took half a minute and 1.5 GB.
fake many "printf '{\"jobs\": ['
for i in \$(seq 100); do
	((i > 1)) && printf ', '
	printf '{\"job_id\": %d, \"job_state\": \"RUNNING\", \"time_limit\": 60, \"nodes\": \"node[1-1000000]\"}' \$i
done
echo ']}'"
start=$SECONDS
expect_poll many 1 "error: the running jobs' node lists name more than 4194304 hosts together, the most one poll expands \(job 5 passes it\)"
t_expect "many: refused within 10 s" test $((SECONDS - start)) -lt 10
fake wide "echo '{\"jobs\": [$job\"a[1-2000]b[1-2000]\"}]}'"
expect_poll wide 1 "job 7 node list 'a\[1-2000\]b\[1-2000\]': expands to more than 1048576 hosts"

# Values Slurm never writes: the poll is refused naming the job, nothing is sent.
fake nul "echo '{\"jobs\": [$job\"node0002\\u0000,node0003\"}]}'"
expect_poll nul 1 'job 7: "nodes" contains a NUL character; nothing changes'
fake number "echo '{\"jobs\": [$job 42}]}'"
expect_poll number 1 'job 7: "nodes" is a number, expected a string'
fake null "echo '{\"jobs\": [$job null}]}'"
expect_poll null 1 'job 7: "nodes" is missing or null, but the job is RUNNING'
t_expect "no job map printed for refused polls" \
	test -z "$(cat "$tmp"/{flood,huge,many,nul,number,null}.out)"
# Log priorities: a failed poll is an error, a good one information.  On a terminal or a file
# lines carry a UTC timestamp and the level as a word; on the journal (JOURNAL_STREAM names
# stderr) or with --log-format=plain no timestamp of their own, and on the journal the
# priority as journald's "<N>" prefix (3 error, 4 warning, 6 info).
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z '
t_grep "text log: a failed poll is an error line with a timestamp" \
	"${stamp}sarnue-filterd: error: poll 1: " "$tmp/nul.log"
poll good
t_grep "text log: a good poll has no level word" "${stamp}sarnue-filterd: poll 1: " "$tmp/good.log"
poll good --log-format plain
t_grep "--log-format plain: no timestamp" "^sarnue-filterd: poll 1: " "$tmp/good.log"
poll nul --log-format=plain
t_grep "--log-format plain: the level stays" "^sarnue-filterd: error: poll 1: " "$tmp/nul.log"
# journal FAKE: one poll with stderr on a file that JOURNAL_STREAM names, as systemd does.
journal() {
	: >"$tmp/$1.journal"
	JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/$1.journal") "$FILTERD" --once --dry-run \
		--squeue-format json --squeue "$tmp/$1" --fabric "$NET" -m "$tmp/jobs" \
		>/dev/null 2>>"$tmp/$1.journal"
}
journal nul
t_grep "journal: a failed poll at priority 3, no timestamp or name" "^<3>poll 1: " "$tmp/nul.journal"
journal good
t_grep "journal: a good poll at priority 6" "^<6>poll 1: " "$tmp/good.journal"
fake unknown "echo '{\"jobs\": [$job\"node0002,ghost\"}]}'"
journal unknown
t_grep "journal: unknown hostnames are a warning" "^<4>1 hostname\\(s\\) of running jobs not in the fabric" "$tmp/unknown.journal"
JOURNAL_STREAM=1:1 "$FILTERD" --once --dry-run --squeue-format json --squeue "$tmp/good" \
	--fabric "$NET" -m "$tmp/jobs" >/dev/null 2>"$tmp/other.log"
t_grep "JOURNAL_STREAM naming another stream is not the journal" "${stamp}sarnue-filterd: poll 1: " "$tmp/other.log"
# --metrics-file: Prometheus text after the poll, for node_exporter's textfile collector; a
# failed poll counts as an error and its decision, and the file parses as the exposition format.
poll good --metrics-file "$tmp/good.prom"
t_grep "metrics: one poll, ok" "^sarnue_filterd_last_poll_ok 1$" "$tmp/good.prom"
t_grep "metrics: the multi-switch job and its hosts" \
	"^sarnue_filterd_jobs_multi_switch 1$" "$tmp/good.prom"
t_grep "metrics: 2 hosts of multi-switch jobs" "^sarnue_filterd_multi_switch_hosts 2$" "$tmp/good.prom"
t_grep "metrics: the decision counted" \
	'^sarnue_filterd_decisions_total\{decision="reroute"\} 1$' "$tmp/good.prom"
poll nul --metrics-file "$tmp/nul.prom"
t_grep "metrics: a failed poll is an error" "^sarnue_filterd_poll_errors_total 1$" "$tmp/nul.prom"
t_grep "metrics: and its decision" '^sarnue_filterd_decisions_total\{decision="error"\} 1$' \
	"$tmp/nul.prom"
t_expect "metrics: every sample has HELP and TYPE, names and values well formed" awk '
	/^# HELP sarnue_filterd_[a-z_]+ / { help[$3] = 1; next }
	/^# TYPE sarnue_filterd_[a-z_]+ (gauge|counter)$/ { type[$3] = 1; next }
	{ name = $1; sub(/\{.*/, "", name)
	  if (!(name in help) || !(name in type) || $NF !~ /^-?[0-9.e+]+$/) bad = 1; n++ }
	END { exit bad || n < 10 }' "$tmp/good.prom"
t_expect "metrics: the sample Grafana dashboard queries only the daemon's metrics" python3 -c '
import json, re, sys
dash = json.load(open(sys.argv[1]))
have = {l.split("{")[0].split()[0] for l in open(sys.argv[2]) if l[0] != "#"}
used = {n for p in dash["panels"] for t in p["targets"]
        for n in re.findall(r"sarnue_filterd_[a-z_]+", t["expr"])}
missing = used - have
print(" ".join(sorted(missing)), file=sys.stderr)
sys.exit(1 if missing or len(used) < 5 else 0)' "$SARNUE_SRCDIR/doc/grafana/sarnue-dashboard.json" \
	"$tmp/good.prom"
poll good --metrics-file "$tmp/nowhere/x.prom"
t_grep "metrics: an unwritable file is an error in the log" "cannot write metrics .*nowhere/x.prom" \
	"$tmp/good.log"
t_done
