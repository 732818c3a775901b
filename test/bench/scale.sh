#!/bin/bash
#
# scale.sh - sarnue's engines on fabrics of about 40,000 endpoints, near the unicast LID limit:
# one fabric of every family `sarnue gen` builds at that size (fat tree, dragonfly, random
# graph, torus with 1% of its links failed, and the exascale families Fishnet, Fishnet-lite,
# Multi-Layer Full-Mesh, Orthogonal Fat Tree, Cascade, Dragonfly+), routed offline by `sarnue
# route` with verification on.  Per row: total wall time of the command, route time, verify
# time (verification may run beside routing on the second CPU, so the two can overlap), peak
# memory, fall-backs to escape paths, maximum edge forwarding index, and with --baseline the
# route time of another build on the same fabric, run right after, and the speed-up (its route
# time over this one's).  Layered engines
# (sar-nue, sar-dfsssp) run once per VL count of --vls; sar-updn once, sar-dmodk once where
# the fabric is a fat tree.  A run over --timeout seconds is stopped and shown as such.
# Prints a Markdown table; asserts nothing.
#
# usage: test/bench/scale.sh [--fabrics "NAME ..."] [--engines "ENGINE ..."] [--vls "1 8"]
#                            [--timeout SECONDS] [--baseline SARNUE-BINARY] [--dumps]
#   run from a build tree after `make`.  --dumps also writes the dump files of every row
#   (`sarnue route -o`) and shows their size and the time writing took: opensm.fdbs has a line
#   per switch and LID (gigabytes here); the path-SL dump is written in its compact form (a line
#   per destination whose SL is not the common one), which sarnue check reads.  The full form
#   ibdmchk needs where paths use SLs other than 0 has a line per source and destination, tens
#   of gigabytes at this size, and is not written.
set -u
top=$(cd -- "$(dirname -- "$0")/../.." && pwd)
# shellcheck source=test/bench/lib.sh
. "$top/test/bench/lib.sh"
: "${SARNUE_BIN:=$top/sarnue}"
only="" engines="sar-updn sar-dmodk sar-nue sar-dfsssp" vls="1 8" limit=600 baseline="" dumps=0
usage() {
	echo "usage: $0 [--fabrics \"NAME ...\"] [--engines \"ENGINE ...\"] [--vls \"K ...\"]" \
		"[--timeout SECONDS] [--baseline SARNUE-BINARY] [--dumps]" >&2
	exit 2
}
while (($#)); do
	case $1 in
	--fabrics) (($# > 1)) || usage; only=$2; shift ;;
	--engines) (($# > 1)) || usage; engines=$2; shift ;;
	--vls) (($# > 1)) || usage; vls=$2; shift ;;
	--timeout) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage; limit=$2; shift ;;
	--baseline) [[ -x ${2:-} ]] || usage; baseline=$2; shift ;;
	--dumps) dumps=1 ;;
	*) usage ;;
	esac
	shift
done

# 33,792 to 42,392 hosts; with the switches at most 48,510 LIDs of the 49,151 unicast ones.
fabrics=(
	"fattree-r64 fattree --radix 64 --hosts 40000 --levels 3"
	"dragonfly-a20 dragonfly --a 20 --p 10 --h 10"
	"random-4000-d12 random --switches 4000 --degree 12 --hosts-per-switch 10 --seed 1"
	"torus-16x16x16-1pct torus --dims 16x16x16 --hosts-per-switch 10 --remove-links 1% --seed 1"
	"fishnet-q7 fishnet --q 7 --hosts-per-switch 4"
	"fishnetlite-q7 fishnet-lite --q 7 --hosts-per-switch 4"
	"mlfm-h32 mlfm --h 32"
	"oft-k28 oft --k 28"
	"cascade-g100 cascade --g 100 --h 10 --p 4"
	"dfplus-g156 dfplus --leaves 16 --spines 16 --hosts-per-leaf 16 --h 16 --g 156"
)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-scale.XXXXXXXX") || exit 1
trap 'rm -rf -- "$tmp"' EXIT

# route BINARY ENGINE VLS [ARG...]: runs one routing; sets JSON (empty when it failed or
# was stopped), WALL (seconds) and STATUS.
route() {
	local bin=$1 eng=$2 k=$3 start rc
	shift 3
	start=$(date +%s.%N)
	JSON=$(timeout "$limit" "$bin" route -q -e "$eng" --vls "$k" -O nue_vls="$k" \
		-O dfsssp_vls="$k" "$@" --json "$net" 2>"$tmp/route.err")
	rc=$?
	WALL=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	STATUS=ok
	if ((rc == 124)); then
		STATUS="stopped after ${limit} s" JSON=""
	elif [[ $JSON != *'"ok": true'* ]]; then
		STATUS="failed: $(grep -v '^gen:' "$tmp/route.err" | tail -n 1 | cut -c1-60)" JSON=""
	fi
}

sec() { awk -v s="$1" 'BEGIN { if (s == "") print "-"; else printf "%.1f", s }'; }
mb() { awk -v k="$1" 'BEGIN { if (k == "") print "-"; else printf "%.0f", k / 1024 }'; }

echo "| fabric | switches | hosts | VLs | engine | total s | route s | verify s | peak MB |" \
	"fall-backs | max EFI |$([[ -n $baseline ]] && echo " baseline route s | speed-up |")" \
	"$( ((dumps)) && echo " dumps | path-SL dump | dump s |") status |"
echo "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |$(
	[[ -n $baseline ]] && echo " ---: | ---: |")$( ((dumps)) && echo " ---: | ---: | ---: |") --- |"
