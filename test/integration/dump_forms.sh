#!/bin/bash
# The forms of sarnue-path-sl.dump (-O dump_path_sl) and dump=never, offline.  With one SL
# the dump is the compact form, a few lines whatever the fabric, and sarnue check and ibdmchk
# judge it as they judge the full form.  SLs per destination (sar-nue on several VLs) keep the
# full form unless the compact one is asked for: sarnue check reads that alike, ibdmchk refuses
# it by name.  SLs that vary by source (sar-dfsssp) always get the full form.  dump=never
# writes no SL dump and removes an earlier run's.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibdmchk
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-dumpforms.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
magic='# sarnue-path-sl compact'

# ibdmchk's verdict line on the dumps in $1 (it may crash at exit after printing it).
ibdm() {
	{ (cd "$1" && exec timeout 600 ibdmchk -s opensm-subnet.lst -f opensm.fdbs \
		-m opensm.mcfdbs -c sarnue-path-sl.dump -d sarnue-sl2vl.dump >ibdmchk.out 2>&1); } \
		2>/dev/null
	grep -E '^-I- no credit loops found|credit loop|^-E- Fail to (find node|parse SL)' \
		"$1/ibdmchk.out" | sort -u | tr '\n' ' '
}
size() { stat -c %s "$1"; }

# One SL: the compact form by default, the full form on request; same verdicts.
"$SARNUE_BIN" gen ktree --k 4 --n 3 -o "$tmp/kt.net" 2>/dev/null
"$SARNUE_BIN" route "$tmp/kt.net" -o "$tmp/one" >/dev/null 2>&1
"$SARNUE_BIN" route -O dump_path_sl=full "$tmp/kt.net" -o "$tmp/onefull" >/dev/null 2>&1
t_expect "one SL: compact form by default" test "$(head -n 1 "$tmp/one/sarnue-path-sl.dump")" = "$magic"
t_expect "one SL: the compact form is a few lines" test "$(wc -l <"$tmp/one/sarnue-path-sl.dump")" -le 8
ports=$(awk '$1 == "Switch" || $1 == "Hca" { n++ } END { print n }' "$tmp/kt.net")
t_expect "one SL: dump_path_sl=full has a line per end port and other LID ($ports ports)" \
	test "$(wc -l <"$tmp/onefull/sarnue-path-sl.dump")" -eq $((ports * (ports - 1)))
t_expect "one SL: compact is under 1/100 of the full form" \
	test $(($(size "$tmp/one/sarnue-path-sl.dump") * 100)) -lt "$(size "$tmp/onefull/sarnue-path-sl.dump")"
t_expect "one SL: the other dump files are the same" \
	cmp -s "$tmp/one/opensm.fdbs" "$tmp/onefull/opensm.fdbs"
a=$("$SARNUE_BIN" check --dump-dir "$tmp/one" --json)
b=$("$SARNUE_BIN" check --dump-dir "$tmp/onefull" --json)
t_expect "one SL: sarnue check says the same of both forms" test "$a" = "$b"
t_expect "one SL: sarnue check verified, one SL" grep -q '"credit_loops": 0, .*"sls_used": 1,' <<<"$a"
a=$(ibdm "$tmp/one")
b=$(ibdm "$tmp/onefull")
t_expect "one SL: ibdmchk finds no credit loop in the compact form ($a)" \
	grep -q 'no credit loops found' <<<"$a"
t_expect "one SL: ibdmchk says the same of both forms" test "$a" = "$b"

# SLs per destination: full by default (ibdmchk needs it); compact on request.
"$SARNUE_BIN" gen torus --dims 4x4x3 --hosts-per-switch 2 -o "$tmp/t.net" 2>/dev/null
nue=(-e sar-nue --vls 4 -O nue_vls=4)
"$SARNUE_BIN" route "${nue[@]}" "$tmp/t.net" -o "$tmp/nue" >/dev/null 2>&1
"$SARNUE_BIN" route "${nue[@]}" -O dump_path_sl=compact "$tmp/t.net" -o "$tmp/nuec" >/dev/null 2>&1
t_expect "sar-nue, 4 VLs: full form by default" \
	test "$(head -n 1 "$tmp/nue/sarnue-path-sl.dump")" != "$magic"
t_expect "sar-nue, 4 VLs: compact on request" \
	test "$(head -n 1 "$tmp/nuec/sarnue-path-sl.dump")" = "$magic"
t_expect "sar-nue, 4 VLs: compact is under 1/20 of the full form" \
	test $(($(size "$tmp/nuec/sarnue-path-sl.dump") * 20)) -lt "$(size "$tmp/nue/sarnue-path-sl.dump")"
