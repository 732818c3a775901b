#!/bin/bash
# `sarnue topo-order` and the fat-tree figures of `sarnue check`, on fat trees made by
# `sarnue gen` (k-ary n-tree, XGFT, a tapered real-life fat tree): every host is listed once,
# leaf by leaf then by port; the Slurm, hostfile, topology.conf and JSON outputs agree with the
# lines; a job of a job map and a Slurm host list come out as the matching subsequence; bad
# input is refused with the file:line or list position and the documented exit status.  On a
# fat tree whose LIDs are dealt out of topology order and routed by sar-dmodk, check --patterns
# shows the shifts in topology order free of contention, unlike those in LID order, and the cut
# bound of the maximum EFI; a torus is no fat tree for topo-order, and check still works on it.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-topoorder.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT


# Hostnames of a generated net file (first word of each HCA's description), file order.
net_hosts() {
	sed -n 's/^Hca.*# "\([^ "]*\)[ "].*/\1/p' "$1"
}

# py NAME SCRIPT ARGS...: a python check, ok when it exits 0.
py() {
	local name=$1 script=$2
	shift 2
	if python3 -c "$script" "$@" 2>"$tmp/py.err"; then
		t_ok "$name"
	else
		t_fail "$name: $(head -c 300 "$tmp/py.err")"
	fi
}

# The placement must list leaf after leaf, each once, ports rising on a leaf.
leaf_contiguous='
import json, sys
d = json.load(open(sys.argv[1]))
p = d["placement"]
assert [x["host"] for x in p] == d["hosts"]
keys = [(x["leaf_position"], x["port"]) for x in p]
assert all(k[0] is not None for k in keys), "a host above the leaves"
assert keys == sorted(keys), "not leaf by leaf, port by port"
leaves = [k[0] for k in keys]
seen = []
for l in leaves:
    if not seen or seen[-1] != l:
        assert l not in seen, "leaf %d comes twice" % l
        seen.append(l)
assert seen == list(range(len(seen))), "leaf positions %s" % seen[:8]
assert len(seen) == d["leaves"], "%d leaves with hosts of %d" % (len(seen), d["leaves"])
'

# topology.conf: one Nodes= line per leaf, in order, whose hosts are the lines; unique switch
# names; every switch above lists only switches named before it.
topology_conf='
import sys
lines = open(sys.argv[2]).read().split()
names, nodes, leaves = [], [], 0
for l in open(sys.argv[1]):
    l = l.strip()
    if not l or l.startswith("#"):
        continue
    kv = dict(w.split("=", 1) for w in l.split())
    names.append(kv["SwitchName"])
    if "Nodes" in kv:
        leaves += 1
        nodes += kv["Nodes"].split(",")
    else:
        for c in kv["Switches"].split(","):
            assert c in names[:-1], "child %s of %s unknown" % (c, names[-1])
assert nodes == lines, "Nodes= lists are not the lines"
assert len(names) == len(set(names)), "switch names repeat"
assert leaves == int(sys.argv[3]), "%d leaves, expected %s" % (leaves, sys.argv[3])
'

# topo_fabric NAME GEN-ARGS...: generates the fabric and checks the fabric-wide outputs.
topo_fabric() {
	local name=$1 net=$tmp/$1.net leaves
	shift
	"$SARNUE_BIN" gen "$@" -o "$net" 2>/dev/null || {
		t_fail "$name: sarnue gen $*"
		return
	}
	"$SARNUE_BIN" topo-order "$net" >"$tmp/$name.lines" 2>"$tmp/$name.err"
	t_expect "$name: topo-order exits 0" test $? = 0
	t_expect "$name: every host once" cmp -s <(sort "$tmp/$name.lines") <(net_hosts "$net" | sort)
	t_expect "$name: no host twice" test -z "$(sort "$tmp/$name.lines" | uniq -d)"
	"$SARNUE_BIN" topo-order "$net" --format json >"$tmp/$name.json" 2>/dev/null
	py "$name: json lists the lines leaf by leaf, port by port" "$leaf_contiguous" "$tmp/$name.json"
	t_expect "$name: json hosts are the lines" cmp -s "$tmp/$name.lines" \
		<(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["hosts"]))' "$tmp/$name.json")
	leaves=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["leaves"])' "$tmp/$name.json")
	"$SARNUE_BIN" topo-order "$net" --format topology-conf >"$tmp/$name.conf" 2>/dev/null
	py "$name: topology.conf names all $leaves leaves with their hosts" "$topology_conf" \
		"$tmp/$name.conf" "$tmp/$name.lines" "$leaves"
	t_expect "$name: slurm-arbitrary is the lines joined by commas" cmp -s \
		<("$SARNUE_BIN" topo-order "$net" --format slurm-arbitrary) <(paste -sd, "$tmp/$name.lines")
	t_expect "$name: hostfile has one slot per host" cmp -s \
		<("$SARNUE_BIN" topo-order "$net" --format hostfile) <(sed 's/$/ slots=1/' "$tmp/$name.lines")
}

