# shellcheck shell=bash
#
# sim.sh - run OpenSM against an ibsim-simulated InfiniBand fabric.
#
# Source this file from a bash test or demo script; do not execute it.
#
#   . sim/sim.sh
#   sim_setup                              # temp dir + cleanup trap
#   sim_start_ibsim fabric.net             # simulated fabric, unique socket
#   SIM_ROUTING_ENGINE=updn sim_run_opensm_once   # one sweep, dumps files
#   sim_ibdmchk                            # 0 iff "no credit loops found"
#   sim_read_lfts "$SIM_TMP/lfts.fabric"   # LFTs as programmed in the fabric
#
# Every function logs short "sim: ..." lines on stderr and returns non-zero
# with a message on failure. Everything lives in a private temp dir and a
# private ibsim socket name, so several tests can run in parallel.
#
# Settings (environment, all optional):
#   SIM_ROUTING_ENGINE   routing_engine for opensm.conf        (updn)
#   SIM_PLUGIN           event_plugin_name, e.g. sarnue         (none)
#   SIM_PLUGIN_OPTIONS   event_plugin_options                   (none)
#   SIM_QOS              qos TRUE|FALSE                         (FALSE)
#   SIM_LMC              lmc 0-7                                 (0)
#   SIM_IBDMCHK_LMC      ibdmchk -l; see sim_ibdmchk            (0)
#   SIM_OPENSM_EXTRA     extra opensm.conf lines (later lines win)
#   SIM_OPENSM_LOGFLAGS  opensm -D flags; keep 0x40 for dumps   (0x43)
#   SIM_OPENSM_TIMEOUT   seconds for one sweep with -o          (120; 900 under valgrind)
#   SIM_VALGRIND=1       run OpenSM under valgrind memcheck
#   SIM_VALGRIND_OPTS    extra valgrind options (--leak-check=full --errors-for-leak-kinds=definite)
#   SIM_VALGRIND_SUPP    more valgrind suppression files (space separated)
#   SIM_IBSIM_NODES / SIM_IBSIM_SWITCHES / SIM_IBSIM_PORTS   ibsim -N/-S/-P
#   SIM_IBSIM_TIMEOUT    seconds to wait for ibsim to come up  (30)
#   SIM_IBDMCHK_TIMEOUT  seconds for ibdmchk                   (600)
#   SIM_STOP_TIMEOUT     seconds between SIGTERM and SIGKILL   (30)
#   SIM_UMAD2SIM         path of libumad2sim.so                (Debian path)
#   SIM_HOST             ibsim node the SM / diag tools attach at (first node)
#   SIM_IPOIB=TRUE       partitions.conf "Default=0x7fff, ipoib : ALL=full;": OpenSM
#                        creates IPoIB's broadcast group (as it does with no file)
#   SIM_PARTITIONS       partitions.conf text (wins over SIM_IPOIB); without either
#                        there is no file and OpenSM makes its default partition
#   SIM_SA_DUMP=TRUE     sa_db_dump TRUE: opensm-sa.dump (MC groups, members) in the
#                        dump dir at light sweeps and at exit; see sim_wait_sa_dump
#   SIM_MCJOIN           path of sarnue-mcjoin (next to SARNUE_BIN: test/tools/)
#   SARNUE_KEEP_TMP=1    keep the temp dir at exit and print where it is
#   LD_LIBRARY_PATH      left as is, so OpenSM's dlopen() finds a plugin
#
# Results (read-only for callers):
#   SIM_TMP         the temp dir           SIM_DUMP_DIR  OpenSM dump_files_dir
#   SIM_CONF        opensm.conf in use     SIM_OPENSM_LOG log of the last OpenSM run
#   SIM_IBSIM_PID   ibsim's PID            SIM_OPENSM_PID PID of the running OpenSM
#   SIM_IBDMCHK_OUT full output of the last sim_ibdmchk
#   SIM_CTL_SOCKET  the plugin's control socket (in SIM_TMP unless the options say otherwise)
#   IBSIM_SOCKNAME  exported, so libumad2sim clients find our ibsim
#
# Caveat: call these functions in the main shell, not inside $(...) or a
# pipeline: PIDs recorded in a subshell are lost to the cleanup trap.

if [[ -n ${_SIM_SH_LOADED:-} ]]; then
	return 0
fi
_SIM_SH_LOADED=1

SIM_TMP=""
SIM_DUMP_DIR=""
SIM_CTL_SOCKET=""
SIM_CONF=""
SIM_OPENSM_LOG=""
SIM_IBSIM_PID=""
SIM_OPENSM_PID=""
SIM_IBDMCHK_OUT=""

# Tracked processes: three index-aligned arrays. The start time (field 22 of
# /proc/PID/stat) guards against signalling a recycled PID: bash reaps
# background children by itself, so a PID alone is not proof of identity.
_SIM_PIDS=()
_SIM_PID_START=()
_SIM_PID_NAME=()
_SIM_AT_EXIT=()
_SIM_OWNER=""
_SIM_CLEANED=0
_SIM_SEQ=0
_SIM_CONF_LMC=0
_SIM_OPENSM_VGLOG=""
_SIM_LAST_RC=0

# awk function hex(s): the value of hex digits s, with or without 0x, any case.  Prepend it to
# an awk program that needs it: mawk, Debian's default awk, has no strtonum.
SIM_AWK_HEX='
function hex(s,   i, v) {
	s = tolower(s); sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}'


# ---------------------------------------------------------------- messages

_sim_msg() {
	printf 'sim: %s\n' "$*" >&2
}

# Prints an error. Returns 0 on purpose: callers `return 1` themselves, and
# a failing statement here would end a caller running under `set -e`
# before the explanation that follows.
_sim_fail() {
	printf 'sim: ERROR: %s\n' "$*" >&2
}

# Shows the last lines of a log, indented, to explain a failure. Lines
# matching the ERE SKIP (noise) are left out.
_sim_tail() {
	local file=$1 n=${2:-15} skip=${3:-}
	[[ -r $file ]] || return 0
	_sim_msg "last lines of $file:"
	if [[ -n $skip ]]; then
		grep -v -E -- "$skip" "$file" | tail -n "$n" | sed 's/^/sim:   | /' >&2 || true
	else
		tail -n "$n" -- "$file" | sed 's/^/sim:   | /' >&2 || true
	fi
}

_sim_need_setup() {
	if [[ -z $SIM_TMP || ! -d $SIM_TMP ]]; then
		_sim_fail "${FUNCNAME[1]}: call sim_setup first"
		return 1
	fi
}

_sim_need_ibsim() {
	_sim_need_setup || return 1
	if [[ -z $SIM_IBSIM_PID ]] || ! _sim_tracked_alive "$SIM_IBSIM_PID"; then
		_sim_fail "${FUNCNAME[1]}: ibsim is not running (call sim_start_ibsim)"
		return 1
	fi
}

# ---------------------------------------------------------------- processes

