#!/bin/bash
# traffic=perfmgr under ibsim with OpenSM's PerfMgr on (perfmgr TRUE, a sweep a second): a
# 2-level fat tree of 4 leaves, 2 spines and 4 hosts per leaf, routed by sar-dfsssp, then by
# sar-nue, without a job map.  The first routing comes before any counter: the plugin warns once and routes with
# uniform weights, which send the routes from the first leaf to node0005 and node0007 up the
# same link.  Then ibsim's console sets the 64-bit data counters of the switch ports facing
# node0001 and node0003 (100 MB received from each) and node0005 and node0007 (100 MB sent to
# each); after PerfMgr has read them, a reroute must log the counters and the estimated matrix
# (the gravity model: 50 MB from each heavy sender to each heavy receiver) and give the two
# heavy pairs an up-link each.  `sarnue ctl status` shows the estimate.  Also: perfmgr FALSE is
# a warning at load, and traffic=perfmgr offline is an error that says why.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm python3 ibroute
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-dfsssp SIM_IBSIM_CONSOLE=1
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
gen ft fattree2 --leaves 4 --spines 2 --hosts-per-leaf 4 || exit 1
tmp=$SIM_TMP

expect_fail 1 "traffic=perfmgr: the counters come from OpenSM's PerfMgr, in the plugin only" \
	"$SARNUE_BIN" route -q -e sar-dfsssp -O traffic=perfmgr "$SIM_TMP/ft.net"

# The up-port the pair's route leaves its leaf on, read from the simulated switches.
first_port() {
	local envp
	mapfile -d '' -t envp < <(_sim_client_env)
	timeout 60 "${envp[@]}" "$SARNUE_BIN" trace --live --json "$1" "$2" 2>>"$tmp/trace.err" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["hops"][0]["out_port"])'
}

# PerfMgr has read every port it knows at least twice since the last baseline (so the values
# set before now are in a delta).
wait_reports() {
	local want=$1 end=$((SECONDS + 60)) r
	while ((SECONDS < end)); do
		r=$(sim_status_field perfmgr.reports 2>/dev/null) || r=0
		((r >= want)) && return 0
		sleep 0.5
	done
	echo "PerfMgr reports stayed at ${r:-?}, wanted $want"
	return 1
}

