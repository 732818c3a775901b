#!/bin/bash
#
# sim-selftest.sh - checks sim.sh itself against OpenSM's built-in engines:
# dumps appear, ibdmchk verdicts (clean fabrics and a known credit loop),
# LFT/SL2VL read-back, valgrind mode, and that cleanup leaves no process and
# no temp dir behind when a script fails, is signalled, or runs in parallel.
#
# Usage: test/lib/sim-selftest.sh        (exit status 0 iff all checks pass)
#        SIM_SELFTEST_KEEP=1 test/lib/sim-selftest.sh   (keep scenario logs)
# Each scenario runs in its own bash process, as a real test would.

set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
examples=/usr/share/doc/ibsim-utils/net-examples
work=$(mktemp -d "${TMPDIR:-/tmp}/sim-selftest.XXXXXX")
# SIM_SELFTEST_KEEP=1 keeps the scenario logs for a look.
if [[ ${SIM_SELFTEST_KEEP:-0} == 1 ]]; then
	trap 'echo "logs kept in $work"' EXIT
else
	trap 'rm -rf -- "$work"' EXIT
fi
pass=0
fail=0

ok() { pass=$((pass + 1)); printf 'ok   %s\n' "$*"; }
not_ok() { fail=$((fail + 1)); printf 'FAIL %s\n' "$*"; }

# Runs a scenario body in a fresh bash that has sourced sim.sh. The body
# writes its PIDs and temp dir to $STATE so we can check the cleanup after.
# Args: NAME EXPECTED_STATUS BODY
scenario() {
	local name=$1 want=$2 body=$3 rc=0
	local state=$work/$name.state log=$work/$name.log
	: >"$state"
	STATE=$state bash -c "set -euo pipefail; . '$here/../../sim/sim.sh'; $body" >"$log" 2>&1 || rc=$?
	if [[ $rc != "$want" ]]; then
		not_ok "$name: exit status $rc, expected $want (log follows)"
		sed 's/^/     /' "$log"
		return 0
	fi
	check_clean "$name" "$state"
}

