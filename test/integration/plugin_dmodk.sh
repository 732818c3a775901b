#!/bin/bash
# sar-dmodk under ibsim with the plugin loaded: a 4-ary 3-tree, a tapered 3-level tree from
# 12-port switches and a 4-ary 3-tree with 2% of its links removed.  Each routing must verify
# with sarnue check on the plugin's dumps and with ibdmchk, the LFTs read back from the
# simulated switches must be those OpenSM dumped, the complete tree must reach the cut bound of
# the maximum EFI and load each link with one flow of any shift in topology order, and the
# degraded one must say how far it is from the closed form.  A torus
# is no fat tree: the plugin says so and OpenSM falls back to minhop.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk ibroute
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

ENGINE=sar-dmodk
export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=$ENGINE,minhop
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The cut bound the plugin logged for the last routing.
logged_bound() {
	sed -n "s/.*sarnue: $ENGINE: routed .*max EFI cut bound \([0-9]*\).*/\1/p" \
		<(sim_log "$SIM_OPENSM_LOG") | tail -n 1
}

# judge NETFILE NAME: route under ibsim and check everything; leaves the check's JSON in $json.
judge() {
	local net=$1 name=$2
	json=""
	SIM_CONF=""
	if ! sim_start_ibsim "$net"; then
		t_fail "$name: ibsim started"
		return 1
	fi
	if ! sim_run_opensm_once; then
		t_fail "$name: OpenSM brought the subnet up"
		sim_stop_ibsim
		return 1
	fi
	t_expect "$name: OpenSM used $ENGINE" test "$(sim_routing_engine_used)" = "$ENGINE"
	t_grep "$name: plugin logged the tree it recognised" \
		"sarnue: $ENGINE: routed .*fat tree of [0-9] levels" "$SIM_OPENSM_LOG"
	json=$("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --json)
	t_expect "$name: sarnue check verified (0 unreachable, 0 credit loops)" \
		grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$json"
	t_expect "$name: one VL" grep -q '"vls_used": 1,' <<<"$json"
	t_expect "$name: ibdmchk finds no credit loop" sim_ibdmchk
	if sim_read_lfts "$SIM_TMP/lfts.live" && sim_lfts_from_dump "$SIM_TMP/lfts.dump"; then
		t_expect "$name: LFTs read back from the switches match OpenSM's dump" \
			cmp -s "$SIM_TMP/lfts.live" "$SIM_TMP/lfts.dump"
	else
		t_fail "$name: LFTs read back from the switches"
	fi
	sim_stop_ibsim
}

# The maximum EFI sarnue check measured (its JSON's efi object).
measured_efi() {
	sed -n 's/.*"efi": {[^}]*"max": \([0-9]*\).*/\1/p' <<<"$json" | head -n 1
}

if gen k43 ktree --k 4 --n 3 && judge "$SIM_TMP/k43.net" "4-ary 3-tree"; then
	bound=$(logged_bound)
	t_expect "4-ary 3-tree: the cut bound is 60 (got ${bound:-none})" test "${bound:-0}" = 60
	t_expect "4-ary 3-tree: max EFI $(measured_efi) reaches the bound" \
		test "$(measured_efi)" = "${bound:-x}"
	# OpenSM's LIDs are not in topology order; the ranks of a job would be (sarnue topo-order).
	shifts=$("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --patterns --permutations 1 \
		--bisections 1 --json | grep -o '"shift_topology_order": {[^}]*}')
	t_expect "4-ary 3-tree: every shift in topology order loads each link once ($shifts)" \
		grep -q '"unrouted_flows": 0, "max_load": 1,' <<<"$shifts"
fi

if gen tapered fattree --radix 12 --hosts 288 --levels 3 --taper 2:1 &&
	judge "$SIM_TMP/tapered.net" "tapered 3-level tree"; then
	bound=$(logged_bound)
	t_expect "tapered 3-level tree: max EFI $(measured_efi) reaches the bound ${bound:-?}" \
		test "$(measured_efi)" = "${bound:-x}"
fi

if gen degraded ktree --k 4 --n 3 --remove-links 2% --seed 1 &&
	judge "$SIM_TMP/degraded.net" "4-ary 3-tree without 2% of its links"; then
	t_grep "degraded tree: the distance from the closed form is logged" \
		"WRN $ENGINE: the fat tree lacks [0-9]+ up link\(s\); [0-9]+ of [0-9]+ LFT entries" \
		"$SIM_OPENSM_LOG"
fi

# No fat tree: the reason is logged and minhop routes.
if gen torus torus --dims 4x4 --hosts-per-switch 2 && sim_start_ibsim "$SIM_TMP/torus.net"; then
	SIM_CONF=""
	sim_run_opensm_once || true
	t_grep "torus: the refusal names the reason" \
		"sarnue: ERR $ENGINE: not a fat tree: .*direct network" "$SIM_OPENSM_LOG"
	t_expect "torus: OpenSM fell back to minhop" test "$(sim_routing_engine_used)" = minhop
	sim_stop_ibsim
fi
t_done
