#!/bin/bash
# sar-nue inside OpenSM under ibsim: the 5-switch ring on one VL (where every shortest-path
# routing deadlocks), the 4x4x3 torus without a switch on 1-4 VLs, 3D tori with 1% of the links
# removed on 8 VLs (one cut into blocks by sar-nue itself, one in a nue_layers= file), random,
# dragonfly, Kautz, multi-island and 2- and 3-level fat-tree fabrics with and without faults,
# and LMC 1.
# Each routing is checked by sarnue check (dumps and live tables) and by ibdmchk, with the
# SL2VL tables read back from the switches.  Then the faults: more layers than QoS allows, more
# layers than the ports have VLs.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk ibroute smpquery
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

# nue NAME K NETFILE: route with k layers (qos TRUE when k > 1) and judge.  NUE_EXTRA: more
# plugin options.
nue() {
	local name=$1 k=$2 net=$3
	export SIM_PLUGIN_OPTIONS="nue_vls=$k dump=always ${NUE_EXTRA:-}" T_LAYERS=$k
	if ((k > 1)); then export SIM_QOS=TRUE; else export SIM_QOS=FALSE; fi
	t_route_and_judge "$net" "$name, $k VL" sar-nue
	t_grep "$name, $k VL: plugin logged the layers" "sarnue: sar-nue: routed.* $k VLs? \\(" "$SIM_OPENSM_LOG"
}

# offline_matches NAME K: `sarnue route --subnet` on the opensm-subnet.lst of the last run
# computes the very tables and path SLs the plugin pushed.
offline_matches() {
	local name=$1 k=$2 out=$SIM_TMP/offline
	sim_route_option_args "${NUE_EXTRA:-}"
	rm -rf -- "$out"
	if ! "$SARNUE_BIN" route -e sar-nue -O "nue_vls=$k" "${SIM_ROUTE_OPTION_ARGS[@]}" --vls 8 \
		--lmc "${SIM_LMC:-0}" --subnet "$SIM_DUMP_DIR/opensm-subnet.lst" -o "$out" \
		>"$SIM_TMP/offline.txt" 2>&1; then
		t_fail "$name, $k VL: sarnue route --subnet routed OpenSM's subnet"
		cat "$SIM_TMP/offline.txt"
		return
	fi
	t_lft_entries "$SIM_DUMP_DIR/opensm.fdbs" >"$SIM_TMP/plugin.lfts"
	t_lft_entries "$out/opensm.fdbs" >"$SIM_TMP/offline.lfts"
	t_expect "$name, $k VL: offline from OpenSM's subnet.lst, the plugin's very LFTs" \
		cmp -s "$SIM_TMP/plugin.lfts" "$SIM_TMP/offline.lfts"
	t_expect "$name, $k VL: the LFT comparison saw LIDs past 0x9 (hex letters)" \
		grep -q '^[^ ]* 0x[0-9]*[A-Fa-f]' "$SIM_TMP/plugin.lfts"
	t_expect "$name, $k VL: offline from OpenSM's subnet.lst, the plugin's very path SLs" \
		cmp -s "$SIM_DUMP_DIR/sarnue-path-sl.dump" "$out/sarnue-path-sl.dump"
}

nue "ring of 5" 1 "$SARNUE_SRCDIR/test/lib/nets/ring5.net"
offline_matches "ring of 5" 1

gen torus443 torus --dims 4x4x3 --hosts-per-switch 4 --remove-switch-id S-0006
# One layer, routed in both destination orders (the default) and in ascending LID order only
# (nue_orders=1): either way the plugin's tables are the offline ones.
if [[ -s $SIM_TMP/torus443.net ]]; then
	nue "torus 4x4x3 minus one switch" 1 "$SIM_TMP/torus443.net"
	offline_matches "torus 4x4x3 minus one switch, two orders" 1
	NUE_EXTRA=nue_orders=1 nue "torus 4x4x3 minus one switch, one order" 1 "$SIM_TMP/torus443.net"
	t_grep "one order: the plugin loaded with nue_orders=1" "sarnue: loaded .*options '.*nue_orders=1" \
		"$SIM_OPENSM_LOG"
	NUE_EXTRA=nue_orders=1 offline_matches "torus 4x4x3 minus one switch, one order" 1
	for k in 2 3 4; do nue "torus 4x4x3 minus one switch" $k "$SIM_TMP/torus443.net"; done
fi

for dims in 2x2x2 3x3x3 4x4x4 6x6x6; do
	gen "t$dims" torus --dims $dims --hosts-per-switch 1 --remove-links 1% --seed 11 &&
		nue "torus $dims, 1% links removed" 8 "$SIM_TMP/t$dims.net"
done
# The last of them, found as a torus in the subnet OpenSM discovered and cut into blocks of
# half of each ring (27 switches, 54 destinations each); offline, the same.
t_grep "torus 6x6x6: the plugin found the torus and routed it in blocks" \
	'sar-nue: routed .* 8 VLs \(torus blocks 6x6x6 in 2x2x2\), 432 destinations per layer (54/){7}54, ' \
	"$SIM_OPENSM_LOG"
offline_matches "torus 6x6x6, 1% links removed" 8

