#!/bin/bash
# sarnue-filterd against a real Slurm cluster on localhost (munged, slurmctld, one slurmd per
# host) and a real OpenSM with the plugin and sar-dfsssp on an ibsim fat tree whose host names
# are the Slurm node names: 2 leaves x 4 spines, node0001-0004 on leaf 1, node0005-0008 on
# leaf 2.  Slurm also has node0009 and node0010, which the fabric does not.
#
#   a job on node0003-0006 (two leaves)      -> job map with those 4 hosts, reroute, LFTs change
#   a job on node0001-0002 (one leaf)        -> no reroute
#   the first job replaced on the same nodes -> no reroute
#   that job cancelled                       -> reroute, LFTs back to the job-less routing
#   a job on node0009-0010                   -> logged once, no reroute
#   squeue failing, timing out, printing garbage (a wrapper given with --squeue) -> logged, no
#   reroute, the daemon keeps running
#
# When the plugin has no control socket (ctl_socket), the daemon runs with --dry-run for the
# decisions, and the handoff is checked up to the socket: map written atomically, unreachable
# socket logged, retried at the next poll.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibroute ibswitches
. "$SARNUE_SRCDIR/sim/sim.sh"
. "$SARNUE_SRCDIR/test/lib/slurm.sh"
slurm_available || {
	echo "SKIP: needs root and Slurm (slurmctld slurmd slurm-client munge)"
	exit 77
}
sim_setup || exit 1

FILTERD=${SARNUE_FILTERD:-$(dirname -- "$SARNUE_BIN")/sarnue-filterd}
NET=$SIM_TMP/ft.net
MAP=$SIM_TMP/jobs
LOG=$SIM_TMP/filterd.log
OUT=$SIM_TMP/filterd.out

"$SARNUE_BIN" gen fattree2 --leaves 2 --spines 4 --hosts-per-leaf 4 -o "$NET" 2>/dev/null ||
	{ t_fail "sarnue gen"; t_done; exit 1; }

slurm_start node0001 node0002 node0003 node0004 node0005 node0006 node0007 node0008 \
	node0009 node0010 || { t_fail "Slurm cluster started"; t_done; exit 1; }
t_ok "Slurm cluster of 10 nodes up"

export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-dfsssp SIM_QOS=TRUE
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! sim_start_ibsim "$NET" || ! sim_start_opensm || ! sim_wait_subnet_up 120; then
	t_fail "ibsim and OpenSM with the plugin up"
	t_done
	exit 1
fi
sim_wait_log "sarnue: sar-dfsssp: routed" 60 1 || true
CTL=${SIM_CTL_SOCKET:-$SIM_TMP/ctl.sock}
HAVE_CTL=0
for _ in $(seq 50); do
	[[ -S $CTL ]] && { HAVE_CTL=1; break; }
	sleep 0.1
done
if ((HAVE_CTL)); then
	t_ok "plugin serves its control socket"
else
	echo "NOTE: the plugin has no control socket: decisions checked with --dry-run, reroutes pending"
fi

# count PATTERN FILE: matching lines, 0 when none or no file.
count() {
	local n
	n=$(grep -c -E -- "$1" "$2" 2>/dev/null) || true
	echo "${n:-0}"
}

# Times OpenSM wrote the unicast tables (the plugin's status), so that the switches hold what
# the last routing computed.
routings() {
	local n
	n=$("$SARNUE_BIN" ctl --socket "$CTL" --json status 2>/dev/null |
		sed -n 's/.*"tables_programmed": *\([0-9]*\).*/\1/p')
	echo "${n:-0}"
}

# wait_routings N: until OpenSM wrote the tables N times.
wait_routings() {
	local n=$1 end=$((SECONDS + 60))
	while (($(routings) < n)); do
		((SECONDS < end)) || return 1
		sleep 0.3
	done
}

