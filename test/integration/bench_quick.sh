#!/bin/bash
# The comparison benchmark in its quick form: every sarnue engine and every built-in OpenSM
# engine on a small fat tree and the faulty 4x4x3 torus, on 1 and 4 VLs.  Asserts only what
# must hold whatever the speed: the table has a row per engine and fabric, and sarnue's engines
# routed every pair without credit loops, by sarnue check and by ibdmchk.  The figures themselves are not judged.
# Then --options must reach the plugin: with --vls 4 and --options "nue_vls=1" sar-nue must route
# as in the 1-VL row.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk
out=$(SARNUE_BIN=$SARNUE_BIN SARNUE_PLUGIN_DIR=$SARNUE_PLUGIN_DIR \
	bash "$SARNUE_SRCDIR/test/bench/compare.sh" --quick --vls "1 4" 2>&1)
rc=$?
printf '%s\n' "$out"
t_expect "compare.sh --quick ran" test "$rc" = 0
for fabric in fattree2-6x3 torus-4x4x3-minus1; do
	for eng in sar-updn sar-nue sar-dfsssp updn nue dfsssp ftree minhop lash; do
		t_expect "$fabric: a row for $eng" \
			grep -qE "^$fabric .*\| $eng " <<<"$out"
	done
	for row in "1 | sar-updn" "1 | sar-nue" "4 | sar-nue" "1 | sar-dfsssp" "4 | sar-dfsssp"; do
		t_expect "$fabric: $row routed every pair, no credit loop" awk -v f="$fabric" -v r="$row" '
			index($0, f " ") == 1 && index($0, r " ") {
				n = split($0, c, "|"); split(c[2], v, " ")
				ok = (v[7] == 0 && v[8] == 0 && v[9] == "ok" && v[13] == "ok")
			} END { exit !ok }' <<<"$out"
	done
done
# Quality columns (fall-backs, hops, max hops, CA hops, maximum EFI) of row "$2 | sar-nue" of
# fabric $1 in the table on stdin.
nue_quality() {
	awk -v f="$1" -v r="$2 | sar-nue " 'index($0, f " ") == 1 && index($0, r) {
		n = split($0, c, "|"); split(c[2], v, " "); print v[3], v[4], v[5], v[6], v[10] }'
}
forced=$(SARNUE_BIN=$SARNUE_BIN SARNUE_PLUGIN_DIR=$SARNUE_PLUGIN_DIR \
	bash "$SARNUE_SRCDIR/test/bench/compare.sh" --quick --fabrics torus-4x4x3-minus1 --vls 4 \
	--engines sar-nue --options "nue_vls=1" 2>&1)
printf '%s\n' "$forced"
one=$(nue_quality torus-4x4x3-minus1 1 <<<"$out")
four=$(nue_quality torus-4x4x3-minus1 4 <<<"$out")
got=$(nue_quality torus-4x4x3-minus1 4 <<<"$forced")
echo "1 VL: $one; 4 VLs: $four; 4 VLs with --options nue_vls=1: $got"
t_expect "the 1-VL and 4-VL routings differ (else the next check proves nothing)" \
	test -n "$one" -a "$one" != "$four"
t_expect "--options nue_vls=1 reaches the plugin: the 4-VL row routes as with 1 VL" \
	test "$got" = "$one"
t_done