a=$("$SARNUE_BIN" check --dump-dir "$tmp/nuec" --json)
b=$("$SARNUE_BIN" check --dump-dir "$tmp/nue" --json)
t_expect "sar-nue, 4 VLs: sarnue check says the same of both forms" test "$a" = "$b"
t_expect "sar-nue, 4 VLs: sarnue check sees 4 SLs" grep -q '"sls_used": 4,' <<<"$a"
t_expect "sar-nue, 4 VLs: ibdmchk passes the full form" grep -q 'no credit loops found' \
	<<<"$(ibdm "$tmp/nue")"
a=$(ibdm "$tmp/nuec")
t_expect "sar-nue, 4 VLs: ibdmchk refuses the compact form by name ($a)" \
	grep -q 'Fail to find node with guid:sarnuecompactdumpwritedumppathslfull' <<<"$a"
t_expect "sar-nue, 4 VLs: ... and gives no verdict on it" \
	grep -vq 'no credit loops found' <<<"$a"

# SLs that vary by source (sar-dfsssp on a ring of 5): the full form even when compact is asked
# for, with a note.
"$SARNUE_BIN" gen torus --dims 5 --hosts-per-switch 2 -o "$tmp/ring.net" 2>/dev/null
dfs=(-e sar-dfsssp --vls 4 -O dfsssp_vls=4)
"$SARNUE_BIN" route "${dfs[@]}" "$tmp/ring.net" -o "$tmp/dfs" >/dev/null 2>&1
"$SARNUE_BIN" route "${dfs[@]}" -O dump_path_sl=compact "$tmp/ring.net" -o "$tmp/dfsc" \
	>/dev/null 2>"$tmp/dfsc.err"
t_expect "sar-dfsssp: the SL varies by source on the ring (else this proves nothing)" \
	test "$(awk '{ print $2, $3 }' "$tmp/dfs/sarnue-path-sl.dump" | sort -u | wc -l)" -gt \
	"$(awk '{ print $2 }' "$tmp/dfs/sarnue-path-sl.dump" | sort -u | wc -l)"
t_expect "sar-dfsssp: dump_path_sl=compact still writes the full form" \
	cmp -s "$tmp/dfs/sarnue-path-sl.dump" "$tmp/dfsc/sarnue-path-sl.dump"
t_grep "sar-dfsssp: ... and says so" 'dump_path_sl=compact: the SL towards some destination varies by source; writing the full form' "$tmp/dfsc.err"
t_expect "sar-dfsssp: ibdmchk passes it" grep -q 'no credit loops found' <<<"$(ibdm "$tmp/dfs")"

# dump=never: no SL dump, an earlier run's removed, and a note saying so.
"$SARNUE_BIN" route -O dump=never "$tmp/kt.net" -o "$tmp/onefull" >/dev/null 2>"$tmp/never.err"
t_expect "dump=never: the earlier SL dumps are gone" \
	test ! -e "$tmp/onefull/sarnue-path-sl.dump" -a ! -e "$tmp/onefull/sarnue-sl2vl.dump"
t_expect "dump=never: OpenSM's files written" test -s "$tmp/onefull/opensm.fdbs"
t_grep "dump=never: the note names what is left out" \
	'-O dump=never: writing only .* without sarnue-path-sl.dump and sarnue-sl2vl.dump' "$tmp/never.err"
"$SARNUE_BIN" route -O dump=never "$tmp/kt.net" >/dev/null 2>"$tmp/never2.err"
t_expect "dump=never without -o: nothing to say" test ! -s "$tmp/never2.err"

# A line per file with its size with --verbose; none when stderr is no terminal.
"$SARNUE_BIN" route -v "$tmp/kt.net" -o "$tmp/v" >/dev/null 2>"$tmp/v.err"
t_grep "--verbose: the path-SL dump and its size" \
	"wrote $tmp/v/sarnue-path-sl.dump: $(size "$tmp/v/sarnue-path-sl.dump") bytes in" "$tmp/v.err"
t_expect "--verbose: a line per file" test "$(grep -c ': wrote ' "$tmp/v.err")" = 5
"$SARNUE_BIN" route "$tmp/kt.net" -o "$tmp/q" >/dev/null 2>"$tmp/q.err"
t_expect "no --verbose, no terminal: quiet" test ! -s "$tmp/q.err"
expect_fail 2 "bad value for dump_path_sl: 'some'" "$SARNUE_BIN" route -O dump_path_sl=some "$tmp/kt.net"
t_done
