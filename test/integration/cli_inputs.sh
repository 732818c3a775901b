#!/bin/bash
# Bad input to the command line tools: malformed or truncated net files, unreadable dumps and
# bad options each give one error naming the input and position, a documented exit status,
# and no output files.  Good input routes deterministically (byte-identical dumps).
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-cli.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT


good=$tmp/good.net
"$SARNUE_BIN" gen fattree2 --leaves 3 --spines 2 --hosts-per-leaf 2 -o "$good" 2>/dev/null
head -n "$(($(wc -l <"$good") - 3))" "$good" >"$tmp/truncated.net"
printf 'Switch 4 "S1"\n[1] "H1"[1]\n[2] "S1\n' >"$tmp/malformed.net"
printf 'Switch 4 "S1"\n[7] "H1"[1]\n' >"$tmp/badport.net"

expect_fail 3 'truncated.net:[0-9]+: link to unknown node' "$SARNUE_BIN" route "$tmp/truncated.net" -o "$tmp/o1"
t_expect "no dump written for a truncated net file" test ! -e "$tmp/o1"
expect_fail 3 'malformed.net:3: expected "remote-id"\[port\]' "$SARNUE_BIN" route "$tmp/malformed.net"
expect_fail 3 'badport.net:2: bad local port number' "$SARNUE_BIN" route "$tmp/badport.net"
expect_fail 3 'missing.net: No such file' "$SARNUE_BIN" route "$tmp/missing.net"
expect_fail 2 "bad value for nue_vls: '0'" "$SARNUE_BIN" route -O nue_vls=0 "$good"
printf '# blocks\n"S1" 1\n"S2" 9\n' >"$tmp/layers.txt"
expect_fail 1 'layers.txt:3: layer 9, but sar-nue routes 2 layers \(0\.\.1\)' \
	"$SARNUE_BIN" route -e sar-nue --vls 2 -O nue_vls=2 -O "nue_layers=$tmp/layers.txt" "$good" -o "$tmp/o2"
t_expect "no dump written for a bad layers file" test ! -e "$tmp/o2"
printf 'spine-7 1\n' >"$tmp/other.txt"
expect_fail 1 "other.txt names none of the fabric's 5 switches" \
	"$SARNUE_BIN" route -e sar-nue --vls 2 -O nue_vls=2 -O "nue_layers=$tmp/other.txt" "$good"
expect_fail 1 'nolayers.txt: No such file' \
	"$SARNUE_BIN" route -e sar-nue --vls 2 -O nue_vls=2 -O "nue_layers=$tmp/nolayers.txt" "$good"
# gen --layers-file writes both files or neither.
expect_fail 1 'cannot create .*/nodir/blocks.txt' \
	"$SARNUE_BIN" gen torus --dims 4x4 --layers-file "$tmp/nodir/blocks.txt" -o "$tmp/t44.net"
t_expect "no net file when the layers file cannot be written" test ! -e "$tmp/t44.net"
expect_fail 1 'cannot create .*/nodir/t44.net' \
	"$SARNUE_BIN" gen torus --dims 4x4 --layers-file "$tmp/blocks.txt" -o "$tmp/nodir/t44.net"
t_expect "no layers file, nor its temporary, when the net file cannot be written" \
	test -z "$(find "$tmp" -maxdepth 1 -name 'blocks.txt*')"
expect_fail 2 "unknown option 'bogus'" "$SARNUE_BIN" route -O bogus=1 "$good"
expect_fail 2 '--engine nope: unknown engine' "$SARNUE_BIN" route --engine nope "$good"
expect_fail 2 'give --dump-dir' "$SARNUE_BIN" check
expect_fail 3 'opensm-subnet.lst: No such file' "$SARNUE_BIN" check --dump-dir "$tmp/nowhere"
printf 'Hca 1 "H1"\n[1] "H2"[1]\n\nHca 1 "H2"\n[1] "H1"[1]\n' >"$tmp/onlyhca.net"
expect_fail 1 'sar-updn: no switches in the fabric' "$SARNUE_BIN" route "$tmp/onlyhca.net"