# LFTs as the switches hold them, into FILE.  OpenSM reports the routing done when it has
# queued the LFT blocks, not when the switches hold them, so the tables are read until two
# reads in a row agree.
lfts() {
	local i
	sim_read_lfts "$1" >/dev/null 2>&1 || return 1
	for i in $(seq 20); do
		sleep 0.5
		sim_read_lfts "$1.again" >/dev/null 2>&1 || return 1
		cmp -s "$1" "$1.again" && return 0
		mv -f "$1.again" "$1"
	done
	echo "NOTE: the LFTs of $1 still changed after 20 reads" >&2
	return 1
}

# Children of the daemon (a squeue it runs), one PID a line.
daemon_children() {
	local f line fields
	for f in /proc/[0-9]*/stat; do
		read -r line 2>/dev/null <"$f" || continue
		read -r -a fields <<<"${line##*) }" # state, parent PID, ...
		[[ ${fields[1]:-} == "$DPID" ]] && echo "${f//[!0-9]/}"
	done
	return 0
}

# Stops the daemon between polls: SIGSTOP, then waits until a squeue it started before the
# stop has ended, so that no query runs while the test changes the jobs.
pause_daemon() {
	local end=$((SECONDS + 30))
	kill -STOP "$DPID" || return 1
	while [[ -n $(daemon_children) ]]; do
		((SECONDS < end)) || return 1
		sleep 0.1
	done
}

not_same() {
	! cmp -s "$1" "$2"
}

polls() {
	count ' poll [0-9]+:' "$LOG"
}

# wait_polls N: until the daemon logged N more polls than now (fails if it died).
wait_polls() {
	local want=$(($(polls) + $1)) end=$((SECONDS + 60))
	while (($(polls) < want)); do
		_sim_tracked_alive "$DPID" || return 1
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}

last_poll() {
	grep ' poll [0-9]*:' "$LOG" | tail -n 1
}

submit() {
	local nodes=$1 n=$2 id
	id=$(sbatch --parsable -N "$n" -w "$nodes" --time=30 -o /dev/null --wrap "sleep 600") || return 1
	slurm_wait_running "$id" 60 || return 1
	printf '%s\n' "$id"
}

((HAVE_CTL)) && { wait_routings 1 || t_fail "OpenSM wrote the first tables"; }
lfts "$SIM_TMP/lfts.0" || t_fail "LFTs read back before any job"

# ---------------------------------------------------------------- the daemon with real squeue
DARGS=(--interval 2 --min-reroute-interval 0 --fabric "$NET" --socket "$CTL" --job-map "$MAP"
	--log "$LOG" --status "$SIM_TMP/status.json")
((HAVE_CTL)) || DARGS+=(--dry-run)
"$FILTERD" "${DARGS[@]}" </dev/null >"$OUT" 2>&1 &
DPID=$!
sim_track_pid "$DPID" sarnue-filterd
wait_polls 1 || t_fail "daemon polled"
t_grep "first poll: no jobs, no change" "poll 1: .* 0 jobs.*; no change" "$LOG"
t_grep "topology logged: 8 hosts under 2 leaves" "topology from .*ft.net: 8 hosts, 8 HCA ports, 2 leaf switches" "$LOG"

# A: four hosts on two leaves.
r0=$(routings)
if A=$(submit 'node[0003-0006]' 4); then
	t_ok "job A (node0003-0006) runs"
	wait_polls 2 || t_fail "daemon polled after job A"
	t_grep "job A: reroute decided" "reroute: multi-switch node sets changed \(\+1 -0\)" "$LOG"
	if ((HAVE_CTL)); then
		t_expect "job A: job map holds exactly node0003-0006 with the job id" \
			diff <(grep -v '^#' "$MAP" | sort) <(printf 'node%04d %s\n' 3 "$A" 4 "$A" 5 "$A" 6 "$A")
		t_grep "job A: plugin accepted the map" "sent: job map $MAP installed: 4 entries, 1 jobs; reroute requested" "$LOG"
		t_expect "job A: OpenSM rerouted" wait_routings $((r0 + 1))
		lfts "$SIM_TMP/lfts.A" && t_expect "job A: LFTs read back from the switches changed" \
			not_same "$SIM_TMP/lfts.0" "$SIM_TMP/lfts.A"
	else
		t_expect "job A: dry run printed exactly node0003-0006 with the job id" \
			diff <(grep -v '^#' "$OUT" | grep '^node' | sort -u) \
			<(printf 'node%04d %s\n' 3 "$A" 4 "$A" 5 "$A" 6 "$A")
		t_grep "job A: dry run names the command" "# and send to $CTL: jobs $MAP" "$OUT"
	fi
	t_grep "status file: the last poll as JSON" '"ok":true.*"multi_switch":1,"multi_switch_hosts":4,' \
		"$SIM_TMP/status.json"
