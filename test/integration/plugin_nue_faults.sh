#!/bin/bash
# sar-nue in a running OpenSM while the fabric changes under it: the 4x4x3 torus on 4 VLs (qos
# TRUE) loses one switch-to-switch link, then every link of one switch (its hosts drop out of
# the subnet), then gets both back.  After each change OpenSM sweeps and routes again with
# sar-nue, never falls back to another engine, and the tables it programs verify: the dumps by
# sarnue check and ibdmchk, the tables read back from the switches by sarnue check --live.
# With the fabric whole again, the switches hold exactly the tables of the first routing.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk ibroute python3
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-nue SIM_QOS=TRUE SIM_IBSIM_CONSOLE=1
export SIM_PLUGIN_OPTIONS="nue_vls=4 dump=always"
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

"$SARNUE_BIN" gen torus --dims 4x4x3 --hosts-per-switch 2 -o "$SIM_TMP/torus.net" 2>/dev/null ||
	{ t_fail "sarnue gen torus"; t_done; exit 1; }

routings=0
# changed NAME: waits for OpenSM's next routing and for the switches to hold its tables.
changed() {
	local name=$1
	routings=$((routings + 1))
	t_expect "$name: OpenSM routed again" sim_wait_status routings "$routings" 120 || return 1
	sim_wait_quiet 3 || { t_fail "$name: OpenSM settled"; return 1; }
	routings=$(sim_status_field routings)
	sim_wait_programmed "$routings" || t_fail "$name: tables programmed"
}

# judge NAME PAIRS: the tables of the last routing verify, on PAIRS pairs of ports.
judge() {
	local name=$1 pairs=$2
	t_expect "$name: status names sar-nue" test "$(sim_status_field engine)" = sar-nue
	t_expect "$name: the last routing did not fail" test "$(sim_status_field last_error)" = ""
	t_judge_dumps "$name"
	t_expect "$name: the dumps hold $pairs pairs" grep -q "\"pairs\": $pairs," <<<"$T_CHECK_JSON"
}

# pairs HOSTS SWITCHES: ordered pairs of distinct LID-holding ports that sarnue check walks.
pairs() {
	local ports=$(($1 + $2))
	echo $((ports * (ports - 1)))
}

sim_start_ibsim "$SIM_TMP/torus.net" || { t_fail "ibsim started"; t_done; exit 1; }
sim_start_opensm || { t_fail "OpenSM started"; t_done; exit 1; }
sim_wait_subnet_up || { t_fail "subnet up"; t_done; exit 1; }
sim_wait_quiet 3 || t_fail "OpenSM settled after the first sweep"
routings=$(sim_status_field routings)
sim_wait_programmed "$routings" || t_fail "tables programmed"
t_grep "the plugin routed with 4 VLs" "sarnue: sar-nue: routed.* 4 VLs \\(" "$SIM_OPENSM_LOG"
judge "whole torus" "$(pairs 96 48)"
sim_read_lfts "$SIM_TMP/lfts.first" || t_fail "LFTs read back after the first routing"

# S-0001 port 3 leads to S-0002: one link of the ring along x.
sim_ibsim_cmd 'Unlink "S-0001"[3]'
changed "one link down" && judge "one link down" "$(pairs 96 48)"
if sim_read_lfts "$SIM_TMP/lfts.down"; then
	t_expect "one link down: the switches hold new tables" \
		bash -c '! cmp -s "$1" "$2"' _ "$SIM_TMP/lfts.first" "$SIM_TMP/lfts.down"
else
	t_fail "LFTs read back with one link down"
fi

# Every link of S-0006: the switch and its two hosts leave the subnet.
sim_ibsim_cmd 'Unlink "S-0006"'
changed "a switch cut off" && judge "a switch cut off" "$(pairs 94 47)"

sim_ibsim_cmd 'ReLink "S-0006"'
sim_ibsim_cmd 'ReLink "S-0001"[3]'
changed "links restored" && judge "links restored" "$(pairs 96 48)"
if sim_read_lfts "$SIM_TMP/lfts.again"; then
	t_expect "links restored: the switches hold the tables of the first routing" \
		cmp -s "$SIM_TMP/lfts.first" "$SIM_TMP/lfts.again"
else
	t_fail "LFTs read back after the links came back"
fi

t_expect "every routing OpenSM configured was sar-nue's" test "$(sim_routing_engine_used)" = sar-nue
t_expect "the plugin logged one routing per routing in its status ($routings)" \
	test "$(grep -c "sarnue: sar-nue: routed" "$SIM_OPENSM_LOG")" = "$routings"
t_expect "the plugin logged no error" bash -c '! grep -F "sarnue: ERR" "$1"' _ "$SIM_OPENSM_LOG"
sim_stop_opensm || t_fail "OpenSM stopped cleanly"
t_done