# After a scenario: every recorded PID gone, every recorded dir removed.
check_clean() {
	local name=$1 state=$2 word left=""
	local -a line words=()
	while read -r -a line; do
		words+=("${line[@]}")
	done <"$state"
	if ((${#words[@]} == 0)); then
		not_ok "$name: recorded no PIDs or dirs to check"
		return 0
	fi
	for word in "${words[@]}"; do
		if [[ $word =~ ^[0-9]+$ ]]; then
			kill -0 "$word" 2>/dev/null && left+=" pid:$word"
		elif [[ -e $word ]]; then
			left+=" dir:$word"
		fi
	done
	if [[ -n $left ]]; then
		not_ok "$name: left behind:$left"
	else
		ok "$name"
	fi
}

# Body snippet: remember what cleanup must remove (expanded in the child).
# shellcheck disable=SC2016
record='echo "$SIM_TMP ${SIM_IBSIM_PID:-} ${SIM_OPENSM_PID:-}" >>"$STATE"'

# 1. Built-in engines on the example nets and the hand-written fat tree:
#    one sweep, dumps, ibdmchk clean, LFTs in the fabric == OpenSM's dump.
for engine in updn minhop; do
	for net in "$examples"/net "$examples"/net.1 "$examples"/net.2sw2path \
		"$examples"/net.2sw2path4hca "$examples"/net.2sw2path4hca2port "$here/nets/ft-2x4.net"; do
		scenario "$engine-$(basename "$net")" 0 "
			sim_setup; sim_start_ibsim '$net'; $record
			SIM_ROUTING_ENGINE=$engine sim_run_opensm_once
			for f in opensm-subnet.lst opensm.fdbs opensm.mcfdbs opensm-lfts.dump; do
				test -s \"\$SIM_DUMP_DIR/\$f\" || test \$f = opensm.mcfdbs
			done
			test \"\$(sim_routing_engine_used)\" = $engine || test $engine = updn
			sim_ibdmchk
			sim_read_lfts \"\$SIM_TMP/lfts.fabric\"
			sim_lfts_from_dump \"\$SIM_TMP/lfts.osm\"
			diff \"\$SIM_TMP/lfts.osm\" \"\$SIM_TMP/lfts.fabric\""
	done
done

# 2. Known credit loop: minhop on a ring of 5 switches. ibdmchk must say so
#    (status 1), and must clear it when an SL2VL table moves traffic that
#    crosses the sw5-sw1 "dateline" to VL1 (no path-SL file: all SL 0).
scenario ring5-minhop-loop 0 "
	sim_setup; sim_start_ibsim '$here/nets/ring5.net'; $record
	SIM_ROUTING_ENGINE=minhop sim_run_opensm_once
	rc=0; sim_ibdmchk || rc=\$?; test \$rc = 1
	grep -q 'Found credit loop on' \"\$SIM_IBDMCHK_OUT\"
	# sw1 = 0x...200000 (in 8 from sw5, out 7), sw5 = 0x...200004 (in 7, out 8)
	for g in 0 1 2 3 4; do for i in 1 2 7 8; do for o in 1 2 7 8; do
		[ \$i = \$o ] && continue
		b=0x00
		if { [ \$g = 0 ] && [ \$i = 8 ] && [ \$o = 7 ]; } || { [ \$g = 4 ] && [ \$i = 7 ] && [ \$o = 8 ]; }; then b=0x11; fi
		echo \"0x000000000020000\$g \$i \$o \$b \$b \$b \$b \$b \$b \$b \$b\"
	done; done; done >\"\$SIM_TMP/dateline.slvl\"
	sim_ibdmchk -d \"\$SIM_TMP/dateline.slvl\"
	grep -q '1 SLs, 2 VLs used' \"\$SIM_IBDMCHK_OUT\""

# 3. The same loop cleared with a path-SL file and the SL2VL tables read
#    back from the fabric (qos TRUE: OpenSM programs SL n -> VL n).
scenario ring5-psl-sl2vl 0 "
	sim_setup; sim_start_ibsim '$here/nets/ring5.net'; $record
	SIM_QOS=TRUE SIM_ROUTING_ENGINE=minhop sim_run_opensm_once
	sim_read_sl2vl \"\$SIM_TMP/fabric.slvl\"
	# Paths that cross sw5-sw1 (source or destination side) get SL 1. Hosts:
	# node GUID 0x100000 + 2k; LIDs from guid2lid via the subnet dump.
	awk '/^{ CA/ { match(\$0, /NodeGUID:[0-9a-f]+/); g = substr(\$0, RSTART + 9, RLENGTH - 9)
		match(\$0, /{h[0-9]/); s = substr(\$0, RSTART + 2, 1)
		match(\$0, /LID:[0-9A-F]+/); l = substr(\$0, RSTART + 4, RLENGTH - 4); print g, s, l }' \
		\"\$SIM_DUMP_DIR/opensm-subnet.lst\" | sort -u >\"\$SIM_TMP/hosts\"
	while read -r g s l; do while read -r g2 s2 l2; do
		[ \$g = \$g2 ] && continue
		d=\$(( (s2 - s + 5) % 5 )); sl=0
		# clockwise (d 1-2) crossing: s + d wraps past 5; anticlockwise (d 3-4) mirror
		if [ \$d -le 2 ] && [ \$((s + d)) -gt 5 ]; then sl=1; fi
		if [ \$d -ge 3 ] && [ \$((s - (5 - d))) -lt 1 ]; then sl=1; fi
		echo \"0x\$g \$((16#\$l2)) \$sl\"
	done <\"\$SIM_TMP/hosts\"; done <\"\$SIM_TMP/hosts\" >\"\$SIM_TMP/ring.psl\"
	test \$(wc -l <\"\$SIM_TMP/ring.psl\") = 90
	sim_ibdmchk -c \"\$SIM_TMP/ring.psl\" -d \"\$SIM_TMP/fabric.slvl\"
	rc=0; sim_ibdmchk -c \"\$SIM_TMP/ring.psl\" -d \"\$SIM_DUMP_DIR/opensm-sl2vl.dump\" || rc=\$?; test \$rc = 0
	sed 's/ 0x[0-9a-f][0-9a-f]/ 0x00/g' \"\$SIM_TMP/fabric.slvl\" >\"\$SIM_TMP/zero.slvl\"
	rc=0; sim_ibdmchk -c \"\$SIM_TMP/ring.psl\" -d \"\$SIM_TMP/zero.slvl\" || rc=\$?; test \$rc = 1"

# 4. Malformed path-SL input is refused instead of silently ignored.
scenario bad-psl-refused 0 "
	sim_setup; sim_start_ibsim '$here/nets/ft-2x4.net'; $record
	sim_run_opensm_once
	echo '0x0000000000100000 0x0004 0' >\"\$SIM_TMP/hex.psl\"
	rc=0; sim_ibdmchk -c \"\$SIM_TMP/hex.psl\" || rc=\$?; test \$rc = 2"

# 5. Long-running OpenSM: start, SUBNET UP, read LFTs, stop cleanly.
scenario daemon-start-stop 0 "
	sim_setup; sim_start_ibsim '$here/nets/ft-2x4.net'; $record
	SIM_ROUTING_ENGINE=minhop sim_start_opensm -s 0; $record
	sim_wait_subnet_up 60
	sim_read_lfts \"\$SIM_TMP/lfts\"
	sim_stop_opensm
	sim_ibdmchk"

# 6. A script failing midway (set -e) with OpenSM running: cleanup by trap.
scenario fail-midway 1 "
	sim_setup; sim_start_ibsim '$here/nets/ft-2x4.net'; $record
	sim_start_opensm; $record
	sim_wait_subnet_up 60
	false
	echo not reached"

# 7. SIGTERM to the test script while OpenSM runs.
scenario sigterm 143 "
	sim_setup; sim_start_ibsim '$here/nets/ft-2x4.net'; $record
	sim_start_opensm; $record
	sim_wait_subnet_up 60
	kill -TERM \$\$
	sleep 30"

# 8. Parallel runs: distinct sockets and temp dirs.
pids=()
for i in 1 2 3 4; do
	scenario "parallel-$i" 0 "
		sim_setup; sim_start_ibsim '$here/nets/ft-2x4.net'; $record
		SIM_ROUTING_ENGINE=updn sim_run_opensm_once
		sim_ibdmchk
		sim_read_lfts \"\$SIM_TMP/lfts\"" >"$work/parallel-$i.result" &
	pids+=($!)
done
for i in 1 2 3 4; do
	wait "${pids[i - 1]}" || true
	if grep -q '^ok ' "$work/parallel-$i.result"; then ok "parallel-$i"; else not_ok "parallel-$i"; cat "$work/parallel-$i.result"; fi
done

# 9. valgrind mode (skipped when valgrind is missing).
if command -v valgrind >/dev/null 2>&1; then
	scenario valgrind-once 0 "
		sim_setup; sim_start_ibsim '$here/nets/ft-2x4.net'; $record
		SIM_VALGRIND=1 sim_run_opensm_once
		sim_ibdmchk"
else
	printf 'skip valgrind-once (no valgrind)\n'
fi

printf '%d passed, %d failed\n' "$pass" "$fail"
((fail == 0))
