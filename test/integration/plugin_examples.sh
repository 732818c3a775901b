#!/bin/bash
# OpenSM with the sarnue plugin routes ibsim's example fabrics (two switches with parallel
# links, two-port HCAs) and small hand-written ones: the result verifies with sarnue check and
# ibdmchk, and the LFTs in the simulated switches are exactly OpenSM's dump.  The simulation
# driver (sarnue-sim) reports its own check's figures.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk ibroute
. "$SARNUE_SRCDIR/sim/sim.sh"
sim_setup || exit 1

examples=/usr/share/doc/ibsim-utils/net-examples
for net in "$examples"/net "$examples"/net.2sw2path "$examples"/net.2sw2path4hca \
	"$examples"/net.2sw2path4hca2port "$SARNUE_SRCDIR"/test/lib/nets/*.net; do
	[[ -r $net ]] || { t_fail "example net $net is readable"; continue; }
	t_route_and_judge "$net" "$(basename -- "$net")"
done

# The simulation driver: its text summary must report what its own check measured.
sim=$(dirname -- "$SARNUE_BIN")/sim/sarnue-sim
if [[ -x $sim ]]; then
	text=$("$sim" 2>/dev/null)
	json=$("$sim" --json 2>/dev/null)
	max=$(grep -o '"hops": {"min": [0-9]*, "max": [0-9]*' <<<"$json" | head -n 1 | sed 's/.*: //')
	t_expect "sarnue-sim: the demo verdict is OK" grep -q 'verdict: *OK' <<<"$text"
	t_expect "sarnue-sim: the summary's max hops (${max:-none}) is the check's and not 0" \
		grep -q "hops: *max ${max:-x}, mean [1-9]" <<<"$text"
	t_expect "sarnue-sim: a 2-level fat tree has max hops > 0" test "${max:-0}" -gt 0
	# Asking for 4 VLs turns QoS on, so the routing really uses them; sar-nue's time is read.
	text=$("$sim" --engine sar-nue --options nue_vls=4 2>/dev/null)
	t_expect "sarnue-sim: nue_vls=4 turns QoS on" grep -q 'QoS: *TRUE' <<<"$text"
	t_expect "sarnue-sim: nue_vls=4 routes on more than one VL" grep -q 'VLs used: *[2-4]$' <<<"$text"
	t_expect "sarnue-sim: sar-nue's route time is read from its log line" \
		grep -q 'route time: *[0-9.]* s (plugin log)' <<<"$text"
	text=$("$sim" --engine sar-nue --options nue_vls=4 --no-qos 2>/dev/null)
	t_expect "sarnue-sim: --no-qos keeps QoS off (one VL)" grep -q 'VLs used: *1$' <<<"$text"
	# A failure names its step and why; the summary is never blank.
	printf 'Switch 4 "a"\n[1] "b"[1]\n' >"$SIM_TMP/broken.net"
	text=$("$sim" --net "$SIM_TMP/broken.net" 2>/dev/null)
	t_expect "sarnue-sim: a net file ibsim refuses is named as the failing step" \
		grep -q 'verdict: *FAILED at ibsim: .*broken.net' <<<"$text"
	text=$("$sim" --engine no-such-engine 2>/dev/null)
	t_expect "sarnue-sim: an engine OpenSM did not use is named" \
		grep -q 'verdict: *FAILED at OpenSM: OpenSM routed with .*, not no-such-engine' <<<"$text"
else
	t_fail "sarnue-sim was built"
fi
t_done
