#!/bin/bash
# Routing metrics of `sarnue check` end to end: a generated fat tree routed offline, checked
# with a job map, traffic patterns and an SVG; the JSON parses and its numbers agree with each
# other and with the topology, the SVG is well-formed XML, a malformed job map is rejected with
# file:line and exit 2, and the same metrics come out of OpenSM's own dumps for built-in engines.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-metrics.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT


# json_check NAME FILE PYTHON-EXPRESSION: the expression over m = the "metrics" object is true.
json_check() {
	local name=$1 file=$2 expr=$3
	if python3 - "$file" "$expr" <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
m = d["metrics"]
sys.exit(0 if eval(sys.argv[2]) else 1)
EOF
		t_ok "$name"
	else
		t_fail "$name: $expr"
	fi
}

# 4 leaves x 3 hosts, 2 spines: 12 terminals, 16 channels of C*; every minimal route between
# leaves uses exactly two of them, so the EFIs sum to 2 * 12 * 9.
net=$tmp/ft.net
"$SARNUE_BIN" gen fattree2 --leaves 4 --spines 2 --hosts-per-leaf 3 -o "$net" 2>/dev/null ||
	{ t_fail "sarnue gen"; t_done; exit 1; }
t_expect "sarnue route" "$SARNUE_BIN" route "$net" -o "$tmp/dump" -O updn_roots=0x200004,0x200005 >/dev/null
# Job a spans three leaves, b two; node0003 and node0004 share a leaf; ghost is unknown.
printf '# jobs\nnode0001 a\nnode0004 a\nnode0007 a\nnode0002 b\nnode0005 b\nghost c\n' >"$tmp/jobs.map"

"$SARNUE_BIN" check --dump-dir "$tmp/dump" --json --job-map "$tmp/jobs.map" --patterns \
	--permutations 20 --bisections 20 --svg "$tmp/loads.svg" >"$tmp/m.json" 2>"$tmp/m.err"
t_expect "check --json --job-map --patterns --svg exits 0" test $? = 0
t_expect "JSON parses" python3 -m json.tool "$tmp/m.json" >/dev/null
t_grep "verifier fields unchanged" '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' "$tmp/m.json"
json_check "12 terminals, 132 routes, 16 channels" "$tmp/m.json" \
	'm["terminals"] == 12 and m["routes"] == 132 and m["unrouted_routes"] == 0 and m["channels"] == 16'
json_check "EFI: min <= mean <= max, sum = 2 * 12 * 9" "$tmp/m.json" \
	'm["efi"]["min"] <= m["efi"]["mean"] <= m["efi"]["max"] and round(m["efi"]["mean"] * 16) == 216'
json_check "EFI histogram covers every channel" "$tmp/m.json" \
	'sum(m["efi"]["histogram"]["counts"]) == 16'
json_check "minimal routes: stretch 0" "$tmp/m.json" \
	'm["stretch"]["max"] == 0 and m["stretch"]["nonminimal_routes"] == 0'
json_check "job map: 3 jobs, 5 terminals, ghost unknown" "$tmp/m.json" \
	'm["effective_efi"]["jobs"] == 3 and m["effective_efi"]["bound_terminals"] == 5 and m["effective_efi"]["unknown_hosts"] == 1 and m["effective_efi"]["first_unknown_host"] == "ghost"'
json_check "intra-job routes 3*2 + 2*1, two channels each" "$tmp/m.json" \
	'm["effective_efi"]["intra_job_routes"] == 8 and round(m["effective_efi"]["mean"] * 16) == 16'
json_check "effective EFI <= EFI, dark fiber in range" "$tmp/m.json" \
	'm["effective_efi"]["max"] <= m["efi"]["max"] and 0 <= m["effective_efi"]["dark_fiber_percent"] <= 100 and m["effective_efi"]["dark_channels"] == m["effective_efi"]["zero"]'
json_check "per-job figures" "$tmp/m.json" \
	'[(j["job"], j["terminals"], j["switches"], j["routes"]) for j in m["effective_efi"]["per_job"]] == [("a", 3, 3, 6), ("b", 2, 2, 2), ("c", 0, 0, 0)] and m["effective_efi"]["multi_switch_jobs"] == 2'
json_check "patterns: 11 shifts, all-to-all = EFI, loads within EFI" "$tmp/m.json" \
	'm["patterns"]["shift"]["instances"] == 11 and m["patterns"]["all_to_all"]["max_load"] == m["efi"]["max"] and 1 <= m["patterns"]["shift"]["max_load"] <= m["efi"]["max"]'
