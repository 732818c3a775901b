#!/bin/bash
# The five-phase update end to end under ibsim: OpenSM (lmc 1, qos) with the plugin and
# sar-dfsssp, four sarnue-agents on HCAs of different leaves, reroutes through `sarnue ctl jobs`.
#  1. A job map that changes the routes: UnPath reaches every agent; while the hosts still
#     acknowledge, the LFTs read back from the switches are the old ones; the new ones are
#     written only after the last acknowledgement; RePath reaches every agent; the log shows
#     phases 1-5 in order; the final tables verify (sarnue check --live, ibdmchk).
#  2. An agent whose handler fails (alive, never acknowledges): update_on_timeout=abort keeps
#     the old tables and sends RePath; after a restart with update_on_timeout=proceed the new
#     tables go out after the timeout.
#  3. An agent killed in phase 2: it falls silent, expires, and the update completes.
#  4. A link taken down in ibsim during phase 2: the update aborts to a full reroute and the
#     fabric stays deadlock-free.
# Unsolicited MADs reach only ibsim clients attached with SIM_SET_ISSM=1, so OpenSM runs with
# ignore_other_sm TRUE (doc/agent.md).
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibroute python3
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

AGENT=$(dirname -- "$SARNUE_BIN")/sarnue-agent
[[ -x $AGENT ]] || { t_fail "sarnue-agent built"; t_done; exit 1; }

export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-dfsssp SIM_QOS=TRUE SIM_LMC=1
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SIM_OPENSM_EXTRA="ignore_other_sm TRUE"
export SIM_IBSIM_CONSOLE=1
# planes=on with the default update=auto: two planes make reroutes five-phase.
BASE_OPTS="dump=always planes=on update_retry=1 update_rounds=3"
export SIM_PLUGIN_OPTIONS="$BASE_OPTS update_timeout=12"

"$SARNUE_BIN" gen fattree2 --leaves 6 --spines 3 --hosts-per-leaf 6 -o "$SIM_TMP/ft.net" 2>/dev/null ||
	t_fail "sarnue gen"
# Jobs across several leaves change sar-dfsssp's weights; each map routes differently.
printf 'node0001 7\nnode0002 7\nnode0007 7\nnode0008 7\nnode0013 7\nnode0019 8\nnode0025 8\nnode0031 8\nnode0032 8\n' \
	>"$SIM_TMP/j1.map"
printf 'node0003 9\nnode0009 9\nnode0015 9\nnode0021 9\nnode0027 9\nnode0033 9\n' >"$SIM_TMP/j2.map"
: >"$SIM_TMP/j0.map"

hosts=(H-0001 H-0007 H-0013 H-0019)
declare -A pid
# The agent's command records each report; a marker file makes host H's UnPath handler slow
# ($SIM_TMP/slow-H) or fail ($SIM_TMP/fail-H).
handler() {
	local h=$1
	printf '%s' "f=$SIM_TMP/\$SARNUE_KIND-\$SARNUE_SEQ-$h.env; "
	printf '%s' "if [ \"\$SARNUE_KIND\" = unpath ] && [ -e $SIM_TMP/slow-$h ]; then sleep \$(cat $SIM_TMP/slow-$h); fi; "
	printf '%s' "if [ \"\$SARNUE_KIND\" = unpath ] && [ -e $SIM_TMP/fail-$h ]; then exit 1; fi; "
	printf '%s' "env | grep '^SARNUE_' | sort > \$f"
}
# Agents run in SIM_TMP: libumad2sim leaves its fake sysfs tree ./sys-PID behind when a
# client is killed, as one agent is below.
start_agent() {
	local h=$1
	(cd "$SIM_TMP" && exec "${envp[@]}" SIM_HOST="$h" SIM_SET_ISSM=1 "$AGENT" \
		--exec "$(handler "$h")" --json "$SIM_TMP/$h.json" --log "$SIM_TMP/$h.log" \
		--exec-timeout 60) &
	pid[$h]=$!
	sim_track_pid "${pid[$h]}" "agent-$h"
}
start_all() {
	local h
	for h in "${hosts[@]}"; do
		start_agent "$h"
	done
	for h in "${hosts[@]}"; do
		sim_wait_log "subscribed on " 30 1 "$SIM_TMP/$h.log" || t_fail "$h subscribed"
	done
	sim_wait_quiet
}
stop_all() {
	local h
	for h in "${hosts[@]}"; do
		[[ -n ${pid[$h]:-} ]] && sim_stop_pid "${pid[$h]}" 20
		pid[$h]=""
	done
}

