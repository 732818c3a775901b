#!/bin/bash
# OpenSM with the plugin under valgrind memcheck: routing a torus with a missing switch and a
# fall-back run must show no invalid access and no definite leak in libsarnue.so; so must
# sar-nue on one VL, whose tables are verified on a second thread while it routes.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm valgrind
. "$SARNUE_SRCDIR/test/lib/sim.sh"
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
t_done
