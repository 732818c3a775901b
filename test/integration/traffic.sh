#!/bin/bash
# sar-dfsssp and sar-nue with a measured traffic matrix (traffic=PATH), offline: a 2-level fat tree of 4
# leaves, 2 spines and 4 hosts per leaf, every host sending 1 MB to every other and two pairs of
# the first leaf 100 MB each.  Routed with uniform weights, both heavy pairs leave the first leaf
# on one up-link; with the matrix they take one each, and the busiest link carries fewer bytes.
# Bytes per link are summed over `sarnue trace` paths.  Then: a malformed matrix names its line,
# hostnames the fabric lacks are a warning, and route --json counts the pairs.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-traffic.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

"$SARNUE_BIN" gen fattree2 --leaves 4 --spines 2 --hosts-per-leaf 4 -o "$tmp/ft.net" 2>/dev/null
python3 -c '
import itertools, sys
hosts = ["node%04d" % i for i in range(1, 17)]
with open(sys.argv[1], "w") as out:
    out.write("# SRC DST BYTES\n")
    for a, b in itertools.permutations(hosts, 2):
        out.write("%s %s 1000000\n" % (a, b))
    out.write("node0001 node0005 100000000\nnode0003 node0007 100000000\n")
' "$tmp/traffic.txt"
# loads DUMPDIR: "MAXBYTES HEAVYPORTS": the busiest link's bytes, and the up-ports the two heavy
# pairs leave their leaf on.
loads() {
	python3 -c '
import collections, json, subprocess, sys
sarnue, dump, matrix = sys.argv[1:4]
load = collections.Counter()
first = {}
for line in open(matrix):
    if line.startswith("#"):
        continue
    a, b, n = line.split()
    t = json.loads(subprocess.run([sarnue, "trace", "--dump-dir", dump, "--json", a, b],
                                  capture_output=True, text=True, check=True).stdout)
    assert t["delivered"]
    for h in t["hops"]:
        if h["out_port"]:
            load[(h["guid"], h["out_port"])] += int(n)
    if int(n) > 1000000:
        first[a] = t["hops"][0]["out_port"]
print(max(load.values()), ",".join(str(first[h]) for h in sorted(first)))
' "$SARNUE_BIN" "$1" "$tmp/traffic.txt"
}
for engine in sar-dfsssp sar-nue; do
	"$SARNUE_BIN" route -q -e $engine "$tmp/ft.net" -o "$tmp/uniform" >/dev/null
	"$SARNUE_BIN" route -q -e $engine -O "traffic=$tmp/traffic.txt" "$tmp/ft.net" \
		-o "$tmp/weighted" --json >"$tmp/weighted.json"
	t_expect "$engine: route with traffic= verified, every pair bound" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verify"]["credit_loops"] == 0 and d["verify"]["unreachable"] == 0
assert d["result"]["traffic_pairs"] == 242 and d["result"]["traffic_pairs_bound"] == 242
' "$tmp/weighted.json"
	read -r umax uports <<<"$(loads "$tmp/uniform")"
	read -r wmax wports <<<"$(loads "$tmp/weighted")"
	echo "$engine uniform: busiest link $umax bytes, heavy pairs leave on ports $uports"
	echo "$engine weighted: busiest link $wmax bytes, heavy pairs leave on ports $wports"
	t_expect "$engine: uniform weights stack both heavy pairs on one up-link ($uports)" \
		test -n "$uports" -a "${uports%,*}" = "${uports#*,}"
	t_expect "$engine: the matrix gives each heavy pair an up-link of its own ($wports)" \
		test -n "$wports" -a "${wports%,*}" != "${wports#*,}"
	t_expect "$engine: the busiest link carries fewer bytes with the matrix ($wmax < $umax)" \
		test "${wmax:-0}" -gt 0 -a "${wmax:-0}" -lt "${umax:-0}"
	# The fluid model of sarnue check --completion: the heavy pairs finish sooner.
	for d in uniform weighted; do
		"$SARNUE_BIN" check -q --dump-dir "$tmp/$d" --no-metrics --completion \
			"$tmp/traffic.txt" --json >"$tmp/$d.comp.json"
	done
	t_expect "$engine: --completion: the heavy pairs' worst slowdown drops with the matrix" \
		python3 -c '
import json, sys
u = json.load(open(sys.argv[1]))["completion"]
w = json.load(open(sys.argv[2]))["completion"]
print("uniform", u, "weighted", w)
assert u["flows"] == w["flows"] == 240 and u["heavy"] == w["heavy"] == 2
assert w["heavy_worst"] < u["heavy_worst"] and w["makespan"] < u["makespan"]
' "$tmp/uniform.comp.json" "$tmp/weighted.comp.json"
done

printf 'node0001 node0005 10\nnode0002 node0006\n' >"$tmp/bad.txt"
expect_fail 1 "traffic matrix .*bad.txt:2: expected 'SRC DST BYTES', got 2 word\(s\)" \
	"$SARNUE_BIN" route -q -e sar-dfsssp -O "traffic=$tmp/bad.txt" "$tmp/ft.net"
printf 'node0001 ghost 5\nnode0001 node0005 10\n' >"$tmp/ghost.txt"
"$SARNUE_BIN" route -q -e sar-dfsssp -O "traffic=$tmp/ghost.txt" "$tmp/ft.net" \
	>/dev/null 2>"$tmp/ghost.err"
t_grep "a hostname the fabric lacks is a warning, the routing goes on" \
	"warning: traffic matrix .*ghost.txt: 1 hostname\(s\) not in the fabric, first 'ghost'" \
	"$tmp/ghost.err"
t_done
