#!/bin/bash
# sar-dfsssp under ibsim with the plugin loaded: a ring and a torus that need several virtual
# layers (qos TRUE, so OpenSM programs SL2VL through the engine), a fat tree with and without a
# job map, a malformed job map (logged with file:line, routing goes on without it), and qos
# FALSE (one VL: the ring needs two DFSSSP layers, so sar-dfsssp routes it with Nue's layering
# and says why), and too few VLs for the 3x3x3 torus (Nue, beside the layering, routes what does
# not fit).  Each
# routing must verify with sarnue check on the plugin's dumps and with ibdmchk on the same
# path SLs and SL2VL tables, the LFTs and SL2VL read back from the simulated switches must be
# what the engine computed, and `sarnue route` must give byte-identical files twice.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk ibroute smpquery
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

ENGINE=sar-dfsssp
export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=$ENGINE SIM_QOS=TRUE
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The plugin's summary line of the last routing: "N of M VLs used, K layer(s) needed; ...".
summary_field() {
	sed -n "s/.*sarnue: $ENGINE: routed .*; \([0-9]*\) of [0-9]* VLs used, \([0-9]*\) layer(s) needed.*/\\$1/p" \
		<(sim_log "$SIM_OPENSM_LOG") | tail -n 1
}

# Every switch must map SL s to VL s for the VLs in use (identity), as update_sl2vl answers.
sl2vl_identity() {
	local vls=$1 file=$2
	awk -v vls="$vls" "$SIM_AWK_HEX"'
		NF != 11 { exit 1 }
		{ for (sl = 0; sl < vls; sl++) { b = $(4 + int(sl / 2)); v = hex(substr(b, 3 + sl % 2, 1))
			if (v != sl) exit 1 } }
		END { exit NR == 0 }' "$file"
}

