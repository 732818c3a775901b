#!/bin/bash
# Fuzzes every reader of outside input (test/fuzz/fuzz_inputs.c) with libFuzzer, AddressSanitizer
# and UndefinedBehaviorSanitizer.  Run after `make` from the top of the tree:
#
#   test/fuzz/run.sh [SECONDS] [WORKDIR]
#
# SECONDS (default 300) bounds the run; WORKDIR (default a new temp dir) keeps the corpus, so a
# second run with the same WORKDIR goes on where the first stopped.  Seeds: the test fabrics,
# their routing dumps from `sarnue route`, and a sample of each Slurm output, option line, job
# map, control reply and MAD, and every input that once failed (test/fuzz/regress, its first
# byte picks the reader).  An input that crashes, trips a sanitizer, hangs for 10 s or makes
# an engine return tables the verifier rejects is saved as WORKDIR/crash-* (or timeout-*) and
# the script exits 1; replay it with WORKDIR/fuzz_inputs FILE.  Exit status 2: it could not
# build or start.
#
# make check runs it for a minute (test/integration/fuzz_inputs.sh).  The environment may name
# the built sarnue (SARNUE_BIN, default the one at the top of the tree; configure's Makefile
# is read from beside it) and fix libFuzzer's random seed (SARNUE_FUZZ_SEED).
set -u
top=$(cd -- "$(dirname -- "$0")/../.." && pwd)
bin=${SARNUE_BIN:-$top/sarnue}
seconds=${1:-300}
work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/sarnue-fuzz.XXXXXX")}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [WORKDIR]" >&2; exit 2; }
command -v clang >/dev/null ||
	{ echo "fuzz: clang is needed (apt-get install clang libclang-rt-dev)" >&2; exit 2; }
[[ -x $bin ]] || { echo "fuzz: run make first: $bin is missing" >&2; exit 2; }
mkdir -p "$work/corpus" || exit 2
echo "fuzz: working in $work"

core=(lib/*.c fabric/*.c check/*.c engines/*.c engines/*/*.c update/acks.c update/wire.c filterd/slurmjobs.c
	filterd/jobfilter.c)
# METIS as configure found it: the same layers as the built tools.
read -r -a metis <<<"$(sed -n 's/^METIS_\(CPPFLAGS\|LIBS\) = //p' "$(dirname -- "$bin")/Makefile" |
	tr '\n' ' ')"
(cd "$top" && clang -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -D_GNU_SOURCE -I. \
	test/fuzz/fuzz_inputs.c "${core[@]}" "${metis[@]}" -lm -lpthread \
	-o "$work/fuzz_inputs") || { echo "fuzz: build failed" >&2; exit 2; }

# seed KIND NAME: stdin, prefixed with the byte that selects the reader (see enum kind).
seed() {
	{ printf "\\x$(printf %02x "$1")"; cat; } >"$work/corpus/seed-$2"
}
net=$top/test/lib/nets/ring5.net
"$bin" route -e sar-nue -O nue_vls=2 --vls 8 "$net" -o "$work/dumps" >/dev/null ||
	{ echo "fuzz: sarnue route $net failed" >&2; exit 2; }
for f in "$top"/test/lib/nets/*.net; do
	seed 8 "net-$(basename -- "$f")" <"$f"
	seed $((8 + 16 * 3)) "net-vls-$(basename -- "$f")" <"$f"
done
"$bin" gen torus --dims 3x3 --hosts-per-switch 1 --remove-links 10% --seed 1 2>/dev/null |
	seed 8 net-torus
"$bin" gen dragonfly --a 3 --p 1 --h 1 2>/dev/null | seed $((8 + 16 * 5)) net-dragonfly
seed 9 subnet <"$work/dumps/opensm-subnet.lst"
seed 10 fdbs <"$work/dumps/opensm.fdbs"
seed $((10 + 16)) path-sl <"$work/dumps/sarnue-path-sl.dump"
seed $((10 + 32)) sl2vl <"$work/dumps/sarnue-sl2vl.dump"
printf 'node[0001-0004,0010],n[1-3]x,h%s' '[01-02]-ib' | seed 0 hostlist
printf '{"jobs": [{"job_id": 11, "job_state": "RUNNING", "nodes": "node[1-2]", "partition": "all", "time_limit": 60}, {"job_id": 12, "job_state": ["RUNNING"], "nodes": "node3", "time_limit": {"set": true, "infinite": false, "number": 5}}]}' |
	seed 1 squeue-json
# What sarnue-filterd now refuses: a NUL in a node list, wrong types, a hundred huge lists.
printf '{"jobs": [{"job_id": 7, "job_state": "RUNNING", "nodes": "n[1-2]\\u0000,n3"}, {"job_id": "8", "job_state": ["RUNNING"], "nodes": 42, "partition": null}]}' |
	seed 1 squeue-json-hostile
for i in $(seq 100); do printf '%d RUNNING b 1:00:00 node[1-1000000]\n' "$i"; done |
	seed 2 squeue-text-huge
printf '101 RUNNING batch 1-00:00:00 node[1-2]\n102 RUNNING debug 5:00 node3\n103 PENDING batch UNLIMITED \n' |
	seed 2 squeue-text
printf '2-03:04:05' | seed 3 time
printf 'nue_vls=4 nue_rebalance=no updn_roots=0x1,0x2 job_map=/j storage_nodes=io* ctl_mode=0640 planes=on' |
	seed 4 options
printf 'host node1 0x1 0x2 0x10\nhost node2 0x3 0x4 0x11\n' | seed 5 topology
printf 'node1 7\nnode2 7\nnode3 8\n# comment\n' | seed 6 job-map
head -c 256 /dev/zero | seed 7 mad
printf 'SwitchName=leaf1 Nodes=node[1-2]\nSwitchName=leaf2 Nodes=node3\nSwitchName=spine Switches=leaf[1-2]\n' |
	seed 11 topology-conf
printf '# SRC DST BYTES\nh1_1 h1_2 1000\nh2_1 h1_1 5\nh1_1 h1_1 7\nghost h2_1 9\n' |
	seed 12 traffic

# Inputs that once failed, kept so that the first pass over the corpus replays each of them.
cp -- "$top"/test/fuzz/regress/* "$work/corpus/" || exit 2

echo "fuzz: $(ls "$work/corpus" | wc -l) inputs in the corpus, fuzzing for $seconds s"
rc=0
seed_arg=()
[[ -n ${SARNUE_FUZZ_SEED:-} ]] && seed_arg=(-seed="$SARNUE_FUZZ_SEED")
(cd "$work" && SARNUE_FUZZ_NET=$net ./fuzz_inputs -max_total_time="$seconds" -max_len=16384 \
	-timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "${seed_arg[@]}" corpus >fuzz.log 2>&1) ||
	rc=$?
grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$work/fuzz.log"
if ((rc != 0)); then
	grep -E -A 12 'ERROR|runtime error|fuzz: ' "$work/fuzz.log" | head -n 40
	echo "fuzz: FAILED; inputs: $(ls "$work" | grep -E '^(crash|timeout|oom|leak)-' | tr '\n' ' ')"
	exit 1
fi
echo "fuzz: no findings"
