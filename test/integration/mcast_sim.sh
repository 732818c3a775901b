#!/bin/bash
# Multicast under ibsim for real: OpenSM with the sarnue plugin routes a small torus with the
# IPoIB partition; hosts join the broadcast group and two groups of SL 0 and SL 1 through
# test/tools/sarnue-mcjoin (an SA client under umad2sim).  Then the SA's answers, OpenSM's
# opensm.mcfdbs and opensm-sa.dump, sarnue check's multicast loader and ibdmchk must agree.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk
. "$SARNUE_SRCDIR/sim/sim.sh"
export SIM_MCJOIN=${SIM_MCJOIN:-$(dirname -- "$SARNUE_BIN")/test/tools/sarnue-mcjoin}
if [[ ! -x $SIM_MCJOIN ]]; then
	echo "SKIP: $SIM_MCJOIN not built (make check builds it)"
	exit 77
fi
sim_setup || exit 1
tmp=$SIM_TMP

gen torus torus --dims 3x3 --hosts-per-switch 2 || { t_done; exit 1; }
export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-updn SIM_IPOIB=TRUE SIM_SA_DUMP=TRUE
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
sim_start_ibsim "$SIM_TMP/torus.net" || exit 1
sim_start_opensm || exit 1
sim_wait_subnet_up 60 || { t_fail "subnet up"; t_done; exit 1; }
t_grep "partitions.conf asks for IPoIB" '^Default=0x7fff, ipoib : ALL=full;' "$SIM_TMP/partitions.conf"

bcast=ff12:401b:ffff::ffff:ffff
joins_ok=1
for h in H-0001 H-0005 H-0009 H-0014 H-0018; do sim_mcast_join "$h" "$bcast" || joins_ok=0; done
for h in H-0002 H-0009 H-0017; do sim_mcast_join "$h" ff15::5a:1 0 || joins_ok=0; done
for h in H-0005 H-0011; do sim_mcast_join "$h" ff15::5a:2 1 || joins_ok=0; done
sim_mcast_join H-0013 ff15::5a:2 1 --join-state sendonly || joins_ok=0
t_expect "every join succeeded" test "$joins_ok" = 1
out=$SIM_TMP/mcjoin.out
t_expect "5 joins of the broadcast group got MLID 0xC000 and SL 0" \
	test "$(grep -c "^joined $bcast mlid 0xC000 sl 0 " "$out")" = 5
t_expect "3 joins of ff15::5a:1 got MLID 0xC001 and SL 0" \
	test "$(grep -c '^joined ff15::5a:1 mlid 0xC001 sl 0 ' "$out")" = 3
t_expect "3 joins of ff15::5a:2 got MLID 0xC002 and SL 1" \
	test "$(grep -c '^joined ff15::5a:2 mlid 0xC002 sl 1 ' "$out")" = 3
t_grep "the send-only join is one" 'ff15::5a:2 .* state sendonly$' "$out"

# The joiner's errors: a plain join of a group nobody created, and an IPoIB-signed group
# whose SL differs from the broadcast group's (OpenSM's ipoib_mcgroup_creation_validation).
mapfile -d '' -t envp < <(_sim_client_env)
expect_fail 1 'INSUFFICIENT_COMPONENTS' "${envp[@]}" SIM_HOST=H-0003 "$SIM_MCJOIN" --no-create \
	--mgid ff15::5a:99
expect_fail 1 'ERR_REQ_INVALID' "${envp[@]}" SIM_HOST=H-0003 "$SIM_MCJOIN" --sl 1 \
	--mgid ff12:401b:ffff::e000:101
expect_fail 1 'no multicast GID' "$SIM_MCJOIN" --mgid fe80::1

t_expect "OpenSM rewrote opensm.mcfdbs after the joins" sim_wait_mcfdbs 60
mc=$SIM_DUMP_DIR/opensm.mcfdbs
for mlid in 0xC000 0xC001 0xC002; do
	t_grep "opensm.mcfdbs has MLID $mlid on the switches" "^$mlid : 0x" "$mc"
