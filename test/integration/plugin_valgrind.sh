#!/bin/bash
# OpenSM with the plugin under valgrind memcheck: routing a torus with a missing switch and a
# fall-back run must show no invalid access and no definite leak in libsarnue.so; so must
# sar-nue on one VL, whose tables are verified on a second thread while it routes; and so must
# a running OpenSM with sar-dfsssp on 8 VLs that reroutes on `sarnue ctl reroute`, on a job map
# installed with `sarnue ctl jobs` and on a link fault, and builds the multicast tree of hosts
# that join IPoIB's broadcast group, while PerfMgr reports counters for traffic=perfmgr.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm valgrind
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

net=$SIM_TMP/torus.net
"$SARNUE_BIN" gen torus --dims 3x3x2 --hosts-per-switch 2 --remove-switch-id S-0002 -o "$net" \
	2>/dev/null || { t_fail "sarnue gen"; t_done; exit 1; }
sim_start_ibsim "$net" || exit 1
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-updn,minhop SIM_VALGRIND=1
for opts in "verify=yes" "updn_roots=0x100000"; do
	export SIM_PLUGIN_OPTIONS=$opts
	SIM_CONF=""
	t_expect "OpenSM with the plugin ($opts) is memcheck-clean" sim_run_opensm_once
	t_grep "the plugin ran under valgrind ($opts)" "sarnue: (sar-updn: routed|ERR sar-updn)" "$SIM_OPENSM_LOG"
done
export SIM_ROUTING_ENGINE=sar-nue,minhop SIM_PLUGIN_OPTIONS="nue_vls=1"
SIM_CONF=""
t_expect "OpenSM with sar-nue on one VL is memcheck-clean" sim_run_opensm_once
if (($(nproc) > 1)); then
	t_grep "sar-nue verified beside the routing under valgrind" \
		"sarnue: sar-nue: routed .*verified beside the routing" "$SIM_OPENSM_LOG"
else
	t_grep "sar-nue routed under valgrind" "sarnue: sar-nue: routed" "$SIM_OPENSM_LOG"
fi

# A running OpenSM, not single sweeps: the control thread, the job map and a fault.
sim_stop_ibsim
"$SARNUE_BIN" gen fattree2 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$SIM_TMP/ft.net" 2>/dev/null ||
	t_fail "sarnue gen fattree2"
printf 'node0001 7\nnode0004 7\nnode0007 7\nnode0010 8\nnode0002 8\n' >"$SIM_TMP/jobs.map"
export SIM_ROUTING_ENGINE=sar-dfsssp,minhop SIM_QOS=TRUE SIM_IBSIM_CONSOLE=1
# PerfMgr on: its counter reports reach the plugin on OpenSM's MAD threads while it routes.
export SIM_PLUGIN_OPTIONS="traffic=perfmgr" SIM_OPENSM_EXTRA=$'perfmgr TRUE\nperfmgr_sweep_time_s 1'
export SIM_IPOIB=TRUE
SIM_CONF=""
if sim_start_ibsim "$SIM_TMP/ft.net" && sim_start_opensm && sim_wait_subnet_up; then
	sim_wait_programmed 1 240 || t_fail "sar-dfsssp under valgrind: first tables programmed"
	sim_ctl reroute >/dev/null || t_fail "ctl reroute under valgrind"
	sim_wait_programmed 2 240 || t_fail "sar-dfsssp under valgrind: rerouted on ctl reroute"
	sim_ctl jobs "$SIM_TMP/jobs.map" >/dev/null || t_fail "ctl jobs under valgrind"
	sim_wait_programmed 3 240 || t_fail "sar-dfsssp under valgrind: rerouted on the job map"
	# Multicast: hosts join IPoIB's broadcast group; the plugin builds and checks the tree.
	joined=1
	for h in H-0001 H-0004 H-0007 H-0010; do
		sim_mcast_join "$h" ff12:401b:ffff::ffff:ffff 0 --timeout 20000 >/dev/null || joined=0
	done
	t_expect "four hosts joined the broadcast group under valgrind" test "$joined" = 1
	sim_wait_log "sarnue: sar-dfsssp: multicast MLID 0xc000: SL 0 on VL 0, 4 members" 240 ||
		t_fail "sar-dfsssp under valgrind: the broadcast group's tree built"
	# PerfMgr has read the ports twice (a baseline, then bytes), so the next routing weighs.
	end=$((SECONDS + 240))
	while ((SECONDS < end)); do
		read -r reports baselines < <(sim_status_field perfmgr.reports perfmgr.baselines | xargs)
		((${baselines:-0} > 0 && ${reports:-0} >= 2 * ${baselines:-0})) && break
		sleep 0.5
	done
	routings=$(sim_status_field routings)
	# Leaf S-0001's first uplink (port 4, after its 3 hosts).
	sim_ibsim_cmd 'Unlink "S-0001"[4]'
	sim_wait_status routings $((routings + 1)) 240 || t_fail "sar-dfsssp under valgrind: rerouted on a link fault"
	t_grep "sar-dfsssp ran under valgrind with the job map" \
		"sarnue: sar-dfsssp: routed .* 2 job\\(s\\) on 5 nodes" "$SIM_OPENSM_LOG"
	t_grep "sar-dfsssp under valgrind weighed a routing by PerfMgr's counters" \
		"sarnue: sar-dfsssp: traffic from PerfMgr counters: .* gravity model in [12] job" \
		"$SIM_OPENSM_LOG"
	t_expect "a running OpenSM with sar-dfsssp, reroutes, ctl jobs and a link fault is memcheck-clean" \
		sim_stop_opensm
else
	t_fail "OpenSM with sar-dfsssp started under valgrind"
fi
t_done
