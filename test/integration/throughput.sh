#!/bin/bash
# The throughput model of `sarnue check --throughput` end to end: generated fabrics routed
# offline; on a full-bisection fat tree routed by sar-dmodk all-to-all and every shift run at
# 1.0, on a 2:1 tapered one all-to-all at 0.7 with slowest flows at 0.625 on an up or down
# link; a host link written as 4xDDR in an EDR fabric keeps its rate through `sarnue route -o`
# and caps its flows at 16%; the JSON has every field; unknown patterns, topo-shift off a fat
# tree and jobs without a job map are refused.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-tput.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# json_check NAME FILE PYTHON-EXPRESSION: the expression over t = {pattern: result} is true.
json_check() {
	local name=$1 file=$2 expr=$3
	if python3 - "$file" "$expr" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
t = {x["pattern"]: x for x in d["throughput"]}
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
		t_ok "$name"
	else
		t_fail "$name: $expr"
	fi
}

# route NAME ENGINE NETFILE: dumps into $tmp/NAME.
route() {
	"$SARNUE_BIN" route "$3" -e "$2" -o "$tmp/$1" >/dev/null 2>&1 ||
		t_fail "sarnue route $1 with $2"
}

"$SARNUE_BIN" gen fattree2 --leaves 4 --spines 4 --hosts-per-leaf 4 -o "$tmp/full.net" 2>/dev/null
"$SARNUE_BIN" gen fattree2 --leaves 4 --spines 2 --hosts-per-leaf 4 -o "$tmp/taper.net" 2>/dev/null
route full sar-dmodk "$tmp/full.net"
route taper sar-dmodk "$tmp/taper.net"

"$SARNUE_BIN" check --dump-dir "$tmp/full" --json -q \
	--throughput alltoall,shift,topo-shift,permutation,bisection --permutations 5 \
	--bisections 5 >"$tmp/full.json"
t_expect "check --throughput on the full tree exits 0" test $? = 0
json_check "full tree: five patterns, every field" "$tmp/full.json" \
	'len(t) == 5 and all(k in x for x in t.values() for k in ("instances", "terminals", "flows", "unrouted", "aggregate", "worst_aggregate", "min", "p5", "median", "slowest"))'
json_check "full tree: all-to-all 240 flows at 1.0" "$tmp/full.json" \
	't["alltoall"]["flows"] == 240 and t["alltoall"]["aggregate"] > 0.9999 and t["alltoall"]["min"] > 0.9999'
json_check "full tree: 15 shifts in each order at 1.0" "$tmp/full.json" \
	'all(t[p]["instances"] == 15 and t[p]["min"] > 0.9999 for p in ("shift", "topo-shift"))'
json_check "full tree: 5 permutations and bisections, fractions within 0..1" "$tmp/full.json" \
	'all(t[p]["instances"] == 5 and 0 < t[p]["min"] <= t[p]["median"] <= 1 for p in ("permutation", "bisection"))'

"$SARNUE_BIN" check --dump-dir "$tmp/taper" --json -q --throughput alltoall >"$tmp/taper.json"
json_check "2:1 tree: all-to-all 0.7, slowest 0.625" "$tmp/taper.json" \
	'abs(t["alltoall"]["aggregate"] - 0.7) < 1e-4 and abs(t["alltoall"]["min"] - 0.625) < 1e-4'
json_check "2:1 tree: bottleneck between a leaf and a spine" "$tmp/taper.json" \
	'all("spine" in s["bottleneck"] and "leaf" in s["bottleneck"] for s in t["alltoall"]["slowest"])'
"$SARNUE_BIN" check --dump-dir "$tmp/taper" -q --throughput alltoall >"$tmp/taper.txt"
t_expect "text report: aggregate line" grep -q "aggregate 0.7000 of injection bandwidth" "$tmp/taper.txt"
t_expect "text report: slowest flows" grep -q "^  slow 0.6250 " "$tmp/taper.txt"

# The first host's link as 4xDDR on both ends, the rest as 4xEDR.
python3 - "$tmp/full.net" "$tmp/mixed.net" <<'PY'
import re, sys
out, cur = [], ""
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("["):
        ddr = '"H-0001"' in line or cur == "H-0001"
        line += "\t# " + ("4xDDR" if ddr else "4xEDR")
    elif line.startswith(("Ca", "Switch")):
        cur = re.search(r'"([^"]*)"', line).group(1)
    out.append(line)
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
route mixed sar-dmodk "$tmp/mixed.net"
t_expect "the DDR link's rate is in the routed subnet dump" grep -q "{node0001 .*PHY=4x LOG=ACT SPD=5$" "$tmp/mixed/opensm-subnet.lst"
t_expect "the EDR links' rate too" grep -q "PHY=4x LOG=ACT SPD=25$" "$tmp/mixed/opensm-subnet.lst"
"$SARNUE_BIN" check --dump-dir "$tmp/mixed" --json -q --throughput shift --shifts 1 >"$tmp/mixed.json"
json_check "DDR host link: its flows at 0.16, first among the slowest" "$tmp/mixed.json" \
	'abs(t["shift"]["min"] - 0.16) < 1e-3 and "node0001" in t["shift"]["slowest"][0]["bottleneck"]'

"$SARNUE_BIN" check --dump-dir "$tmp/full" -q --throughput alltoall,nosuch >/dev/null 2>"$tmp/err"
t_expect "unknown pattern: exit 2" test $? = 2
t_expect "unknown pattern: named" grep -q "'nosuch' is no pattern" "$tmp/err"
"$SARNUE_BIN" check --dump-dir "$tmp/full" -q --throughput jobs >/dev/null 2>"$tmp/err"
t_expect "jobs without --job-map: exit 2" test $? = 2
"$SARNUE_BIN" gen torus --dims 3x3 -o "$tmp/torus.net" 2>/dev/null
route torus sar-updn "$tmp/torus.net"
"$SARNUE_BIN" check --dump-dir "$tmp/torus" -q --throughput topo-shift >/dev/null 2>"$tmp/err"
t_expect "topo-shift off a fat tree: exit 2" test $? = 2
printf 'node0001 a\nnode0002 a\nnode0005 a\nnode0009 b\nnode0013 b\n' >"$tmp/jobs.map"
"$SARNUE_BIN" check --dump-dir "$tmp/full" --json -q --job-map "$tmp/jobs.map" \
	--throughput jobs >"$tmp/jobs.json"
json_check "jobs: 3*2 + 2*1 flows, full rate" "$tmp/jobs.json" \
	't["jobs"]["flows"] == 8 and t["jobs"]["min"] > 0.9999'
t_done