done
# H-0001 hangs at port 1 of S-0001 (0x200000), H-0017 at port 1 of S-0009 (0x200008).
t_expect "S-0001 forwards 0xC000 to H-0001" \
	awk '/^Switch/ { sw = $2 } sw == "0x0000000000200000" && /^0xC000 :/ && / 0x001 / { f = 1 } END { exit !f }' "$mc"
t_expect "S-0009 forwards 0xC001 to H-0017" \
	awk '/^Switch/ { sw = $2 } sw == "0x0000000000200008" && /^0xC001 :/ && / 0x001 / { f = 1 } END { exit !f }' "$mc"

t_expect "OpenSM wrote opensm-sa.dump after the joins" sim_wait_sa_dump 60
t_grep "the SA dump records SL 1 for 0xC002" 'MC Group 0xc002 .* sl_flow_hop=0x1' "$SIM_DUMP_DIR/opensm-sa.dump"

"$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --no-metrics >"$tmp/check.txt" 2>"$tmp/check.err"
rc=$?
t_expect "sarnue check verifies the routing with the multicast dumps (exit $rc)" test "$rc" = 0
t_grep "sarnue check read 3 groups with 11 members" \
	'^multicast: 3 groups, 11 members read from .*opensm.mcfdbs and .*opensm-sa.dump' "$tmp/check.txt"
"$SARNUE_BIN" check --subnet "$SIM_DUMP_DIR/opensm-subnet.lst" --fdbs "$SIM_DUMP_DIR/opensm.fdbs" \
	--mcfdbs "$mc" --no-metrics >"$tmp/check2.txt" 2>&1
t_grep "without the SA dump the trees give the same members" '^multicast: 3 groups, 11 members read from' \
	"$tmp/check2.txt"
t_expect "sarnue check --json parses with the multicast dumps" \
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' <("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --no-metrics --json)

t_expect "sar-updn built the trees itself, verified with the unicast routes" \
	sim_wait_log "sarnue: sar-updn: multicast MLID 0xc002: SL 1 on VL [0-9]+, 3 members, tree of [0-9]+ switches .*no credit loop" 30
t_expect "sarnue ctl status: 3 groups with a tree, none refused" \
	test "$(sim_status_field multicast.trees multicast.refused | tr '\n' ' ')" = "3 0 "
"$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --no-metrics --json >"$tmp/check.json" 2>/dev/null
t_expect "the verifier: 3 groups, 11 members, all reached, trees whole, no credit loop with unicast" \
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); m = d["verify"]["multicast"] if "verify" in d else d["multicast"]
v = d.get("verify", d)
assert (m["groups"], m["members"], m["unreached_members"], m["broken_trees"]) == (3, 11, 0, 0), m
assert m["dependencies"] > 0 and v["credit_loops"] == 0 and v["ok"], v' "$tmp/check.json"
t_expect "ibdmchk finds no credit loop with the multicast trees" sim_ibdmchk
for g in 0xC000:6:5 0xC001:5:3 0xC002:4:3; do
	IFS=: read -r mlid sws cas <<<"$g"
	t_grep "ibdmchk sees group $mlid with $sws switches and $cas HCAs" \
		"Multicast Group:$mlid has:$sws switches and:$cas HCAs" "$SIM_IBDMCHK_OUT"
done