else
	t_fail "job A (node0003-0006) runs"
fi
r1=$(routings)

# B: two hosts on one leaf.
if B=$(submit 'node[0001-0002]' 2); then
	wait_polls 2 || t_fail "daemon polled after job B"
	t_expect "job B (one leaf): no change" grep -q "1 single-switch, 1 multi-switch.*; no change" <<<"$(last_poll)"
else
	t_fail "job B (node0001-0002) runs"
fi

# C replaces A on the same nodes.  The daemon is paused meanwhile so that no poll falls in the
# gap between the two jobs (that would be a real change: A ended).
pause_daemon || t_fail "daemon paused between polls"
scancel "$A"
slurm_wait_gone "$A" 60 || t_fail "job A ended"
C=$(submit 'node[0003-0006]' 4) || t_fail "job C (node0003-0006) runs"
kill -CONT "$DPID"
wait_polls 2 || t_fail "daemon polled after job C"
t_expect "job A replaced by C on the same nodes: no change" \
	grep -q "1 multi-switch on 4 hosts; no change" <<<"$(last_poll)"
t_expect "job A replaced by C: no further reroute decided" \
	test "$(grep -c 'reroute: multi-switch' "$LOG")" -eq 1

# -x is repeatable: of ten patterns only 'a?l' matches the partition "all", so both running
# jobs (B and C) are skipped and no multi-switch job is left.
exclude_opts=()
for p in 'debug*' io p1 p2 p3 p4 p5 p6 p7 'a?l'; do exclude_opts+=(-x "$p"); done
xout=$("$FILTERD" --once --dry-run --json --fabric "$NET" --socket "$CTL" \
	--job-map "$SIM_TMP/jobs-x" "${exclude_opts[@]}" 2>/dev/null)
t_expect "-x ten times, one matching: both running jobs excluded" \
	grep -q '"running":2,"short":0,"excluded":2,.*"multi_switch":0,' <<<"$xout"
xout=$("$FILTERD" --once --dry-run --json --fabric "$NET" --socket "$CTL" \
	--job-map "$SIM_TMP/jobs-x" "${exclude_opts[@]:0:18}" 2>/dev/null)
t_expect "-x nine times, none matching: no job excluded" \
	grep -q '"running":2,"short":0,"excluded":0,.*"multi_switch":1,' <<<"$xout"

# D: the multi-switch job ends.
scancel "$C"
slurm_wait_gone "$C" 60 || t_fail "job C ended"
wait_polls 2 || t_fail "daemon polled after job C ended"
t_grep "job C ended: reroute decided" "reroute: multi-switch node sets changed \(\+0 -1\)" "$LOG"
if ((HAVE_CTL)); then
	t_expect "job C ended: job map has no hosts" test -z "$(grep -v '^#' "$MAP")"
	t_expect "job C ended: OpenSM rerouted" wait_routings $((r1 + 1))
	lfts "$SIM_TMP/lfts.D" && t_expect "job C ended: LFTs back to the job-less routing" \
		cmp -s "$SIM_TMP/lfts.0" "$SIM_TMP/lfts.D"
	t_expect "single-switch job and replacement caused no routing" test "$(routings)" -eq $((r1 + 1))
fi

