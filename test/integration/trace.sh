#!/bin/bash
# sarnue trace under ibsim: a 4x4 torus routed by sar-nue on 2 VLs (qos TRUE) inside OpenSM.
# For pairs of hosts and switches, the path `sarnue trace` prints from OpenSM's dumps must be
# the one ibtracert walks through the switches (same switches, same ports), `--live` must
# print the same, and the VL of every hop must be the one the switch's SL2VL table (read back
# with smpquery) gives for the route's SL.  Then names, GUIDs and LIDs name the same port;
# a missing LFT entry and a loop are reported with exit 1; bad names exit 3.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibtracert smpquery python3
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1
tmp=$SIM_TMP

"$SARNUE_BIN" gen torus --dims 4x4 --hosts-per-switch 1 -o "$tmp/t.net" 2>/dev/null
export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-nue SIM_QOS=TRUE
export SIM_PLUGIN_OPTIONS="nue_vls=2 dump=always"
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! sim_start_ibsim "$tmp/t.net" || ! { SIM_CONF="" && sim_write_opensm_conf &&
	sim_run_opensm_once; }; then
	t_fail "ibsim and OpenSM routed the torus"
	t_done
fi
dump=$SIM_DUMP_DIR
mapfile -d '' -t envp < <(_sim_client_env)
sim_read_sl2vl "$tmp/sl2vl.live" || t_fail "SL2VL tables read back from the switches"

# The path lines of a trace, as ibtracert prints them: "[out] -> KIND port {guid}[in]".
path_of() {
	grep -oE '^\[[0-9]+\] -> (switch|ca) port \{0x[0-9a-f]+\}\[[0-9]+\]' "$1"
}

# The LIDs OpenSM gave the hosts (h) and the switches (w), from its subnet.lst.
lids_of() { # KIND: CA or SW
	awk -v kind="$1" '{
		first = substr($0, 1, index($0, " } "))
		# "{ SW ...", "{ SW-SM ..." (the switch the SM runs on), "{ CA ..."
		if (index(first, "{ " kind) == 1 && substr(first, 3 + length(kind), 1) ~ /[ -]/ &&
		    match(first, /LID:[0-9A-Fa-f]+/))
			print substr(first, RSTART + 4, RLENGTH - 4)
	}' "$dump/opensm-subnet.lst" | while read -r x; do echo $((16#$x)); done | sort -n | uniq
}
mapfile -t h < <(lids_of CA)
mapfile -t w < <(lids_of SW)
t_expect "OpenSM gave LIDs to 16 hosts and 16 switches" test "${#h[@]}" = 16 -a "${#w[@]}" = 16
# Hosts to hosts, a host to a switch, a switch to a host.
pairs="${h[0]}:${h[10]} ${h[1]}:${h[15]} ${h[3]}:${h[0]} ${h[4]}:${h[13]} ${h[7]}:${h[2]}
	${h[8]}:${h[5]} ${h[12]}:${h[1]} ${h[15]}:${h[9]} ${h[0]}:${w[5]} ${h[14]}:${w[2]}
	${w[1]}:${h[6]} ${w[11]}:${h[3]}"