for spec in "${fabrics[@]}"; do
	read -r name args <<<"$spec"
	[[ -z $only || " $only " == *" $name "* ]] || continue
	net=$tmp/$name.net
	# shellcheck disable=SC2086
	"$SARNUE_BIN" gen $args -o "$net" 2>"$tmp/gen.err" || { echo "$name: gen failed" >&2; continue; }
	summary=$(tail -n 1 "$tmp/gen.err")
	sw=$(sed -n 's/gen: \([0-9]*\) switches.*/\1/p' <<<"$summary")
	hosts=$(sed -n 's/.* \([0-9]*\) hosts.*/\1/p' <<<"$summary")
	for eng in $engines; do
		for k in $vls; do
			if [[ $eng != sar-nue && $eng != sar-dfsssp ]]; then
				[[ $k == "${vls%% *}" ]] || continue
				k=1
			fi
			out=() dcols=""
			((dumps)) && out=(-v -o "$tmp/dumps" -O dump_path_sl=compact)
			rm -rf -- "$tmp/dumps"
			route "$SARNUE_BIN" "$eng" "$k" -O dump=auto "${out[@]}"
			# sar-dmodk refuses what is no fat tree: no row for those.
			[[ $eng == sar-dmodk && $STATUS == failed* ]] && continue
			own=$(json_field route_seconds "$JSON")
			cols="$WALL | $(sec "$own") | $(sec "$(json_field verify_seconds "$JSON")")"
			cols+=" | $(mb "$(json_field peak_rss_kib "$JSON")") | $(json_field fallbacks "$JSON")"
			cols+=" | $(json_field efi_max "$JSON")"
			if ((dumps)); then
				dcols=" - | - | - |"
				if [[ -d $tmp/dumps ]]; then
					dcols=" $(numfmt --to=iec "$(du -sb "$tmp/dumps" | cut -f1)") | $(
						numfmt --to=iec "$(stat -c %s "$tmp/dumps/sarnue-path-sl.dump" 2>/dev/null ||
							echo 0)") | $(sed -n 's/.* in \([0-9.]*\) s$/\1/p' "$tmp/route.err" |
						awk '{ t += $1 } END { printf "%.1f", t }') |"
				fi
				rm -rf -- "$tmp/dumps"
			fi
			status=$STATUS bcols=""
			if [[ -n $baseline ]]; then
				route "$baseline" "$eng" "$k" -O dump=never
				theirs=$(json_field route_seconds "$JSON")
				bcols=" $(sec "$theirs") | $(awk -v b="$theirs" -v o="$own" 'BEGIN {
					if (!(o > 0 && b > 0)) print "-"; else printf "%.2fx", b / o }') |"
				[[ $STATUS == ok ]] || bcols=" $STATUS | - |"
			fi
			echo "| $name | $sw | $hosts | $k | $eng | $cols |$bcols$dcols $status |"
		done
	done
done
