# shellcheck shell=bash
#
# slurm.sh - a real Slurm cluster on localhost for integration tests: munged, slurmctld and N
# slurmd (one per node name, `slurmd -N NAME`) on free ports, with every file (configuration,
# munge key and socket, state, spool, logs) in the test's temp dir; munge's go to a directory of
# their own in /tmp when user munge cannot reach the temp dir.
#
# Source it after sim.sh and call sim_setup first: the daemons are tracked by sim.sh's process
# table, so its cleanup trap stops them by PID, also when the test fails half-way.
#
#   slurm_start NODE...        munged + slurmctld + one slurmd per NODE; waits until all idle
#   slurm_env CMD...           runs a Slurm client (squeue, sbatch, ...) against this cluster
#   slurm_wait_running JOBID   waits until the job runs
#   slurm_stop                 stops everything (cleanup does it anyway)
#
# Results: SLURM_TMP (the cluster's dir), SLURM_CONF (exported, so clients find the cluster),
# SLURM_MUNGE_SOCKET.  Needs root: munged runs as user munge, slurmd as root.

if [[ -n ${_SLURM_SH_LOADED:-} ]]; then
	return 0
fi
_SLURM_SH_LOADED=1

SLURM_TMP=""
SLURM_MUNGE_DIR=""
SLURM_MUNGE_SOCKET=""
_SLURM_MUNGE_SOCKET_NAME=/munge.socket
_SLURM_PIDS=()

_slurm_msg() {
	printf 'slurm: %s\n' "$*" >&2
}

# slurm_available: true when the Slurm and munge daemons and clients are installed and we are
# root (munged must run as user munge and slurmd as root).
slurm_available() {
	local t
	((EUID == 0)) || return 1
	for t in munged slurmctld slurmd squeue sbatch scancel sinfo setpriv; do
		PATH=$PATH:/usr/sbin:/sbin command -v "$t" >/dev/null 2>&1 || return 1
	done
	id munge >/dev/null 2>&1
}

# Prints COUNT consecutive TCP ports starting at a random base, none of them listening.
_slurm_free_ports() {
	local count=$1 base p used tries
	used=$(awk 'NR > 1 { split($2, a, ":"); print strtonum("0x" a[2]) }' /proc/net/tcp /proc/net/tcp6 2>/dev/null ||
		awk 'NR > 1 { split($2, a, ":"); print a[2] }' /proc/net/tcp)
	for ((tries = 0; tries < 50; tries++)); do
		base=$((20000 + RANDOM % 30000))
		for ((p = base; p < base + count; p++)); do
			grep -qx "$p" <<<"$used" && continue 2
		done
		printf '%s\n' "$base"
		return 0
	done
	return 1
}

# Compresses NODE names "node0001 node0002" into a Slurm NodeName list, one entry per name.
_slurm_join() {
	local IFS=,
	printf '%s\n' "$*"
}

