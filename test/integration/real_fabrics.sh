#!/bin/bash
# Real-format fabrics: the files that OpenSM and ibnetdiscover write for real devices (vendor and
# device IDs of Mellanox switches and HCAs, mixed widths and speeds, a loopback cable, a dual-port
# HCA on one leaf, a storage host on a spine, LIDs in no particular order), a Voltaire chassis
# that ibnetdiscover -g groups, and the example of `man ibnetdiscover`.
# - ibnetdiscover (plain, -g, -s) run today against the simulated fabric writes what the stored
#   fixtures hold, so the fixtures are what the real tool writes;
# - every sarnue engine routes the fabric inside OpenSM under ibsim, and the result is judged by
#   sarnue check on OpenSM's own dumps, by ibdmchk and by sarnue check --live;
# - `sarnue route --subnet` on OpenSM's opensm-subnet.lst and `sarnue route` on each form of the
#   ibnetdiscover text compute the very LFTs (and path SLs) the plugin pushed.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk ibroute smpquery ibnetdiscover
. "$SARNUE_SRCDIR/sim/sim.sh"
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
sim_setup || exit 1
real=$SARNUE_SRCDIR/test/data/real

# OpenSM keeps the LIDs it handed out (guid2lid) in its cache directory; each fabric here is a
# subnet of its own, whose preset LIDs must not meet another fabric's cached ones.
fresh_subnet() {
	rm -rf -- "$SIM_TMP/cache"
}

# The topology part of ibnetdiscover output: no date line, no discovery lines of -s.
topology_of() {
	sed -n '/^# Topology file/,$p' "$1" | grep -v '^# Topology file: generated on'
}

# fixtures_are_real NET DIR: ibnetdiscover in its three forms writes the stored fixtures.
fixtures_are_real() {
	local net=$1 dir=$2 form envp
	fresh_subnet
	sim_start_ibsim "$net" || { t_fail "ibsim started on ${net##*/}"; return; }
	SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-updn SIM_QOS=FALSE sim_run_opensm_once ||
		{ t_fail "OpenSM brought ${net##*/} up"; sim_stop_ibsim; return; }
	mapfile -d '' -t envp < <(_sim_client_env)
	for form in "" -g -s; do
		timeout 60 "${envp[@]}" ibnetdiscover $form >"$SIM_TMP/ibnd$form.txt" 2>/dev/null
		t_expect "ibnetdiscover $form today writes the stored ibnetdiscover$form.txt" \
			cmp -s <(topology_of "$SIM_TMP/ibnd$form.txt") <(topology_of "$dir/ibnetdiscover$form.txt")
	done
	t_expect "OpenSM today writes the stored opensm-subnet.lst" \
		cmp -s <(sort "$SIM_DUMP_DIR/opensm-subnet.lst") <(sort "$dir/opensm-subnet.lst")
	sim_stop_ibsim
}

# offline_equal NAME ENGINE K SOURCE...: sarnue route on SOURCE computes the plugin's LFTs and,
# for multi-layer routings, its path SLs.
offline_equal() {
	local name=$1 engine=$2 k=$3 out=$SIM_TMP/offline
	shift 3
	rm -rf -- "$out"
	if ! "$SARNUE_BIN" route -e "$engine" -O "nue_vls=$k" --vls 8 "$@" -o "$out" \
		>"$SIM_TMP/offline.txt" 2>&1; then
		t_fail "$name: sarnue route $*"
		cat "$SIM_TMP/offline.txt"
		return
	fi
	t_expect "$name: offline from ${*: -1}, the plugin's very LFTs" \
		cmp -s <(t_lft_entries "$SIM_DUMP_DIR/opensm.fdbs") <(t_lft_entries "$out/opensm.fdbs")
	if [[ -s $SIM_DUMP_DIR/sarnue-path-sl.dump ]]; then
		t_expect "$name: offline from ${*: -1}, the plugin's very path SLs" \
			cmp -s <(sort "$SIM_DUMP_DIR/sarnue-path-sl.dump") <(sort "$out/sarnue-path-sl.dump")
	fi
}

# route_everywhere NET DIR LABEL ENGINE K: inside OpenSM, then offline from every source.
route_everywhere() {
	local net=$1 dir=$2 label=$3 engine=$4 k=$5 form
	export SIM_PLUGIN_OPTIONS="nue_vls=$k dump=always" T_LAYERS=$k
	if ((k > 1)) || [[ $engine == sar-dfsssp ]]; then export SIM_QOS=TRUE; else export SIM_QOS=FALSE; fi
	fresh_subnet
	t_route_and_judge "$net" "$label, $engine, $k VL" "$engine"
	offline_equal "$label, $engine, $k VL" "$engine" "$k" --lmc "${SIM_LMC:-0}" \
		--subnet "$SIM_DUMP_DIR/opensm-subnet.lst"
	for form in "" -g -s; do
		[[ -f $dir/ibnetdiscover$form.txt ]] &&
			offline_equal "$label, $engine, $k VL" "$engine" "$k" "$dir/ibnetdiscover$form.txt"
	done
}