# Numbers are digits (and one point for seconds): no sign, blank, exponent, hex, nan or inf,
# which strtoul and strtod took and turned into values nobody wrote.
bindir=${SARNUE_BIN%/*}
expect_fail 2 "--vls \\+8: expected 1\\.\\.15" "$SARNUE_BIN" route --vls +8 "$good"
expect_fail 2 "--lmc  1: expected 0\\.\\.7" "$SARNUE_BIN" route --lmc " 1" "$good"
expect_fail 2 "bad value for nue_vls: '\\+2'" "$SARNUE_BIN" route -e sar-nue -O nue_vls=+2 "$good"
expect_fail 2 "bad value for nue_partition: 'blocks'" "$SARNUE_BIN" route -e sar-nue -O nue_partition=blocks "$good"
expect_fail 2 "--port : expected a port number" "$SARNUE_BIN" check --live --port ""
expect_fail 2 "--shifts -1: expected a number" "$SARNUE_BIN" check --dump-dir "$tmp" --shifts -1
for t in nan inf 1e3 0x10 " 5"; do
	expect_fail 2 "--timeout: '$t' is not a number of seconds" "$SARNUE_BIN" ctl -s "$tmp/no.sock" --timeout "$t" status
done
expect_fail 2 "--remove-links 1e1%: expected a count or a percentage" "$SARNUE_BIN" gen torus --dims 4x4 --remove-links 1e1%
expect_fail 2 "--taper 2:\\+1: expected DOWN:UP" "$SARNUE_BIN" gen fattree --radix 8 --hosts 32 --taper 2:+1
expect_fail 2 "--dims 8x8x4x2: at most 3 dimensions" "$SARNUE_BIN" gen torus --dims 8x8x4x2
expect_fail 2 "--dims 8x\\+8: expected sizes like 8x8x4" "$SARNUE_BIN" gen torus --dims 8x+8
expect_fail 2 "--dims 99999999999999999999: dimension too large" "$SARNUE_BIN" gen torus --dims 99999999999999999999
expect_fail 2 "--m 4,0,2: every value must be at least 1" "$SARNUE_BIN" gen xgft --h 3 --m 4,0,2 --w 1,4,4
expect_fail 2 "--m 4;4: expected numbers like 4,4,2" "$SARNUE_BIN" gen xgft --h 2 --m "4;4" --w 1,4
expect_fail 2 "--trap: 'nan' is not a whole number in 0\\.\\.65535" "$bindir/sarnue-agent" --trap nan
expect_fail 2 "--port: '1\\.5' is not a whole number" "$bindir/sarnue-agent" --port 1.5
expect_fail 2 "--retry: '0x10' is not a number of seconds" "$bindir/sarnue-agent" --retry 0x10
expect_fail 2 "--interval: bad value 'nan'" "$bindir/sarnue-filterd" --interval nan
expect_fail 2 "--min-gain: bad value 'inf'" "$bindir/sarnue-filterd" --min-gain inf

# Offline routing writes dumps that sarnue check reads back, and is deterministic.
t_expect "sarnue route on a fat tree" "$SARNUE_BIN" route "$good" -o "$tmp/a" -O updn_roots=0x200004 >/dev/null
t_expect "second identical run" "$SARNUE_BIN" route "$good" -o "$tmp/b" -O updn_roots=0x200004 >/dev/null
for f in opensm-subnet.lst opensm.fdbs sarnue-path-sl.dump sarnue-sl2vl.dump; do
	t_expect "$f byte-identical across runs" cmp -s "$tmp/a/$f" "$tmp/b/$f"
done
t_expect "sarnue check accepts the offline dumps" "$SARNUE_BIN" check --dump-dir "$tmp/a" >/dev/null

# --subnet routes the fabric of a subnet.lst with its LIDs: the netfile's own dump round-trips.
t_expect "sarnue route --subnet on the dumped subnet.lst" "$SARNUE_BIN" route \
	--subnet "$tmp/a/opensm-subnet.lst" -o "$tmp/c" -O updn_roots=0x200004 >/dev/null
t_expect "--subnet: the same links and LIDs (in the file's node order)" \
	cmp -s <(sort "$tmp/a/opensm-subnet.lst") <(sort "$tmp/c/opensm-subnet.lst")
t_expect "--subnet: the same LFTs" cmp -s "$tmp/a/opensm.fdbs" "$tmp/c/opensm.fdbs"
expect_fail 2 'give either NETFILE or --subnet' "$SARNUE_BIN" route --subnet "$tmp/a/opensm-subnet.lst" "$good"
sed '3s/.*/{ SW Ports:zz }/' "$tmp/a/opensm-subnet.lst" >"$tmp/a/bad.lst"
expect_fail 3 'bad.lst:3: column 6: expected "Ports:" and 1 or 2 hex digits' "$SARNUE_BIN" route --subnet "$tmp/a/bad.lst" -o "$tmp/d"
t_expect "a bad subnet.lst writes nothing" test ! -e "$tmp/d"

# A corrupted LFT dump is named with its line.
sed '5s/.*/0x0004 : garbage/' "$tmp/a/opensm.fdbs" >"$tmp/a/bad.fdbs"
expect_fail 3 'bad.fdbs:5: malformed LFT line' "$SARNUE_BIN" check --subnet "$tmp/a/opensm-subnet.lst" --fdbs "$tmp/a/bad.fdbs"
# A broken route is a routing fault (exit 1), with the first unreachable pair printed.
sed '5s/ : .*/ : UNREACHABLE/' "$tmp/a/opensm.fdbs" >"$tmp/a/hole.fdbs"
expect_fail 1 '' "$SARNUE_BIN" check --subnet "$tmp/a/opensm-subnet.lst" --fdbs "$tmp/a/hole.fdbs"
t_grep "the unreachable pair is named" 'first: from .* to LID' "$tmp/out"

# Hostile input files: a FIFO (whose blocking open would hang), a device that never ends, a
# line longer than memory allows.  Each is refused at once, naming the file; none is taken for
# a short file that ends early.
mkfifo "$tmp/fifo"
expect_fail 3 'fifo: not a regular file' timeout 20 "$SARNUE_BIN" route "$tmp/fifo"
expect_fail 2 '/dev/zero: cannot open config file: not a regular file' \
	timeout 20 "$SARNUE_BIN" route -O config=/dev/zero "$good"
expect_fail 1 'storage_guids .*fifo: not a regular file' \
	timeout 20 "$SARNUE_BIN" route -e sar-dfsssp -O "storage_guids=$tmp/fifo" "$good"
expect_fail 1 'job_map .*fifo|fifo: not a regular file' \
	timeout 20 "$SARNUE_BIN" route -e sar-dfsssp -O "job_map=$tmp/fifo" "$good"
expect_fail 3 'fifo: not a regular file' \
	timeout 20 "$SARNUE_BIN" check --subnet "$tmp/a/opensm-subnet.lst" --fdbs "$tmp/fifo"
printf 'Switch 4 "S1"\n[1] "H1"[1]\n\nHca 1 "H1"\n[1] "S\0001"[1]\n' >"$tmp/nul.net"
expect_fail 3 'nul.net:5: binary data' "$SARNUE_BIN" route "$tmp/nul.net"
if command -v prlimit >/dev/null; then
	# A 64 MB comment line needs more memory than the 48 MB address space allows: the read
	# fails with ENOMEM, which used to end the file there and route the nodes before it.
	{ head -c 64000000 /dev/zero | tr '\0' x | sed 's/^/# /'; echo; cat "$good"; } >"$tmp/huge.net"
	expect_fail 3 'huge.net:1: read error: Cannot allocate memory' \
		prlimit --as=48000000 "$SARNUE_BIN" route "$tmp/huge.net"
	rm -f "$tmp/huge.net"
fi

# Files that contradict themselves: one error with the file and the line, exit 3, no output.
sw='Switch 4 "S-0002c903007b1230" # "sw" enhanced port 0 lid 1 lmc 0'
printf '%s\n[1] "S-0002C903007B1230"[1]\n\nSwitch 4 "S-0002C903007B1230"\n' "$sw" >"$tmp/dupguid.net"
expect_fail 3 'dupguid.net:4: node GUID 0x0002c903007b1230 already belongs to "S-0002c903007b1230" \(line 1\)' \
	"$SARNUE_BIN" route "$tmp/dupguid.net" -o "$tmp/o3"
t_expect "no dump written for a duplicate GUID" test ! -e "$tmp/o3"
printf 'Switch 4 "S-0000000000000000"\n[1] "H-0002c90300a00010"[1]\n\nCa 1 "H-0002c90300a00010"\n' >"$tmp/guid0.net"
expect_fail 3 'guid0.net:1: node GUID 0 is not a valid GUID' "$SARNUE_BIN" route "$tmp/guid0.net"
printf '%s\n[1] "H-ffffffffffffffff"[1]\n\nCa 1 "H-ffffffffffffffff"\n' "$sw" >"$tmp/portguid0.net"
expect_fail 3 'portguid0.net:4: port GUID 0 is not a valid GUID' "$SARNUE_BIN" route "$tmp/portguid0.net"
printf '%s\n[1] "H-0002c90300a00010"[1]\n[2] "S-0002c903007b1230"[2]\n\nCa 1 "H-0002c90300a00010"\n' "$sw" >"$tmp/self.net"
expect_fail 3 'self.net:3: a port cabled to itself' "$SARNUE_BIN" route "$tmp/self.net"
printf '%s\n[1] "H-0002c90300a00010"[1](2c90300a00011) # "h" lid 5 4xEDR\n\nCa 1 "H-0002c90300a00010" # "h"\n[1](2c90300a00011) "S-0002c903007b1230"[1] # lid 6 lmc 0 "sw" lid 1 4xEDR\n' "$sw" >"$tmp/lids.net"
expect_fail 3 'lids.net:2: this line gives "H-0002c90300a00010" port LID 5, its own line \(4\) LID 6' \
	"$SARNUE_BIN" route "$tmp/lids.net"
printf '%s\n[1] "H-0002c90300a00010"[1](2c90300a00019) # "h" lid 6 4xEDR\n\nCa 1 "H-0002c90300a00010" # "h"\n[1](2c90300a00011) "S-0002c903007b1230"[1] # lid 6 lmc 0 "sw" lid 1 4xEDR\n' "$sw" >"$tmp/pguid.net"
expect_fail 3 'pguid.net:2: this line gives "H-0002c90300a00010"\[1\] port GUID 2c90300a00019, its own line 2c90300a00011' \
	"$SARNUE_BIN" route "$tmp/pguid.net"
real=$SARNUE_SRCDIR/test/data/real/lab-edr
awk 'NR==5{print} {print}' "$real/opensm.fdbs" >"$tmp/replid.fdbs"
expect_fail 3 'replid.fdbs:6: LID 3 listed twice for this switch' \
	"$SARNUE_BIN" check --subnet "$real/opensm-subnet.lst" --fdbs "$tmp/replid.fdbs"
{ cat "$real/opensm.fdbs"; head -n 3 "$real/opensm.fdbs"; } >"$tmp/repsw.fdbs"
expect_fail 3 'repsw.fdbs:[0-9]+: a second block for switch 0x' \
	"$SARNUE_BIN" check --subnet "$real/opensm-subnet.lst" --fdbs "$tmp/repsw.fdbs"
printf '\x89PNG\r\n\x1a\x01\x02\x03garbage\n' >"$tmp/binary.fdbs"
expect_fail 3 'binary.fdbs:1: not a line of an LFT dump' \
	"$SARNUE_BIN" check --subnet "$real/opensm-subnet.lst" --fdbs "$tmp/binary.fdbs"
# OpenSM sizes LFTs to the LIDs it handed out, which with LMC can pass the highest in use.
awk '/^dump_ucast_routes/ && NR>1 {print "0x00FF : UNREACHABLE"} {print} END {print "0x00FF : UNREACHABLE"}' "$real/opensm.fdbs" >"$tmp/past.fdbs"
t_expect "LFT entries past the highest LID are accepted" \
	"$SARNUE_BIN" check --subnet "$real/opensm-subnet.lst" --fdbs "$tmp/past.fdbs" >/dev/null

# ibnetdiscover text as operators paste it: an error line of the tool before the header,
# no blank lines between records, CRLF line ends.  Same fabric, same tables.
ibnd=$real/ibnetdiscover.txt
"$SARNUE_BIN" route "$ibnd" -o "$tmp/ibnd" >/dev/null || t_fail "sarnue route on ibnetdiscover output"
{
	echo 'src/query_smp.c:195; umad (DR path slid 0; dlid 0; 0,1,32 Attr 0x11:0) bad status 110; Connection timed out'
	grep -v '^$' "$ibnd"
} | sed 's/$/\r/' >"$tmp/pasted.txt"
t_expect "ibnetdiscover text with an error line, no blank lines and CRLF routes the same" \
	bash -c '"$0" route "$1" -o "$2" >/dev/null && cmp -s "$3/opensm.fdbs" "$2/opensm.fdbs"' \
	"$SARNUE_BIN" "$tmp/pasted.txt" "$tmp/pasted" "$tmp/ibnd"

# sar-updn never degrades silently: on a 4-ary 3-tree its 16 top-level roots route every LID
# without a warning; two roots named on a torus cannot, and the single-root fall-back says so
# with what it costs; a 2-level tree routes without a warning.
"$SARNUE_BIN" gen ktree --k 4 --n 3 -o "$tmp/k43.net" 2>/dev/null
"$SARNUE_BIN" route "$tmp/k43.net" >"$tmp/out" 2>"$tmp/err"
t_grep "sar-updn keeps the top level of a 3-level tree as roots" \
	'16 root\(s\) from top level of the tree' "$tmp/out"
t_expect "no fall-back warning on the 3-level tree" test ! -s "$tmp/err"
"$SARNUE_BIN" gen torus --dims 4x4 --hosts-per-switch 1 -o "$tmp/t44.net" 2>/dev/null
"$SARNUE_BIN" route -O updn_roots=0x200000,0x20000a "$tmp/t44.net" >/dev/null 2>"$tmp/err"
t_grep "sar-updn warns when it falls back to one root, with the EFI it costs" \
	'warning: sar-updn: 2 root\(s\) could not route every LID \(.*\); routing with the single most central switch as root, max EFI [0-9]+ against [0-9]+ with the 2 root\(s\)' \
	"$tmp/err"
"$SARNUE_BIN" route "$good" >/dev/null 2>"$tmp/err"
t_expect "no warning where the roots route every LID" test ! -s "$tmp/err"

# -O dump=never leaves out the SL dumps offline too, as in the plugin; the rest is written.
"$SARNUE_BIN" route -O dump=never "$good" -o "$tmp/nosl" >/dev/null 2>&1
t_expect "dump=never: LFTs and topology written" test -s "$tmp/nosl/opensm.fdbs" -a -s "$tmp/nosl/opensm-subnet.lst"
t_expect "dump=never: no path-SL or SL2VL dump" test ! -e "$tmp/nosl/sarnue-path-sl.dump" -a ! -e "$tmp/nosl/sarnue-sl2vl.dump"

# One CLI feel: 'sarnue help CMD' is the command's help, laid out as gen's (NAME, SYNOPSIS,
# DESCRIPTION, OPTIONS); -V/--version everywhere; a bad option or a missing argument is one
# line naming it and the hint, exit 2.
for cmd in route check ctl gen topo-order; do
	t_expect "sarnue help $cmd prints $cmd's help" \
		bash -c '"$0" help "$1" | sed -n 2p | grep -q "^    sarnue $1 - "' "$SARNUE_BIN" "$cmd"
	t_expect "sarnue help $cmd is sarnue $cmd --help" \
		cmp -s <("$SARNUE_BIN" help "$cmd") <("$SARNUE_BIN" "$cmd" --help)
	for sect in NAME SYNOPSIS DESCRIPTION OPTIONS; do
		t_expect "sarnue $cmd --help has $sect" grep -q "^$sect\$" <("$SARNUE_BIN" "$cmd" --help)
	done
	for v in -V --version; do
		t_expect "sarnue $cmd $v prints the version" \
			test "$("$SARNUE_BIN" "$cmd" "$v")" = "$("$SARNUE_BIN" --version)"
	done
	expect_fail 2 "^sarnue $cmd: unknown option '--no-such-option' \\(try 'sarnue $cmd --help'\\)\$" \
		"$SARNUE_BIN" $cmd --no-such-option
	t_expect "$cmd: a bad option prints one line" test "$(wc -l <"$tmp/err")" -eq 1
done
for cmd in route check topo-order; do
	expect_fail 2 "^sarnue $cmd: option '--subnet' needs an argument \\(try 'sarnue $cmd --help'\\)\$" \
		"$SARNUE_BIN" $cmd --subnet
	t_expect "$cmd: a missing argument prints one line" test "$(wc -l <"$tmp/err")" -eq 1
done
expect_fail 2 "option '-C' needs an argument" "$SARNUE_BIN" check --live -C
expect_fail 2 "--port 300: expected a port number" "$SARNUE_BIN" check --live -P 300
expect_fail 2 "^sarnue: unknown command 'nope' \\(try 'sarnue --help'\\)\$" "$SARNUE_BIN" nope
bindir=${SARNUE_BIN%/*}
for prog in sarnue-filterd sarnue-agent; do
	for v in -V --version; do
		t_expect "$prog $v prints NAME VERSION" \
			bash -c '"$0" "$1" | grep -Eqx "${0##*/} [0-9][0-9.]*"' "$bindir/$prog" "$v"
	done
	for sect in NAME SYNOPSIS DESCRIPTION OPTIONS; do
		t_expect "$prog --help has $sect" grep -q "^$sect\$" <("$bindir/$prog" --help)
	done
	t_expect "$prog --help names --pidfile" grep -q -- "--pidfile" <("$bindir/$prog" --help)
	expect_fail 2 "^$prog: unknown option '--no-such-option' \\(try '$prog --help'\\)\$" \
		"$bindir/$prog" --no-such-option
	t_expect "$prog: a bad option prints one line" test "$(wc -l <"$tmp/err")" -eq 1
	expect_fail 2 "^$prog: option '--log' needs an argument \\(try '$prog --help'\\)\$" \
		"$bindir/$prog" --log
done
expect_fail 2 "option '--pid-file' needs an argument" "$bindir/sarnue-agent" --pid-file
t_expect "sarnue -V prints NAME VERSION" bash -c '"$0" -V | grep -Eq "^sarnue [0-9]"' "$SARNUE_BIN"
# Progress of long steps: on a terminal (script(1) gives one), a run made "long" with
# SARNUE_PROGRESS_AFTER=0 shows its phases and the percent done on stderr; --quiet shows none,
# and without a terminal nothing extra reaches stderr, whatever the variable says.
on_tty() {
	local out=$1 cmd
	shift
	printf -v cmd '%q ' "$@"
	SARNUE_PROGRESS_AFTER=0 script -qec "$cmd >/dev/null" /dev/null </dev/null 2>&1 |
		tr '\r' '\n' >"$out"
}
if command -v script >/dev/null; then
	on_tty "$tmp/tty.route" "$SARNUE_BIN" route -e sar-dfsssp "$good" -o "$tmp/po"
	t_grep "route on a terminal: percent of destinations routed" \
		'^sarnue route: routing: [0-9]+% of [0-9]+, [0-9.]+ s' "$tmp/tty.route"
	t_grep "route on a terminal: percent of destinations verified" \
		'^sarnue route: verifying: [0-9]+% of [0-9]+' "$tmp/tty.route"
	t_grep "route on a terminal: each long phase's time" \
		'^sarnue route: loading: done in [0-9.]+ s' "$tmp/tty.route"
	on_tty "$tmp/tty.check" "$SARNUE_BIN" check --dump-dir "$tmp/po"
	t_grep "check on a terminal: percent of the edge forwarding index" \
		'^sarnue check: edge forwarding index: [0-9]+% of [0-9]+' "$tmp/tty.check"
	on_tty "$tmp/tty.gen" "$SARNUE_BIN" gen fattree2 --leaves 3 --spines 2 --hosts-per-leaf 2 -o "$tmp/g.net"
	t_grep "gen on a terminal: percent of switches written" \
		'^sarnue gen: writing: [0-9]+% of 5' "$tmp/tty.gen"
	on_tty "$tmp/tty.q" "$SARNUE_BIN" route -q -e sar-dfsssp "$good" -o "$tmp/po"
	on_tty "$tmp/tty.qc" "$SARNUE_BIN" check -q --dump-dir "$tmp/po"
	on_tty "$tmp/tty.qg" "$SARNUE_BIN" gen -q fattree2 --leaves 3 --spines 2 --hosts-per-leaf 2 -o "$tmp/g.net"
	t_expect "--quiet on a terminal: no progress from route" test ! -s "$tmp/tty.q"
	t_expect "--quiet on a terminal: no progress from check" test ! -s "$tmp/tty.qc"
	t_expect "--quiet on a terminal: only gen's summary" \
		test "$(grep -c . "$tmp/tty.qg")" -eq 1 -a "$(grep -c 'sarnue gen' "$tmp/tty.qg")" -eq 0
else
	t_ok "no script(1): progress on a terminal not tried"
fi
SARNUE_PROGRESS_AFTER=0 "$SARNUE_BIN" route -e sar-dfsssp "$good" -o "$tmp/pn" >/dev/null 2>"$tmp/pn.err"
SARNUE_PROGRESS_AFTER=0 "$SARNUE_BIN" check --dump-dir "$tmp/pn" >/dev/null 2>>"$tmp/pn.err"
t_expect "no terminal: no progress on stderr" test ! -s "$tmp/pn.err"
# route --json: the engine's figures as fields of "result", its warnings as an array.
"$SARNUE_BIN" gen torus --dims 4x4x4 --hosts-per-switch 1 -o "$tmp/t444.net" 2>/dev/null
"$SARNUE_BIN" gen ktree --k 4 --n 2 -o "$tmp/k42.net" 2>/dev/null
json_check() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
r, w = d["result"], d["warnings"]
want = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
assert isinstance(r, dict) and isinstance(w, list), "result or warnings missing"
for k, v in want.items():
    if k == "warnings":
        assert len(w) == int(v), (k, w)
    elif v == "?":
        assert k in r, (k, r)
    else:
        assert str(r[k]) == v, (k, r.get(k), v)
assert d["verify"]["credit_loops"] == 0
' "$@"
}
export -f json_check
t_expect "route --json: sar-nue's VLs, partitioner and torus as fields" bash -c \
	'"$1" route -e sar-nue -O nue_vls=2 --vls 2 --json "$2" | json_check vls=2 "partitioner=torus blocks" torus=? fallbacks=0 warnings=0' \
	_ "$SARNUE_BIN" "$tmp/t444.net"
t_expect "route --json: sar-updn's roots as fields" bash -c \
	'"$1" route -e sar-updn --json "$2" | json_check roots=? root_source=? max_rank=? lids_routed=? warnings=0' \
	_ "$SARNUE_BIN" "$tmp/k42.net"
t_expect "route --json: sar-dmodk's tree and bound as fields" bash -c \
	'"$1" route -e sar-dmodk --json "$2" | json_check levels=2 entries_off_closed_form=0 max_efi_cut_bound=? warnings=0' \
	_ "$SARNUE_BIN" "$tmp/k42.net"
t_expect "route --json: sar-dfsssp short of VLs warns once, in the array" bash -c \
	'"$1" route -e sar-dfsssp --vls 1 --json "$2" 2>/dev/null | json_check dfsssp_layers_needed=? warnings=1' \
	_ "$SARNUE_BIN" "$tmp/t444.net"

t_done
