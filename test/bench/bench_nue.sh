#!/bin/bash
#
# bench_nue.sh - sar-nue against OpenSM's built-in nue on the same generated fabrics, same
# number of VLs, inside OpenSM under ibsim: route time (from OpenSM's log: "building routing
# with" to "tables configured"), escape-path fall-backs, mean and maximum hops, unreachable
# pairs and credit loops found by sarnue check, and the maximum edge forwarding index when
# `sarnue check` reports it.  --offline adds `sarnue route` on fabrics too large for ibsim.
# Prints one table; asserts nothing.
#
# usage: test/bench/bench_nue.sh [--quick] [--offline] [--vls "1 8"]
#   run from a build tree after `make`.
set -u
top=$(cd -- "$(dirname -- "$0")/../.." && pwd)
: "${SARNUE_BIN:=$top/sarnue}" "${SARNUE_PLUGIN_DIR:=$top/.libs}"
quick=0 offline=0 vls="1 8"
while (($#)); do
	case $1 in
	--quick) quick=1 ;;
	--offline) offline=1 ;;
	--vls) vls=$2; shift ;;
	*) echo "usage: $0 [--quick] [--offline] [--vls \"K...\"]" >&2; exit 2 ;;
	esac
	shift
done

. "$top/test/lib/sim.sh"
sim_setup >/dev/null 2>&1 || exit 1

if ((quick)); then
	fabrics=(
		"torus-4x4x3-minus1 torus --dims 4x4x3 --hosts-per-switch 4 --remove-switch-id S-0006"
		"random-32-d4 random --switches 32 --degree 4 --hosts-per-switch 2 --seed 1"
	)
else
	fabrics=(
		"ktree-16-3 ktree --k 16 --n 3"
		"torus-8x8x8 torus --dims 8x8x8 --hosts-per-switch 4"
		"torus-8x8x8-1pct torus --dims 8x8x8 --hosts-per-switch 4 --remove-links 1% --seed 1"
		"random-256-d8 random --switches 256 --degree 8 --hosts-per-switch 8 --seed 1"
		"dragonfly-a8p4h4 dragonfly --a 8 --p 4 --h 4"
		"kautz-3-3 kautz --d 3 --n 3 --hosts-per-switch 4"
		"islands-3x72 islands --islands 3 --hosts-per-island 72 --radix 24 --core-radix 48"
	)
fi
large=(
	"ktree-24-3 ktree --k 24 --n 3 --hosts-per-leaf 24"
	"torus-16x16x16-1pct torus --dims 16x16x16 --hosts-per-switch 4 --remove-links 1% --seed 1"
	"random-2000-d12 random --switches 2000 --degree 12 --hosts-per-switch 10 --seed 1"
)

osm_route_seconds() {
	awk -v eng="$2" '
		function t(line,   a) { split($3, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] + $4 / 1e6 }
		index($0, "building routing with \x27" eng "\x27") { start = t($0) }
		start && / tables configured on all switches/ { printf "%.2f", t($0) - start; exit }
	' "$1"
}

json_field() {
	sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" <<<"$2" | head -n 1
}

