#!/bin/bash
#
# sar_jobs.sh - what the job map buys sar-dfsssp: seeded random job mixes (2-20 jobs of 2-64
# hosts, each job on hosts picked in runs from a random free host) on a 2-level fat tree
# (648 hosts), the same fat tree with 2% of its links failed and a random topology (512
# hosts).  Each mix is routed offline with `sarnue route` by plain sar-dfsssp (no job map) and
# by sar-dfsssp with the job map; `sarnue check --job-map` gives the maximum effective EFI
# (thesis Definition 5.1) of each.  Prints one row per mix, the mean reduction per fabric and
# overall, and every mix where the job map made it worse; exits 1 when there is one (the issue
# asks sar-dfsssp with the job map to be at most plain DFSSSP in every case).
#
# usage: test/bench/sar_jobs.sh [--quick] [--mixes N] [--seed S]
#   run from a build tree after `make`.  Default 10 mixes per fabric; --quick: 2 mixes on
#   smaller fabrics.
set -u
top=$(cd -- "$(dirname -- "$0")/../.." && pwd)
: "${SARNUE_BIN:=$top/sarnue}"
mixes=10 seed=1 quick=0
usage() {
	echo "usage: $0 [--quick] [--mixes N] [--seed S]" >&2
	exit 2
}
while (($#)); do
	case $1 in
	--quick) quick=1 mixes=2 ;;
	--mixes) (($# > 1)) || usage; mixes=$2; shift ;;
	--seed) (($# > 1)) || usage; seed=$2; shift ;;
	*) usage ;;
	esac
	shift
done
[[ $mixes =~ ^[1-9][0-9]*$ && $seed =~ ^[0-9]+$ ]] || usage

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sar_jobs.XXXXXX") || exit 1
trap 'rm -rf -- "$tmp"' EXIT

if ((quick)); then
	fabrics=(
		"fat-tree fattree --radix 12 --hosts 72"
		"fat-tree-2%failed fattree --radix 12 --hosts 72 --remove-links 2% --seed 3"
		"random random --switches 16 --degree 4 --hosts-per-switch 4 --seed 1"
	)
else
	fabrics=(
		"fat-tree fattree --radix 36 --hosts 648"
		"fat-tree-2%failed fattree --radix 36 --hosts 648 --remove-links 2% --seed 3"
		"random random --switches 64 --degree 8 --hosts-per-switch 8 --seed 1"
	)
fi

# mix SEED NETFILE > MAP: hostnames are the first word of the HCAs' node descriptions.
mix() {
	python3 - "$1" "$2" <<'PY'
import random, sys
rnd = random.Random(int(sys.argv[1]))
hosts = [l.split('"')[3].split()[0] for l in open(sys.argv[2]) if l.startswith("Hca")]
free = list(range(len(hosts)))
for job in range(1, rnd.randint(2, 20) + 1):
    size = min(rnd.randint(2, 64), len(free))
    if size < 2:
        break
    i = rnd.randrange(len(free))
    for _ in range(size):
        i %= len(free)
        print(hosts[free.pop(i)], job)
PY
}

# max_eff NETFILE MAP [OPTION]: maximum effective EFI of sar-dfsssp's routing.
max_eff() {
	local net=$1 map=$2
	shift 2
	rm -rf -- "$tmp/out"
	"$SARNUE_BIN" route -e sar-dfsssp "$@" -o "$tmp/out" "$net" >/dev/null 2>"$tmp/err" ||
		{ echo "route failed: $(head -n 1 "$tmp/err")" >&2; echo 0; return; }
	"$SARNUE_BIN" check --dump-dir "$tmp/out" --job-map "$map" --json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["metrics"]["effective_efi"]["max"])'
}

printf '%-18s %5s %5s %6s %11s %11s %10s\n' fabric mix jobs hosts plain job-map reduction
all_sum=0 all_n=0 worse=()
for spec in "${fabrics[@]}"; do
	read -r name args <<<"$spec"
	net=$tmp/$name.net
	# shellcheck disable=SC2086
	"$SARNUE_BIN" gen $args -o "$net" 2>"$tmp/err" || { echo "gen $name: $(cat "$tmp/err")" >&2; continue; }
	sum=0 n=0
	for ((m = 0; m < mixes; m++)); do
		map=$tmp/$name.$m.map
		mix $((seed * 1000 + m)) "$net" >"$map"
		jobs=$(awk '{ j[$2] } END { print length(j) }' "$map")
		hosts=$(wc -l <"$map")
		plain=$(max_eff "$net" "$map")
		sar=$(max_eff "$net" "$map" -O "job_map=$map")
		red=$(awk -v p="$plain" -v s="$sar" 'BEGIN { printf "%.1f", p ? 100 * (p - s) / p : 0 }')
		printf '%-18s %5d %5d %6d %11s %11s %9s%%\n' "$name" "$m" "$jobs" "$hosts" "$plain" "$sar" "$red"
		((sar > plain)) && worse+=("$name mix $m (seed $((seed * 1000 + m))): $plain -> $sar")
		sum=$(awk -v a="$sum" -v r="$red" 'BEGIN { print a + r }')
		n=$((n + 1))
	done
	((n)) && printf '%-18s mean reduction of the maximum effective EFI: %.1f%%\n' "$name" \
		"$(awk -v a="$sum" -v n="$n" 'BEGIN { print a / n }')"
	all_sum=$(awk -v a="$all_sum" -v b="$sum" 'BEGIN { print a + b }')
	all_n=$((all_n + n))
done
((all_n)) && printf 'overall mean reduction over %d mixes: %.1f%%\n' "$all_n" \
	"$(awk -v a="$all_sum" -v n="$all_n" 'BEGIN { print a / n }')"
if ((${#worse[@]})); then
	echo "job map worse than plain in ${#worse[@]} mix(es):"
	printf '  %s\n' "${worse[@]}"
	exit 1
else
	echo "job map never worse than plain"
fi
