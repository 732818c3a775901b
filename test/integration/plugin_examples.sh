#!/bin/bash
# OpenSM with the sarnue plugin routes ibsim's example fabrics (two switches with parallel
# links, two-port HCAs) and small hand-written ones: the result verifies with sarnue check and
# ibdmchk, and the LFTs in the simulated switches are exactly OpenSM's dump.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk ibroute
. "$SARNUE_SRCDIR/test/lib/sim.sh"
sim_setup || exit 1

examples=/usr/share/doc/ibsim-utils/net-examples
for net in "$examples"/net "$examples"/net.2sw2path "$examples"/net.2sw2path4hca \
	"$examples"/net.2sw2path4hca2port "$SARNUE_SRCDIR"/test/lib/nets/*.net; do
	[[ -r $net ]] || { t_fail "example net $net is readable"; continue; }
	t_route_and_judge "$net" "$(basename -- "$net")"
done
t_done