# nue_layers=: the blocks of half of each ring that gen writes, by the node descriptions OpenSM
# reads from the switches; offline from OpenSM's subnet.lst the same file gives the same tables.
if gen t444blocks torus --dims 4x4x4 --hosts-per-switch 2 --remove-links 1% --seed 11 \
	--layers-file "$SIM_TMP/t444blocks.layers"; then
	NUE_EXTRA="nue_layers=$SIM_TMP/t444blocks.layers" nue "torus 4x4x4 in blocks" 8 \
		"$SIM_TMP/t444blocks.net"
	t_grep "torus 4x4x4 in blocks: every switch named, 24 destinations per layer" \
		'sar-nue: routed .* 8 VLs \(nue_layers\), 192 destinations per layer (24/){7}24, ' \
		"$SIM_OPENSM_LOG"
	NUE_EXTRA="nue_layers=$SIM_TMP/t444blocks.layers" offline_matches "torus 4x4x4 in blocks" 8
fi

gen random random --switches 24 --degree 5 --hosts-per-switch 2 --seed 7 &&
	nue "random 24 switches degree 5" 1 "$SIM_TMP/random.net"
gen rfaulty random --switches 20 --degree 4 --hosts-per-switch 2 --remove-links 4 --seed 3 &&
	nue "random 20 switches degree 4, 4 links removed" 4 "$SIM_TMP/rfaulty.net"
gen dragonfly dragonfly --a 4 --p 2 --h 2 &&
	nue "dragonfly a4 p2 h2" 2 "$SIM_TMP/dragonfly.net" &&
	offline_matches "dragonfly a4 p2 h2" 2
gen fattree2 fattree2 --leaves 6 --spines 3 --hosts-per-leaf 4 &&
	nue "2-level fat tree" 1 "$SIM_TMP/fattree2.net"
gen ftfaulty fattree2 --leaves 6 --spines 3 --hosts-per-leaf 4 --remove-links 3 --seed 5 &&
	nue "2-level fat tree, 3 links removed" 2 "$SIM_TMP/ftfaulty.net"
gen kautz kautz --d 2 --n 2 --hosts-per-switch 2 &&
	nue "Kautz d2 n2" 1 "$SIM_TMP/kautz.net" &&
	offline_matches "Kautz d2 n2" 1
gen kfaulty kautz --d 2 --n 2 --hosts-per-switch 2 --remove-links 2 --seed 3 &&
	nue "Kautz d2 n2, 2 links removed" 2 "$SIM_TMP/kfaulty.net"
gen fattree3 fattree --levels 3 --radix 8 --hosts 48 --remove-links 2 --seed 1 &&
	nue "3-level fat tree, 2 links removed" 2 "$SIM_TMP/fattree3.net"
gen islands islands --islands 2 --hosts-per-island 16 --radix 8 &&
	nue "two fat-tree islands and a director" 1 "$SIM_TMP/islands.net"
gen ktree ktree --k 4 --n 3 --remove-switches 1 --seed 2 &&
	nue "4-ary 3-tree minus a switch" 1 "$SIM_TMP/ktree.net"

SIM_LMC=1 SIM_IBDMCHK_LMC=0
export SIM_LMC SIM_IBDMCHK_LMC
gen lmc fattree2 --leaves 4 --spines 2 --hosts-per-leaf 2 &&
	nue "fat tree with LMC 1" 2 "$SIM_TMP/lmc.net" &&
	offline_matches "fat tree with LMC 1" 2
SIM_LMC=0
unset SIM_IBDMCHK_LMC

# Faults: QoS off with 4 layers routes on one VL and says why; 9 layers exceed ibsim's 8 VLs,
# so the engine refuses and OpenSM routes with the next engine.
run_once() {
	SIM_CONF=""
	sim_write_opensm_conf && sim_run_opensm_once
}
if sim_start_ibsim "$SIM_TMP/torus443.net"; then
	export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-nue,minhop SIM_QOS=FALSE
	export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export SIM_PLUGIN_OPTIONS="nue_vls=4"
	if run_once; then
		t_grep "QoS off: the VL downgrade is logged" \
			"sarnue: WRN sar-nue: nue_vls=4 needs SL2VL tables.*qos TRUE.*1 VL" "$SIM_OPENSM_LOG"
		# OpenSM has no warning level: a warning goes at INFO (0x02), ERROR is for failures.
		t_grep "QoS off: the warning is at OpenSM's INFO level" \
			" 0x02 -> sarnue: WRN sar-nue: nue_vls=4" "$SIM_OPENSM_LOG"
		t_expect "the plugin's lines are at most 160 characters after 'sarnue: '" awk '
			i = index($0, "sarnue: ") { if (length($0) - i - 7 > 160) { print; bad = 1 } }
			END { exit bad }' "$SIM_OPENSM_LOG"
		t_expect "a long routing line goes on, tagged, on the next line" \
			grep -q "sarnue: sar-nue:  [^ ]" "$SIM_OPENSM_LOG"
		t_expect "QoS off: sar-nue still routes" test "$(sim_routing_engine_used)" = sar-nue
		t_grep "QoS off: routed on 1 VL" "sarnue: sar-nue: routed.* 1 VL \\(" "$SIM_OPENSM_LOG"
	else
		t_fail "OpenSM runs with nue_vls=4 and QoS off"
	fi
	export SIM_PLUGIN_OPTIONS="nue_vls=9" SIM_QOS=TRUE
	if run_once; then
		t_grep "too many layers: the error names the VLs" \
			"sarnue: ERR sar-nue: nue_vls=9 but some link of the fabric operates only 8 data VLs.*falls back" \
			"$SIM_OPENSM_LOG"
		t_expect "too many layers: OpenSM fell back to minhop" test "$(sim_routing_engine_used)" = minhop
	else
		t_fail "OpenSM runs with nue_vls=9"
	fi
	sim_stop_ibsim
else
	t_fail "ibsim started for the fault cases"
fi
t_done
