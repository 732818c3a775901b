#!/bin/bash
# Two routing planes (planes=on) under ibsim: OpenSM with lmc 1, qos TRUE and the plugin, for
# sar-dfsssp and sar-nue.  The plugin logs the two planes; sarnue check verifies the union on its
# dumps, ibdmchk agrees (on the base-LID paths it can walk); every path to a high LID has the
# escape SL and every switch maps it to the escape VL, base paths stay below it.  Then a new job
# map through the control socket reroutes: the LFTs read back from the switches show changed
# base-LID entries and identical high-LID entries, and the plugin logs the escape plane as kept.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk ibroute smpquery python3
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

export SIM_PLUGIN=sarnue SIM_QOS=TRUE SIM_LMC=1
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# Path-SL dump: every path to a high LID has SL $1, every other one a lower SL.
psl_planes() {
	awk -v esc="$1" 'NR == FNR { high[$1] = 1; next }
		($2 in high) && $3 != esc { bad++ } !($2 in high) && $3 >= esc { bad++ }
		($2 in high) { nh++ } END { exit bad > 0 || nh == 0 }' \
		"$SIM_TMP/high.lids" "$SIM_DUMP_DIR/sarnue-path-sl.dump"
}

# SL2VL read back: on every switch port pair SL $1 goes to VL $1, and SLs 0..$1-1 below it.
sl2vl_planes() {
	awk -v esc="$1" "$SIM_AWK_HEX"'
		NF != 11 { exit 1 }
		{ for (sl = 0; sl <= esc; sl++) { v = hex(substr($(4 + int(sl / 2)), 3 + sl % 2, 1))
			if ((sl == esc) != (v == esc)) exit 1 } }
		END { exit NR == 0 }' "$2"
}