# One OpenSM run; prints "time fallbacks meanhops maxhops unreachable creditloops maxefi".
run_engine() {
	local eng=$1 k=$2 json used secs fb hops cl
	SIM_CONF="" SIM_ROUTING_ENGINE=$eng SIM_QOS=FALSE SIM_PLUGIN_OPTIONS="nue_vls=$k dump=always"
	SIM_OPENSM_EXTRA="nue_max_num_vls $k"
	((k > 1)) && SIM_QOS=TRUE
	export SIM_CONF SIM_ROUTING_ENGINE SIM_QOS SIM_PLUGIN_OPTIONS SIM_OPENSM_EXTRA
	rm -f "$SIM_DUMP_DIR"/sarnue-*.dump
	sim_run_opensm_once >/dev/null 2>&1
	used=$(sim_routing_engine_used 2>/dev/null)
	[[ $used == "$eng" ]] || { echo "fell-back-to-${used:-none}"; return; }
	secs=$(osm_route_seconds "$SIM_OPENSM_LOG" "$eng")
	if [[ $eng == nue ]]; then
		fb=$(grep -c 'fallback to escape paths' "$SIM_OPENSM_LOG")
	else
		fb=$(sed -n 's/.* \([0-9]*\) fall-backs to escape paths.*/\1/p' "$SIM_OPENSM_LOG" | tail -n 1)
	fi
	json=$("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --json 2>/dev/null)
	hops=$(grep -o '"hops": {[^}]*}' <<<"$json")
	cl=$(json_field credit_loops "$json")
	# OpenSM does not dump the built-in's path SLs: with layers, its credit loops are unknown.
	[[ $eng == nue && $k -gt 1 ]] && cl=n/a
	echo "${secs:-?} ${fb:-?} $(json_field mean "$hops") $(json_field max "$hops")" \
		"$(json_field unreachable "$json") $cl $(json_field efi_max "$json")"
}

printf '%-20s %5s %6s %3s | %-9s %7s %6s %6s %4s %4s %4s %6s\n' fabric sw hosts k engine \
	"time s" fallbk "hops" max unr cl maxEFI
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR SIM_PLUGIN=sarnue SIM_OPENSM_LOGFLAGS=0x47
for spec in "${fabrics[@]}"; do
	read -r name args <<<"$spec"
	net=$SIM_TMP/$name.net
	# shellcheck disable=SC2086
	"$SARNUE_BIN" gen $args -o "$net" 2>"$SIM_TMP/gen.err" || { echo "$name: gen failed"; continue; }
	summary=$(tail -n 1 "$SIM_TMP/gen.err")
	sw=$(sed -n 's/gen: \([0-9]*\) switches.*/\1/p' <<<"$summary")
	hosts=$(sed -n 's/.* \([0-9]*\) hosts.*/\1/p' <<<"$summary")
	sim_start_ibsim "$net" >/dev/null 2>&1 || { echo "$name: ibsim failed"; continue; }
	for k in $vls; do
		for eng in sar-nue nue; do
			read -r secs fb mh xh unr cl efi <<<"$(run_engine $eng "$k")"
			printf '%-20s %5s %6s %3s | %-9s %7s %6s %6s %4s %4s %4s %6s\n' "$name" "$sw" \
				"$hosts" "$k" "$eng" "$secs" "${fb:-}" "${mh:-}" "${xh:-}" "${unr:-}" \
				"${cl:-}" "${efi:--}"
		done
	done
	sim_stop_ibsim >/dev/null 2>&1
done

((offline)) || exit 0
echo
printf '%-22s %6s %6s %3s | %8s %9s %s\n' "offline (sarnue route)" sw hosts k "time s" "peak KiB" \
	"fall-backs"
for spec in "${large[@]}"; do
	read -r name args <<<"$spec"
	net=$SIM_TMP/$name.net
	# shellcheck disable=SC2086
	"$SARNUE_BIN" gen $args -o "$net" 2>"$SIM_TMP/gen.err" || { echo "$name: gen failed"; continue; }
	summary=$(tail -n 1 "$SIM_TMP/gen.err")
	sw=$(sed -n 's/gen: \([0-9]*\) switches.*/\1/p' <<<"$summary")
	hosts=$(sed -n 's/.* \([0-9]*\) hosts.*/\1/p' <<<"$summary")
	for k in $vls; do
		json=$("$SARNUE_BIN" route -e sar-nue -O nue_vls="$k" -O verify=no --json "$net" 2>&1)
		printf '%-22s %6s %6s %3s | %8s %9s %s\n' "$name" "$sw" "$hosts" "$k" \
			"$(json_field route_seconds "$json")" "$(json_field peak_rss_kib "$json")" \
			"$(sed -n 's/.* \([0-9]*\) fall-backs to escape paths.*/\1/p' <<<"$json")"
	done
done