# The number of the first line of OpenSM's log matching PATTERN.
log_line() {
	grep -n -E "$1" <(sim_log "$SIM_OPENSM_LOG") | head -n 1 | cut -d: -f1
}

start_fabric() {
	SIM_CONF=""
	sim_start_opensm && sim_wait_subnet_up || { t_fail "OpenSM came up"; return 1; }
	sim_wait_programmed 1 60 || true
}

sim_start_ibsim "$SIM_TMP/ft.net" || { t_fail "ibsim started"; t_done; exit 1; }
mapfile -d '' -t envp < <(_sim_client_env)
start_fabric || { t_done; exit 1; }
start_all
t_expect "status: update mode auto, idle" test "$(sim_status_field update.mode)/$(sim_status_field phase)" = auto/idle
t_grep "the routing has two planes" "2 planes: base LIDs on VLs" "$SIM_OPENSM_LOG"
sim_high_lids >"$SIM_TMP/high.lids"
t_expect "36 high LIDs in the subnet dump" test "$(wc -l <"$SIM_TMP/high.lids")" = 36

# ---- 1. a job map that changes the routes, every agent acknowledges
sim_read_lfts "$SIM_TMP/lfts.0" || t_fail "LFTs read before the update"
echo 4 >"$SIM_TMP/slow-H-0013" # phase 2 lasts at least 4 s
t_expect "ctl jobs accepted" sim_ctl jobs "$SIM_TMP/j1.map"
t_expect "phase 2: waiting for the UnPath acknowledgements" sim_wait_status phase wait-unpath 60
seq=$(sim_status_field update.seq)
t_expect "status: four subscribers waited for" test "$(sim_status_field update.subscribers)" = 4
sim_read_lfts "$SIM_TMP/lfts.p2" || t_fail "LFTs read in phase 2"
t_expect "phase 2: the switches still hold the old tables" cmp -s "$SIM_TMP/lfts.0" "$SIM_TMP/lfts.p2"
t_expect "a reroute asked for in phase 2 is accepted" sim_ctl reroute
t_expect "... and queued, not lost" sim_wait_status update.queued true 20
t_expect "the update completes" sim_wait_status update.updates 1 90
t_expect "... and ends idle (phase 5)" test "$(sim_status_field update.phase_number)" = 5
t_expect "... done, not aborted" test "$(sim_status_field update.aborted)/$(sim_status_field update.last_outcome)" = 0/done
t_grep "the queued reroute ran after the update" "a reroute requested during update $seq runs now" "$SIM_OPENSM_LOG"
sim_read_lfts "$SIM_TMP/lfts.1" || t_fail "LFTs read after the update"
for f in 0 1; do
	sim_plane_lfts high "$SIM_TMP/high.lids" "$SIM_TMP/lfts.$f" >"$SIM_TMP/high.$f"
	sim_plane_lfts base "$SIM_TMP/high.lids" "$SIM_TMP/lfts.$f" >"$SIM_TMP/base.$f"
