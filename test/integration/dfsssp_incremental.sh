#!/bin/bash
# sar-dfsssp's incremental reroute (option incremental), offline: the thesis's figure 5.2 fat
# tree (10 leaves of 18 hosts, 9 spines, 2 links per pair) with three jobs of 60 hosts, then
# half of job 3's hosts leave it.  With -O incremental=yes and --previous-job-map, every
# destination of jobs 1 and 2 and every switch LID keeps its forwarding column byte for byte,
# exactly job 3's 60 destinations are routed again, the result verifies (no unreachable pair,
# no credit loop) and fewer LFT blocks differ from the previous routing than after a full
# reroute; with incremental=no the full reroute happens; a malformed map of either kind is
# refused by name.  Prints the maximum EFI and the maximum effective EFI of both.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-incremental.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
net=$tmp/f52.net
"$SARNUE_BIN" gen fattree2 --leaves 10 --spines 9 --hosts-per-leaf 18 --links-per-pair 2 \
	-o "$net" 2>"$tmp/gen.err" || { t_fail "sarnue gen"; cat "$tmp/gen.err"; exit 1; }
for ((h = 1; h <= 180; h++)); do
	if ((h <= 30 || (h >= 91 && h <= 120))); then j=1
	elif ((h <= 60 || h >= 151)); then j=2
	else j=3; fi
	printf 'node%04d %d\n' "$h" "$j"
done >"$tmp/old.map"
# Job 3 shrinks: its even-numbered hosts leave it (30 of 60).
awk '$2 != 3 || substr($1, 5) % 2' "$tmp/old.map" >"$tmp/new.map"

# route NAME ARGS...: sarnue route -e sar-dfsssp ARGS into $tmp/NAME (dumps) and NAME.json.
route() {
	local name=$1
	shift
	if "$SARNUE_BIN" route -q -e sar-dfsssp "$@" -o "$tmp/$name" --json "$net" \
		>"$tmp/$name.json" 2>"$tmp/$name.err"; then
		t_ok "$name: routed"
	else
		t_fail "$name: routed"
		cat "$tmp/$name.err"
	fi
}
route prev -O job_map="$tmp/old.map"
route inc -O job_map="$tmp/new.map" -O incremental=yes --previous-job-map "$tmp/old.map"
route full -O job_map="$tmp/new.map" -O incremental=no --previous-job-map "$tmp/old.map"

# field NAME EXPR: a value of NAME.json (python expression over j).
field() {
	python3 -c "import json, sys; j = json.load(open(sys.argv[1])); print($2)" "$tmp/$1.json"
}
t_expect "inc: kept 139 of 199 columns (120 of jobs 1 and 2, 19 switch LIDs)" \
	test "$(field inc 'int(j["result"]["incremental_kept_lids"])')" = 139
t_expect "inc: routed job 3's 60 destinations again" \
	test "$(field inc 'int(j["result"]["incremental_rerouted_lids"])')" = 60
t_expect "inc: the summary says so" \
	grep -q 'kept 139 of 199 destination columns (69.8%), routed 60 again' "$tmp/inc.json"
t_expect "full: incremental=no keeps nothing" \
	test "$(field full '"incremental" in j')" = False

# Columns of the LIDs of jobs 1 and 2 and of switches: the same as before, byte for byte.
python3 - "$tmp" >"$tmp/cols" <<'EOF'
import re, sys
tmp = sys.argv[1]
def lft(name):
    t, sw = {}, None
    for line in open(f"{tmp}/{name}/opensm.fdbs"):
        m = re.match(r"dump_ucast_routes: Switch (0x[0-9a-f]+)", line)
        if m:
            sw = m.group(1)
        m = re.match(r"(0x[0-9A-Fa-f]+) : (\d+)", line)
        if m:
            t[(sw, int(m.group(1), 16))] = m.group(2)
    return t
lids = {}
for line in open(f"{tmp}/prev/opensm-subnet.lst"):
    for m in re.finditer(r"\{(node\d+) HCA-1\} LID:([0-9A-Fa-f]+)", line):
        lids[m.group(1)] = int(m.group(2), 16)
jobs = dict(l.split() for l in open(f"{tmp}/old.map"))
keep = {lids[h] for h, j in jobs.items() if j != "3"} | set(range(1, 20))
moved = {lids[h] for h, j in jobs.items() if j == "3"}
prev, inc, full = lft("prev"), lft("inc"), lft("full")
same = lambda a, ls: all(a[k] == prev[k] for k in prev if k[1] in ls)
print(len(keep), same(inc, keep), same(full, keep), same(inc, moved))
EOF
read -r nkeep inc_same full_same moved_same <"$tmp/cols"
t_expect "inc: the $nkeep columns of jobs 1, 2 and the switches are unchanged" \
	test "$inc_same" = True
t_expect "inc: job 3's columns were routed again (some differ)" test "$moved_same" = False
t_ok "full: columns of jobs 1, 2 and the switches unchanged: $full_same (a full reroute may move them)"

for name in inc full; do
	"$SARNUE_BIN" check --dump-dir "$tmp/$name" --job-map "$tmp/new.map" --json \
		>"$tmp/$name.check" 2>&1
	t_expect "$name: sarnue check: 0 unreachable, 0 credit loops" \
		grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' "$tmp/$name.check"
done
blocks_inc=$(field inc 'j["previous"]["lft_blocks_changed"]')
blocks_full=$(field full 'j["previous"]["lft_blocks_changed"]')
t_expect "inc: fewer LFT blocks differ ($blocks_inc) than after the full reroute ($blocks_full)" \
	test "$blocks_inc" -lt "$blocks_full"
for name in inc full; do
	python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
r = json.load(open(sys.argv[2]))
print("# %-4s max EFI %s, max effective EFI %s, LFT blocks changed %s of %s" % (sys.argv[3],
      r["quality"]["efi_max"], m["effective_efi"]["max"], r["previous"]["lft_blocks_changed"],
      r["previous"]["lft_blocks"]))' "$tmp/$name.check" "$tmp/$name.json" "$name"
done
# A malformed map, either one, is refused by name and routes nothing.
printf 'node0001\n' >"$tmp/bad.map"
expect_fail 3 "^sarnue route: --previous-job-map .*bad.map: job map .*bad.map:1: " \
	"$SARNUE_BIN" route -q -e sar-dfsssp -O job_map="$tmp/new.map" --previous-job-map "$tmp/bad.map" "$net"
expect_fail 3 "^sarnue route: job map .*bad.map:1: " \
	"$SARNUE_BIN" route -q -e sar-dfsssp -O job_map="$tmp/bad.map" --previous-job-map "$tmp/old.map" "$net"
t_done
