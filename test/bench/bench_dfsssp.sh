#!/bin/bash
#
# bench_dfsssp.sh - sar-dfsssp against OpenSM's built-in dfsssp on the same generated fabrics:
# route time and virtual lanes.  Offline figures come from `sarnue route`; in-OpenSM figures
# from OpenSM's own log (time between "building routing with" and "tables configured") with
# ibsim simulating the fabric and qos TRUE, so that both engines may use every VL.  Prints a
# table; asserts nothing.
#
# usage: test/bench/bench_dfsssp.sh [--offline-only] [--large]
#   run from a build tree after `make`; --large adds fabrics too big for ibsim (offline only).
set -u
top=$(cd -- "$(dirname -- "$0")/../.." && pwd)
: "${SARNUE_BIN:=$top/sarnue}" "${SARNUE_PLUGIN_DIR:=$top/.libs}"
offline_only=0 large=0
for a in "$@"; do
	case $a in
	--offline-only) offline_only=1 ;;
	--large) large=1 ;;
	*) echo "usage: $0 [--offline-only] [--large]" >&2; exit 2 ;;
	esac
done

. "$top/test/lib/sim.sh"
sim_setup >/dev/null 2>&1 || exit 1

fabrics=(
	"fattree2-18x9 fattree2 --leaves 18 --spines 9 --hosts-per-leaf 18"
	"ktree-8-3 ktree --k 8 --n 3"
	"torus-4x4x3-minus1 torus --dims 4x4x3 --hosts-per-switch 4 --remove-switch-id S-0006"
	"torus-6x6x6-1pct torus --dims 6x6x6 --hosts-per-switch 2 --remove-links 1% --seed 1"
	"random-64-d6 random --switches 64 --degree 6 --hosts-per-switch 4 --seed 1"
	"dragonfly-a8p4h4 dragonfly --a 8 --p 4 --h 4"
)
if ((large)); then
	fabrics+=("ktree-16-3 ktree --k 16 --n 3"
		"ktree-24-3 ktree --k 24 --n 3 --hosts-per-leaf 24"
		"random-400-d12 random --switches 400 --degree 12 --hosts-per-switch 10 --seed 1")
fi

osm_route_seconds() {
	awk -v eng="$2" '
		function t(line,   a) { split($3, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] + $4 / 1e6 }
		index($0, "building routing with \x27" eng "\x27") { start = t($0) }
		start && / tables configured on all switches/ { printf "%.3f", t($0) - start; exit }
	' "$1"
}

# VLs an engine used (sar-dfsssp) or needed (dfsssp), from OpenSM's log.
osm_vls() {
	case $2 in
	sar-dfsssp) sed -n 's/.*; \([0-9]*\) of [0-9]* VLs used, \([0-9]*\) layer(s) needed.*/\2 layers/p' "$1" | tail -n 1 ;;
	dfsssp) sed -n 's/.*Virtual Lanes needed: \([0-9]*\).*/\1 layers/p' "$1" | tail -n 1 ;;
	esac
}

printf '%-20s %6s %6s | %-34s | %s\n' fabric sw hosts "sarnue route: time, layers, mem" \
	"in OpenSM (qos TRUE): engine time layers"
for spec in "${fabrics[@]}"; do
	read -r name args <<<"$spec"
	net=$SIM_TMP/$name.net
	# shellcheck disable=SC2086
	"$SARNUE_BIN" gen $args -o "$net" 2>"$SIM_TMP/gen.err" || { echo "$name: gen failed"; continue; }
	summary=$(tail -n 1 "$SIM_TMP/gen.err")
	sw=$(sed -n 's/gen: \([0-9]*\) switches.*/\1/p' <<<"$summary")
	hosts=$(sed -n 's/.* \([0-9]*\) hosts.*/\1/p' <<<"$summary")
	out=$("$SARNUE_BIN" route -e sar-dfsssp -O verify=no --json "$net" 2>&1)
	off=$(sed -n 's/.*"route_seconds": \([0-9.]*\).*"peak_rss_kib": \([0-9]*\).*"summary": "[0-9]* of [0-9]* VLs used, \([0-9]*\) layer.*/\1 s, \3 layers, \2 KiB/p' <<<"$out")
	[[ -n $off ]] || off=$(sed -n 's/.*sar-dfsssp: \(needs [^,]*\),.*/\1/p' <<<"$out")
	line=""
	if ((!offline_only && sw <= 300)); then
		export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR SIM_PLUGIN=sarnue SIM_OPENSM_LOGFLAGS=0x07 SIM_QOS=TRUE
		sim_start_ibsim "$net" >/dev/null 2>&1 || { echo "$name: ibsim failed"; continue; }
		for eng in sar-dfsssp dfsssp; do
			SIM_CONF="" SIM_ROUTING_ENGINE=$eng
			export SIM_ROUTING_ENGINE
			sim_run_opensm_once >/dev/null 2>&1 || true
			used=$(sim_routing_engine_used 2>/dev/null)
			if [[ $used == "$eng" ]]; then
				line+="$eng $(osm_route_seconds "$SIM_OPENSM_LOG" "$eng")s $(osm_vls "$SIM_OPENSM_LOG" "$eng"); "
			else
				line+="$eng failed ($(grep -o "needs [a-z ]*[0-9]* layers\|needed=[0-9]*" "$SIM_OPENSM_LOG" | head -n 1)) -> ${used:-?}; "
			fi
		done
		sim_stop_ibsim >/dev/null 2>&1
	fi
	printf '%-20s %6s %6s | %-34s | %s\n' "$name" "$sw" "$hosts" "$off" "$line"
done