_slurm_write_conf() {
	local ctld_port=$1 base=$2
	shift 2
	local nodes=("$@") i
	{
		printf 'ClusterName=sarnuetest\nSlurmctldHost=localhost\n'
		printf 'SlurmctldPort=%s\nSlurmdPort=%s\n' "$ctld_port" "$((ctld_port + 1))"
		printf 'AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=%s\n' "$SLURM_MUNGE_SOCKET"
		printf 'StateSaveLocation=%s/state\nSlurmdSpoolDir=%s/spool-%%n\n' "$SLURM_TMP" "$SLURM_TMP"
		printf 'SlurmctldPidFile=%s/ctld.pid\nSlurmdPidFile=%s/slurmd-%%n.pid\n' "$SLURM_TMP" "$SLURM_TMP"
		printf 'SlurmctldLogFile=%s/ctld.log\nSlurmdLogFile=%s/slurmd-%%n.log\n' "$SLURM_TMP" "$SLURM_TMP"
		printf 'SlurmUser=root\nSlurmdUser=root\nProctrackType=proctrack/linuxproc\n'
		printf 'TaskPlugin=task/none\nSelectType=select/linear\nReturnToService=2\nMpiDefault=none\n'
		printf 'JobCompType=jobcomp/none\nAccountingStorageType=accounting_storage/none\n'
		printf 'SchedulerType=sched/builtin\nMinJobAge=2\nSlurmctldTimeout=10\nSlurmdTimeout=30\n'
		printf 'PluginDir=/usr/lib/x86_64-linux-gnu/slurm-wlm\n'
		for ((i = 0; i < ${#nodes[@]}; i++)); do
			printf 'NodeName=%s NodeHostname=localhost Port=%s CPUs=1 RealMemory=100 State=UNKNOWN\n' \
				"${nodes[i]}" "$((base + i))"
		done
		printf 'PartitionName=all Nodes=%s Default=YES MaxTime=INFINITE State=UP\n' "$(_slurm_join "${nodes[@]}")"
	} >"$SLURM_TMP/slurm.conf"
	# The plugin directory differs between architectures; let slurm find its default if ours
	# is not there.
	[[ -d /usr/lib/x86_64-linux-gnu/slurm-wlm ]] || sed -i '/^PluginDir=/d' "$SLURM_TMP/slurm.conf"
}

# Sets SLURM_MUNGE_DIR: SLURM_TMP/munge when user munge can reach SLURM_TMP and the socket path
# fits a socket address (107 bytes), else a fresh directory in /tmp, removed at exit.  A TMPDIR
# of mode 0700 (what mktemp -d makes) keeps user munge out of everything below it.
_slurm_munge_dir() {
	SLURM_MUNGE_DIR=$SLURM_TMP/munge
	if setpriv --reuid munge --regid munge --clear-groups test -x "$SLURM_TMP" 2>/dev/null &&
		((${#SLURM_MUNGE_DIR} + ${#_SLURM_MUNGE_SOCKET_NAME} < 107)); then
		mkdir -p "$SLURM_MUNGE_DIR"
		return
	fi
	SLURM_MUNGE_DIR=$(mktemp -d /tmp/sarnue-munge.XXXXXXXX) || return 1
	_slurm_msg "munged works in $SLURM_MUNGE_DIR: user munge cannot reach $SLURM_TMP or the socket path would be too long"
	sim_at_exit "rm -rf -- '$SLURM_MUNGE_DIR'"
}


# Starts munged as user munge with its key, socket, log and seed in SLURM_MUNGE_DIR.
_slurm_start_munge() {
	local d
	_slurm_munge_dir || return 1
	d=$SLURM_MUNGE_DIR
	chmod 0700 "$d" || return 1
	# A fresh key for this cluster only; munged refuses keys readable by others.
	head -c 1024 /dev/urandom >"$d/munge.key" && chmod 0400 "$d/munge.key" || return 1
	chown -R munge:munge "$d" || return 1
	SLURM_MUNGE_SOCKET=$d$_SLURM_MUNGE_SOCKET_NAME
	setpriv --reuid munge --regid munge --init-groups munged -F --force \
		--socket="$SLURM_MUNGE_SOCKET" --key-file="$d/munge.key" --log-file="$d/munged.log" \
		--pid-file="$d/munged.pid" --seed-file="$d/munged.seed" </dev/null >"$SLURM_TMP/munged.out" 2>&1 &
	local pid=$!
	sim_track_pid "$pid" munged || return 1
	_SLURM_PIDS+=("$pid")
	local end=$((SECONDS + 20))
	until [[ -S $SLURM_MUNGE_SOCKET ]]; do
		if ! _sim_tracked_alive "$pid" || ((SECONDS >= end)); then
			_sim_fail "munged did not start"
			_sim_tail "$SLURM_TMP/munged.out"
			_sim_tail "$d/munged.log"
			return 1
		fi
		sleep 0.1
	done
	_slurm_msg "munged up: pid $pid, socket $SLURM_MUNGE_SOCKET"
}

# slurm_env CMD...: runs a Slurm client against the test cluster.
slurm_env() {
	SLURM_CONF=$SLURM_TMP/slurm.conf "$@"
}

# slurm_start NODE...: starts the cluster with these node names and waits until every node is idle.
slurm_start() {
	_sim_need_setup || return 1
	(($# > 0)) || { _sim_fail "slurm_start: usage: slurm_start NODE..."; return 1; }
	local nodes=("$@") port base n pid
	SLURM_TMP=$SIM_TMP/slurm
	mkdir -p "$SLURM_TMP/state" || return 1
	# munged (user munge) must reach its directory below the temp dir.
	chmod 0711 "$SIM_TMP" "$SLURM_TMP" || return 1
	port=$(_slurm_free_ports 2) && base=$(_slurm_free_ports "${#nodes[@]}") ||
		{ _sim_fail "no free TCP ports"; return 1; }
	sim_at_exit slurm_stop
	_slurm_start_munge || return 1
	_slurm_write_conf "$port" "$base" "${nodes[@]}"
	export SLURM_CONF=$SLURM_TMP/slurm.conf
	slurmctld -D -i -f "$SLURM_CONF" </dev/null >"$SLURM_TMP/ctld.out" 2>&1 &
	pid=$!
	sim_track_pid "$pid" slurmctld || return 1
	_SLURM_PIDS+=("$pid")
	for n in "${nodes[@]}"; do
		slurmd -D -f "$SLURM_CONF" -N "$n" </dev/null >"$SLURM_TMP/slurmd-$n.out" 2>&1 &
		pid=$!
		sim_track_pid "$pid" "slurmd $n" || return 1
		_SLURM_PIDS+=("$pid")
	done
	local end=$((SECONDS + ${SLURM_START_TIMEOUT:-60})) idle
	while :; do
		idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
		((idle >= ${#nodes[@]})) && break
		for pid in "${_SLURM_PIDS[@]}"; do
			_sim_tracked_alive "$pid" && continue
			_sim_fail "a Slurm daemon (pid $pid) exited during start-up"
			_sim_tail "$SLURM_TMP/ctld.log"
			return 1
		done
		if ((SECONDS >= end)); then
			_sim_fail "only $idle of ${#nodes[@]} Slurm nodes idle after ${SLURM_START_TIMEOUT:-60}s"
			_sim_tail "$SLURM_TMP/ctld.log"
			sinfo -N >&2 || true
			return 1
		fi
		sleep 0.5
	done
	_slurm_msg "cluster up: slurmctld port $port, ${#nodes[@]} slurmd from port $base"
}

# slurm_wait_running JOBID [TIMEOUT]: waits until squeue shows the job running.
slurm_wait_running() {
	local job=$1 timeout=${2:-60} st
	local end=$((SECONDS + timeout))
	while :; do
		st=$(squeue -h -j "$job" -o '%T' 2>/dev/null) || st=""
		[[ $st == RUNNING ]] && return 0
		if ((SECONDS >= end)); then
			_sim_fail "job $job not running after ${timeout}s (state '${st:-gone}')"
			return 1
		fi
		sleep 0.3
	done
}

# slurm_wait_gone JOBID [TIMEOUT]: waits until the job no longer runs.
slurm_wait_gone() {
	local job=$1 timeout=${2:-60} st
	local end=$((SECONDS + timeout))
	while :; do
		st=$(squeue -h -j "$job" -o '%T' 2>/dev/null) || st=""
		[[ $st == RUNNING || $st == COMPLETING ]] || return 0
		if ((SECONDS >= end)); then
			_sim_fail "job $job still $st after ${timeout}s"
			return 1
		fi
		sleep 0.3
	done
}

# PIDs of processes running a job script of this cluster (their command line names a spool
# dir below SLURM_TMP), and of the slurmstepd above each.
_slurm_job_pids() {
	local p cmd parent
	[[ -n $SLURM_TMP ]] || return 0
	for p in /proc/[0-9]*; do
		cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		[[ $cmd == *"$SLURM_TMP/spool-"* ]] || continue
		printf '%s\n' "${p#/proc/}"
		parent=$(awk '/^PPid:/ { print $2 }' "$p/status" 2>/dev/null)
		[[ -n $parent && $(cat "/proc/$parent/comm" 2>/dev/null) == slurmstepd ]] &&
			printf '%s\n' "$parent"
	done
}

# slurm_stop: cancels every job, then stops the slurmd, slurmctld and munged (newest first) by
# PID.  slurmstepd outlives slurmd by design, so job processes still left are killed by PID.
slurm_stop() {
	local i jobs end pids
	if [[ -n $SLURM_TMP && ${#_SLURM_PIDS[@]} -gt 0 ]]; then
		jobs=$(squeue -h -o '%i' 2>/dev/null) || jobs=""
		if [[ -n $jobs ]]; then
			# shellcheck disable=SC2086 # one id per word
			scancel $jobs 2>/dev/null || true
			end=$((SECONDS + 20))
			while [[ -n $(squeue -h -o '%i' 2>/dev/null) ]] && ((SECONDS < end)); do
				sleep 0.3
			done
		fi
	fi
	# TERM to every slurmd at once: each takes seconds to exit.
	for ((i = ${#_SLURM_PIDS[@]} - 1; i >= 0; i--)); do
		_sim_tracked_alive "${_SLURM_PIDS[i]}" && kill -TERM "${_SLURM_PIDS[i]}" 2>/dev/null
	done
	for ((i = ${#_SLURM_PIDS[@]} - 1; i >= 0; i--)); do
		sim_stop_pid "${_SLURM_PIDS[i]}" 2>/dev/null || true
	done
	_SLURM_PIDS=()
	mapfile -t pids < <(_slurm_job_pids)
	if ((${#pids[@]} > 0)); then
		_slurm_msg "killing left-over job processes ${pids[*]}"
		kill -KILL "${pids[@]}" 2>/dev/null || true
	fi
}
