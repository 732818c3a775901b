#!/bin/bash
#
# bench_updn.sh - route time, peak memory and verdict of sar-updn against OpenSM's built-in
# updn and minhop on the same generated fabrics.  Offline figures come from `sarnue route`;
# in-OpenSM figures from OpenSM's own log (time between "building routing with" and "tables
# configured") with ibsim simulating the fabric.  Prints a table; asserts nothing.
#
# usage: test/bench/bench_updn.sh [--offline-only] [--large]
#   run from a build tree after `make`; --large adds fabrics too big for ibsim.
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
	"torus-6x6x6-1pct torus --dims 6x6x6 --hosts-per-switch 2 --remove-links 1% --seed 1"
	"torus-4x4x3-minus1 torus --dims 4x4x3 --hosts-per-switch 4 --remove-switch-id S-0006"
	"random-128-d8 random --switches 128 --degree 8 --hosts-per-switch 4 --seed 1"
	"dragonfly-a8p4h4 dragonfly --a 8 --p 4 --h 4"
)
if ((large)); then
	fabrics+=("ktree-24-3 ktree --k 24 --n 3 --hosts-per-leaf 12"
		"torus-16x16x16 torus --dims 16x16x16 --hosts-per-switch 4 --remove-links 1% --seed 1"
		"random-2000-d12 random --switches 2000 --degree 12 --hosts-per-switch 10 --seed 1")
fi

# Seconds between OpenSM's "building routing with 'ENGINE'" line and the next "tables
# configured" line, from the microsecond timestamps of its log.
osm_route_seconds() {
	awk -v eng="$2" '
		function t(line,   a) { split($3, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] + $4 / 1e6 }
		index($0, "building routing with \x27" eng "\x27") { start = t($0) }
		start && / tables configured on all switches/ { printf "%.3f", t($0) - start; exit }
	' "$1"
}

printf '%-20s %7s %7s | %-28s | %-44s\n' fabric switches hosts \
	"sarnue route: time mem" "in OpenSM: route time (verdict of sarnue check)"
for spec in "${fabrics[@]}"; do
	read -r name args <<<"$spec"
	net=$SIM_TMP/$name.net
	# shellcheck disable=SC2086
	"$SARNUE_BIN" gen $args -o "$net" 2>"$SIM_TMP/gen.err" || { echo "$name: gen failed"; continue; }
	summary=$(tail -n 1 "$SIM_TMP/gen.err")
	sw=$(sed -n 's/gen: \([0-9]*\) switches.*/\1/p' <<<"$summary")
	hosts=$(sed -n 's/.* \([0-9]*\) hosts.*/\1/p' <<<"$summary")
	json=$("$SARNUE_BIN" route --json "$net" 2>&1)
	off=$(sed -n 's/.*"route_seconds": \([0-9.]*\).*"peak_rss_kib": \([0-9]*\).*/\1 s \2 KiB/p' <<<"$json")
	line=""
	if ((!offline_only)); then
		export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR SIM_PLUGIN=sarnue SIM_OPENSM_LOGFLAGS=0x47
		sim_start_ibsim "$net" >/dev/null 2>&1 || { echo "$name: ibsim failed"; continue; }
		for eng in sar-updn updn minhop; do
			SIM_CONF="" SIM_ROUTING_ENGINE=$eng
			export SIM_ROUTING_ENGINE
			if sim_run_opensm_once >/dev/null 2>&1 || [[ -n $(sim_routing_engine_used 2>/dev/null) ]]; then
				used=$(sim_routing_engine_used)
				secs=$(osm_route_seconds "$SIM_OPENSM_LOG" "$used")
				verdict=$("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --json 2>/dev/null |
					sed -n 's/.*"unreachable": \([0-9]*\).*"credit_loops": \([0-9]*\).*/unr \1 cl \2/p')
				[[ $used == "$eng" ]] || secs="fell back to $used"
				line+="$eng ${secs:-?}s ($verdict); "
			else
				line+="$eng failed; "
			fi
		done
		sim_stop_ibsim >/dev/null 2>&1
	fi
	printf '%-20s %7s %7s | %-28s | %s\n' "$name" "$sw" "$hosts" "$off" "$line"
done
