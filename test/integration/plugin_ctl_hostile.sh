#!/bin/bash
# Hostile clients of the plugin's control socket, under ibsim with a running OpenSM: a client
# that sends `topology` without reading is dropped and OpenSM's memory stays bounded; clients
# that dribble bytes without ever finishing a command neither keep their slots nor lock out
# `status`; `jobs` reads only the file the client itself opened and passed (a root-only file
# stays unread, a FIFO, /dev/zero or a huge file is refused at once) and the log names who
# asked; a world-accessible ctl_mode leaves the socket closed unless ctl_world=yes.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm python3
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-dfsssp SIM_QOS=TRUE
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
HOSTILE=$SARNUE_SRCDIR/test/lib/ctl_hostile.py

# As root, an unprivileged user (nobody) gets the socket through its group, the way a
# filter daemon's account would; it reaches the socket in a directory it may traverse.
AS_NOBODY=""
if [[ $(id -u) == 0 ]] && id nobody >/dev/null 2>&1 && command -v runuser >/dev/null; then
	AS_NOBODY=1
	NOGROUP=$(id -gn nobody)
	chmod 0711 "$SIM_TMP"
	mkdir -m 0755 "$SIM_TMP/pub"
	# nobody may not read the build tree (a checkout in a private directory): its copies.
	cp "$SARNUE_BIN" "$SIM_TMP/pub/sarnue"
	cp "$HOSTILE" "$SIM_TMP/pub/ctl_hostile.py"
	SIM_CTL_SOCKET=$SIM_TMP/pub/ctl.sock
	export SIM_PLUGIN_OPTIONS="ctl_mode=0660 ctl_group=$NOGROUP"
else
	echo "NOTE: not root: the checks as an unprivileged user are skipped"
	export SIM_PLUGIN_OPTIONS="ctl_mode=0600"
fi

hostile() {
	timeout 60 python3 "$HOSTILE" "$SIM_CTL_SOCKET" "$@"
}

nobody_ctl() {
	runuser -u nobody -- "$SIM_TMP/pub/sarnue" ctl --socket "$SIM_CTL_SOCKET" --timeout 20 "$@"
}

quiet() {
	"$@" >/dev/null
}

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$SIM_OPENSM_PID/status"
}

"$SARNUE_BIN" gen fattree2 --leaves 6 --spines 3 --hosts-per-leaf 6 -o "$SIM_TMP/ft.net" 2>/dev/null ||
	t_fail "sarnue gen"

sim_start_ibsim "$SIM_TMP/ft.net" || { t_fail "ibsim started"; t_done; }
sim_start_opensm || { t_fail "OpenSM started"; t_done; }
sim_wait_subnet_up || { t_fail "subnet up"; t_done; }
sim_wait_programmed 1 || t_fail "the plugin routed once"

# ------------------------------------------------ a client that never reads its replies
rss0=$(rss_kb)
hostile flood 1600000 45 >"$SIM_TMP/flood.out" &
flood_pid=$!
sim_track_pid "$flood_pid" flood || true
for _ in $(seq 100); do
	grep -q '^sent' "$SIM_TMP/flood.out" && break
	sleep 0.1
done
sleep 1
rss1=$(rss_kb)
t_expect "status answers while a client floods topology" quiet sim_ctl status
t_expect "OpenSM grew by $(((rss1 - rss0) / 1024)) MiB for the flood ($(head -n 1 "$SIM_TMP/flood.out")), at most 32" \
	test $((rss1 - rss0)) -lt 32768
wait "$flood_pid"
t_expect "the flooding client was dropped ($(tail -n 1 "$SIM_TMP/flood.out"))" \
	grep -q '^dropped after' "$SIM_TMP/flood.out"
t_grep "the drop is logged, naming the client" \
	"sarnue: ctl: dropped client uid [0-9]+ pid [0-9]+: [0-9]+ bytes of replies unread" "$SIM_OPENSM_LOG"

# ------------------------------------------------ 16 clients that never finish a command
hostile slow 16 40 >"$SIM_TMP/slow.out" &
slow_pid=$!
sim_track_pid "$slow_pid" slow || true
sleep 2
answered=0
for _ in $(seq 8); do
	sim_ctl status >/dev/null && answered=$((answered + 1))
	sleep 4
done
t_expect "all 8 status probes answered beside 16 dribbling clients ($answered)" test "$answered" = 8
t_grep "a full table made room for a new client, and said so" \
	"sarnue: ctl: 16 clients connected; closed uid [0-9]+ pid [0-9]+" "$SIM_OPENSM_LOG"
wait "$slow_pid"
t_expect "dribbled bytes kept no slot: $(cat "$SIM_TMP/slow.out" | tail -n 1)" \
	grep -q '^closed 16 of 16' "$SIM_TMP/slow.out"

# ------------------------------------------------ jobs: only what the client opened itself
printf 'topsecretword 7\nsecondline\n' >"$SIM_TMP/secret.map"
chmod 0600 "$SIM_TMP/secret.map"
routings=$(sim_status_field tables_programmed)
reply=$(hostile raw "jobs $SIM_TMP/secret.map")
t_expect "jobs by path is refused: the plugin opens no file for a client ($reply)" \
	grep -q '^error jobs: no open file came with the command; .* use `sarnue ctl jobs FILE`' <<<"$reply"