# check_groups WHAT GROUPS MEMBERS: OpenSM's multicast dumps, read by sarnue check, hold that many
# groups and members, every member reached, no credit loop with the unicast routes; and ibdmchk
# agrees.
check_groups() {
	local what=$1 json=$tmp/check-groups.json
	sim_wait_mcfdbs 60 >/dev/null 2>&1
	sim_wait_sa_dump 60 >/dev/null 2>&1
	"$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --no-metrics --json >"$json" 2>/dev/null
	t_expect "$what: sarnue check: every member reached, no credit loop with unicast" \
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); v = d.get("verify", d); m = v["multicast"]
assert m["groups"] == int(sys.argv[2]) and m["members"] == int(sys.argv[3]), m
assert m["unreached_members"] == 0 and m["broken_trees"] == 0 and v["credit_loops"] == 0, v' \
		"$json" "$2" "$3"
	t_expect "$what: ibdmchk agrees" \
		sim_ibdmchk -c "$SIM_DUMP_DIR/sarnue-path-sl.dump" -d "$SIM_DUMP_DIR/sarnue-sl2vl.dump"
}

# Other fabrics and engines: every host joins the broadcast group; sarnue's trees must be
# verified with the unicast routes by the plugin, by sarnue check and by ibdmchk.
# mcast_case NAME ENGINE GEN-ARGS...
mcast_case() {
	local name=$1 engine=$2 h n=0 ok=1
	shift 2
	sim_stop_opensm >/dev/null 2>&1
	sim_stop_ibsim >/dev/null 2>&1
	gen "$name" "$@" || return 1
	export SIM_ROUTING_ENGINE=$engine
	sim_write_opensm_conf || return 1
	if ! sim_start_ibsim "$SIM_TMP/$name.net" || ! sim_start_opensm || ! sim_wait_subnet_up 120; then
		t_fail "$name, $engine: ibsim and OpenSM up"
		return 1
	fi
	for h in $(sed -n 's/^Hca[[:space:]]*[0-9]* "\([^"]*\)".*/\1/p' "$SIM_TMP/$name.net"); do
		sim_mcast_join "$h" "$bcast" >/dev/null || ok=0
		n=$((n + 1))
	done
	t_expect "$name, $engine: $n hosts joined the broadcast group" test "$ok" = 1
	t_expect "$name, $engine: the plugin's tree for all $n members fits the unicast routes" \
		sim_wait_log "sarnue: $engine: multicast MLID 0xc000: SL 0 on VL [0-9]+, $n members, .*no credit loop" 60
	check_groups "$name, $engine" 1 "$n"
}
export SIM_QOS=TRUE
mcast_case ft sar-dmodk ktree --k 4 --n 2
# On a fat tree sar-dmodk spreads the groups over the top switches: with the broadcast group
# and three more of one host per leaf, each of the four trees descends from its own top switch,
# and all four still fit the unicast routes together.
spread_ok=1
for g in 3 4 5; do
	for h in H-0001 H-0005 H-0009 H-0013; do sim_mcast_join "$h" "ff15::5a:$g" 0 >/dev/null || spread_ok=0; done
done
t_expect "ft, sar-dmodk: three more groups joined" test "$spread_ok" = 1
t_expect "ft, sar-dmodk: the third new group's tree is built" \
	sim_wait_log "sarnue: sar-dmodk: multicast MLID 0xc003: SL 0 on VL 0, 4 members, .*from top switch" 60
tops=$(sim_log "$SIM_OPENSM_LOG" |
	sed -n 's/.*sarnue: sar-dmodk: multicast MLID \(0xc00[0-3]\): .* from top switch \(.*\) (try .*/\1|\2/p' |
	awk -F'|' '{ top[$1] = $2 } END { for (m in top) print top[m] }' | sort -u | wc -l)
t_expect "ft, sar-dmodk: the four groups' trees descend from four different top switches (got $tops)" \
	test "$tops" = 4
check_groups "ft, sar-dmodk, four spread groups" 4 $((16 + 3 * 4))
# OpenSM's reroute keeps the multicast trees of the old routes: the plugin queues every group
# to be built again on the new ones, and sums that pass up in one line.
sim_ctl reroute >/dev/null || t_fail "ft, sar-dmodk: ctl reroute"
t_expect "ft, sar-dmodk: the reroute queues the four groups" \
	sim_wait_log "sarnue: multicast: OpenSM's reroute keeps the trees built for the previous routes; 4 group\(s\) queued" 60
