#!/bin/bash
# The plugin's control socket under ibsim, with a running OpenSM and sar-dfsssp: `sarnue ctl`
# status, topology, reroute and jobs FILE; a reroute through `jobs` changes the LFTs read back
# from the switches exactly as the new job map implies (a fresh OpenSM started with that map as
# its job_map option programs the same tables); a malformed map is refused with file:line and
# changes nothing; malformed protocol lines get error replies while OpenSM keeps sweeping; the
# socket file gets the configured mode and disappears when OpenSM stops.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibroute python3
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

ENGINE=sar-dfsssp
export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=$ENGINE SIM_QOS=TRUE
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SIM_PLUGIN_OPTIONS="ctl_mode=0600"

files_differ() {
	! cmp -s "$1" "$2"
}

# Sends raw lines and prints the plugin's reply lines (for protocol errors sarnue ctl refuses).
raw() {
	python3 - "$SIM_CTL_SOCKET" "$@" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(20)
s.connect(sys.argv[1])
s.sendall("".join(a + "\n" for a in sys.argv[2:]).encode())
s.shutdown(socket.SHUT_WR)
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
sys.stdout.write(data.decode())
EOF
}

"$SARNUE_BIN" gen fattree2 --leaves 6 --spines 3 --hosts-per-leaf 6 -o "$SIM_TMP/ft.net" 2>/dev/null ||
	t_fail "sarnue gen"
# Jobs across several leaves: the weights of sar-dfsssp change with them.
printf 'node0001 7\nnode0002 7\nnode0007 7\nnode0008 7\nnode0013 7\nnode0019 8\nnode0025 8\nnode0031 8\nnode0032 8\n' \
	>"$SIM_TMP/j1.map"
printf 'node0001 7\nnode0002\n' >"$SIM_TMP/bad.map"

sim_start_ibsim "$SIM_TMP/ft.net" || { t_fail "ibsim started"; t_done; }
sim_start_opensm || { t_fail "OpenSM started"; t_done; }
sim_wait_subnet_up || { t_fail "subnet up"; t_done; }
sim_wait_programmed 1 || t_fail "the plugin routed once"

t_expect "socket file exists" test -S "$SIM_CTL_SOCKET"
t_expect "socket mode is ctl_mode (0600)" test "$(stat -c %a "$SIM_CTL_SOCKET")" = 600
t_grep "plugin logged where it listens" "sarnue: ctl: listening on $SIM_CTL_SOCKET" "$SIM_OPENSM_LOG"

# status
status=$(sim_ctl --json status)
t_expect "status is one JSON object" python3 -c 'import json,sys; json.loads(sys.argv[1])' "$status"
t_expect "status names the engine" test "$(sim_status_field engine)" = "$ENGINE"
t_expect "status: no jobs yet" test "$(sim_status_field jobs)" = 0
t_expect "status: VLs of the routing (DFSSSP spreads over all 8)" test "$(sim_status_field vls)" = 8
t_expect "status: phase idle" test "$(sim_status_field phase)" = idle
t_expect "status: no reroute pending" test "$(sim_status_field reroute_pending)" = false
# quality=yes (default): 6 hosts of a leaf send to 30 others over 3 up-links, so the
# balanced routing loads each of the 36 leaf-spine channels with 60 routes, none unused.
t_expect "status: the EFI of the routing (max 60 on 36 channels, none unused)" test \
	"$(sim_status_field efi_max) $(sim_status_field channels) $(sim_status_field dark_channels)" \
	= "60 36 0"
text=$(sim_ctl status)
t_expect "status text has one line per field" grep -q '^engine: *sar-dfsssp$' <<<"$text"

# metrics: the same status as Prometheus text; every sample line is "name{labels} number".
metrics=$(sim_ctl metrics)
t_expect "metrics: sarnue_up 1" grep -qx 'sarnue_up 1' <<<"$metrics"
t_expect "metrics: routings as a counter, equal to the status's" \
	grep -qx "sarnue_routings_total $(sim_status_field routings)" <<<"$metrics"