topo_fabric ktree ktree --k 4 --n 3
topo_fabric xgft xgft --h 3 --m 3,2,2 --w 1,2,2
topo_fabric fattree fattree --radix 8 --hosts 40 --taper 3:1
t_grep "tapered tree: 7 leaves of 6 or 5 hosts" '^SwitchName=S-0007 Nodes=node0036,node0037,node0038,node0039,node0040$' "$tmp/fattree.conf"

# By hand: host dual has an HCA on each leaf, stor01 hangs on a spine.  dual is listed once,
# on its first leaf; stor01 is left out of the fabric's list and comes last when named.
cat >"$tmp/svc.net" <<'EOF'
Switch	4 "S-0001"	# "leaf-a"
[1]	"H-0001"[1]
[2]	"H-0002"[1]
[3]	"S-0003"[1]
[4]	"S-0004"[1]

Switch	4 "S-0002"	# "leaf-b"
[1]	"H-0011"[1]
[2]	"H-0003"[1]
[3]	"S-0003"[2]
[4]	"S-0004"[2]

Switch	4 "S-0003"	# "spine-a"
[1]	"S-0001"[3]
[2]	"S-0002"[3]
[3]	"H-0020"[1]

Switch	4 "S-0004"	# "spine-b"
[1]	"S-0001"[4]
[2]	"S-0002"[4]

Hca	1 "H-0001"	# "alpha HCA-1"
[1]	"S-0001"[1]

Hca	1 "H-0002"	# "dual HCA-1"
[1]	"S-0001"[2]

Hca	1 "H-0011"	# "dual HCA-2"
[1]	"S-0002"[1]

Hca	1 "H-0003"	# "beta HCA-1"
[1]	"S-0002"[2]

Hca	1 "H-0020"	# "stor01 HCA-1"
[1]	"S-0003"[3]
EOF
"$SARNUE_BIN" topo-order "$tmp/svc.net" >"$tmp/svc.lines" 2>"$tmp/svc.err"
t_expect "two-HCA host once, service host left out" cmp -s "$tmp/svc.lines" <(printf 'alpha\ndual\nbeta\n')
t_grep "a note names the service host" "note: 1 host\(s\) on switches above the leaves .* first 'stor01'" "$tmp/svc.err"
t_expect "a named service host comes last" cmp -s \
	<("$SARNUE_BIN" topo-order "$tmp/svc.net" --hosts stor01,beta,dual 2>/dev/null) <(printf 'dual\nbeta\nstor01\n')
"$SARNUE_BIN" topo-order "$tmp/svc.net" --format topology-conf >"$tmp/svc.conf" 2>/dev/null
t_grep "topology.conf: the two-HCA host on its first leaf" '^SwitchName=S-0001 Nodes=alpha,dual$' "$tmp/svc.conf"
t_grep "topology.conf: the service host in a comment only" '^# 1 host\(s\) on switches above the leaves left out, first stor01$' "$tmp/svc.conf"

# A job of every fifth host, listed backwards with a repeat: the same order as the fabric's.
net=$tmp/fattree.net
awk 'NR % 5 == 1 { print $1, "a" } NR % 5 == 2 { print $1, "b" }' "$tmp/fattree.lines" | tac >"$tmp/jobs.map"
echo "node0001 a" >>"$tmp/jobs.map"
"$SARNUE_BIN" topo-order "$net" --job a --job-map "$tmp/jobs.map" >"$tmp/job.lines"
t_expect "job a: exit 0" test $? = 0
t_expect "job a: its 8 hosts in topology order" cmp -s "$tmp/job.lines" <(awk 'NR % 5 == 1' "$tmp/fattree.lines")
"$SARNUE_BIN" topo-order "$tmp/fattree.net" --hosts 'node00[36-40],node0003,node0001' >"$tmp/hl.lines"
t_expect "--hosts: a Slurm host list in topology order" cmp -s "$tmp/hl.lines" \
	<(grep -xE 'node00(0[13]|3[6-9]|40)' "$tmp/fattree.lines")