json_check "patterns: 20 permutations and bisections, ebb in [0, 1]" "$tmp/m.json" \
	'm["patterns"]["permutation"]["instances"] == 20 and m["patterns"]["bisection"]["flows"] == 240 and 0 <= m["patterns"]["ebb_unslowed_fraction"] <= m["patterns"]["ebb_mean_share"] <= 1'
"$SARNUE_BIN" check --dump-dir "$tmp/dump" --json --job-map "$tmp/jobs.map" --patterns \
	--permutations 20 --bisections 20 >"$tmp/m2.json" 2>/dev/null
t_expect "same seed, same output" cmp -s "$tmp/m.json" "$tmp/m2.json"

t_expect "SVG is well-formed XML with a heat map cell per channel" python3 -c '
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
titles = [r.find(ns + "title") for r in root.iter(ns + "rect")]
cells = [t.text for t in titles if t is not None and "->" in t.text]
sys.exit(0 if root.tag == ns + "svg" and len(cells) == 16 else 1)' "$tmp/loads.svg"

# A large fabric: switches grouped into at most 160 rows and columns by level, the ten hottest
# channels outlined and listed with the loads the check reports, the colour scale from the
# least used channel's load, and the histogram's bins over that range.
"$SARNUE_BIN" gen random --switches 400 --degree 6 --hosts-per-switch 1 --seed 5 \
	-o "$tmp/r400.net" 2>/dev/null
"$SARNUE_BIN" route -q -e sar-updn "$tmp/r400.net" -o "$tmp/r400" >/dev/null
"$SARNUE_BIN" check -q --dump-dir "$tmp/r400" --json --svg "$tmp/r400.svg" >"$tmp/r400.json"
t_expect "SVG of 400 switches: grouped cells, hottest channels listed, scale from the minimum" \
	python3 -c '
import json, re, sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
m = json.load(open(sys.argv[2]))["metrics"]
ns = "{http://www.w3.org/2000/svg}"
titles = [r.find(ns + "title") for r in root.iter(ns + "rect")]
cells = [t.text for t in titles if t is not None and "->" in t.text]
texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
i = texts.index("Hottest channels")
hot = [int(x.split()[0]) for x in texts[i + 1:i + 11]]
want = [h["efi"] for h in m["hot_channels"]]
outlined = [r for r in root.iter(ns + "rect") if r.get("fill") == "none"]
assert 0 < len(cells) <= 160 * 160, len(cells)
assert all(c.startswith("switches ") for c in cells), cells[0]
assert any(t.startswith("level ") for t in texts)
assert hot == want[:10] and hot[0] == m["efi"]["max"], (hot, want)
assert len(outlined) == 10
assert str(m["efi"]["min"]) in texts and str(m["efi"]["max"]) in texts
' "$tmp/r400.svg" "$tmp/r400.json"

# --optimal: on the 5-switch ring with 2 hosts per switch, all-to-all needs at least 12 routes
# on some ring link (30 * 4 routes-hops over 10 directed links, met by shortest paths), and
# the end links 9 each; sar-updn's detour through its root makes more.  Over --lp-limit the
# approximation's bounds hold 12 and close within the tolerance; without time for it
# (--optimal-seconds 0) the end-link bound (9) stands in, and says so.
"$SARNUE_BIN" route -q -e sar-updn "$SARNUE_SRCDIR/test/lib/nets/ring5.net" -o "$tmp/r5" >/dev/null
"$SARNUE_BIN" check -q --dump-dir "$tmp/r5" --no-metrics --optimal --json >"$tmp/r5.json"
"$SARNUE_BIN" check -q --dump-dir "$tmp/r5" --no-metrics --optimal --lp-limit 10 \
	--optimal-seconds 0 --json >"$tmp/r5b.json"
"$SARNUE_BIN" check -q --dump-dir "$tmp/r5" --no-metrics --optimal --lp-limit 10 --json \
	>"$tmp/r5c.json"