t_expect "metrics: the VLs gauge" grep -qx 'sarnue_vls 8' <<<"$metrics"
t_expect "metrics: the max EFI gauge" grep -qx 'sarnue_efi_max 60' <<<"$metrics"
t_expect "metrics: the unused channels gauge" grep -qx 'sarnue_dark_channels 0' <<<"$metrics"
# doc/grafana/sarnue-dashboard.json queries only metrics the plugin exports.
t_expect "the sample Grafana dashboard queries only the plugin's metrics" python3 -c '
import json, re, sys
dash = json.load(open(sys.argv[1]))
have = {l.split("{")[0].split()[0] for l in sys.argv[2].splitlines() if l and l[0] != "#"}
used = {n for p in dash["panels"] for t in p["targets"]
        for n in re.findall(r"sarnue_[a-z_]+", t["expr"]) if not n.startswith("sarnue_filterd_")}
missing = used - have
print(" ".join(sorted(missing)), file=sys.stderr)
sys.exit(1 if missing or len(used) < 10 else 0)' "$SARNUE_SRCDIR/doc/grafana/sarnue-dashboard.json" "$metrics"
t_expect "metrics: the engine as a label" grep -q "^sarnue_info{engine=\"$ENGINE\"," <<<"$metrics"
t_expect "metrics: every line is a comment or a valid sample" python3 -c '
import re, sys
name = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
label = r"[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\]|\\\\.)*\""
sample = re.compile("^" + name + r"(\{" + label + "(," + label + r")*\})? -?[0-9.eE+-]+$")
bad = [l for l in sys.argv[1].splitlines() if not l.startswith("# ") and not sample.match(l)]
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)' "$metrics"

# topology: one line per host, each naming the leaf switch its HCA is cabled to
topo=$(sim_ctl topology)
t_expect "topology lists 36 HCA ports" test "$(grep -c '^host ' <<<"$topo")" = 36
t_expect "topology ends with the count" test "$(tail -n 1 <<<"$topo")" = "36 ports"
t_expect "topology: node0001 and node0006 share a leaf, node0007 is on another" python3 - "$topo" <<'EOF'
import sys
leaf = {l.split()[1]: l.split()[4] for l in sys.argv[1].splitlines() if l.startswith("host ")}
sys.exit(not (leaf["node0001"] == leaf["node0006"] != leaf["node0007"]))
EOF

sim_read_lfts "$SIM_TMP/lfts.0" || t_fail "LFTs read back before the job map"

# reroute without changes: one more routing, same tables
routings=$(sim_status_field tables_programmed)
t_expect "ctl reroute is accepted" sim_ctl reroute
sim_wait_programmed $((routings + 1)) || t_fail "reroute made OpenSM route again"
t_grep "plugin logged the reroute request" "sarnue: ctl: reroute requested" "$SIM_OPENSM_LOG"
sim_read_lfts "$SIM_TMP/lfts.r" && t_expect "reroute with the same inputs keeps the LFTs" \
	cmp -s "$SIM_TMP/lfts.0" "$SIM_TMP/lfts.r"

# jobs FILE: installed, rerouted, LFTs change
routings=$(sim_status_field tables_programmed)
out=$(sim_ctl jobs "$SIM_TMP/j1.map")
t_expect "ctl jobs accepted a good map ($out)" grep -q "installed: 9 entries, 2 jobs; reroute requested" <<<"$out"
sim_wait_programmed $((routings + 1)) || t_fail "jobs made OpenSM route again"
t_expect "status: 2 jobs on 9 hosts" test "$(sim_status_field jobs)/$(sim_status_field job_hosts)" = 2/9
t_expect "status: the installed job map" test "$(sim_status_field job_map)" = "$SIM_TMP/j1.map"
sim_read_lfts "$SIM_TMP/lfts.1" || t_fail "LFTs read back after the job map"
t_expect "the job map changed the LFTs in the switches" files_differ "$SIM_TMP/lfts.0" "$SIM_TMP/lfts.1"