sl_seen=""
for pair in $pairs; do
	s=${pair%:*} d=${pair#*:}
	"$SARNUE_BIN" trace --dump-dir "$dump" "$s" "$d" >"$tmp/tr.$s.$d" 2>&1
	rc=$?
	"${envp[@]}" ibtracert "$s" "$d" >"$tmp/ib.$s.$d" 2>/dev/null
	t_expect "$s -> $d: delivered (exit 0) along ibtracert's path" \
		test "$rc" = 0 -a -n "$(path_of "$tmp/ib.$s.$d")" -a \
		"$(path_of "$tmp/tr.$s.$d")" = "$(path_of "$tmp/ib.$s.$d")"
	"$SARNUE_BIN" trace --dump-dir "$dump" --json "$s" "$d" >"$tmp/tr.$s.$d.json"
	sl=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sl"])' "$tmp/tr.$s.$d.json")
	sl_seen="$sl_seen $sl"
	# Every hop's VL: the SL2VL entry of (switch, in port, out port) for the route's SL.
	t_expect "$s -> $d: each hop's VL is the switch's SL2VL entry for SL $sl" python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
table = {}
for line in open(sys.argv[2]):
    f = line.split()
    table[(int(f[0], 16), int(f[1]), int(f[2]))] = "".join(x[2:] for x in f[3:])
sl = t["sl"]
checked = 0
for h in t["hops"]:
    if not h["out_port"]:
        continue
    vls = table[(int(h["guid"], 16), h["in_port"], h["out_port"])]
    assert h["vl"] == int(vls[sl], 16), (h, vls)
    checked += 1
assert checked > 0 and t["delivered"]
' "$tmp/tr.$s.$d.json" "$tmp/sl2vl.live"
done
t_expect "the pairs use both SLs of the 2 layers ($sl_seen)" \
	bash -c '[[ $1 == *" 0"* && $1 == *" 1"* ]]' _ "$sl_seen"

a=${h[4]} b=${h[13]} c=${h[15]}
"${envp[@]}" "$SARNUE_BIN" trace --live "$a" "$b" >"$tmp/live" 2>/dev/null
t_expect "--live prints the path the dumps give" cmp -s "$tmp/live" "$tmp/tr.$a.$b"

# The same port by hostname, node description, port GUID and LID.
guid=$(sed -n 's/^From ca {\(0x[0-9a-f]*\)}.*/\1/p' "$tmp/ib.$a.$b")
portguid=$(grep -oE '^\[[0-9]+\] -> ca port \{0x[0-9a-f]+\}' "$tmp/ib.${h[1]}.$c" |
	grep -oE '0x[0-9a-f]+')
name=$(sed -n 's/^From ca [^"]*"\([^"]*\)".*/\1/p' "$tmp/tr.$a.$b")
"$SARNUE_BIN" trace --dump-dir "$dump" "${name%% *}" "$c" >"$tmp/byhost"
"$SARNUE_BIN" trace --dump-dir "$dump" "$name" "$portguid" >"$tmp/bydesc"
"$SARNUE_BIN" trace --dump-dir "$dump" "$guid" "$c" >"$tmp/byguid"
"$SARNUE_BIN" trace --dump-dir "$dump" "$a" "$c" >"$tmp/bylid"
t_expect "hostname, description, GUIDs and LIDs name the same ports" bash -c \
	'cmp -s "$1" "$4" && cmp -s "$2" "$4" && cmp -s "$3" "$4"' _ \
	"$tmp/byhost" "$tmp/bydesc" "$tmp/byguid" "$tmp/bylid"

# Broken tables: the first switch from a to b loses its entry for b, or the second sends it back.
first=$(path_of "$tmp/tr.$a.$b" | sed -n '1s/.*{\(0x[0-9a-f]*\)}.*/\1/p')
second=$(path_of "$tmp/tr.$a.$b" | sed -n '2s/.*{\(0x[0-9a-f]*\)}\[\([0-9]*\)\].*/\2/p')
cp -r "$dump" "$tmp/broken"
edit_entry() { # SWITCH_GUID LID PORT: set one LFT entry of opensm.fdbs
	awk -v sw="$1" -v lid="$(printf '0x%04X' "$2")" -v port="$3" '
		/^dump_ucast_routes: Switch/ { cur = tolower($NF) }
		cur == sw && $1 == lid { $3 = port }
		{ print }' "$dump/opensm.fdbs" >"$tmp/broken/opensm.fdbs"
}
t_expect "the path from $a to $b crosses at least two switches" test -n "$first" -a -n "$second"
edit_entry "$first" "$b" 255
expect_fail 1 "" "$SARNUE_BIN" trace --dump-dir "$tmp/broken" "$a" "$b"
t_grep "a missing LFT entry: not delivered, says why" "^Not delivered: no LFT entry" "$tmp/out"
# the second switch sends b back over the link it came in on: a loop between the two
sw2=$(path_of "$tmp/tr.$a.$b" | sed -n '2s/.*{\(0x[0-9a-f]*\)}.*/\1/p')
edit_entry "$sw2" "$b" "$(printf '%03d' "$second")"
expect_fail 1 "" "$SARNUE_BIN" trace --dump-dir "$tmp/broken" "$a" "$b"
t_grep "a loop: not delivered, says so" "^Not delivered: the route loops" "$tmp/out"

expect_fail 3 "DST 'nosuchhost': no such LID, GUID" \
	"$SARNUE_BIN" trace --dump-dir "$dump" "$a" nosuchhost
expect_fail 3 "dlid-offset 1: DST '$b' has LMC 0" \
	"$SARNUE_BIN" trace --dump-dir "$dump" --dlid-offset 1 "$a" "$b"
expect_fail 3 "opensm-subnet.lst" "$SARNUE_BIN" trace --dump-dir "$tmp/nowhere" "$a" "$b"
expect_fail 2 "expected SRC and DST" "$SARNUE_BIN" trace --dump-dir "$dump" "$a"
sim_stop_ibsim
t_done