SIM_PLUGIN_OPTIONS="traffic=perfmgr traffic_window=60"
SIM_OPENSM_EXTRA=$'perfmgr TRUE\nperfmgr_sweep_time_s 1'
export SIM_PLUGIN_OPTIONS SIM_OPENSM_EXTRA
# weigh ENGINE: the first routing, the counters set, the reroute weighed by them.
weigh() {
	local engine=$1 u15 u37 w15 w37 b r end words programmed estimate live envp
	SIM_ROUTING_ENGINE=$engine SIM_CONF=""
	sim_start_ibsim "$SIM_TMP/ft.net" || { t_fail "$engine: ibsim started"; return; }
	sim_start_opensm || { t_fail "$engine: OpenSM started"; return; }
	sim_wait_subnet_up || { t_fail "$engine: SUBNET UP"; sim_stop_ibsim; return; }
	sim_wait_programmed 1 || t_fail "$engine: OpenSM programmed the first routing"
	t_expect "$engine: OpenSM used $engine" test "$(sim_routing_engine_used)" = "$engine"
	t_grep "$engine: the plugin says PerfMgr's counters weigh the routes" \
		"sarnue: traffic=perfmgr: the counters of the last 60 s weigh the routes" "$SIM_OPENSM_LOG"
	t_grep "$engine: no counters yet: a warning, uniform weights" \
		"WRN traffic=perfmgr: no port counted bytes in the last 60 s.*uniform weights" \
		"$SIM_OPENSM_LOG"
	u15=$(first_port node0001 node0005)
	u37=$(first_port node0003 node0007)
	echo "$engine uniform: node0001->node0005 leaves on port $u15, node0003->node0007 on $u37"
	t_expect "$engine: uniform weights send both heavy pairs up one link ($u15, $u37)" \
		test -n "$u15" -a "$u15" = "$u37"

	# Baselines first: all 48 ports (32 of switches, 16 of hosts) have reported once.
	end=$((SECONDS + 60))
	while ((SECONDS < end)); do
		b=$(sim_status_field perfmgr.baselines 2>/dev/null) || b=0
		((b >= 48)) && break
		sleep 0.5
	done
	echo "PerfMgr baselines: $b"
	t_expect "$engine: PerfMgr reported the switch and host ports (${b:-0} baselines)" test "${b:-0}" -ge 48
	r=$(sim_status_field perfmgr.reports)
	words=25000000 # 100 MB in PerfMgr's 4-byte words
	sim_ibsim_cmd "PerformanceSet \"S-0001\"[1] PortCountersExtended.PortRcvData=$words"
	sim_ibsim_cmd "PerformanceSet \"S-0001\"[3] PortCountersExtended.PortRcvData=$words"
	sim_ibsim_cmd "PerformanceSet \"S-0002\"[1] PortCountersExtended.PortXmitData=$words"
	sim_ibsim_cmd "PerformanceSet \"S-0002\"[3] PortCountersExtended.PortXmitData=$words"
	wait_reports $((r + 2 * b)) || t_fail "$engine: PerfMgr read the ports twice after the counters were set"
	programmed=$(sim_status_field tables_programmed)
	t_expect "$engine: ctl reroute is accepted" sim_ctl reroute
	sim_wait_programmed $((programmed + 1)) || t_fail "$engine: the reroute was programmed"
	t_grep "$engine: the reroute logs the ports that reported and the window" \
		"sarnue: traffic=perfmgr: [0-9]+ port\(s\) reported in the last 60 s, [0-9]+ with bytes" \
		"$SIM_OPENSM_LOG"
	t_grep "$engine: the estimate names its counters, senders and jobs" \
		"sarnue: $engine: traffic from PerfMgr counters: [0-9]+ counters of host links, [0-9]+ host\(s\) sent [0-9]+ bytes, [0-9]+ received; gravity model in 1 job\(s\) \(no job map: all hosts one job\)" \
		"$SIM_OPENSM_LOG"
	estimate=$(sim_log "$SIM_OPENSM_LOG" | grep -o 'heaviest .*' | tail -n 1)
	echo "estimate: $estimate"
	# 100 MB from each sender over the two heavy receivers (and the little MAD traffic).
	t_expect "$engine: the heaviest estimated pairs are the senders to the receivers, about 50 MB each" \
		python3 -c '
import re, sys
pairs = re.findall(r"(node\d+)->(node\d+) (\d+)", sys.argv[1])
assert len(pairs) == 3, pairs
for a, b, n in pairs:
    assert a in ("node0001", "node0003") and b in ("node0005", "node0007"), (a, b)
    assert 49000000 <= int(n) <= 51000000, n
' "$estimate"
	t_expect "$engine: ctl status shows the estimate" \
		grep -q "heaviest node000" <<<"$(sim_status_field perfmgr.last_estimate)"
	t_expect "$engine: ctl status as text names the PerfMgr fields" \
		grep -qE "^perfmgr.ports_in_last_window: +[1-9]" <<<"$(sim_ctl status)"
	t_expect "$engine: ctl metrics counts PerfMgr's reports" \
		grep -qE "^sarnue_perfmgr_reports(_total)? [1-9]" <<<"$(sim_ctl metrics)"
	w15=$(first_port node0001 node0005)
	w37=$(first_port node0003 node0007)
	echo "$engine perfmgr: node0001->node0005 leaves on port $w15, node0003->node0007 on $w37"
	t_expect "$engine: the estimate gives each heavy pair an up-link of its own ($w15, $w37)" \
		test -n "$w15" -a -n "$w37" -a "$w15" != "$w37"
	mapfile -d '' -t envp < <(_sim_client_env)
	live=$(timeout 120 "${envp[@]}" "$SARNUE_BIN" check --live --json 2>>"$tmp/live.err")
	t_expect "$engine: the weighed tables read back from the switches verify (0 unreachable, 0 credit loops)" \
		grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$live"
	sim_stop_ibsim
}

weigh sar-dfsssp
weigh sar-nue

# perfmgr FALSE: a warning when the plugin loads, and the routing goes on.
SIM_OPENSM_EXTRA="perfmgr FALSE" SIM_CONF="" SIM_ROUTING_ENGINE=sar-dfsssp
SIM_IBSIM_CONSOLE=0 sim_start_ibsim "$SIM_TMP/ft.net" || exit 1
if sim_run_opensm_once; then
	t_grep "perfmgr FALSE: one warning at load" \
		"WRN traffic=perfmgr but OpenSM's perfmgr is FALSE" "$SIM_OPENSM_LOG"
	t_expect "perfmgr FALSE: warned once only" \
		test "$(sim_log "$SIM_OPENSM_LOG" | grep -c 'WRN traffic=perfmgr')" = 1
	t_expect "perfmgr FALSE: sar-dfsssp still routed" \
		test "$(sim_routing_engine_used)" = sar-dfsssp
else
	t_fail "perfmgr FALSE: OpenSM brought the subnet up"
fi
sim_stop_ibsim
t_done