# E: a job on hosts the fabric does not have.
r2=$(routings)
if E=$(submit 'node[0009-0010]' 2); then
	wait_polls 3 || t_fail "daemon polled after job E"
	t_grep "job E: unknown hosts logged by name" "2 hostname\(s\) of running jobs not in the fabric .*: node0009 node0010" "$LOG"
	t_expect "job E: logged once, not at every poll" \
		test "$(grep -c 'not in the fabric' "$LOG")" -eq 1
	t_expect "job E: no change" grep -q "; no change" <<<"$(last_poll)"
	scancel "$E"
else
	t_fail "job E (node0009-0010) runs"
fi
t_expect "daemon still running" _sim_tracked_alive "$DPID"
sim_stop_pid "$DPID"
t_grep "SIGTERM: daemon logged its stop" "stopping on signal 15" "$LOG"

# ---------------------------------------------------------------- squeue failures
WRAP=$SIM_TMP/squeue-wrapper
MODE=$SIM_TMP/squeue.mode
REAL_SQUEUE=$(command -v squeue)
cat >"$WRAP" <<EOF
#!/bin/bash
case \$(cat "$MODE") in
fail) echo "slurm_load_jobs error: Unable to contact slurm controller" >&2; exit 1 ;;
hang) sleep 30 ;;
garbage) printf '{"jobs": [{"job_id": 1, "nodes": "node[0001-00\x01' ;;
textgarbage) echo "this is not squeue" ;;
*) exec "$REAL_SQUEUE" "\$@" ;;
esac
EOF
chmod +x "$WRAP"
echo fail >"$MODE"
LOG=$SIM_TMP/filterd-fail.log
r3=$(routings)
"$FILTERD" --interval 1 --squeue "$WRAP" --squeue-timeout 1 --fabric "$NET" --socket "$CTL" \
	--job-map "$SIM_TMP/jobs-fail" --log "$LOG" </dev/null >"$SIM_TMP/filterd-fail.out" 2>&1 &
DPID=$!
sim_track_pid "$DPID" "sarnue-filterd (squeue wrapper)"
wait_polls 1 || t_fail "daemon polled with failing squeue"
t_grep "squeue failing: logged with its message" "error: .*exit status 1: slurm_load_jobs error: Unable to contact" "$LOG"
echo hang >"$MODE"
wait_polls 2 || t_fail "daemon polled with hanging squeue"
t_grep "squeue hanging: killed and logged" "error: .*timed out after 1.0 s" "$LOG"
echo garbage >"$MODE"
wait_polls 2 || t_fail "daemon polled with garbage JSON"
t_grep "squeue garbage: logged with position" "error: squeue --json output: line 1, column [0-9]+: " "$LOG"
t_expect "no job map written while squeue fails" test ! -e "$SIM_TMP/jobs-fail"
echo real >"$MODE"
wait_polls 2 || t_fail "daemon polled with squeue back"
t_expect "squeue back: the daemon recovered (no change)" grep -q "; no change" <<<"$(last_poll)"
t_expect "daemon kept running through the failures" _sim_tracked_alive "$DPID"
sim_stop_pid "$DPID"
echo textgarbage >"$MODE"
out=$("$FILTERD" --once --squeue-format text --squeue "$WRAP" --fabric "$NET" --socket "$CTL" \
	--job-map "$SIM_TMP/jobs-fail" 2>&1)
t_expect "text-format garbage: --once fails (exit 1)" test $? -eq 1
t_expect "text-format garbage: error names line" grep -q "squeue -o output:1: column 13: bad time limit" <<<"$out"
t_expect "no reroute through any failure" test "$(routings)" -eq "$r3"

# ---------------------------------------------------------------- handoff without a socket
A2=$(submit 'node[0003-0006]' 4) || t_fail "job A2 runs"
LOG=$SIM_TMP/filterd-nosock.log
"$FILTERD" --once --fabric "$NET" --socket "$SIM_TMP/absent.sock" --job-map "$SIM_TMP/jobs-nosock" \
	--log "$LOG" </dev/null
rc=$?
t_expect "socket unreachable: --once exits 1 (got $rc)" test "$rc" -eq 1
t_grep "socket unreachable: logged, map kept, retry announced" \
	"reroute pending: .*control socket unreachable .*absent.sock.*; job map kept, retrying next poll" "$LOG"