t_expect "ft, sar-dmodk: after the reroute one line sums up the multicast pass" \
	sim_wait_log "sarnue: sar-dmodk: multicast after the routing: 4 group\(s\), 4 tree\(s\) built \(4 from their own top switch\), 0 refused, 0 with fewer than 2 members, VL\(s\) 0, [0-9.]+ s" 60
check_groups "ft, sar-dmodk, four spread groups after the reroute" 4 $((16 + 3 * 4))
mcast_case rnd sar-updn random --switches 10 --degree 4 --hosts-per-switch 1 --seed 3
mcast_case rnd2 sar-dfsssp random --switches 10 --degree 4 --hosts-per-switch 1 --seed 3

mcast_case dfly sar-dfsssp dragonfly --a 4 --p 2 --h 2
export SIM_PLUGIN_OPTIONS=nue_vls=4
mcast_case dfly4 sar-nue dragonfly --a 4 --p 2 --h 2
unset SIM_PLUGIN_OPTIONS

# The same dragonfly without the reserved turns (mcast_reserve=no): sar-dfsssp's routes take
# them, and the tree of every host would close a credit loop.  With sarnue's trees the plugin
# refuses it and names the mixed cycle; with OpenSM's own trees (mcast_trees=opensm) nothing
# stops it, and sarnue check finds the mixed cycle in OpenSM's dumps.
# dfly_unreserved TREES: every host joins; the OpenSM log is then checked by the caller.
dfly_unreserved() {
	local h
	sim_stop_opensm >/dev/null 2>&1
	export SIM_ROUTING_ENGINE=sar-dfsssp SIM_PLUGIN_OPTIONS="mcast_reserve=no mcast_trees=$1"
	sim_write_opensm_conf && sim_start_opensm && sim_wait_subnet_up 120 || return 1
	for h in $(sed -n 's/^Hca[[:space:]]*[0-9]* "\([^"]*\)".*/\1/p' "$SIM_TMP/dfly.net"); do
		sim_mcast_join "$h" "$bcast" >/dev/null 2>&1
	done
}
sim_stop_opensm >/dev/null 2>&1
sim_stop_ibsim >/dev/null 2>&1
if sim_start_ibsim "$SIM_TMP/dfly.net" && dfly_unreserved sarnue; then
	t_expect "dfly, sar-dfsssp, mcast_reserve=no: the tree that closes a credit loop is refused, the mixed cycle named" \
		sim_wait_log "ERR sar-dfsssp: multicast MLID 0xc000 \(SL 0\): no tree from [0-9]+ root\(s\) fits the unicast routes: credit loop .*-\(multicast 0xc000\)->" 60
	t_expect "dfly, sar-dfsssp, mcast_reserve=no: sarnue ctl status counts the refused group" \
		test "$(sim_status_field multicast.refused)" = 1
else
	t_fail "dfly, sar-dfsssp, mcast_reserve=no: ibsim and OpenSM up"
fi
if dfly_unreserved opensm; then
	sim_wait_mcfdbs 60 >/dev/null 2>&1
	sim_wait_sa_dump 60 >/dev/null 2>&1
	t_expect "dfly, OpenSM's own trees: the plugin left them to OpenSM" \
		test "$(grep -c 'sarnue: sar-dfsssp: multicast MLID' "$SIM_OPENSM_LOG")" = 0
	"$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --no-metrics >"$tmp/osm-trees.txt" 2>&1
	t_grep "dfly, OpenSM's own trees beside sar-dfsssp's routes: sarnue check finds a mixed credit loop" \
		'the cycle above mixes unicast and multicast dependencies' "$tmp/osm-trees.txt"
else
	t_fail "dfly, mcast_trees=opensm: OpenSM up"
fi
unset SIM_PLUGIN_OPTIONS
t_done