t_expect "the refusal shows nothing of the file, not even its lines" \
	bash -c '! grep -qE "topsecretword|secret.map:[0-9]" <<<"$0"' "$reply"
t_expect "OpenSM's log shows nothing of the file" bash -c '! grep -q topsecretword "$0"' "$SIM_OPENSM_LOG"

mkfifo "$SIM_TMP/fifo"
reply=$(timeout 10 python3 "$HOSTILE" "$SIM_CTL_SOCKET" raw "jobs $SIM_TMP/fifo")
t_expect "jobs naming a FIFO is refused at once ($reply)" grep -q '^error jobs: no open file' <<<"$reply"
reply=$(hostile passfd "$SIM_TMP/fifo" fifo)
t_expect "a passed FIFO is refused ($reply)" grep -q '^error fifo: not a regular file' <<<"$reply"
reply=$(hostile passfd /dev/zero zero)
t_expect "a passed /dev/zero is refused ($reply)" grep -q '^error zero: not a regular file' <<<"$reply"
truncate -s 100M "$SIM_TMP/huge.map"
reply=$(hostile passfd "$SIM_TMP/huge.map" huge)
t_expect "a passed 100 MB file is refused ($reply)" grep -q '^error huge: larger than the 16 MiB' <<<"$reply"
t_expect "status still answers after the refused files" quiet sim_ctl status
sleep 2
t_expect "no refused jobs caused a routing" test "$(sim_status_field tables_programmed)" = "$routings"

if [[ -n $AS_NOBODY ]]; then
	t_expect "the socket belongs to group $NOGROUP, mode 0660" \
		test "$(stat -c %G:%a "$SIM_CTL_SOCKET")" = "$NOGROUP:660"
	t_expect "nobody reaches the socket through its group" quiet nobody_ctl status
	out=$(nobody_ctl jobs "$SIM_TMP/secret.map" 2>&1)
	rc=$?
	t_expect "nobody's jobs on a root-only file fails in the client (exit 3, got $rc)" test $rc = 3
	t_expect "... and reveals nothing of it" bash -c '! grep -q topsecretword <<<"$0"' "$out"
	reply=$(runuser -u nobody -- env PATH=/usr/bin:/bin python3 "$SIM_TMP/pub/ctl_hostile.py" "$SIM_CTL_SOCKET" \
		raw "jobs $SIM_TMP/secret.map" 2>&1)
	t_expect "nobody's raw jobs by path is refused ($reply)" grep -q '^error jobs: no open file' <<<"$reply"
	t_expect "OpenSM's log still shows nothing of the file" \
		bash -c '! grep -q topsecretword "$0"' "$SIM_OPENSM_LOG"
	printf 'node0001 7\nnode0002 7\nnode0013 7\n' >"$SIM_TMP/pub/own.map"
	chmod 0644 "$SIM_TMP/pub/own.map"
	out=$(nobody_ctl jobs "$SIM_TMP/pub/own.map")
	t_expect "nobody installs a map it can read ($out)" grep -q 'installed: 3 entries, 1 jobs' <<<"$out"
	sim_wait_programmed $((routings + 1)) || t_fail "nobody's map made OpenSM route"
	t_expect "status: nobody's map, 1 job on 3 hosts" \
		test "$(sim_status_field job_map jobs job_hosts | paste -sd' ')" = "$SIM_TMP/pub/own.map 1 3"
	t_grep "the log names who installed it" \
		"sarnue: ctl: job map .*own.map installed \(3 entries, 1 jobs\) by uid $(id -u nobody) pid [0-9]+" \
		"$SIM_OPENSM_LOG"
fi
sim_ctl reroute >/dev/null
t_grep "the log names who asked for a reroute" "sarnue: ctl: reroute requested by uid $(id -u) pid [0-9]+" \
	"$SIM_OPENSM_LOG"

# ------------------------------------------------ world-accessible socket
sim_stop_opensm
export SIM_PLUGIN_OPTIONS="ctl_mode=0777"
SIM_CONF=""
sim_start_opensm && sim_wait_subnet_up || t_fail "OpenSM with ctl_mode=0777 came up"
sim_wait_log "ERR ctl: ctl_mode=0777 lets every local user use the control socket" 30 >/dev/null ||
	t_fail "ctl_mode=0777 refused with a log line"
t_expect "ctl_mode=0777: no socket" test ! -e "$SIM_CTL_SOCKET"
sim_stop_opensm
export SIM_PLUGIN_OPTIONS="ctl_mode=0777 ctl_world=yes"
SIM_CONF=""
sim_start_opensm && sim_wait_subnet_up || t_fail "OpenSM with ctl_world=yes came up"
sim_wait_log "sarnue: ctl: listening on .*open to every local user" 30 >/dev/null ||
	t_fail "ctl_world=yes: the log says the socket is open to every user"
t_expect "ctl_world=yes: the socket has mode 0777" test "$(stat -c %a "$SIM_CTL_SOCKET")" = 777
t_expect "ctl_world=yes: status answers" quiet sim_ctl status
sim_stop_opensm
t_done