t_expect "--optimal: the LP's optimum on the ring is 12, the routing's max above it" python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))["optimal"]
b = json.load(open(sys.argv[2]))["optimal"]
assert o["exact"] and abs(o["optimum"] - 12) < 1e-6 and o["routing_max"] >= 12, o
assert abs(o["ratio"] - o["routing_max"] / 12) < 1e-4 and o["unrouted"] == 0, o
assert not b["exact"] and abs(b["optimum"] - 9) < 1e-6 and "lower bound" in b["how"], b
assert b["routing_max"] == o["routing_max"] and b["method"] == "end-links"
c = json.load(open(sys.argv[3]))["optimal"]
assert c["method"] == "bounds" and c["converged"] and not c["exact"], c
assert c["optimum"] <= 12 + 1e-6 <= c["optimum_upper"] + 2e-6, c
assert c["optimum_upper"] <= c["optimum"] * 1.01 + 1e-9, c
assert abs(c["ratio"] - c["routing_max"] / c["optimum"]) < 1e-4, c
assert "Frank-Wolfe" in c["how"], c
' "$tmp/r5.json" "$tmp/r5b.json" "$tmp/r5c.json"
"$SARNUE_BIN" gen fattree2 --leaves 2 --spines 1 --hosts-per-leaf 4 -o "$tmp/ft21.net" 2>/dev/null
"$SARNUE_BIN" route -q -e sar-dmodk "$tmp/ft21.net" -o "$tmp/ft21" >/dev/null
t_grep "--optimal: one path per pair, so the routing is optimal: 16 = 16" \
	'^optimal \(all-to-all\): busiest channel 16 routes, best possible 16: ratio 1\.000$' \
	<("$SARNUE_BIN" check -q --dump-dir "$tmp/ft21" --optimal --no-metrics)

# Text report: the sections are there, after the verifier's verdict.
"$SARNUE_BIN" check --dump-dir "$tmp/dump" --job-map "$tmp/jobs.map" >"$tmp/m.txt" 2>&1
t_grep "text: EFI line" '^EFI: +min [0-9]+, max [0-9]+, mean' "$tmp/m.txt"
t_grep "text: stretch line" '^stretch: +mean 0.000 hops' "$tmp/m.txt"
t_grep "text: dark fiber line" '^dark fiber: +[0-9.]+%' "$tmp/m.txt"
t_grep "text: unknown host named" 'unknown hostnames \(first: ghost\)' "$tmp/m.txt"
"$SARNUE_BIN" check --dump-dir "$tmp/dump" --no-metrics >"$tmp/plain.txt"
t_expect "--no-metrics: verifier only" test "$(grep -c 'EFI' "$tmp/plain.txt")" = 0

# Bad input: malformed job map (exit 3 like any bad input, file:line), unreadable one, bad numbers.
printf 'node0001 a\nnode0002\n' >"$tmp/bad.map"
expect_fail 3 'bad.map:2: expected' "$SARNUE_BIN" check --dump-dir "$tmp/dump" --job-map "$tmp/bad.map"
expect_fail 3 'missing.map: No such file' "$SARNUE_BIN" check --dump-dir "$tmp/dump" --job-map "$tmp/missing.map"
expect_fail 2 '--bisections x: expected a number' "$SARNUE_BIN" check --dump-dir "$tmp/dump" --bisections x
expect_fail 2 '--job-host-match fuzzy' "$SARNUE_BIN" check --dump-dir "$tmp/dump" --job-host-match fuzzy
expect_fail 3 'nowhere/loads.svg' "$SARNUE_BIN" check --dump-dir "$tmp/dump" --svg "$tmp/nowhere/loads.svg"

# OpenSM's built-in engines, read from OpenSM's dump files: the same metrics apply.  Without
# sarnue's path-SL file the layered engines look like credit loops on VL 0 (exit 1), which does
# not matter here.
if command -v ibsim >/dev/null && command -v opensm >/dev/null; then
	. "$SARNUE_SRCDIR/sim/sim.sh"
	sim_setup || exit 1
	# sim_setup's cleanup trap replaces ours.
	# shellcheck disable=SC2016 # expanded when the cleanup runs
	sim_at_exit 'rm -rf -- "$tmp"'
	if sim_start_ibsim "$net"; then
		for engine in minhop dfsssp; do
			SIM_CONF=""
			if ! SIM_ROUTING_ENGINE=$engine sim_run_opensm_once; then
				t_fail "$engine: OpenSM brought the subnet up"
				continue
			fi
			t_expect "$engine: OpenSM used it" test "$(sim_routing_engine_used)" = "$engine"
			"$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --json --job-map "$tmp/jobs.map" \
				--patterns --permutations 5 --bisections 5 --svg "$tmp/$engine.svg" \
				>"$tmp/$engine.json"
			json_check "$engine: every route delivered, EFIs sum to 216" "$tmp/$engine.json" \
				'm["routes"] == 132 and m["unrouted_routes"] == 0 and round(m["efi"]["mean"] * 16) == 216'
			json_check "$engine: effective EFI of the same job map" "$tmp/$engine.json" \
				'm["effective_efi"]["intra_job_routes"] == 8 and m["effective_efi"]["max"] >= 1'
			t_expect "$engine: SVG parses" python3 -c \
				'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/$engine.svg"
		done
		sim_stop_ibsim
	else
		t_fail "ibsim started"
	fi
else
	echo "skip: ibsim or opensm not installed, OpenSM dumps not checked"
fi
t_done