# verify_routed NAME VLS: the last routing's dumps verify with sarnue check, its paths use an SL
# for each of the VLS VLs, ibdmchk finds no credit loop, and the switches hold the dumped LFTs.
verify_routed() {
	local name=$1 vls=$2 json
	json=$("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --lmc "${SIM_LMC:-0}" --json)
	t_expect "$name: sarnue check verified (0 unreachable, 0 credit loops)" \
		grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$json"
	t_expect "$name: sarnue check saw every pair" grep -qv '"pairs": 0,' <<<"$json"
	t_expect "$name: paths use as many SLs as the engine's VLs" \
		grep -q "\"sls_used\": ${vls:-x}," <<<"$json"
	t_expect "$name: ibdmchk finds no credit loop" \
		sim_ibdmchk -c "$SIM_DUMP_DIR/sarnue-path-sl.dump" -d "$SIM_DUMP_DIR/sarnue-sl2vl.dump"
	if sim_read_lfts "$SIM_TMP/lfts.live" && sim_lfts_from_dump "$SIM_TMP/lfts.dump"; then
		t_expect "$name: LFTs read back from the switches match OpenSM's dump" \
			cmp -s "$SIM_TMP/lfts.live" "$SIM_TMP/lfts.dump"
	else
		t_fail "$name: LFTs read back from the switches"
	fi
}

# judge NETFILE NAME MIN_LAYERS: route under ibsim and check everything.
judge() {
	local net=$1 name=$2 min_layers=$3 vls layers
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
	t_expect "$name: OpenSM used $ENGINE" test "$(sim_routing_engine_used)" = "$ENGINE"
	t_grep "$name: plugin logged the routing" "sarnue: $ENGINE: routed" "$SIM_OPENSM_LOG"
	vls=$(summary_field 1)
	layers=$(summary_field 2)
	t_expect "$name: at least $min_layers layer(s) needed (got ${layers:-none})" \
		test "${layers:-0}" -ge "$min_layers"
	t_expect "$name: layers fit the VLs in use (${layers:-?} <= ${vls:-?})" \
		test "${layers:-99}" -le "${vls:-0}"
	verify_routed "$name" "$vls"
	if sim_read_sl2vl "$SIM_TMP/sl2vl.live"; then
		t_expect "$name: switches map SL s to VL s for the ${vls:-?} VLs in use" \
			sl2vl_identity "${vls:-1}" "$SIM_TMP/sl2vl.live"
	else
		t_fail "$name: SL2VL read back from the switches"
	fi
	sim_stop_ibsim
}

gen ring torus --dims 6 --hosts-per-switch 2 && judge "$SIM_TMP/ring.net" "ring of 6" 2
gen torus torus --dims 4x4 --hosts-per-switch 2 && judge "$SIM_TMP/torus.net" "torus 4x4" 2

gen ft fattree2 --leaves 4 --spines 2 --hosts-per-leaf 3 && judge "$SIM_TMP/ft.net" "fat tree 4x2" 1
cat >"$SIM_TMP/jobs.map" <<'EOF'
# two jobs across leaves, one host shared, one host the fabric does not have
node0001 101
node0002 101
node0004 101
node0005 101
node0007 202
node0010 202
node0005 202
ghost99 202
EOF
SIM_PLUGIN_OPTIONS="job_map=$SIM_TMP/jobs.map"
export SIM_PLUGIN_OPTIONS
judge "$SIM_TMP/ft.net" "fat tree 4x2 with a job map" 1
t_grep "job map: 2 jobs on 6 nodes, 1 unknown host logged" \
	"2 job\(s\) on 6 nodes, 1 unknown host\(s\)" "$SIM_OPENSM_LOG"
t_grep "job map: the unknown hostname is named" "first 'ghost99'" "$SIM_OPENSM_LOG"

printf 'node0001 101\nnode0002\n' >"$SIM_TMP/bad.map"
SIM_PLUGIN_OPTIONS="job_map=$SIM_TMP/bad.map"
judge "$SIM_TMP/ft.net" "fat tree 4x2 with a malformed job map" 1
t_grep "malformed job map: logged with file:line" "WRN $ENGINE: job map .*bad.map:2:" "$SIM_OPENSM_LOG"
t_grep "malformed job map: routing went on without it" "routing without a job map" "$SIM_OPENSM_LOG"
t_grep "malformed job map: no job used" "0 job\(s\) on 0 nodes" "$SIM_OPENSM_LOG"
unset SIM_PLUGIN_OPTIONS

# qos FALSE: OpenSM never programs SL2VL, so the engine may use one VL only; the ring needs
# a second DFSSSP layer, so it says so and routes with Nue's layering on that one VL instead.
SIM_QOS=FALSE SIM_CONF=""
if sim_start_ibsim "$SIM_TMP/ring.net"; then
	sim_run_opensm_once || true
	t_grep "qos off: warning logged" "WRN $ENGINE: OpenSM's qos is off.*1 VL instead of" "$SIM_OPENSM_LOG"
	t_grep "qos off: the warning counts layers and VLs" \
		"WRN $ENGINE: .*DFSSSP needs at least 2 layers but 1 VL is available; routed with Nue" \
		"$SIM_OPENSM_LOG"
	t_expect "qos off: the engine still routed" test "$(sim_routing_engine_used)" = "$ENGINE"
	t_expect "qos off: sarnue check verified the Nue tables" \
		"$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR"
	sim_stop_ibsim
else
	t_fail "qos off: ibsim started"
fi
SIM_QOS=TRUE

# Too few VLs (dfsssp_vls=2 on the 3x3x3 torus, whose paths need 3 layers): the destinations
# that fit keep DFSSSP's paths on one VL and Nue, routed on a thread beside the layering inside
# OpenSM, routes the others on the second; all verified and read back from the switches.
gen torus3 torus --dims 3x3x3 --hosts-per-switch 2
SIM_PLUGIN_OPTIONS="dfsssp_vls=2" SIM_CONF=""
export SIM_PLUGIN_OPTIONS
if sim_start_ibsim "$SIM_TMP/torus3.net"; then
	sim_run_opensm_once || true
	t_grep "overflow: the warning counts layers, VLs and destinations" \
		"WRN $ENGINE: DFSSSP's path layering needs at least 3 layers but 2 VLs are available; [0-9]+ of [0-9]+ destination LIDs keep their paths on 1 VL\(s\), [1-9][0-9]* are routed with Nue on 1 VL\(s\)" \
		"$SIM_OPENSM_LOG"
	t_expect "overflow: the engine still routed" test "$(sim_routing_engine_used)" = "$ENGINE"
	verify_routed "overflow" 2
	sim_stop_ibsim
else
	t_fail "overflow: ibsim started"
fi
unset SIM_PLUGIN_OPTIONS

# Offline: the same engine, twice, byte-identical output.
for run in 1 2; do
	"$SARNUE_BIN" route -e $ENGINE -O "job_map=$SIM_TMP/jobs.map" -o "$SIM_TMP/route$run" \
		"$SIM_TMP/torus.net" >"$SIM_TMP/route$run.out" 2>&1 ||
		t_fail "sarnue route -e $ENGINE run $run"
done
t_expect "sarnue route -e $ENGINE: two runs give byte-identical files" \
	diff -r "$SIM_TMP/route1" "$SIM_TMP/route2"
t_grep "sarnue route -e $ENGINE: offline result verified" "verdict: +OK" "$SIM_TMP/route1.out"
bad_out=$("$SARNUE_BIN" route -e $ENGINE -O "job_map=$SIM_TMP/bad.map" "$SIM_TMP/ft.net" 2>&1)
t_expect "sarnue route -e $ENGINE: a malformed job map fails offline (exit 1)" test $? -eq 1
t_expect "sarnue route -e $ENGINE: the error names file:line" grep -q 'bad.map:2:' <<<"$bad_out"
t_done
