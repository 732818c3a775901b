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

# The verdict forgives a leak only when its whole stack is OpenSM's own (a PerfMgr sweep cut by
# SIGTERM): the same record fails with a frame of the plugin in it, cut short, or beside an
# invalid read.
vg_leak() { # $1: the frame between strdup and cl_qmap_apply_func
	printf '%s\n' '==7== ' '==7== 131 bytes in 15 blocks are definitely lost in loss record 6 of 10' \
		'==7==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)' \
		'==7==    by 0x49469A9: strdup (strdup.c:42)' "==7==    by 0x1A020A: $1" \
		'==7==    by 0x486F2A8: cl_qmap_apply_func (in /usr/lib/x86_64-linux-gnu/libosmcomp.so.5.0.0)' \
		'==7==    by 0x1A4204: osm_perfmgr_process (in /usr/sbin/opensm)' \
		'==7==    by 0x49311F4: start_thread (pthread_create.c:442)' \
		'==7==    by 0x49B0B4F: clone (clone.S:100)' '==7== ' \
		'==7== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 70 from 7)'
}
vg_leak '??? (in /usr/sbin/opensm)' >"$SIM_TMP/vg-osm.log"
vg_leak 'nue_route (in /build/.libs/libsarnue.so)' >"$SIM_TMP/vg-plugin.log"
grep -v 'start_thread\|clone (' "$SIM_TMP/vg-osm.log" >"$SIM_TMP/vg-cut.log"
{ printf '%s\n' '==7== Invalid read of size 4' '==7==    at 0x1: ??? (in /usr/sbin/opensm)'
  cat "$SIM_TMP/vg-osm.log"; } >"$SIM_TMP/vg-invalid.log"
{ printf '%s\n' "==7== Argument 'size' of function malloc has a fishy (possibly negative) value: -1" \
	'==7==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)'
  sed 's/1 errors from 1 contexts/2 errors from 2 contexts/' "$SIM_TMP/vg-osm.log"; } >"$SIM_TMP/vg-other.log"
t_expect "valgrind verdict: OpenSM's own leak at exit is forgiven" \
	_sim_valgrind_verdict "$SIM_TMP/vg-osm.log" 99
vg_fails() { ! _sim_valgrind_verdict "$SIM_TMP/vg-$1.log" 99 2>/dev/null; }
t_expect "valgrind verdict: the leak with a frame of the plugin fails" vg_fails plugin
t_expect "valgrind verdict: the leak with its stack cut short fails" vg_fails cut
t_expect "valgrind verdict: the leak beside an invalid read fails" vg_fails invalid
t_expect "valgrind verdict: the leak beside an error of another kind fails" vg_fails other

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
