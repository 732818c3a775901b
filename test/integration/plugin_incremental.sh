#!/bin/bash
# sar-dfsssp's incremental reroute in the plugin under ibsim (option incremental=yes): OpenSM
# routes with a job map of two jobs, then `sarnue ctl jobs` installs a map where one of them
# changed; the reroute keeps the columns of the unchanged job and of the switches, logs
# "incremental reroute: kept N of M destination columns", and the tables the switches then
# hold verify with sarnue check (no unreachable pair, no credit loop).
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibroute python3
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

ENGINE=sar-dfsssp
export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=$ENGINE SIM_QOS=TRUE
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

"$SARNUE_BIN" gen fattree2 --leaves 6 --spines 3 --hosts-per-leaf 6 -o "$SIM_TMP/ft.net" 2>/dev/null ||
	t_fail "sarnue gen"
# Job 7 stays; job 8 moves to other hosts.
printf 'node0001 7\nnode0002 7\nnode0007 7\nnode0008 7\nnode0013 7\nnode0019 8\nnode0025 8\nnode0031 8\nnode0032 8\n' \
	>"$SIM_TMP/j1.map"
printf 'node0001 7\nnode0002 7\nnode0007 7\nnode0008 7\nnode0013 7\nnode0020 8\nnode0026 8\nnode0033 8\n' \
	>"$SIM_TMP/j2.map"
export SIM_PLUGIN_OPTIONS="ctl_mode=0600 incremental=yes job_map=$SIM_TMP/j1.map"

sim_start_ibsim "$SIM_TMP/ft.net" || { t_fail "ibsim started"; t_done; }
sim_start_opensm || { t_fail "OpenSM started"; t_done; }
sim_wait_subnet_up || { t_fail "subnet up"; t_done; }
sim_wait_programmed 1 || t_fail "the plugin routed once"
t_grep "first routing: nothing to keep yet" \
	"sarnue: $ENGINE: incremental reroute: no earlier routing of this fabric" "$SIM_OPENSM_LOG"

routings=$(sim_status_field tables_programmed)
out=$(sim_ctl jobs "$SIM_TMP/j2.map")
t_expect "ctl jobs accepted the new map ($out)" grep -q "reroute requested" <<<"$out"
sim_wait_programmed $((routings + 1)) || t_fail "the new job map made OpenSM route again"
# 45 destination LIDs (36 hosts, 9 switches); the old and new hosts of job 8 (7 LIDs)
# are routed again, everything else is kept.
t_grep "the reroute kept the unchanged columns and says how many" \
	"sarnue: $ENGINE: incremental reroute: kept 38 of 45 destination columns \(84\.4%\), routed 7 again" \
	"$SIM_OPENSM_LOG"
t_grep "the plugin counted the LFT blocks that differ" "$ENGINE: [0-9]+ LFT block\(s\) of 64 LIDs differ" \
	"$SIM_OPENSM_LOG"
json=$("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --job-map "$SIM_TMP/j2.map" --json)
t_expect "sarnue check: 0 unreachable, 0 credit loops" \
	grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$json"
sim_stop_opensm
t_done