cp "$tmp/jobs.map" "$tmp/bad.map" && echo "ghost a" >>"$tmp/bad.map"
expect_fail 3 "bad.map:$(wc -l <"$tmp/bad.map"): host 'ghost' of job a is not a host of" \
	"$SARNUE_BIN" topo-order "$net" --job a --job-map "$tmp/bad.map"
printf 'node0001 a\nnode0002\n' >"$tmp/malformed.map"
expect_fail 3 "malformed.map:2" "$SARNUE_BIN" topo-order "$net" --job a --job-map "$tmp/malformed.map"
expect_fail 3 "no job 'zz'" "$SARNUE_BIN" topo-order "$net" --job zz --job-map "$tmp/jobs.map"
expect_fail 3 "host 2 of the list, 'node0099'" "$SARNUE_BIN" topo-order "$net" --hosts node0001,node0099
expect_fail 2 "--hosts: column" "$SARNUE_BIN" topo-order "$net" --hosts 'node[1-'
expect_fail 2 "--format yaml: expected" "$SARNUE_BIN" topo-order "$net" --format yaml
expect_fail 2 "--job and --job-map go together" "$SARNUE_BIN" topo-order "$net" --job a
expect_fail 2 "describes the whole fabric" "$SARNUE_BIN" topo-order "$net" --hosts node0001 --format topology-conf
expect_fail 2 "give a topology" "$SARNUE_BIN" topo-order --hosts node0001
expect_fail 2 "give one topology" "$SARNUE_BIN" topo-order "$net" "$net"
expect_fail 3 "nosuch.net" "$SARNUE_BIN" topo-order "$tmp/nosuch.net"
"$SARNUE_BIN" topo-order --help >"$tmp/help" 2>&1
t_expect "--help exits 0" test $? = 0
t_grep "--help documents the formats" 'topology-conf.*' "$tmp/help"
t_grep "--help documents the exit status" '^    0 printed, 1 the fabric is no fat tree' "$tmp/help"
t_expect "sarnue help topo-order is --help" cmp -s "$tmp/help" <("$SARNUE_BIN" help topo-order)
t_expect "sarnue --help lists topo-order" grep -q '^  topo-order' <("$SARNUE_BIN" --help)

# LIDs dealt round-robin over seven piles, so LID order is far from topology order.
python3 - "$tmp/ktree.net" "$tmp/dealt.net" <<'EOF'
import sys
blocks = open(sys.argv[1]).read().split("\n\n")
rest = [b for b in blocks if not b.lstrip().startswith("Hca")]
hcas = [b for b in blocks if b.lstrip().startswith("Hca")]
hcas = [h for _, h in sorted(enumerate(hcas), key=lambda x: (x[0] % 7, x[0]))]
open(sys.argv[2], "w").write("\n\n".join(rest + hcas) + "\n")
EOF
t_expect "dealt LIDs: same topology order" cmp -s <("$SARNUE_BIN" topo-order "$tmp/dealt.net") "$tmp/ktree.lines"
t_expect "sar-dmodk routes it" "$SARNUE_BIN" route "$tmp/dealt.net" -e sar-dmodk -o "$tmp/dk" >/dev/null
"$SARNUE_BIN" check --dump-dir "$tmp/dk" --patterns --permutations 5 --bisections 5 >"$tmp/dk.txt"
t_expect "check --patterns exits 0" test $? = 0
t_grep "shifts in topology order without contention" '^  shift \(topo\):   63 instances, max load 1, ' "$tmp/dk.txt"
t_grep "the order is said" '^  topology order: 64 terminals leaf by leaf, then by port' "$tmp/dk.txt"
t_grep "cut bound beside the EFI, met by D-mod-k" '^EFI cut bound:    EFI max 60 \(fat tree cut bound 60, ratio 1\.00\)' "$tmp/dk.txt"
t_grep "the tree's shape" '^fat tree:         3 levels, switches 16\+16\+16' "$tmp/dk.txt"
"$SARNUE_BIN" check --dump-dir "$tmp/dk" --patterns --permutations 5 --bisections 5 --json >"$tmp/dk.json"
py "json: new keys, old ones unchanged" '
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
p, t = m["patterns"], m["fat_tree"]
assert t["recognised"] and t["levels"] == 3 and t["leaves"] == 16 and t["terminals_on_leaves"] == 64
assert t["efi_cut_bound"] == 60 and t["efi_max_over_bound"] == m["efi"]["max"] / 60
assert p["shift_topology_order"]["max_load"] == 1 and p["topology_order_terminals"] == 64
assert p["shift_topology_order"]["instances"] == 63 and p["shift_topology_order"]["flows"] == 4032
assert p["shift"]["max_load"] > 1, "LID order should contend here"
assert set(p["shift"]) == {"instances", "flows", "unrouted_flows", "max_load", "mean_max_load"}
assert p["terminals"] == 64 and p["shifts_possible"] == 63
' "$tmp/dk.json"