# Prints "STATE STARTTIME" of PID from /proc; fails if there is no such PID.
_sim_proc_stat() {
	local line
	{ read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
	# comm (field 2) may contain spaces: cut after the last ')'.
	line=${line##*) }
	local -a f
	read -r -a f <<<"$line"
	printf '%s %s\n' "${f[0]}" "${f[19]}"
}

# True if PID is running (zombies count as gone). With START, also checks
# that it is still the process we started.
_sim_alive() {
	local pid=$1 start=${2:-} st
	st=$(_sim_proc_stat "$pid") || return 1
	[[ ${st%% *} != Z && ${st%% *} != X ]] || return 1
	[[ -z $start || ${st#* } == "$start" ]]
}

# True if PID is tracked and still the process we started.
_sim_tracked_alive() {
	local i
	i=$(_sim_pid_index "${1:-}") || return 1
	_sim_alive "$1" "${_SIM_PID_START[i]}"
}

# sim_track_pid PID [NAME]: have the cleanup trap stop PID. Use it for
# background processes a test starts itself (agents, daemons).
sim_track_pid() {
	local pid=${1:-} name=${2:-pid $1} st
	[[ $pid =~ ^[0-9]+$ ]] || { _sim_fail "sim_track_pid: bad PID '$pid'"; return 1; }
	st=$(_sim_proc_stat "$pid") || { _sim_fail "sim_track_pid: no process $pid ($name)"; return 1; }
	_SIM_PIDS+=("$pid")
	_SIM_PID_START+=("${st#* }")
	_SIM_PID_NAME+=("$name")
}

# sim_at_exit 'COMMAND': run COMMAND (eval) first during cleanup.
sim_at_exit() {
	_SIM_AT_EXIT+=("$*")
}

# Index of PID in the tracking arrays, or fails.
_sim_pid_index() {
	local i
	for ((i = 0; i < ${#_SIM_PIDS[@]}; i++)); do
		if [[ ${_SIM_PIDS[i]} == "$1" ]]; then
			printf '%s\n' "$i"
			return 0
		fi
	done
	return 1
}

# Waits up to TIMEOUT seconds for PID (with START) to be gone.
_sim_wait_gone() {
	local pid=$1 start=$2 timeout=$3
	local end=$((SECONDS + timeout))
	while _sim_alive "$pid" "$start"; do
		((SECONDS < end)) || return 1
		sleep 0.1
	done
	return 0
}

# _sim_stop_index I [TIMEOUT]: TERM, bounded wait, then KILL the tracked
# process I, reap it and forget it. Sets _SIM_LAST_RC to its exit status
# (when it was our child). Only ever signals that exact process.
_sim_stop_index() {
	local i=$1 timeout=${2:-${SIM_STOP_TIMEOUT:-30}}
	local pid=${_SIM_PIDS[i]} start=${_SIM_PID_START[i]} name=${_SIM_PID_NAME[i]}
	_SIM_LAST_RC=0
	[[ -n $pid ]] || return 0
	if _sim_alive "$pid" "$start"; then
		kill -TERM "$pid" 2>/dev/null || true
		if ! _sim_wait_gone "$pid" "$start" "$timeout"; then
			_sim_msg "$name (pid $pid) ignored SIGTERM for ${timeout}s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			_sim_wait_gone "$pid" "$start" 10 ||
				_sim_msg "WARNING: $name (pid $pid) still there after SIGKILL"
		fi
	fi
	# Reap and fetch the status; harmless (127) if it was not our child.
	if ! _sim_alive "$pid" "$start"; then
		wait "$pid" 2>/dev/null || _SIM_LAST_RC=$?
	fi
	_SIM_PIDS[i]=""
	_SIM_PID_START[i]=""
	_SIM_PID_NAME[i]=""
	return 0
}

# sim_stop_pid PID [TIMEOUT]: stop a tracked process now (TERM, wait, KILL).
sim_stop_pid() {
	local i
	i=$(_sim_pid_index "${1:-}") || { _sim_fail "sim_stop_pid: '${1:-}' is not a tracked PID"; return 1; }
	_sim_stop_index "$i" "${2:-}"
}

# _sim_wait_bounded PID TIMEOUT NAME [nostatus]: waits for a tracked
# background process. Returns its exit status (0 with "nostatus", for a
# disowned process whose status bash no longer keeps), or 124 (like
# timeout(1)) after stopping it when it overran. Polling instead of a
# blocking `wait` keeps a pending INT/TERM trap responsive and lets us
# enforce the bound ourselves.
_sim_wait_bounded() {
	local pid=$1 timeout=$2 name=$3 nostatus=${4:-} i rc=0
	i=$(_sim_pid_index "$pid") || { _sim_fail "$name: pid $pid not tracked"; return 1; }
	if ! _sim_wait_gone "$pid" "${_SIM_PID_START[i]}" "$timeout"; then
		_sim_msg "$name (pid $pid) still running after ${timeout}s; stopping it"
		_sim_stop_index "$i" 10
		return 124
	fi
	if [[ -z $nostatus ]]; then
		wait "$pid" 2>/dev/null || rc=$?
	fi
	_SIM_PIDS[i]=""
	_SIM_PID_START[i]=""
	_SIM_PID_NAME[i]=""
	return "$rc"
}

# ---------------------------------------------------------------- setup

# The EXIT/INT/TERM trap. Idempotent: a signal runs it, then the EXIT trap
# runs it again as a no-op. RC: the exit status to report (default $?).
_sim_cleanup() {
	local rc=${1:-$?}
	local -
	set +e
	# Only the shell that called sim_setup cleans up, not a subshell that
	# happens to inherit the trap.
	if [[ $_SIM_CLEANED == 1 || $BASHPID != "$_SIM_OWNER" ]]; then
		return 0
	fi
	_SIM_CLEANED=1
	# A second Ctrl-C or SIGTERM must not cut the cleanup short.
	trap '' INT TERM
	local i
	for ((i = 0; i < ${#_SIM_AT_EXIT[@]}; i++)); do
		eval "${_SIM_AT_EXIT[i]}" || _sim_msg "at-exit command failed: ${_SIM_AT_EXIT[i]}"
	done
	# Newest first: OpenSM (an ibsim client) goes before ibsim. SIGTERM
	# first so clients detach from ibsim cleanly (ibsim has 10 client slots).
	for ((i = ${#_SIM_PIDS[@]} - 1; i >= 0; i--)); do
		if [[ -n ${_SIM_PIDS[i]} ]]; then
			_sim_stop_index "$i"
		fi
	done
	SIM_IBSIM_PID=""
	SIM_OPENSM_PID=""
	if [[ -n $SIM_TMP && -d $SIM_TMP ]]; then
		if [[ ${SARNUE_KEEP_TMP:-0} == 1 ]]; then
			_sim_msg "kept temp dir: $SIM_TMP"
		elif [[ $SIM_TMP == */sarnue-sim.* ]]; then
			rm -rf -- "$SIM_TMP"
			((rc == 0)) || _sim_msg "removed temp dir (exit status $rc); set SARNUE_KEEP_TMP=1 to keep it"
		fi
	fi
	return 0
}

# sim_log FILE: OpenSM's log FILE with the plugin's long messages whole again.  The plugin
# cuts a message over 160 characters into lines; each further line repeats the message's tag
# ("sarnue: WRN sar-nue: ", or just "sarnue: ") and one more blank, and is joined here to the
# line before it with one blank.
sim_log() {
	awk '
	function continued(line,   i, rest, c) {
		i = index(line, "sarnue: ")
		if (!i)
			return ""
		rest = substr(line, i + 8)
		if (substr(rest, 1, 1) == " ")
			return substr(rest, 2)
		c = index(rest, ": ")
		if (c > 0 && c <= 39 && substr(rest, c + 2, 1) == " " && substr(rest, c + 3, 1) != " " &&
		    index(substr(rest, 1, c), ";") == 0)
			return substr(rest, c + 3)
		return ""
	}
	{
		text = have ? continued($0) : ""
		if (text != "") {
			prev = prev " " text
			next
		}
		if (have)
			print prev
		prev = $0
		have = 1
	}
	END { if (have) print prev }' "$1"
}

# sim_setup: creates $SIM_TMP (with dump/ and cache/) and installs the
# EXIT/INT/TERM trap that stops every tracked process and removes SIM_TMP.
# Replaces any EXIT/INT/TERM trap of the caller: use sim_at_exit instead.
sim_setup() {
	if [[ -n $SIM_TMP && -d $SIM_TMP ]]; then
		_sim_fail "sim_setup: already set up ($SIM_TMP)"
		return 1
	fi
	local tool
	for tool in ibsim opensm; do
		command -v "$tool" >/dev/null 2>&1 || { _sim_fail "sim_setup: '$tool' not found in PATH"; return 1; }
	done
	SIM_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-sim.XXXXXXXX") || { _sim_fail "sim_setup: mktemp -d failed"; return 1; }
	SIM_DUMP_DIR=$SIM_TMP/dump
	SIM_CTL_SOCKET=$SIM_TMP/ctl.sock
	mkdir -p -- "$SIM_DUMP_DIR" "$SIM_TMP/cache" || { _sim_fail "sim_setup: cannot populate $SIM_TMP"; return 1; }
	_SIM_OWNER=$BASHPID
	_SIM_CLEANED=0
	trap '_sim_cleanup' EXIT
	trap '_sim_cleanup 130; trap - INT; exit 130' INT
	trap '_sim_cleanup 143; trap - TERM; exit 143' TERM
	_sim_msg "temp dir $SIM_TMP"
}

# Path of the LD_PRELOAD library that connects libibumad to ibsim.
_sim_umad2sim() {
	local c
	for c in "${SIM_UMAD2SIM:-}" /usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so \
		/usr/lib/*/umad2sim/libumad2sim.so /usr/lib/umad2sim/libumad2sim.so \
		/usr/local/lib/umad2sim/libumad2sim.so; do
		if [[ -n $c && -r $c ]]; then
			printf '%s\n' "$c"
			return 0
		fi
	done
	_sim_fail "libumad2sim.so not found (install libumad2sim0 or set SIM_UMAD2SIM)"
	return 1
}

# Prefix for commands that talk to the simulated fabric: env with the
# preload (keeping a caller's LD_PRELOAD) and our socket name.
_sim_client_env() {
	local lib
	lib=$(_sim_umad2sim) || return 1
	[[ -n ${IBSIM_SOCKNAME:-} ]] || { _sim_fail "IBSIM_SOCKNAME not set (call sim_start_ibsim)"; return 1; }
	printf '%s\0' env "LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}" "IBSIM_SOCKNAME=$IBSIM_SOCKNAME"
}

# ---------------------------------------------------------------- ibsim

# True once ibsim has bound its control socket (abstract unix socket
# "@NAME:ctl"). ibsim prints "Network simulator ready." just before binding.
_sim_ibsim_bound() {
	grep -qF "@$IBSIM_SOCKNAME:ctl" /proc/net/unix 2>/dev/null
}

# sim_start_ibsim NETFILE [extra ibsim args]: starts ibsim on NETFILE with
# a fresh IBSIM_SOCKNAME (exported for later libumad2sim clients) and waits
# until it serves.
sim_start_ibsim() {
	_sim_need_setup || return 1
	local net=${1:-}
	[[ -n $net ]] || { _sim_fail "sim_start_ibsim: usage: sim_start_ibsim NETFILE [ibsim args]"; return 1; }
	shift
	[[ -r $net ]] || { _sim_fail "sim_start_ibsim: cannot read net file '$net'"; return 1; }
	if [[ -n $SIM_IBSIM_PID ]] && _sim_tracked_alive "$SIM_IBSIM_PID"; then
		_sim_fail "sim_start_ibsim: ibsim already running (pid $SIM_IBSIM_PID)"
		return 1
	fi
	# Unique per test: the name is global on the host (abstract socket).
	export IBSIM_SOCKNAME="sarnue-$$-$BASHPID-$RANDOM"
	# These would make libumad2sim clients talk TCP to some other ibsim.
	unset IBSIM_SERVER_NAME IBSIM_SERVER_PORT
	local log=$SIM_TMP/ibsim.log console=/dev/null
	# SIM_IBSIM_CONSOLE=1: ibsim reads its console commands from a FIFO that
	# sim_ibsim_cmd writes to (to take links down while OpenSM runs).
	if [[ ${SIM_IBSIM_CONSOLE:-0} == 1 ]]; then
		console=$SIM_TMP/ibsim.console
		rm -f "$console"
		mkfifo "$console" || { _sim_fail "cannot create $console"; return 1; }
	fi
	# Default limits (2048 nodes, 256 switches) are too small for the
	# generated fabrics; memory is allocated lazily, so generous is cheap.
	local -a console_opt=(-n)
	[[ $console != /dev/null ]] && console_opt=()
	ibsim -s "${console_opt[@]}" -N "${SIM_IBSIM_NODES:-8192}" -S "${SIM_IBSIM_SWITCHES:-2048}" \
		-P "${SIM_IBSIM_PORTS:-131072}" "$@" "$net" <"$console" >"$log" 2>&1 &
	SIM_IBSIM_PID=$!
	if [[ $console != /dev/null ]]; then
		# Held open for ibsim's lifetime: a FIFO without writers reads as end of file.
		exec {_SIM_IBSIM_CONSOLE_FD}>"$console"
	fi
	# An ibsim that refuses its net file can be gone before it is tracked: that is the same
	# failure as exiting later, and must be reported as such (not as a tracking error).
	if ! sim_track_pid "$SIM_IBSIM_PID" ibsim 2>/dev/null; then
		_sim_fail "ibsim exited during start-up (net file $net)"
		_sim_tail "$log" 15 'cannot parse remote lid and connection type'
		SIM_IBSIM_PID=""
		return 1
	fi
	local timeout=${SIM_IBSIM_TIMEOUT:-30}
	local end=$((SECONDS + timeout))
	while :; do
		if ! _sim_tracked_alive "$SIM_IBSIM_PID"; then
			_sim_fail "ibsim exited during start-up (net file $net)"
			# ibsim warns once per port line about this; it is harmless.
			_sim_tail "$log" 15 'cannot parse remote lid and connection type'
			SIM_IBSIM_PID=""
			return 1
		fi
		if grep -q '^Network simulator ready' "$log" 2>/dev/null; then
			if _sim_ibsim_bound; then
				break
			fi
			# No /proc/net/unix (unusual): being alive shortly after
			# "ready" is the best evidence left.
			if [[ ! -r /proc/net/unix ]]; then
				sleep 0.5
				_sim_tracked_alive "$SIM_IBSIM_PID" && break
			fi
		fi
		if ((SECONDS >= end)); then
			_sim_fail "ibsim not ready after ${timeout}s"
			_sim_tail "$log"
			return 1
		fi
		sleep 0.1
	done
	local parsed
	parsed=$(grep -o 'parsed [0-9]* lines' "$log" | head -n 1) || true
	_sim_msg "ibsim up: pid $SIM_IBSIM_PID, socket $IBSIM_SOCKNAME, $(basename -- "$net") ${parsed:-}"
}

# sim_ibsim_cmd COMMAND...: one command on ibsim's console (needs
# SIM_IBSIM_CONSOLE=1 at start), e.g. sim_ibsim_cmd 'Unlink "S-0001"[7]'.
sim_ibsim_cmd() {
	[[ -n ${_SIM_IBSIM_CONSOLE_FD:-} ]] || { _sim_fail "sim_ibsim_cmd: ibsim was not started with SIM_IBSIM_CONSOLE=1"; return 1; }
	printf '%s\n' "$*" >&"$_SIM_IBSIM_CONSOLE_FD" || { _sim_fail "sim_ibsim_cmd: ibsim's console is closed"; return 1; }
	_sim_msg "ibsim console: $*"
}

# sim_stop_ibsim: stops the fabric (and first a running OpenSM, whose
# MADs would otherwise go nowhere). Cleanup does this anyway at exit.
sim_stop_ibsim() {
	if [[ -n $SIM_OPENSM_PID ]]; then
		sim_stop_opensm || true
	fi
	[[ -n $SIM_IBSIM_PID ]] || { _sim_msg "no ibsim to stop"; return 0; }
	local i pid=$SIM_IBSIM_PID
	SIM_IBSIM_PID=""
	i=$(_sim_pid_index "$pid") || return 0
	_sim_stop_index "$i"
	if [[ -n ${_SIM_IBSIM_CONSOLE_FD:-} ]]; then
		exec {_SIM_IBSIM_CONSOLE_FD}>&-
		_SIM_IBSIM_CONSOLE_FD=""
	fi
	_sim_msg "ibsim stopped (pid $pid)"
}

# ---------------------------------------------------------------- OpenSM

# Normalises a boolean setting to OpenSM's TRUE/FALSE.
_sim_bool() {
	case ${1,,} in
	true | 1 | yes | on) printf 'TRUE\n' ;;
	false | 0 | no | off | '') printf 'FALSE\n' ;;
	*) return 1 ;;
	esac
}

# sim_write_opensm_conf [FILE]: writes opensm.conf (default $SIM_TMP/opensm.conf)
# from the SIM_* settings and makes it the one used by later runs.
# shellcheck disable=SC2120 # FILE is optional
sim_write_opensm_conf() {
	_sim_need_setup || return 1
	local conf=${1:-$SIM_TMP/opensm.conf}
	local engine=${SIM_ROUTING_ENGINE:-updn} lmc=${SIM_LMC:-0} qos
	qos=$(_sim_bool "${SIM_QOS:-FALSE}") || { _sim_fail "SIM_QOS must be TRUE or FALSE, not '${SIM_QOS:-}'"; return 1; }
	[[ $lmc =~ ^[0-7]$ ]] || { _sim_fail "SIM_LMC must be 0..7, not '$lmc'"; return 1; }
	local ipoib sa_dump
	ipoib=$(_sim_bool "${SIM_IPOIB:-FALSE}") || { _sim_fail "SIM_IPOIB must be TRUE or FALSE, not '${SIM_IPOIB:-}'"; return 1; }
	sa_dump=$(_sim_bool "${SIM_SA_DUMP:-FALSE}") || { _sim_fail "SIM_SA_DUMP must be TRUE or FALSE, not '${SIM_SA_DUMP:-}'"; return 1; }
	_sim_write_partitions "$ipoib" || return 1
	{
		printf '# opensm.conf written by sim.sh (OpenSM 3.3.23 option names)\n'
		printf 'dump_files_dir %s/\n' "$SIM_DUMP_DIR"
		printf 'routing_engine %s\n' "$engine"
		printf 'lmc %s\n' "$lmc"
		printf 'qos %s\n' "$qos"
		# Unflushed, the log of a running OpenSM lags by kilobytes and
		# sim_wait_subnet_up would time out.
		printf 'force_log_flush TRUE\n'
		if [[ -n ${SIM_PLUGIN:-} ]]; then
			printf 'event_plugin_name %s\n' "$SIM_PLUGIN"
		fi
		# The control socket goes into the temp dir unless the options
		# name another place (a later key wins).
		if [[ -n ${SIM_PLUGIN:-} ]]; then
			printf 'event_plugin_options ctl_socket=%s %s\n' "$SIM_CTL_SOCKET" "${SIM_PLUGIN_OPTIONS:-}"
		fi
		# Point every optional input file into the temp dir (where it does
		# not exist) so the host's /etc/opensm cannot change the results.
		printf 'partition_config_file %s/partitions.conf\n' "$SIM_TMP"
		printf 'qos_policy_file %s/qos-policy.conf\n' "$SIM_TMP"
		printf 'prefix_routes_file %s/prefix-routes.conf\n' "$SIM_TMP"
		printf 'per_module_logging_file %s/per-module-logging.conf\n' "$SIM_TMP"
		printf 'torus_config %s/torus-2QoS.conf\n' "$SIM_TMP"
		if [[ $sa_dump == TRUE ]]; then
			printf 'sa_db_dump TRUE\n'
		fi
		if [[ -n ${SIM_OPENSM_EXTRA:-} ]]; then
			printf '# SIM_OPENSM_EXTRA\n%s\n' "$SIM_OPENSM_EXTRA"
		fi
	} >"$conf" || { _sim_fail "cannot write $conf"; return 1; }
	SIM_CONF=$conf
	_SIM_CONF_LMC=$lmc
	# An lmc line in SIM_OPENSM_EXTRA wins in OpenSM; ibdmchk must agree.
	local extra_lmc
	extra_lmc=$(awk '$1 == "lmc" { v = $2 } END { print v }' "$conf")
	_SIM_CONF_LMC=${extra_lmc:-$lmc}
	_sim_msg "opensm.conf: routing_engine $engine, lmc $_SIM_CONF_LMC, qos $qos${SIM_PLUGIN:+, plugin $SIM_PLUGIN}"
}

# Writes $SIM_TMP/partitions.conf from SIM_PARTITIONS, or for SIM_IPOIB=TRUE the default
# partition with IPoIB (OpenSM then creates the broadcast group
# ff12:401b:ffff::ffff:ffff at MLID 0xc000), or removes it: without the file OpenSM makes
# the default partition and the broadcast group by itself.
_sim_write_partitions() {
	local ipoib=$1 file=$SIM_TMP/partitions.conf
	if [[ -n ${SIM_PARTITIONS:-} ]]; then
		printf '%s\n' "$SIM_PARTITIONS" >"$file" || { _sim_fail "cannot write $file"; return 1; }
	elif [[ $ipoib == TRUE ]]; then
		printf '# written by sim.sh for SIM_IPOIB=TRUE\nDefault=0x7fff, ipoib : ALL=full;\n' >"$file" ||
			{ _sim_fail "cannot write $file"; return 1; }
	else
		rm -f -- "$file"
	fi
}

# Builds the OpenSM command line into the array named _sim_cmd (caller's
# local) and sets _sim_log / _sim_vglog. Args: LABEL then extra opensm args.
_sim_opensm_cmd() {
	local label=$1
	shift
	_SIM_SEQ=$((_SIM_SEQ + 1))
	_sim_log=$SIM_TMP/opensm-$_SIM_SEQ-$label.log
	_sim_vglog=""
	local -a envp
	mapfile -d '' -t envp < <(_sim_client_env) || return 1
	[[ ${#envp[@]} -gt 0 ]] || return 1
	_sim_cmd=("${envp[@]}" "OSM_TMP_DIR=$SIM_TMP/cache" "OSM_CACHE_DIR=$SIM_TMP/cache")
	if [[ ${SIM_VALGRIND:-0} == 1 ]]; then
		command -v valgrind >/dev/null 2>&1 || { _sim_fail "SIM_VALGRIND=1 but valgrind is not installed"; return 1; }
		_sim_vglog=$SIM_TMP/valgrind-$_SIM_SEQ-$label.log
		local supp=$SIM_TMP/sim-valgrind.supp f
		[[ -e $supp ]] || _sim_write_valgrind_supp "$supp" || { _sim_fail "cannot write $supp"; return 1; }
		local -a vgopts
		read -r -a vgopts <<<"${SIM_VALGRIND_OPTS:---leak-check=full --errors-for-leak-kinds=definite}"
		# 40 callers: a leak is forgiven only when its whole stack is OpenSM's
		# (_sim_vg_only_opensm_leaks), which needs the stack down to the thread's start.
		_sim_cmd+=(valgrind --tool=memcheck --error-exitcode=99 --num-callers=40
			"--log-file=$_sim_vglog" "--suppressions=$supp")
		# SIM_VALGRIND_SUPP: more suppression files (space separated), e.g. the plugin's.
		for f in ${SIM_VALGRIND_SUPP:-}; do
			_sim_cmd+=("--suppressions=$f")
		done
		_sim_cmd+=("${vgopts[@]}")
	fi
	_sim_cmd+=(opensm -F "$SIM_CONF" -f "$_sim_log" -D "${SIM_OPENSM_LOGFLAGS:-0x43}" "$@")
}

# Writes the memcheck suppressions for noise that is not ours: libumad2sim
# (the simulator shim) reads past its buffers and sends stack padding;
# OpenSM 3.3.23 itself loses a few option strings and a MAD at exit.
# Errors in a plugin never have libumad2sim on their stack.
_sim_write_valgrind_supp() {
	local supp=$1 kind
	{
		for kind in Param Cond Value1 Value2 Value4 Value8 Value16 Value32 \
			Addr1 Addr2 Addr4 Addr8 Addr16 Addr32 Overlap Leak; do
			printf '{\n   sim-umad2sim-%s\n   Memcheck:%s\n' "$kind" "$kind"
			[[ $kind == Param ]] && printf '   write(buf)\n'
			printf '   ...\n   obj:*/libumad2sim.so\n}\n'
		done
		printf '{\n   sim-opensm-default-opt\n   Memcheck:Leak\n   match-leak-kinds: definite\n'
		printf '   fun:malloc\n   fun:strdup\n   fun:osm_subn_set_default_opt\n}\n'
		printf '{\n   sim-osmvendor-mad-pool\n   Memcheck:Leak\n   match-leak-kinds: definite\n'
		printf '   fun:calloc\n   fun:osm_vendor_get\n   fun:osm_mad_pool_get\n}\n'
	} >"$supp"
}

# OpenSM 3.3.23's own threads (PerfMgr's sweep among them) lose what they hold when SIGTERM
# comes mid-sweep, so which blocks are lost depends on the moment.  Prints the bytes lost and
# succeeds when every error in VGLOG is such a leak: a block definitely lost whose every frame,
# down to its thread's start, is an allocator, the thread start, or code of OpenSM and its
# libraries (/usr/sbin/opensm, lib*osm*, libopensm).  A frame of the plugin, or of anything
# else, a stack cut short, or any other error (valgrind counts its contexts), keeps the error.
_sim_vg_only_opensm_leaks() {
	awk '
	function close_block() {
		if (!inblk) return
		if (!(leak && started && !foreign)) bad = 1
		inblk = 0
	}
	{ sub(/^==[0-9]+== ?/, "") }
	/^ *$/ { close_block(); next }
	/^[^ ]/ && /(definitely lost in loss record|Invalid|uninitialised|Mismatched|overlap|Process terminating)/ {
		close_block(); inblk = 1; errors++
		leak = ($0 ~ /definitely lost in loss record/); started = 0; foreign = 0
		if (leak) { split($0, w, " "); gsub(/,/, "", w[1]); lost += w[1] }
		next
	}
	inblk && /^ +(at|by) 0x/ {
		if ($0 ~ / (start_thread|clone|clone3) \(/) { started = 1; next }
		if ($0 ~ / (malloc|calloc|realloc|strdup|strndup) \(/) next
		if ($0 ~ /\(in [^)]*\/(opensm|lib[^\/)]*osm[^\/)]*|libopensm[^\/)]*)\)$/) next
		foreign = 1
		next
	}
	/^ERROR SUMMARY: [0-9]+ errors from [0-9]+ contexts/ { split($0, w, " "); contexts = w[6] }
	END {
		close_block()
		# An error of a kind not named above would not be counted: then the counts differ.
		if (bad || !errors || errors != contexts) exit 1
		printf "%d", lost
	}
	' "$1"
}

# Reports valgrind's verdict from its log; fails on errors.
_sim_valgrind_verdict() {
	local vglog=$1 rc=$2
	[[ -n $vglog ]] || return 0
	local summary lost
	summary=$(grep -h 'ERROR SUMMARY:' "$vglog" 2>/dev/null | tail -n 1 | sed 's/^==[0-9]*== //') || true
	if [[ $rc == 99 ]] && lost=$(_sim_vg_only_opensm_leaks "$vglog"); then
		_sim_msg "valgrind: clean but for OpenSM's own threads, which lost $lost bytes at exit (no frame of the plugin): $summary"
		return 0
	fi
	if [[ $rc == 99 ]] || ! grep -q 'ERROR SUMMARY: 0 errors' "$vglog" 2>/dev/null; then
		_sim_fail "valgrind: memcheck found errors: ${summary:-no summary} (log $vglog)"
		# Each error with the first frames of its stack, so that a run on a machine
		# that keeps no temp dir still says whose error it was.
		grep -h -A 12 -E 'Invalid|uninitialised|definitely lost in|Process terminating' "$vglog" 2>/dev/null |
			grep -v -E '^==[0-9]+== *$' | head -n 40 | sed 's/^/sim:   | /' >&2 || true
		return 1
	fi
	_sim_msg "valgrind: clean: $summary"
}

# Checks an OpenSM log after a sweep: plugin load errors and routing engine.
_sim_check_opensm_log() {
	local log=$1
	if [[ -n ${SIM_PLUGIN:-} ]] && grep -q 'cannot load plugin' "$log" 2>/dev/null; then
		_sim_fail "OpenSM could not load plugin '$SIM_PLUGIN' (check LD_LIBRARY_PATH):"
		grep 'cannot load plugin' "$log" | head -n 3 | sed 's/^/sim:   | /' >&2 || true
		return 1
	fi
	local used
	used=$(sim_routing_engine_used "$log") || true
	_sim_msg "routing done by: ${used:-unknown (no 'tables configured' line)}"
}

# sim_routing_engine_used [LOG]: prints the engine that configured the
# switches in the last sweep of LOG (OpenSM falls back to minhop silently
# when the configured engine fails).
sim_routing_engine_used() {
	local log=${1:-$SIM_OPENSM_LOG}
	[[ -r $log ]] || return 1
	awk '/ tables configured on all switches/ {
		for (i = 1; i < NF; i++) if ($(i + 1) == "tables") e = $i
	} END { if (e == "") exit 1; print e }' "$log"
}

# sim_run_opensm_once [extra opensm args]: one sweep with -o, then exit.
# Writes opensm.conf first if needed. Fails on timeout, non-zero exit,
# missing "SUBNET UP", plugin load failure or (SIM_VALGRIND=1) memcheck errors.
sim_run_opensm_once() {
	_sim_need_ibsim || return 1
	if [[ -z $SIM_CONF ]]; then
		sim_write_opensm_conf || return 1
	fi
	local -a _sim_cmd
	local _sim_log _sim_vglog
	_sim_opensm_cmd once -o "$@" || return 1
	SIM_OPENSM_LOG=$_sim_log
	local timeout=${SIM_OPENSM_TIMEOUT:-120}
	if [[ ${SIM_VALGRIND:-0} == 1 && -z ${SIM_OPENSM_TIMEOUT:-} ]]; then
		timeout=900
	fi
	_sim_msg "opensm -o (log $(basename -- "$_sim_log")${_sim_vglog:+, under valgrind})"
	"${_sim_cmd[@]}" </dev/null >"${_sim_log%.log}.out" 2>&1 &
	local pid=$! rc=0
	sim_track_pid "$pid" "opensm -o" || true
	_sim_wait_bounded "$pid" "$timeout" "opensm -o" || rc=$?
	if ((rc == 124)); then
		_sim_fail "opensm -o did not finish within ${timeout}s"
		_sim_tail "$_sim_log"
		return 1
	fi
	local vg_ok=0
	_sim_valgrind_verdict "$_sim_vglog" "$rc" || vg_ok=1
	if ((rc != 0 && rc != 99)); then
		_sim_fail "opensm -o exited with status $rc"
		_sim_tail "${_sim_log%.log}.out" 5
		_sim_tail "$_sim_log"
		return 1
	fi
	_sim_check_opensm_log "$_sim_log" || return 1
	if ! grep -q 'SUBNET UP' "$_sim_log"; then
		_sim_fail "OpenSM did not bring the subnet up"
		_sim_tail "$_sim_log"
		return 1
	fi
	local f missing=""
	if ((${SIM_OPENSM_LOGFLAGS:-0x43} & 0x40)); then
		for f in opensm-subnet.lst opensm.fdbs opensm.mcfdbs opensm-lfts.dump; do
			[[ -e $SIM_DUMP_DIR/$f ]] || missing+=" $f"
		done
	fi
	if [[ -n $missing ]]; then
		_sim_fail "dump files missing in $SIM_DUMP_DIR:$missing"
		return 1
	fi
	((vg_ok == 0)) || return 1
	_sim_msg "opensm -o done: SUBNET UP, dumps in $SIM_DUMP_DIR"
}

# sim_start_opensm [extra opensm args]: starts a long-running OpenSM in the
# background and records SIM_OPENSM_PID. Not OpenSM's -B: that forks a
# daemon whose PID we would not know and so could not stop.
sim_start_opensm() {
	_sim_need_ibsim || return 1
	if [[ -n $SIM_OPENSM_PID ]] && _sim_tracked_alive "$SIM_OPENSM_PID"; then
		_sim_fail "sim_start_opensm: OpenSM already running (pid $SIM_OPENSM_PID)"
		return 1
	fi
	if [[ -z $SIM_CONF ]]; then
		sim_write_opensm_conf || return 1
	fi
	local -a _sim_cmd
	local _sim_log _sim_vglog
	_sim_opensm_cmd daemon "$@" || return 1
	SIM_OPENSM_LOG=$_sim_log
	_SIM_OPENSM_VGLOG=$_sim_vglog
	"${_sim_cmd[@]}" </dev/null >"${_sim_log%.log}.out" 2>&1 &
	SIM_OPENSM_PID=$!
	sim_track_pid "$SIM_OPENSM_PID" opensm || true
	_sim_msg "opensm started: pid $SIM_OPENSM_PID, log $(basename -- "$_sim_log")${_sim_vglog:+, under valgrind}"
}

# sim_wait_log PATTERN [TIMEOUT] [COUNT] [LOG]: waits until LOG (default
# the current OpenSM log) has COUNT (default 1) lines matching the ERE
# PATTERN. Fails early if the running OpenSM dies.
sim_wait_log() {
	local pattern=${1:-} timeout=${2:-60} count=${3:-1} log=${4:-$SIM_OPENSM_LOG}
	[[ -n $pattern && -n $log ]] || { _sim_fail "sim_wait_log: usage: sim_wait_log PATTERN [TIMEOUT] [COUNT] [LOG]"; return 1; }
	local end=$((SECONDS + timeout)) n
	while :; do
		n=$( [[ -r $log ]] && sim_log "$log" | grep -c -E -- "$pattern") || n=0
		((n >= count)) && return 0
		if [[ $log == "$SIM_OPENSM_LOG" && -n $SIM_OPENSM_PID ]] && ! _sim_tracked_alive "$SIM_OPENSM_PID"; then
			_sim_fail "OpenSM (pid $SIM_OPENSM_PID) exited while waiting for '$pattern'"
			_sim_tail "$log"
			return 1
		fi
		if ((SECONDS >= end)); then
			_sim_fail "no '$pattern' (x$count) in $(basename -- "$log") after ${timeout}s (seen $n)"
			_sim_tail "$log"
			return 1
		fi
		sleep 0.2
	done
}

# sim_wait_subnet_up [TIMEOUT] [COUNT]: waits for the COUNT-th "SUBNET UP"
# of the running OpenSM (COUNT > 1 to wait for a later heavy sweep).
sim_wait_subnet_up() {
	local timeout=${1:-120} count=${2:-1}
	if [[ -z ${1:-} && ${SIM_VALGRIND:-0} == 1 ]]; then
		timeout=900
	fi
	[[ -n $SIM_OPENSM_PID ]] || { _sim_fail "sim_wait_subnet_up: no OpenSM started"; return 1; }
	sim_wait_log 'SUBNET UP' "$timeout" "$count" "$SIM_OPENSM_LOG" || return 1
	_sim_check_opensm_log "$SIM_OPENSM_LOG" || return 1
	_sim_msg "SUBNET UP (opensm pid $SIM_OPENSM_PID)"
}

# sim_stop_opensm: SIGTERM, bounded wait (OpenSM finishes a running routing
# first), SIGKILL if needed; reports the valgrind verdict when used.
sim_stop_opensm() {
	[[ -n $SIM_OPENSM_PID ]] || { _sim_msg "no OpenSM to stop"; return 0; }
	local i pid=$SIM_OPENSM_PID rc
	SIM_OPENSM_PID=""
	i=$(_sim_pid_index "$pid") || { _sim_msg "OpenSM pid $pid already stopped"; return 0; }
	_sim_stop_index "$i"
	rc=$_SIM_LAST_RC
	_sim_msg "opensm stopped (pid $pid, status $rc)"
	_sim_valgrind_verdict "$_SIM_OPENSM_VGLOG" "$rc" || return 1
	_SIM_OPENSM_VGLOG=""
}

# ---------------------------------------------------------------- checks

# ibdmchk silently skips lines it cannot parse (upper-case hex, tabs,
# hex DLIDs, fewer than 8 SL2VL bytes) and then checks a different routing
# than intended, or crashes. So refuse such files here, naming the line.
# Accepted: its own format, OpenSM's dump format, blank and '#' lines.
_sim_check_sl_file() {
	local kind=$1 file=$2 own osm1 osm2 bad first
	# sarnue's compact path-SL form: ibdmchk skips its lines and takes SL 0 on every path, which
	# is exact only when the file names no other SL (fabric/sldump.c).
	IFS= read -r first <"$file" || true
	if [[ $kind == psl && $first == "# sarnue-path-sl compact" ]]; then
		bad=$(grep -n -v -E '^(sl 0|lid [0-9]+ 0|[[:blank:]]*|#.*)$' "$file" | head -n 3) || true
		if [[ -n $bad ]]; then
			_sim_fail "sim_ibdmchk: $file is sarnue's compact path-SL form with SLs other than 0, which ibdmchk cannot read (write it with dump_path_sl=full), e.g.:"
			printf '%s\n' "$bad" | sed 's/^/sim:   | /' >&2
			return 1
		fi
		return 0
	fi
	if [[ $kind == psl ]]; then
		own='0x[0-9a-f]+ [0-9]+ [0-9]+'
		osm1='(Channel Adapter|Switch) 0x[0-9a-f]+,.*'
		osm2='0x[0-9a-fA-F]+[[:blank:]]+:[[:blank:]]+[0-9]+[[:blank:]]*'
	else
		own='0x[0-9a-f]+ [0-9]+ [0-9]+( 0x[0-9a-f][0-9a-f]){8}[[:blank:]]*'
		osm1='(Channel Adapter|Switch) 0x[0-9a-f]+,.*'
		osm2='[0-9]+[[:blank:]]+[0-9]+[[:blank:]]+:([[:blank:]]+[0-9]+){16}[[:blank:]]*'
	fi
	bad=$(grep -n -v -E "^($own|$osm1|$osm2|[[:blank:]]*|#.*)\$" "$file" | head -n 3) || true
	if [[ -n $bad ]]; then
		_sim_fail "sim_ibdmchk: $file has lines ibdmchk would silently ignore, e.g.:"
		printf '%s\n' "$bad" | sed 's/^/sim:   | /' >&2
		return 1
	fi
}

# sim_ibdmchk [-c PATH_SL_FILE] [-d SL2VL_FILE] [other ibdmchk args]: runs
# ibdmchk on OpenSM's dumps in $SIM_DUMP_DIR. Returns 0 iff its output says
# "no credit loops found", 1 if it reports a credit loop, 2 if it gave no
# verdict (bad input, unreachable destination, crash, timeout). ibdmchk may
# segfault at exit after printing its verdict, so the text decides.
sim_ibdmchk() {
	_sim_need_setup || return 2
	command -v ibdmchk >/dev/null 2>&1 || { _sim_fail "ibdmchk not found (package ibutils)"; return 2; }
	local psl="" slvl=""
	local -a rest=()
	while (($# > 0)); do
		case $1 in
		-c | --psl) psl=${2:-}; [[ -n $psl ]] || { _sim_fail "sim_ibdmchk: $1 needs a file"; return 2; }; shift 2 ;;
		-d | --slvl) slvl=${2:-}; [[ -n $slvl ]] || { _sim_fail "sim_ibdmchk: $1 needs a file"; return 2; }; shift 2 ;;
		*) rest+=("$1"); shift ;;
		esac
	done
	local f
	for f in opensm-subnet.lst opensm.fdbs opensm.mcfdbs; do
		[[ -r $SIM_DUMP_DIR/$f ]] || { _sim_fail "sim_ibdmchk: no $f in $SIM_DUMP_DIR (run OpenSM with -D 0x43 first)"; return 2; }
	done
	# ibdmchk -l N walks base LIDs 1, 1+2^N, ... while OpenSM aligns them
	# to multiples of 2^N: with N > 0 it stops at "Fail to update Min Hops
	# Tables". -l 0 works on any LMC but checks base-LID paths only.
	local lmc=${SIM_IBDMCHK_LMC:-0}
	if ((_SIM_CONF_LMC > 0 && lmc == 0)); then
		_sim_msg "ibdmchk: lmc $_SIM_CONF_LMC fabric checked with -l 0 (base LIDs only)"
	fi
	local lst=opensm-subnet.lst
	# ibdmchk knows SW and CA nodes only and stops at an Rt line; a router is an end node
	# like a CA for credit loops, so it gets a copy that says CA.
	if grep -q '{ Rt ' "$SIM_DUMP_DIR/opensm-subnet.lst"; then
		lst=$SIM_TMP/ibdmchk-subnet.lst
		sed 's/{ Rt /{ CA /g' "$SIM_DUMP_DIR/opensm-subnet.lst" >"$lst" ||
			{ _sim_fail "sim_ibdmchk: cannot write $lst"; return 2; }
		_sim_msg "ibdmchk: routers given to ibdmchk as CAs (it reads no Rt nodes)"
	fi
	local -a args=(-s "$lst" -f opensm.fdbs -m opensm.mcfdbs -l "$lmc")
	if [[ -n $psl ]]; then
		[[ -r $psl ]] || { _sim_fail "sim_ibdmchk: cannot read path-SL file '$psl'"; return 2; }
		_sim_check_sl_file psl "$psl" || return 2
		args+=(-c "$(realpath -- "$psl")")
	fi
	if [[ -n $slvl ]]; then
		[[ -r $slvl ]] || { _sim_fail "sim_ibdmchk: cannot read SL2VL file '$slvl'"; return 2; }
		_sim_check_sl_file slvl "$slvl" || return 2
		args+=(-d "$(realpath -- "$slvl")")
	fi
	args+=("${rest[@]}")
	_SIM_SEQ=$((_SIM_SEQ + 1))
	local out=$SIM_TMP/ibdmchk-$_SIM_SEQ.out rc=0
	# shellcheck disable=SC2034 # for callers
	SIM_IBDMCHK_OUT=$out
	local timeout=${SIM_IBDMCHK_TIMEOUT:-600}
	_sim_msg "ibdmchk ${args[*]} (output $(basename -- "$out"))"
	(cd -- "$SIM_DUMP_DIR" && exec ibdmchk "${args[@]}") </dev/null >"$out" 2>&1 &
	local pid=$!
	sim_track_pid "$pid" ibdmchk || true
	# Disowned, bash does not print "Segmentation fault" for the known
	# crash at exit; the price is that its exit status is lost.
	disown "$pid" 2>/dev/null || true
	_sim_wait_bounded "$pid" "$timeout" ibdmchk nostatus || rc=$?
	# The lines that matter: errors, the loop trace, SL/VL counts, verdict.
	grep -E -- '^-E-|^-W-|credit loop|Analyzing Fabric|SLs in use|VLs in use|Scanned:' "$out" |
		head -n 30 | sed 's/^/sim:   | /' >&2 || true
	if grep -qF -- '-I- no credit loops found' "$out"; then
		_sim_msg "ibdmchk: no credit loops found"
		return 0
	fi
	if grep -qF -- '-E- credit loops in routing' "$out"; then
		_sim_fail "ibdmchk: credit loop in routing (see $out)"
		return 1
	fi
	if ((rc == 124)); then
		_sim_fail "ibdmchk: timed out after ${timeout}s"
	elif grep -q 'Analyzing Fabric for Credit Loops' "$out" && ! grep -q -- '^-E-' "$out"; then
		# Seen when paths use an SL that maps to a VL beyond the table
		# sizes: a switch missing from the SL2VL file keeps the identity
		# mapping while ibdmchk sized its tables from the file.
		_sim_fail "ibdmchk: crashed during the credit-loop analysis (no verdict); does the SL2VL file list every switch on the paths?"
	else
		_sim_fail "ibdmchk: no verdict, see $out"
		_sim_tail "$out" 8
	fi
	return 2
}

# sim_ibdmchk_high_plane [sim_ibdmchk args]: ibdmchk on the high plane of
# an LMC 1 fabric. ibdmchk walks base LIDs only (see sim_ibdmchk), so it gets
# a copy of the dumps in which every CA port carries its high LID (base + 1):
# with -l 0 it then checks the paths between high LIDs, and to switch LIDs,
# against the same LFTs, path SLs and SL2VL tables.
sim_ibdmchk_high_plane() {
	_sim_need_setup || return 2
	local dir=$SIM_TMP/ibdmchk-high f
	rm -rf -- "$dir" && mkdir -p -- "$dir" || { _sim_fail "cannot create $dir"; return 2; }
	for f in opensm.fdbs opensm.mcfdbs; do
		cp -- "$SIM_DUMP_DIR/$f" "$dir/" || { _sim_fail "no $f in $SIM_DUMP_DIR"; return 2; }
	done
	perl -pe 's/(\{ CA [^{}]*\{[^}]*\} LID:)([0-9A-Fa-f]+)/sprintf("%s%04X", $1, hex($2) + 1)/ge' \
		"$SIM_DUMP_DIR/opensm-subnet.lst" >"$dir/opensm-subnet.lst" ||
		{ _sim_fail "cannot rewrite opensm-subnet.lst"; return 2; }
	_sim_msg "ibdmchk on the high plane: CA ports carry base LID + 1 in $dir"
	SIM_DUMP_DIR=$dir sim_ibdmchk "$@"
}

# Turns ibroute / opensm-lfts.dump text into "SWITCH_GUID DLID PORT" lines
# (lowercase hex GUID, 0x%04x LID, decimal port), sorted, for diffing.
_sim_lfts_normalize() {
	awk "$SIM_AWK_HEX"'
	/^Unicast lids/ {
		guid = ""
		for (i = 1; i < NF; i++) if ($i == "guid") guid = tolower($(i + 1))
		next
	}
	guid != "" && $1 ~ /^0x[0-9a-fA-F]+$/ && $2 ~ /^[0-9]+$/ {
		printf "%s 0x%04x %d\n", guid, hex($1), $2 + 0
	}' "$@" | LC_ALL=C sort
}

# Lists the fabric's switches as "GUID NPORTS LID" lines (ibswitches
# discovers by directed route, so it works whatever the LFTs hold).
_sim_switches() {
	local -a envp
	mapfile -d '' -t envp < <(_sim_client_env) || return 1
	[[ ${#envp[@]} -gt 0 ]] || return 1
	command -v ibswitches >/dev/null 2>&1 || { _sim_fail "ibswitches not found (package infiniband-diags)"; return 1; }
	local sw
	sw=$(timeout "${SIM_DIAG_TIMEOUT:-60}" "${envp[@]}" ibswitches 2>"$SIM_TMP/ibswitches.err") ||
		{ _sim_fail "ibswitches failed"; _sim_tail "$SIM_TMP/ibswitches.err" 5; return 1; }
	# Switch	: 0x0000000000200001 ports 8 "Switch2" base port 0 lid 3 lmc 0
	printf '%s\n' "$sw" | sed -n 's/^Switch[[:space:]]*: \(0x[0-9a-fA-F]*\) ports \([0-9]*\) .* port 0 lid \([0-9]*\) .*/\1 \2 \3/p'
}

# sim_read_lfts OUTFILE: reads every switch's LFT back from the simulated
# fabric ("ibroute -n LID", LID-routed, so it needs a complete routing) and
# writes "SWITCH_GUID DLID PORT" lines to OUTFILE; the raw ibroute text goes
# to OUTFILE.raw. Port 255 (no route) entries are left out.
sim_read_lfts() {
	_sim_need_ibsim || return 1
	local out=${1:-}
	[[ -n $out ]] || { _sim_fail "sim_read_lfts: usage: sim_read_lfts OUTFILE"; return 1; }
	command -v ibroute >/dev/null 2>&1 || { _sim_fail "ibroute not found (package infiniband-diags)"; return 1; }
	local -a envp sws
	mapfile -d '' -t envp < <(_sim_client_env) || return 1
	[[ ${#envp[@]} -gt 0 ]] || return 1
	mapfile -t sws < <(_sim_switches)
	((${#sws[@]} > 0)) || { _sim_fail "no switches found in the fabric"; return 1; }
	: >"$out.raw" || { _sim_fail "cannot write $out.raw"; return 1; }
	local t=${SIM_DIAG_TIMEOUT:-60} line lid bad=0
	for line in "${sws[@]}"; do
		lid=${line##* }
		if ! timeout "$t" "${envp[@]}" ibroute -n "$lid" >>"$out.raw" 2>>"$SIM_TMP/ibroute.err"; then
			_sim_msg "ibroute -n $lid failed (switch LID $lid unreachable by LID routing?)"
			bad=$((bad + 1))
		fi
	done
	_sim_lfts_normalize "$out.raw" >"$out" || { _sim_fail "cannot write $out"; return 1; }
	if ((bad > 0)); then
		_sim_fail "could not read $bad of ${#sws[@]} LFTs (see $SIM_TMP/ibroute.err)"
		_sim_tail "$SIM_TMP/ibroute.err" 5
		return 1
	fi
	_sim_msg "read LFTs of ${#sws[@]} switches: $(wc -l <"$out") entries in $out"
}

# sim_read_sl2vl OUTFILE: reads every switch's SL2VL tables back from the
# fabric ("smpquery sl2vl LID OUTPORT") and writes them in ibdmchk's -d
# format: "0xSWITCH_GUID IN OUT 0x(vl0)(vl1) ... 0x(vl14)(vl15)". One query
# per switch port: meant for small test fabrics.
sim_read_sl2vl() {
	_sim_need_ibsim || return 1
	local out=${1:-}
	[[ -n $out ]] || { _sim_fail "sim_read_sl2vl: usage: sim_read_sl2vl OUTFILE"; return 1; }
	command -v smpquery >/dev/null 2>&1 || { _sim_fail "smpquery not found (package infiniband-diags)"; return 1; }
	local -a envp sws
	mapfile -d '' -t envp < <(_sim_client_env) || return 1
	[[ ${#envp[@]} -gt 0 ]] || return 1
	mapfile -t sws < <(_sim_switches)
	((${#sws[@]} > 0)) || { _sim_fail "no switches found in the fabric"; return 1; }
	: >"$out" || { _sim_fail "cannot write $out"; return 1; }
	local t=${SIM_DIAG_TIMEOUT:-60} line guid nports lid port tbl bad=0
	for line in "${sws[@]}"; do
		read -r guid nports lid <<<"$line"
		guid=${guid,,} # ibdmchk only accepts lowercase hex
		for ((port = 1; port <= nports; port++)); do
			if ! tbl=$(timeout "$t" "${envp[@]}" smpquery sl2vl "$lid" "$port" 2>>"$SIM_TMP/smpquery.err"); then
				bad=$((bad + 1))
				continue
			fi
			# "ports: in  1, out  8: | 0| 1| ...| 7|" -> one ibdmchk line
			printf '%s\n' "$tbl" | awk -v g="$guid" '
				/^ports: in/ {
					gsub(/[|,:]/, " ")
					if (NF < 21) next
					line = sprintf("%s %d %d", g, $3, $5)
					for (k = 6; k < 22; k += 2) line = line sprintf(" 0x%x%x", $k, $(k + 1))
					print line
				}' >>"$out" || bad=$((bad + 1))
		done
	done
	if ((bad > 0)); then
		_sim_fail "$bad SL2VL queries failed (see $SIM_TMP/smpquery.err)"
		return 1
	fi
	_sim_msg "read SL2VL of ${#sws[@]} switches: $(wc -l <"$out") lines in $out"
}

# sim_ctl ARGS...: `sarnue ctl` on the running OpenSM's control socket.
sim_ctl() {
	"$SARNUE_BIN" ctl --socket "$SIM_CTL_SOCKET" --timeout 20 "$@"
}

# sim_status_field FIELD...: fields of `sarnue ctl --json status`, one per
# line, all from the same status; "a.b" reaches into object a. Booleans, null
# and lists print as JSON.
sim_status_field() {
	sim_ctl --json status | python3 -c '
import json, sys
s = json.load(sys.stdin)
for path in sys.argv[1:]:
    v = s
    for k in path.split("."):
        v = v[k]
    print(json.dumps(v) if isinstance(v, (bool, list)) or v is None else v)' "$@"
}

# sim_wait_status FIELD VALUE [TIMEOUT]: until the status field equals VALUE.
sim_wait_status() {
	local end=$((SECONDS + ${3:-60})) v
	while ((SECONDS < end)); do
		v=$(sim_status_field "$1" 2>/dev/null) || v=""
		[[ $v == "$2" ]] && return 0
		sleep 0.2
	done
	echo "status $1 stayed '${v:-?}', wanted '$2'"
	return 1
}

# sim_wait_quiet [QUIET] [TIMEOUT]: until OpenSM has not routed for QUIET
# seconds (default 5; status "routings" unchanged), e.g. after the sweeps
# that starting host agents cause. Fails if it still routes after TIMEOUT
# seconds (default 120).
sim_wait_quiet() {
	local quiet=${1:-5} end=$((SECONDS + ${2:-120})) last n q=0
	last=$(sim_status_field routings 2>/dev/null)
	while ((q < quiet && SECONDS < end)); do
		sleep 1
		n=$(sim_status_field routings 2>/dev/null)
		if [[ $n == "$last" ]]; then q=$((q + 1)); else q=0 last=$n; fi
	done
	((q >= quiet))
}

# sim_wait_programmed N [TIMEOUT]: until OpenSM has written the unicast
# tables N times (status "tables_programmed"), so that the switches hold
# what the last routing computed.
sim_wait_programmed() {
	local want=$1 end=$((SECONDS + ${2:-120})) n
	while ((SECONDS < end)); do
		n=$(sim_status_field tables_programmed 2>/dev/null) || n=0
		((n >= want)) && return 0
		sleep 0.3
	done
	echo "tables programmed ${n:-?} times, wanted $want"
	return 1
}

# sim_high_lids: the high LIDs (base + 1) of every CA port, one decimal per
# line, from OpenSM's subnet dump (opensm-subnet.lst; LMC 1 two-plane layout).
sim_high_lids() {
	_sim_need_setup || return 1
	grep -o '{ CA [^}]*} LID:[0-9a-fA-F]*' "$SIM_DUMP_DIR/opensm-subnet.lst" |
		sed 's/.*LID://' | sort -u | while read -r hex; do echo $((16#$hex + 1)); done
}

# sim_plane_lfts high|base HIGH_LIDS_FILE LFTS_FILE: the lines of an LFT file
# from sim_read_lfts ("GUID 0xDLID PORT") towards the high LIDs listed in
# HIGH_LIDS_FILE (plane high), or towards every other LID (plane base).
sim_plane_lfts() {
	awk -v plane="$1" "$SIM_AWK_HEX"'
		NR == FNR { high[$1] = 1; next }
		(hex($2) in high) == (plane == "high")' "$2" "$3"
}

# sim_check_hop_tables: OpenSM's hop tables (opensm-lid-matrix.dump) against its LFTs
# (opensm-lfts.dump) and links (opensm-subnet.lst): for every switch and every LID its LFT
# routes, the LFT's port holds the hops along the LFT route (0 to the switch's own LID, 1 out
# to an end port, else one more than at the next switch), so does the least-hops column, and
# no other port holds any.  OpenSM's multicast routing and SA read these tables.  Prints the
# first difference and fails.
sim_check_hop_tables() {
	_sim_need_setup || return 1
	local d=$SIM_DUMP_DIR f
	for f in opensm-subnet.lst opensm-lfts.dump opensm-lid-matrix.dump; do
		[[ -r $d/$f ]] || { _sim_fail "no $d/$f (run OpenSM with -D 0x43 first)"; return 1; }
	done
	awk "$SIM_AWK_HEX"'
	function field(tok, name) { return substr(tok, length(name) + 1) }
	# hops from switch lid s to LID l along the LFTs; -1 when the route breaks or loops
	function hops(s, l,   h, p, guard) {
		for (h = 0; guard++ <= nsw; h++) {
			if (!((s, l) in lft)) return -1
			p = lft[s, l]
			if (p == 0) return s == l ? h : -1
			if (!((s, p) in peer)) return -1
			if (peer[s, p] == "end") return h + 1
			s = peer[s, p]
		}
		return -1
	}
	FILENAME ~ /subnet.lst$/ {
		n = 0
		for (i = 1; i <= NF; i++) {
			if ($i == "{") { n++; type[n] = $(i + 1) }
			else if ($i ~ /^NodeGUID:/) guid[n] = field($i, "NodeGUID:")
			else if ($i ~ /^LID:/) lid[n] = hex(field($i, "LID:"))
			else if ($i ~ /^PN:/) pn[n] = hex(field($i, "PN:"))
		}
		if (type[1] ~ /^SW/) {
			sw_lid[guid[1]] = lid[1]
			peer[lid[1], pn[1]] = type[2] ~ /^SW/ ? lid[2] : "end"
		}
		next
	}
	FILENAME ~ /lfts.dump$/ {
		if ($1 == "Unicast") { cur = $7 + 0; nsw++; next }
		if ($1 ~ /^0x/ && $2 + 0 != 255) lft[cur, hex($1)] = $2 + 0
		next
	}
	$1 == "Switch:" { g = $3; sub(/^0x/, "", g); cur = sw_lid[g]; next }
	$1 ~ /^0x/ {
		l = $1
		sub(/:$/, "", l)
		l = hex(l)
		for (i = 2; i <= NF && $i != "#"; i++) row[cur, l, i - 2] = hex($i)
		ports[cur] = i - 3
	}
	END {
		for (key in lft) {
			split(key, k, SUBSEP); s = k[1]; l = k[2]; p = lft[key]; h = hops(s, l)
			where = sprintf("switch LID %d, LID %d", s, l)
			if (h < 0) { print "hop tables: " where ": the LFT route breaks"; exit 1 }
			if (!((s, l, 0) in row)) { print "hop tables: " where ": no hop row"; exit 1 }
			if (row[s, l, 0] != h) {
				printf "hop tables: %s: least hops %s, %d along the LFTs\n", where, row[s, l, 0], h
				exit 1
			}
			for (q = 1; q <= ports[s]; q++) {
				want = q == p ? h : 255
				if (row[s, l, q] != want) {
					printf "hop tables: %s, port %d: %d, expected %d (LFT port %d)\n", where, q, row[s, l, q], want, p
					exit 1
				}
			}
		}
		if (!length(lft)) { print "hop tables: no LFT entries"; exit 1 }
	}' "$d/opensm-subnet.lst" "$d/opensm-lfts.dump" "$d/opensm-lid-matrix.dump"
}

# sim_lfts_from_dump OUTFILE: OpenSM's view (opensm-lfts.dump) in the same
# format as sim_read_lfts, so `diff` shows what did not reach the fabric.
sim_lfts_from_dump() {
	_sim_need_setup || return 1
	local out=${1:-} dump=$SIM_DUMP_DIR/opensm-lfts.dump
	[[ -n $out ]] || { _sim_fail "sim_lfts_from_dump: usage: sim_lfts_from_dump OUTFILE"; return 1; }
	[[ -r $dump ]] || { _sim_fail "no $dump (run OpenSM with -D 0x43 first)"; return 1; }
	# OpenSM lists unrouted LIDs with port 255; ibroute -n omits them.
	_sim_lfts_normalize "$dump" | awk '$3 != 255' >"$out" || { _sim_fail "cannot write $out"; return 1; }
}

# sim_route_option_args "KEY=VALUE ...": the same plugin options (as in SIM_PLUGIN_OPTIONS) as
# `sarnue route` arguments, -O KEY=VALUE each, in the array SIM_ROUTE_OPTION_ARGS; so an offline
# routing gets the options the plugin got.
sim_route_option_args() {
	local opt
	SIM_ROUTE_OPTION_ARGS=()
	for opt in ${1:-}; do SIM_ROUTE_OPTION_ARGS+=(-O "$opt"); done
}

# ---------------------------------------------------------------- multicast

# Start time (date +%s.%N) of the last sim_mcast_join: dumps written after it include that join.
_SIM_MCAST_JOIN_T=""

# sim_mcast_join HOST MGID [SL] [more sarnue-mcjoin args]: joins HOST's port (an ibsim node
# id, e.g. H-0003) to the group MGID through the SA of the running OpenSM, creating it with SL
# (default 0) unless it exists; the IPoIB broadcast group ff12:401b:ffff::ffff:ffff gets a
# plain join.  Prints sarnue-mcjoin's line ("joined MGID mlid 0xC001 sl 1 ...") and appends it
# to $SIM_TMP/mcjoin.out.  OpenSM then rewrites opensm.mcfdbs (sim_wait_mcfdbs) and, with
# SIM_SA_DUMP=TRUE, opensm-sa.dump at the next light sweep (sim_wait_sa_dump).
sim_mcast_join() {
	_sim_need_ibsim || return 1
	local host=${1:-} mgid=${2:-} sl=${3:-0}
	[[ -n $host && -n $mgid ]] || { _sim_fail "sim_mcast_join: usage: sim_mcast_join HOST MGID [SL] [sarnue-mcjoin args]"; return 1; }
	shift $(($# < 3 ? $# : 3))
	local tool=${SIM_MCJOIN:-$(dirname -- "${SARNUE_BIN:-./sarnue}")/test/tools/sarnue-mcjoin}
	[[ -x $tool ]] || { _sim_fail "sim_mcast_join: no $tool (make check builds it; or set SIM_MCJOIN)"; return 1; }
	local -a envp
	mapfile -d '' -t envp < <(_sim_client_env) || return 1
	[[ ${#envp[@]} -gt 0 ]] || return 1
	_SIM_MCAST_JOIN_T=$(date +%s.%N)
	local out rc=0
	out=$(timeout "${SIM_DIAG_TIMEOUT:-60}" "${envp[@]}" SIM_HOST="$host" "$tool" --sl "$sl" "$@" \
		--mgid "$mgid" 2>"$SIM_TMP/mcjoin.err") || rc=$?
	if ((rc != 0)); then
		_sim_fail "sim_mcast_join: $host could not join $mgid (exit $rc):"
		sed 's/^/sim:   | /' "$SIM_TMP/mcjoin.err" >&2
		return 1
	fi
	printf '%s\n' "$out" | tee -a "$SIM_TMP/mcjoin.out"
	_sim_msg "$host: $out"
}

# Modification time of FILE in seconds with fraction, or 0 when it does not exist.
_sim_mtime() {
	stat -c %.9Y -- "$1" 2>/dev/null || echo 0
}

# Waits until FILE in the dump dir was written after the last sim_mcast_join started and has
# not changed for a second (opensm.mcfdbs is rewritten in place, not renamed).
_sim_wait_dump_after_join() {
	local name=$1 timeout=$2 file=$SIM_DUMP_DIR/$1
	local end=$((SECONDS + timeout)) m last="" same=0
	[[ -n $_SIM_MCAST_JOIN_T ]] || { _sim_fail "wait for $name: no sim_mcast_join yet"; return 1; }
	while :; do
		m=$(_sim_mtime "$file")
		if awk -v m="$m" -v t="$_SIM_MCAST_JOIN_T" 'BEGIN { exit !(m > t) }'; then
			if [[ $m == "$last" ]]; then
				same=$((same + 1))
				((same >= 5)) && return 0
			else
				same=0 last=$m
			fi
		fi
		if ((SECONDS >= end)); then
			_sim_fail "$name not rewritten within ${timeout}s after the last join"
			return 1
		fi
		sleep 0.2
	done
}

# sim_wait_mcfdbs [TIMEOUT]: waits until OpenSM has rewritten opensm.mcfdbs after the last
# join.  OpenSM writes it (with log flag 0x40) at the end of every multicast processing
# (osm_mcast_mgr_process), which a join triggers right after the SA answered.
sim_wait_mcfdbs() {
	_sim_wait_dump_after_join opensm.mcfdbs "${1:-60}"
}

# sim_wait_sa_dump [TIMEOUT]: waits until OpenSM has written opensm-sa.dump after the last
# join (needs SIM_SA_DUMP=TRUE).  OpenSM writes it after a heavy sweep, after a light sweep
# (every sweep_interval, 10 s by default) when the SA data changed, and when it exits.
sim_wait_sa_dump() {
	grep -q '^sa_db_dump TRUE' "${SIM_CONF:-/dev/null}" 2>/dev/null ||
		{ _sim_fail "sim_wait_sa_dump: OpenSM runs without sa_db_dump (set SIM_SA_DUMP=TRUE)"; return 1; }
	_sim_wait_dump_after_join opensm-sa.dump "${1:-60}"
}