done
t_expect "the update changed base-LID entries" bash -c '! cmp -s "$1" "$2"' _ "$SIM_TMP/base.0" "$SIM_TMP/base.1"
t_expect "high-LID entries never changed (and exist)" bash -c 'test -s "$1" && cmp -s "$1" "$2"' _ "$SIM_TMP/high.0" "$SIM_TMP/high.1"
t_grep "the reroute kept the escape plane" "high LIDs by sar-[a-z]* on VL [0-9]+ \\(kept" "$SIM_OPENSM_LOG"
for h in "${hosts[@]}"; do
	t_expect "$h ran its UnPath handler for update $seq" test -s "$SIM_TMP/unpath-$seq-$h.env"
	t_expect "$h ran its RePath handler for update $seq" test -s "$SIM_TMP/repath-$seq-$h.env"
done
for ph in "1 \(unpath\)" "2 \(wait-unpath\)" "3 \(push\)" "4 \(repath\)" "5 \(idle\)"; do
	t_grep "log: update $seq entered phase ${ph%% *}" "update $seq: phase $ph at 20[0-9-]+T" "$SIM_OPENSM_LOG"
done
p2=$(log_line "update $seq: phase 2 ")
p3=$(log_line "update $seq: phase 3 ")
p4=$(log_line "update $seq: phase 4 ")
p5=$(log_line "update $seq: phase 5 ")
t_expect "log: phases in order" test "$p2" -lt "$p3" -a "$p3" -lt "$p4" -a "$p4" -lt "$p5"
acks=$(grep -n "acknowledgement of unpath seq $seq .*status 0): new" <(sim_log "$SIM_OPENSM_LOG") | cut -d: -f1)
t_expect "log: four new UnPath acknowledgements" test "$(wc -w <<<"$acks")" = 4
t_expect "log: every UnPath acknowledgement came before phase 3" \
	test "$(sort -n <<<"$acks" | tail -n 1)" -lt "$p3"
wrote=$(log_line "update $seq: OpenSM wrote [0-9]+ changed LFT block")
t_expect "log: the changed blocks were written in phase 3" test "${wrote:-0}" -gt "$p3" -a "${wrote:-0}" -lt "$p4"
t_grep "log: only changed blocks go out" "update $seq: OpenSM wrote [1-9][0-9]* changed LFT block\(s\) on [1-9][0-9]* switch" "$SIM_OPENSM_LOG"
json=$(timeout 120 "${envp[@]}" "$SARNUE_BIN" check --live --path-sl "$SIM_DUMP_DIR/sarnue-path-sl.dump" --json 2>"$SIM_TMP/live.err")
t_expect "final tables verify (sarnue check --live)" \
	grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$json"
t_expect "final tables: ibdmchk finds no credit loop (base plane)" \
	sim_ibdmchk -c "$SIM_DUMP_DIR/sarnue-path-sl.dump" -d "$SIM_DUMP_DIR/sarnue-sl2vl.dump"
t_expect "final tables: ibdmchk finds no credit loop (high plane)" \
	sim_ibdmchk_high_plane -c "$SIM_DUMP_DIR/sarnue-path-sl.dump" -d "$SIM_DUMP_DIR/sarnue-sl2vl.dump"
rm -f "$SIM_TMP/slow-H-0013"

# ---- 2a. an agent whose handler fails: timeout, policy abort
touch "$SIM_TMP/fail-H-0007"
t_expect "ctl jobs (second map) accepted" sim_ctl jobs "$SIM_TMP/j2.map"
t_expect "the update ends after the timeout" sim_wait_status update.updates 2 90
seq=$(sim_status_field update.seq)
t_expect "... counted as aborted" test "$(sim_status_field update.aborted)" = 1
t_grep "log: timeout, update_on_timeout=abort" "update $seq aborted: timeout after 12 s with 1 subscriber\(s\) silent or not done \(update_on_timeout=abort\)" "$SIM_OPENSM_LOG"
t_grep "log: the failing host answered as alive, not done" "acknowledgement of unpath seq $seq .*status 1\): not done" "$SIM_OPENSM_LOG"
t_expect "the failing host never expired" bash -c '! grep -q "did not acknowledge unpath seq $1: expired" "$2"' _ "$seq" "$SIM_OPENSM_LOG"
sim_read_lfts "$SIM_TMP/lfts.2a" || t_fail "LFTs read after the aborted update"
t_expect "abort: the old tables stay" cmp -s "$SIM_TMP/lfts.1" "$SIM_TMP/lfts.2a"
for h in "${hosts[@]}"; do
	t_expect "abort: $h got RePath $seq (back to the base LIDs)" test -s "$SIM_TMP/repath-$seq-$h.env"