fixtures_are_real "$real/lab-edr.net" "$real/lab-edr"
fixtures_are_real "$real/voltaire-qdr.net" "$real/voltaire-qdr"
route_everywhere "$real/lab-edr.net" "$real/lab-edr" "lab EDR fabric" sar-updn 1
route_everywhere "$real/lab-edr.net" "$real/lab-edr" "lab EDR fabric" sar-nue 1
route_everywhere "$real/lab-edr.net" "$real/lab-edr" "lab EDR fabric" sar-nue 4
route_everywhere "$real/lab-edr.net" "$real/lab-edr" "lab EDR fabric" sar-dfsssp 1
# A 2-level tree whose leaf3 has a cable from port 20 to its own port 21: sar-dmodk must see the
# tree through it (it once refused the fabric as "not a fat tree").
route_everywhere "$real/lab-edr.net" "$real/lab-edr" "lab EDR fabric" sar-dmodk 1
t_expect "the LIDs OpenSM kept are the fabric's own (stor01 at LID 100)" \
	grep -q '{stor01 mlx5_0} LID:0064' "$SIM_DUMP_DIR/opensm-subnet.lst"
# A chassis of Voltaire line and spine chips: ibnetdiscover -g writes Chassis sections,
# "# Spine Nodes" titles and [ext N] port numbers.
t_expect "the chassis fixture has chassis sections and external port numbers" \
	grep -q '^\[13\]\[ext 6\]' "$real/voltaire-qdr/ibnetdiscover-g.txt"
for engine in sar-updn sar-nue sar-dfsssp; do
	route_everywhere "$real/voltaire-qdr.net" "$real/voltaire-qdr" "Voltaire QDR chassis" $engine 1
done
# Its I/O edge switch hangs below a line board that carries hosts too: no fat tree for
# D-mod-k, and the refusal names both kinds of switch instead of calling it a direct network.
"$SARNUE_BIN" route -e sar-dmodk "$real/voltaire-qdr.net" >/dev/null 2>"$SIM_TMP/dmodk.err"
t_expect "sar-dmodk refuses the chassis with an I/O switch below a line board (exit 1)" test $? = 1
t_grep "the refusal names a switch above the leaves, the leaf, and says why" \
	"not a fat tree: end ports on 2 switch\(es\) above the 1 leaf switch\(es\) \(e.g. 'ISR9096 Voltaire sLB-24' 0x[0-9a-f]{16} .*edge switch below a leaf" \
	"$SIM_TMP/dmodk.err"

# Job maps on real names: the ConnectX-3 HCAs keep their firmware's description, so the
# hostname "MT25408" stands for both; the plugin binds it and warns once per routing, naming it.
# With a node-name map (infiniband-diags' format) the hosts have names of their own.
printf 'MT25408 7\nnode05 7\n' >"$SIM_TMP/jobs.default"
printf 'node01 7\nnode05 7\n' >"$SIM_TMP/jobs.named"
printf '# GUID "name"\n0x0002c90300a00010 "node01"\n0x0002c90300a00020 "node02"\n' >"$SIM_TMP/node-names"
export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-dfsssp SIM_QOS=TRUE
SIM_PLUGIN_OPTIONS="job_map=$SIM_TMP/jobs.default" SIM_CONF=""
fresh_subnet
if sim_start_ibsim "$real/lab-edr.net" && sim_run_opensm_once; then
	t_grep "default descriptions: the plugin warns of the hostname that names two HCAs" \
		"WRN sar-dfsssp: job map .*jobs.default: hostname 'MT25408' stands for 2 HCAs named 'MT25408 ConnectX Mellanox Technologies'" \
		"$SIM_OPENSM_LOG"
	t_grep "default descriptions: bound to both (3 nodes)" "1 job\(s\) on 3 nodes" "$SIM_OPENSM_LOG"
	SIM_PLUGIN_OPTIONS="job_map=$SIM_TMP/jobs.named node_name_map=$SIM_TMP/node-names" SIM_CONF=""
	if sim_run_opensm_once; then
		t_expect "node-name map: no warning" bash -c "! grep -q 'WRN' '$SIM_OPENSM_LOG'"
		t_grep "node-name map: node01 and node05 are the job's 2 nodes" "1 job\(s\) on 2 nodes, 0 unknown" \
			"$SIM_OPENSM_LOG"
	else
		t_fail "OpenSM routed with a node-name map"
	fi
	sim_stop_ibsim
else
	t_fail "OpenSM routed the lab fabric with a job map"
fi

# The example of `man ibnetdiscover`, as ibsim loads it: its CAs have LMC 1.  OpenSM's LID
# manager moves some of the LIDs ibsim presets there, so the text's own LIDs are judged offline.
man=$real/man-example/ibnetdiscover.txt
for engine in sar-updn sar-nue; do
	SIM_LMC=1 route_everywhere "$man" "" "man ibnetdiscover example" $engine 1
done
t_expect "man example offline: routed and verified with the text's LIDs and LMC 1" \
	grep -q '"lids": 17,.*"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <("$SARNUE_BIN" route "$man" --json)
t_done