# Islands joined by a core whose switches are cabled to every spine of each island: from a core
# switch several spines lead to a leaf, and D-mod-k must spread a leaf's hosts over all of them
# (it once sent them all through one spine, twelve times the bound on the bench's islands),
# also over parallel links (the second fabric: 2 links leaf-spine, 4 spine-core).  sar-updn,
# with the top level as roots, takes D-mod-k's ports and must meet the same bound (it was 1.45
# to 1.69 times the bound on these islands before).
dmodk_islands() { # NAME SHAPE BOUND SHIFTS GEN-ARGS...
	local name=$1 shape=$2 bound=$3 shifts=$4 e
	shift 4
	"$SARNUE_BIN" gen islands "$@" -o "$tmp/$name.net" 2>/dev/null
	for e in sar-dmodk sar-updn; do
		t_expect "$name, $e: routes them" "$SARNUE_BIN" route "$tmp/$name.net" -e $e -o "$tmp/$name.$e" >/dev/null
		"$SARNUE_BIN" check --dump-dir "$tmp/$name.$e" --patterns --permutations 5 --bisections 5 >"$tmp/$name.$e.txt"
		t_grep "$name, $e: the tree of 3 levels" "^fat tree:         3 levels, switches $shape" "$tmp/$name.$e.txt"
		t_grep "$name, $e: EFI meets the cut bound" "^EFI cut bound:    EFI max $bound \\(fat tree cut bound $bound, ratio 1\\.00\\)" "$tmp/$name.$e.txt"
		t_grep "$name, $e: shifts in topology order without contention" "^  shift \\(topo\\):   $shifts instances, max load 1, " "$tmp/$name.$e.txt"
	done
}
dmodk_islands islands-single '8\+12\+4, up ports 6x1\+4x1' 42 47 \
	--islands 2 --hosts-per-island 24 --radix 12 --core-radix 12
dmodk_islands islands-parallel '12\+12\+3, up ports 6x2\+3x4' 132 143 \
	--islands 2 --hosts-per-island 72 --radix 24 --core-radix 48

# A tapered tree routed by sar-updn: the bound stays below the EFI.
"$SARNUE_BIN" route "$tmp/fattree.net" -o "$tmp/fu" >/dev/null 2>&1
"$SARNUE_BIN" check --dump-dir "$tmp/fu" --json >"$tmp/fu.json"
py "tapered tree: EFI max >= cut bound > 0" '
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
assert m["fat_tree"]["recognised"] and 0 < m["fat_tree"]["efi_cut_bound"] <= m["efi"]["max"]
assert "patterns" not in m
' "$tmp/fu.json"

# A torus is no fat tree: topo-order says so, check works as before.
"$SARNUE_BIN" gen torus --dims 4x4 -o "$tmp/torus.net" 2>/dev/null
expect_fail 1 "torus.net: not a fat tree \(.+\)" "$SARNUE_BIN" topo-order "$tmp/torus.net"
t_expect "torus: routed" "$SARNUE_BIN" route "$tmp/torus.net" -e sar-nue -o "$tmp/td" >/dev/null
"$SARNUE_BIN" check --dump-dir "$tmp/td" --patterns --permutations 5 --bisections 5 >"$tmp/td.txt"
t_expect "torus: check --patterns exits 0" test $? = 0
t_grep "torus: one line on the topology order" '^  topology order: not a fat tree \(.+\)$' "$tmp/td.txt"
t_expect "torus: no cut bound" test -z "$(grep -E 'cut bound|^fat tree:|shift \(topo\)' "$tmp/td.txt")"
"$SARNUE_BIN" check --dump-dir "$tmp/td" --patterns --permutations 5 --bisections 5 --json >"$tmp/td.json"
py "torus json: fat_tree not recognised, with the reason" '
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
assert m["fat_tree"]["recognised"] is False and m["fat_tree"]["reason"]
assert m["patterns"]["shift_topology_order"] is None and m["patterns"]["shift"]["instances"] == 15
' "$tmp/td.json"
t_done
