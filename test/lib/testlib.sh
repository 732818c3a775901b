# shellcheck shell=bash
#
# testlib.sh - shared setup for sarnue's integration tests: locate what `make` built, skip
# (exit 77) when a real component is missing, count checks, and route a net file through
# ibsim + OpenSM + the plugin and judge the result with `sarnue check` and ibdmchk.
#
# Tests run from `make check`, which exports SARNUE_BIN, SARNUE_PLUGIN_DIR and SARNUE_SRCDIR.

: "${SARNUE_SRCDIR:=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${SARNUE_BIN:=$SARNUE_SRCDIR/sarnue}"
: "${SARNUE_PLUGIN_DIR:=$SARNUE_SRCDIR/.libs}"

T_FAILS=0
T_CHECKS=0

t_skip_unless() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin command -v "$tool" >/dev/null 2>&1 || {
			echo "SKIP: $tool not installed"
			exit 77
		}
	done
}

t_ok() {
	T_CHECKS=$((T_CHECKS + 1))
	echo "ok: $*"
}

t_fail() {
	T_CHECKS=$((T_CHECKS + 1))
	T_FAILS=$((T_FAILS + 1))
	echo "FAIL: $*"
}

# t_expect DESCRIPTION COMMAND...: the command must succeed.
t_expect() {
	local what=$1
	shift
	if "$@"; then t_ok "$what"; else t_fail "$what"; fi
}

# t_log FILE: the file as a reader should see it: OpenSM's log with the plugin's long messages
# whole again (sim_log in sim/sim.sh) when the harness is loaded, else as it is.
t_log() {
	if declare -F sim_log >/dev/null; then
		sim_log "$1"
	else
		cat -- "$1"
	fi
}

t_grep() {
	local what=$1 pattern=$2 file=$3
	if t_log "$file" | grep -qE -- "$pattern"; then
		t_ok "$what"
	else
		t_fail "$what (no /$pattern/ in $(basename -- "$file"))"
	fi
}

# expect_fail STATUS PATTERN COMMAND...: the command must exit with STATUS and, unless PATTERN
# is empty, print a line matching it on stderr.  Its output goes to $tmp/out and $tmp/err (the
# calling script's temporary directory), where the script may look further.
expect_fail() {
	local want=$1 pattern=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [[ $rc == "$want" ]] && { [[ -z $pattern ]] || grep -qE -- "$pattern" "$tmp/err"; }; then
		t_ok "exit $want and /$pattern/: ${*:1:5}"
	else
		t_fail "expected exit $want and /$pattern/ from: ${*:1:5} (got $rc: $(head -c 300 "$tmp/err"))"
	fi
}

# gen NAME ARGS...: `sarnue gen ARGS` into $SIM_TMP/NAME.net (after sim_setup); a failure is
# a failed check that shows the generator's error.
gen() {
	local name=$1
	shift
	"$SARNUE_BIN" gen "$@" -o "$SIM_TMP/$name.net" 2>"$SIM_TMP/$name.gen.err" ||
		{ t_fail "sarnue gen $*"; cat "$SIM_TMP/$name.gen.err"; return 1; }
}

t_done() {
	echo "$T_CHECKS checks, $T_FAILS failed"
	((T_FAILS == 0))
}

# Switch GUID, LID and port of every LFT entry of an opensm.fdbs, sorted: OpenSM dumps the
# switches in its own order, sarnue route in GUID order.
t_lft_entries() {
	awk '/Switch 0x/ { guid = $NF } /^0x[0-9a-fA-F]+ :/ { print guid, $1, $3 }' "$1" | sort
}