# a malformed map: refused with file:line, nothing changes
routings=$(sim_status_field tables_programmed)
out=$(sim_ctl jobs "$SIM_TMP/bad.map" 2>&1)
rc=$?
t_expect "ctl jobs refuses a malformed map (exit 1, got $rc)" test $rc -eq 1
t_expect "the refusal names file:line" grep -q 'bad.map:2:' <<<"$out"
sleep 3
t_expect "no routing after the refusal" test "$(sim_status_field tables_programmed)" = "$routings"
t_expect "the previous job map stays installed" test "$(sim_status_field job_map)" = "$SIM_TMP/j1.map"
t_expect "ctl jobs with an unreadable file fails locally (exit 3)" \
	bash -c '"$0" ctl --socket "$1" jobs /nonexistent/map; test $? -eq 3' "$SARNUE_BIN" "$SIM_CTL_SOCKET"

# protocol errors: replies, no effect on OpenSM
reply=$(raw "frobnicate" "status extra" "jobs relative.map" "" "help")
t_expect "unknown command gets an error reply" grep -q "^error unknown command 'frobnicate'" <<<"$reply"
t_expect "argument to status gets an error reply" grep -q '^error status takes no argument' <<<"$reply"
t_expect "jobs by path alone refused: the plugin opens no file for a client" \
	grep -q '^error jobs: no open file came with the command' <<<"$reply"
t_expect "empty line gets an error reply" grep -q '^error empty command' <<<"$reply"
t_expect "help answers after the errors, in order" test "$(tail -n 1 <<<"$reply")" = ok
long=$(head -c 5000 /dev/zero | tr '\0' x)
reply=$(raw "$long")
t_expect "an over-long line is refused" grep -q '^error line longer than 4096 bytes' <<<"$reply"
t_expect "OpenSM still answers after bad clients" test "$(sim_status_field engine)" = "$ENGINE"

# Messages about a map passed over the socket name the client's file, not the plugin's copy.
cat "$SIM_TMP/j1.map" >"$SIM_TMP/ghost.map"
echo "ghost0001 7" >>"$SIM_TMP/ghost.map"
routings=$(sim_status_field tables_programmed)
sim_ctl jobs "$SIM_TMP/ghost.map" >/dev/null || t_fail "ctl jobs installed a map with an unknown host"
sim_wait_programmed $((routings + 1)) || t_fail "the map with an unknown host routed"
t_grep "the unknown host's warning names the client's file" \
	"WRN $ENGINE: job map $SIM_TMP/ghost.map \\(from ctl jobs\\): 1 hostname\\(s\\) not in the fabric, first 'ghost0001'" \
	"$SIM_OPENSM_LOG"
t_expect "no message names the plugin's in-memory copy" bash -c "! grep -q '/proc/self/fd' '$SIM_OPENSM_LOG'"

# What the job map implies: a fresh OpenSM given the same map as its option routes the same.
sim_stop_opensm
t_expect "socket file removed when OpenSM stops" test ! -e "$SIM_CTL_SOCKET"
export SIM_PLUGIN_OPTIONS="ctl_mode=0600 job_map=$SIM_TMP/j1.map"
SIM_CONF=""
sim_start_opensm && sim_wait_subnet_up && sim_wait_programmed 1 || t_fail "second OpenSM routed"
sim_read_lfts "$SIM_TMP/lfts.2" || t_fail "LFTs read back from the second OpenSM"
t_expect "reroute via ctl jobs gave exactly the tables the job map implies" \
	cmp -s "$SIM_TMP/lfts.1" "$SIM_TMP/lfts.2"

# A stale socket file left behind is replaced; a regular file in its place is not.
sim_stop_opensm
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SIM_CTL_SOCKET"
SIM_CONF=""
sim_start_opensm && sim_wait_subnet_up || t_fail "third OpenSM came up"
t_expect "a stale socket file is replaced" sim_ctl status
sim_stop_opensm
echo "not a socket" >"$SIM_CTL_SOCKET"
SIM_CONF=""
sim_start_opensm && sim_wait_subnet_up || t_fail "fourth OpenSM came up"
t_grep "a regular file is not replaced, and the log says so" \
	"ERR ctl: .*ctl.sock exists and is not a socket" "$SIM_OPENSM_LOG"
t_expect "OpenSM routed anyway" test "$(sim_routing_engine_used)" = "$ENGINE"
t_expect "the file is left alone" grep -q "not a socket" "$SIM_CTL_SOCKET"
sim_stop_opensm
t_done
