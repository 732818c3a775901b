#!/bin/bash
# Regenerates the real-format fixtures beside this script with the real tools: ibsim loads
# NAME.net, OpenSM (with the sarnue plugin, sar-updn) sweeps once and writes its dumps, and
# ibnetdiscover (plain, -g and -s) discovers the simulated fabric through umad2sim.
#   test/data/real/regen.sh NAME   (from a built tree; writes test/data/real/NAME/)
set -eu
here=$(cd -- "$(dirname -- "$0")" && pwd)
top=$(cd -- "$here/../../.." && pwd)
name=${1:?usage: regen.sh NAME}
export SARNUE_BIN=${SARNUE_BIN:-$top/sarnue} SARNUE_SRCDIR=${SARNUE_SRCDIR:-$top}
export LD_LIBRARY_PATH=$top/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
. "$top/sim/sim.sh"
out=$here/$name
mkdir -p "$out"
sim_setup
sim_start_ibsim "$here/$name.net"
SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-updn sim_run_opensm_once
mapfile -d '' -t envc < <(_sim_client_env)
"${envc[@]}" ibnetdiscover >"$out/ibnetdiscover.txt"
"${envc[@]}" ibnetdiscover -g >"$out/ibnetdiscover-g.txt"
# -s prints the discovery path of every node before the topology, as on a console.
"${envc[@]}" ibnetdiscover -s >"$out/ibnetdiscover-s.txt"
for f in opensm-subnet.lst opensm.fdbs opensm-lfts.dump; do
	cp "$SIM_DUMP_DIR/$f" "$out/$f"
done
echo "regen: wrote $(ls "$out" | wc -l) files to $out"