# `sarnue check --live` reads the tables back from the simulated switches through umad2sim and
# must reach the same verdict on the same number of pairs as the check of OpenSM's dumps.
t_live_check() {
	local name=$1 dump_json=$2 live_json envp sls=()
	mapfile -d '' -t envp < <(_sim_client_env)
	# Switches hold no path SLs: multi-layer engines' SLs come from the plugin's dump.
	[[ -f $SIM_DUMP_DIR/sarnue-path-sl.dump ]] && sls=(--path-sl "$SIM_DUMP_DIR/sarnue-path-sl.dump")
	live_json=$(timeout 120 "${envp[@]}" "$SARNUE_BIN" check --live "${sls[@]}" --json 2>"$SIM_TMP/live.err")
	t_expect "$name: sarnue check --live verified the programmed tables" \
		grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$live_json"
	t_expect "$name: live and dump checks walked the same pairs" test \
		"$(grep -o '"pairs": [0-9]*' <<<"$live_json")" = "$(grep -o '"pairs": [0-9]*' <<<"$dump_json")"
}

# The tables of OpenSM's last routing: sarnue check on its dumps finds every pair reachable
# and no credit loop, ibdmchk agrees (with the plugin's SL dumps), and the tables read back from
# the switches get the same verdict.  Leaves the check's JSON in T_CHECK_JSON.
t_judge_dumps() {
	local name=$1
	T_CHECK_JSON=$("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --lmc "${SIM_LMC:-0}" --json)
	t_expect "$name: sarnue check verified (0 unreachable, 0 credit loops)" \
		grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$T_CHECK_JSON"
	t_expect "$name: sarnue check saw every pair" grep -qv '"pairs": 0,' <<<"$T_CHECK_JSON"
	t_expect "$name: ibdmchk finds no credit loop" \
		sim_ibdmchk -c "$SIM_DUMP_DIR/sarnue-path-sl.dump" -d "$SIM_DUMP_DIR/sarnue-sl2vl.dump"
	t_live_check "$name" "$T_CHECK_JSON"
}

# Routes NETFILE under ibsim with OpenSM and the plugin, then checks: OpenSM used the engine,
# sarnue check finds every pair reachable and no credit loop, ibdmchk agrees, the LFTs read
# back from the simulated switches equal OpenSM's dump, and OpenSM's hop tables hold the hops
# of the LFT routes (sim_check_hop_tables).  Uses SIM_* settings as given.
t_route_and_judge() {
	local net=$1 name=$2 engine=${3:-sar-updn}
	export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=$engine
	export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	SIM_CONF=""
	if ! sim_start_ibsim "$net"; then
		t_fail "$name: ibsim started"
		return
	fi
	if ! sim_run_opensm_once; then
		t_fail "$name: OpenSM brought the subnet up"
		sim_stop_ibsim
		return
	fi
	t_expect "$name: OpenSM used $engine" test "$(sim_routing_engine_used)" = "$engine"
	t_grep "$name: plugin logged the routing" "sarnue: $engine: routed" "$SIM_OPENSM_LOG"
	t_judge_dumps "$name"
	if sim_read_lfts "$SIM_TMP/lfts.live" && sim_lfts_from_dump "$SIM_TMP/lfts.dump"; then
		t_expect "$name: LFTs read back from the switches match OpenSM's dump" \
			cmp -s "$SIM_TMP/lfts.live" "$SIM_TMP/lfts.dump"
	else
		t_fail "$name: LFTs read back from the switches"
	fi
	t_expect "$name: OpenSM's hop tables hold the hops of the LFT routes" sim_check_hop_tables
	# With qos TRUE OpenSM programs SL2VL through the engine's update_sl2vl: SL s travels on
	# VL s mod T_LAYERS (1 for single-layer engines, unlike ibsim's default map SL n -> VL n).
	if [[ ${SIM_QOS:-FALSE} == TRUE ]]; then
		if sim_read_sl2vl "$SIM_TMP/sl2vl.live"; then
			t_expect "$name: every switch maps SL s to VL s mod ${T_LAYERS:-1}" \
				awk -v k="${T_LAYERS:-1}" 'NF != 11 { exit 1 }
				     { for (i = 4; i <= 11; i++)
					   if ($i != sprintf("0x%x%x", (2 * (i - 4)) % k, (2 * (i - 4) + 1) % k)) exit 1 }
				     END { exit NR == 0 }' "$SIM_TMP/sl2vl.live"
		else
			t_fail "$name: SL2VL read back from the switches"
		fi
	fi
	sim_stop_ibsim
}