done
stop_all
rm -f "$SIM_TMP/fail-H-0007"

# ---- 2b. the same with update_on_timeout=proceed
sim_stop_opensm
# A short sweep interval lets OpenSM notice the link taken down in part 4 within phase 2.
export SIM_PLUGIN_OPTIONS="$BASE_OPTS update_timeout=10 update_on_timeout=proceed job_map=$SIM_TMP/j1.map"
export SIM_OPENSM_EXTRA="ignore_other_sm TRUE
sweep_interval 2"
start_fabric || { t_done; exit 1; }
start_all
sim_read_lfts "$SIM_TMP/lfts.3" || t_fail "LFTs read before the proceeding update"
touch "$SIM_TMP/fail-H-0007"
t_expect "ctl jobs accepted (proceed policy)" sim_ctl jobs "$SIM_TMP/j2.map"
t_expect "the update ends" sim_wait_status update.updates 1 90
seq=$(sim_status_field update.seq)
t_grep "log: timeout, update_on_timeout=proceed pushes" "update $seq: phase 3 \(push\) at .*timeout after 10 s with 1 subscriber\(s\) silent or not done; update_on_timeout=proceed" "$SIM_OPENSM_LOG"
sim_read_lfts "$SIM_TMP/lfts.3b" || t_fail "LFTs read after the proceeding update"
t_expect "proceed: the new tables went out" bash -c '! cmp -s "$1" "$2"' _ "$SIM_TMP/lfts.3" "$SIM_TMP/lfts.3b"
rm -f "$SIM_TMP/fail-H-0007"

# ---- 3. an agent killed in phase 2
echo 60 >"$SIM_TMP/slow-H-0019"
t_expect "ctl jobs accepted (agent to be killed)" sim_ctl jobs "$SIM_TMP/j1.map"
t_expect "phase 2 reached" sim_wait_status phase wait-unpath 60
seq=$(sim_status_field update.seq)
sleep 1
kill -KILL "${pid[H-0019]}"
t_expect "the update completes without the killed agent" sim_wait_status update.updates 2 90
t_expect "... not aborted" test "$(sim_status_field update.last_outcome)" = done
t_grep "log: the killed agent expired" "did not acknowledge unpath seq $seq: expired" "$SIM_OPENSM_LOG"
rm -f "$SIM_TMP/slow-H-0019"
pid[H-0019]=""

# ---- 4. a link goes down during phase 2
echo 30 >"$SIM_TMP/slow-H-0001"
t_expect "ctl jobs accepted (link to fail)" sim_ctl jobs "$SIM_TMP/j0.map"
t_expect "phase 2 reached" sim_wait_status phase wait-unpath 60
seq=$(sim_status_field update.seq)
sim_ibsim_cmd 'Unlink "S-0001"[7]'
t_expect "the update ends" sim_wait_status update.updates 3 120
t_grep "log: aborted to a full reroute, not property preserving" "update $seq: the topology changed in phase 2: full reroute now, not property preserving" "$SIM_OPENSM_LOG"
t_expect "status: aborted by the topology change" grep -q "topology change" <<<"$(sim_status_field update.last_outcome)"
sim_wait_quiet
json=$(timeout 120 "${envp[@]}" "$SARNUE_BIN" check --live --path-sl "$SIM_DUMP_DIR/sarnue-path-sl.dump" --json 2>"$SIM_TMP/live.err")
t_expect "after the link failure the tables verify (no credit loop)" \
	grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$json"
rm -f "$SIM_TMP/slow-H-0001"
stop_all
sim_stop_opensm
t_done