check_dumps() {
	local name=$1 esc=$2 json
	json=$("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --lmc 1 --json)
	t_expect "$name: sarnue check verified both planes (0 unreachable, 0 credit loops)" \
		grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$json"
	t_expect "$name: sarnue check walked the high LIDs too" \
		grep -q "\"destinations\": $(($(wc -l <"$SIM_TMP/high.lids") * 2 + 9))," <<<"$json"
	t_expect "$name: VL $esc in use (escape plane)" grep -q "\"vls_used\": $((esc + 1))," <<<"$json"
	t_expect "$name: paths to high LIDs use SL $esc, the others lower SLs" psl_planes "$esc"
	t_expect "$name: ibdmchk finds no credit loop" \
		sim_ibdmchk -c "$SIM_DUMP_DIR/sarnue-path-sl.dump" -d "$SIM_DUMP_DIR/sarnue-sl2vl.dump"
}

"$SARNUE_BIN" gen fattree2 --leaves 6 --spines 3 --hosts-per-leaf 6 -o "$SIM_TMP/ft.net" 2>/dev/null ||
	t_fail "sarnue gen"
# Jobs across several leaves: the base plane's weights change with them.
printf 'node0001 7\nnode0002 7\nnode0007 7\nnode0008 7\nnode0013 7\nnode0019 8\nnode0025 8\nnode0031 8\nnode0032 8\n' \
	>"$SIM_TMP/j1.map"

for ENGINE in sar-dfsssp sar-nue; do
	export SIM_ROUTING_ENGINE=$ENGINE
	export SIM_PLUGIN_OPTIONS="planes=on nue_vls=4"
	SIM_CONF=""
	sim_start_ibsim "$SIM_TMP/ft.net" || { t_fail "$ENGINE: ibsim started"; continue; }
	if ! sim_start_opensm || ! sim_wait_subnet_up || ! sim_wait_programmed 1; then
		t_fail "$ENGINE: OpenSM routed with the plugin"
		sim_stop_opensm
		sim_stop_ibsim
		continue
	fi
	line=$(grep "sarnue: $ENGINE: routed" <(sim_log "$SIM_OPENSM_LOG") | tail -n 1)
	t_expect "$ENGINE: the plugin logged two planes ($line)" \
		grep -Eq '2 planes: base LIDs on VLs 0\.\.[0-9]+, high LIDs by sar-(updn|nue) on VL [0-9]+ \(computed' <<<"$line"
	esc=$(sed -n 's/.*high LIDs by sar-[a-z]* on VL \([0-9]*\) .*/\1/p' <<<"$line")
	case $ENGINE in
	sar-dfsssp) want=7 ;; # every VL ibsim's links offer (8), the last one for the escape plane
	*) want=3 ;;          # nue_vls=4
	esac
	t_expect "$ENGINE: escape plane on VL $want (got ${esc:-none})" test "${esc:-x}" = "$want"
	esc=${esc:-0}
	sim_high_lids >"$SIM_TMP/high.lids"
	t_expect "$ENGINE: 36 high LIDs in the subnet dump" test "$(wc -l <"$SIM_TMP/high.lids")" = 36
	check_dumps "$ENGINE" "$esc"
	if sim_read_sl2vl "$SIM_TMP/sl2vl.live"; then
		t_expect "$ENGINE: switches map SL $esc to VL $esc and the base SLs below it" \
			sl2vl_planes "$esc" "$SIM_TMP/sl2vl.live"
	else
		t_fail "$ENGINE: SL2VL read back from the switches"
	fi
	sim_read_lfts "$SIM_TMP/lfts.0" || t_fail "$ENGINE: LFTs read back before the job map"

	routings=$(sim_status_field tables_programmed)
	out=$(sim_ctl jobs "$SIM_TMP/j1.map")
	t_expect "$ENGINE: ctl jobs accepted the map ($out)" grep -q "reroute requested" <<<"$out"
	sim_wait_programmed $((routings + 1)) || t_fail "$ENGINE: jobs made OpenSM route again"
	line=$(grep "sarnue: $ENGINE: routed" <(sim_log "$SIM_OPENSM_LOG") | tail -n 1)
	t_expect "$ENGINE: the escape plane was kept ($line)" grep -q "(kept: same topology" <<<"$line"
	t_grep "$ENGINE: no host subscribed, so the reroute was plain, not five-phase" \
		"sarnue: no host subscribed to path reports: plain reroute" "$SIM_OPENSM_LOG"
	sim_read_lfts "$SIM_TMP/lfts.1" || t_fail "$ENGINE: LFTs read back after the job map"
	sim_plane_lfts high "$SIM_TMP/high.lids" "$SIM_TMP/lfts.0" >"$SIM_TMP/high.0"
	sim_plane_lfts high "$SIM_TMP/high.lids" "$SIM_TMP/lfts.1" >"$SIM_TMP/high.1"
	sim_plane_lfts base "$SIM_TMP/high.lids" "$SIM_TMP/lfts.0" >"$SIM_TMP/base.0"
	sim_plane_lfts base "$SIM_TMP/high.lids" "$SIM_TMP/lfts.1" >"$SIM_TMP/base.1"
	t_expect "$ENGINE: high-LID entries read back ($(wc -l <"$SIM_TMP/high.0") of them)" \
		test "$(wc -l <"$SIM_TMP/high.0")" -eq $((36 * 9))
	t_expect "$ENGINE: high-LID entries unchanged by the job map" \
		cmp -s "$SIM_TMP/high.0" "$SIM_TMP/high.1"
	t_expect "$ENGINE: base-LID entries changed by the job map ($(diff "$SIM_TMP/base.0" "$SIM_TMP/base.1" | grep -c '^>') lines)" \
		bash -c '! cmp -s "$0" "$1"' "$SIM_TMP/base.0" "$SIM_TMP/base.1"
	check_dumps "$ENGINE after the job map" "$esc"
	sim_stop_opensm
	sim_stop_ibsim
done
t_done