t_expect "socket unreachable: the job map was written with the 4 hosts" \
	test "$(grep -c "^node000[3-6] $A2\$" "$SIM_TMP/jobs-nosock")" -eq 4
t_expect "job map written atomically (no temp file left)" \
	test -z "$(find "$SIM_TMP" -maxdepth 1 -name 'jobs-nosock.tmp*')"
if ((HAVE_CTL)); then
	# Topology from the plugin (no --fabric): the `topology` command of the socket.
	LOG=$SIM_TMP/filterd-ctltopo.log
	"$FILTERD" --once --dry-run --socket "$CTL" --job-map "$SIM_TMP/jobs-ctl" --log "$LOG" \
		</dev/null >"$SIM_TMP/filterd-ctltopo.out"
	t_grep "topology from the control socket: 8 hosts, 2 leaves" \
		"topology from $CTL: 8 hosts, 8 HCA ports, 2 leaf switches" "$LOG"
	t_expect "topology from the control socket: the job's 4 hosts in the dry-run map" \
		test "$(grep -c "^node000[3-6] $A2\$" "$SIM_TMP/filterd-ctltopo.out")" -eq 4
	# --min-gain: the current LFTs from OpenSM's dumps against sar-dfsssp routed offline for
	# the new job set; nothing can gain 100%, so the change is held back and says why.
	LOG=$SIM_TMP/filterd-gain.log
	"$FILTERD" --once --dry-run --min-gain 100 --fabric "$SIM_DUMP_DIR" --socket "$CTL" \
		--job-map "$SIM_TMP/jobs-gain" --log "$LOG" </dev/null >/dev/null
	t_grep "--min-gain 100: low gain logged with both maximum effective EFIs" \
		"low gain: node sets changed \(\+1 -0\) but max effective EFI [0-9]+ -> [0-9]+ predicted, gain -?[0-9.]+% < 100.0%" "$LOG"
	# The same judged by the throughput model: the slowest intra-job flow's rate, before and
	# after (fractions of its demand), cannot double either.
	LOG=$SIM_TMP/filterd-gain-tput.log
	"$FILTERD" --once --dry-run --min-gain 100 --gain-model throughput --fabric "$SIM_DUMP_DIR" \
		--socket "$CTL" --job-map "$SIM_TMP/jobs-gain" --log "$LOG" </dev/null >/dev/null
	t_grep "--gain-model throughput: low gain logged with the slowest job flow's rates" \
		"low gain: node sets changed \(\+1 -0\) but slowest job flow [01]\.[0-9]{4} -> [01]\.[0-9]{4} predicted, gain -?[0-9.]+% < 100.0%" "$LOG"
fi

# --daemon: detaches, writes its PID file, polls, stops on SIGTERM sent to that PID.
LOG=$SIM_TMP/filterd-daemon.log
"$FILTERD" --daemon --pidfile "$SIM_TMP/filterd.pid" --interval 1 --dry-run --fabric "$NET" \
	--job-map "$SIM_TMP/jobs-daemon" --log "$LOG" </dev/null
for _ in $(seq 50); do
	[[ -s $SIM_TMP/filterd.pid ]] && break
	sleep 0.1
done
dpid=$(cat "$SIM_TMP/filterd.pid" 2>/dev/null) || dpid=""
if [[ $dpid =~ ^[0-9]+$ ]] && sim_track_pid "$dpid" "sarnue-filterd --daemon"; then
	DPID=$dpid
	wait_polls 2 || true
	t_expect "--daemon: polls in the background (PID from the pid file)" \
		test "$(count ' poll [0-9]+:' "$LOG")" -ge 2
	sim_stop_pid "$dpid"
	t_expect "--daemon: pid file removed at SIGTERM" test ! -e "$SIM_TMP/filterd.pid"
else
	t_fail "--daemon: pid file written"
fi
scancel "$A2" 2>/dev/null

if ((!HAVE_CTL)); then
	echo "PENDING: reroute and LFT assertions need the plugin's control socket"
fi
t_done
