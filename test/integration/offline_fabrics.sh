#!/bin/bash
# `sarnue route` offline on larger generated fabrics than ibsim comfortably runs: a 3D torus
# with 1% of its links removed, an 8-ary 3-tree, a random regular graph and a dragonfly with
# faults, and the torus again with sar-nue on 8 VLs: in the layers gen writes for it, in the
# blocks sar-nue finds itself, and with METIS.  Each must verify, and ibdmchk must confirm the
# dumps have no credit loop.  A fat tree of 3,000 hosts with sar-nue, which keeps D-mod-k's
# routes there.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibdmchk
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-offline.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

offline() {
	local name=$1
	shift
	if ! "$SARNUE_BIN" gen "$@" -o "$tmp/$name.net" 2>"$tmp/$name.gen"; then
		t_fail "$name: sarnue gen $*"
		return
	fi
	if "$SARNUE_BIN" route "${route_args[@]}" "$tmp/$name.net" -o "$tmp/$name" >"$tmp/$name.out" 2>&1; then
		t_ok "$name: routed and verified ($(grep -m1 'route time' "$tmp/$name.out" | tr -s ' '))"
	else
		t_fail "$name: sarnue route"
		tail -n 5 "$tmp/$name.out"
		return
	fi
	t_grep "$name: no unreachable pair" '^unreachable: +0$' "$tmp/$name.out"
	t_grep "$name: no credit loop" '^credit loops: +0$' "$tmp/$name.out"
	# ibdmchk takes a while on thousands of hosts: the routings only compared skip it.
	[[ ${no_ibdmchk:-0} == 1 ]] && return
	# ibdmchk may crash at exit after printing its verdict: judge by the text.
	{ (cd "$tmp/$name" && exec timeout 600 ibdmchk -s opensm-subnet.lst -f opensm.fdbs \
		-m opensm.mcfdbs -c sarnue-path-sl.dump -d sarnue-sl2vl.dump >ibdmchk.out 2>&1); } \
		2>/dev/null
	t_grep "$name: ibdmchk finds no credit loop" '^-I- no credit loops found' "$tmp/$name/ibdmchk.out"
}

route_args=()
offline torus6 torus --dims 6x6x6 --hosts-per-switch 2 --remove-links 1% --seed 11
# nue_layers=: every destination in its switch's block of half of each ring (27 switches, 81
# destinations each).
route_args=(-e sar-nue --vls 8 -O nue_vls=8 -O "nue_layers=$tmp/blocks.txt")
offline torus6blocks torus --dims 6x6x6 --hosts-per-switch 2 --remove-links 1% --seed 11 \
	--layers-file "$tmp/blocks.txt"
t_grep "torus6blocks: the layers file gives the layers" \
	'8 VLs \(nue_layers\), 648 destinations per layer (81/){7}81, 0 fall-backs' \
	"$tmp/torus6blocks.out"
t_expect "torus6blocks: gen wrote a layer for each of the 216 switches" \
	test "$(grep -c '^"torus [0-9]*,[0-9]*,[0-9]*" [0-7]$' "$tmp/blocks.txt")" = 216
# The same torus without a layers file: sar-nue finds it and cuts it into the same blocks
# itself; with nue_partition=metis it does not.
route_args=(-e sar-nue --vls 8 -O nue_vls=8)
offline torus6auto torus --dims 6x6x6 --hosts-per-switch 2 --remove-links 1% --seed 11
t_grep "torus6auto: the torus is found and cut in blocks" \
	'8 VLs \(torus blocks 6x6x6 in 2x2x2\), 648 destinations per layer (81/){7}81, 0 fall-backs' \
	"$tmp/torus6auto.out"
route_args=(-e sar-nue --vls 8 -O nue_vls=8 -O nue_partition=metis)
offline torus6metis torus --dims 6x6x6 --hosts-per-switch 2 --remove-links 1% --seed 11
t_grep "torus6metis: nue_partition=metis keeps METIS" '8 VLs \(metis\), 648 destinations' \
	"$tmp/torus6metis.out"
# sar-nue on a complete fat tree of 3,000 hosts keeps D-mod-k's routes (nue_dmodk): the same
# tables as sar-dmodk, all on VL 0, at a lower maximum EFI than Nue's own search; with
# nue_dmodk=no, or with two links missing, Nue searches as before.
max_efi() { sed -n 's/^quality: *max EFI \([0-9]*\),.*/\1/p' "$1"; }
route_args=(-e sar-nue --vls 8 -O nue_vls=8)
offline ft3k fattree --radix 36 --hosts 3000 --levels 3
t_grep "ft3k: sar-nue keeps D-mod-k's routes for every LID" \
	"D-mod-k's routes kept on VL 0 for 3458 of 3458 destination LIDs" "$tmp/ft3k.out"
t_grep "ft3k: on one VL" '^VLs used: +1$' "$tmp/ft3k.out"
t_grep "ft3k: the summary says how many VLs were given" '\(1 of 8 VLs used, maximum EFI' \
	"$tmp/ft3k.out"
route_args=(-e sar-dmodk)
no_ibdmchk=1
offline ft3kdmodk fattree --radix 36 --hosts 3000 --levels 3
t_expect "ft3k: sar-nue's tables are sar-dmodk's" \
	cmp -s <(grep -v '^#' "$tmp/ft3k/opensm.fdbs") <(grep -v '^#' "$tmp/ft3kdmodk/opensm.fdbs")
route_args=(-e sar-nue --vls 8 -O nue_vls=8 -O nue_dmodk=no)
offline ft3knue fattree --radix 36 --hosts 3000 --levels 3
t_expect "ft3k: nue_dmodk=no searches with Nue" \
	eval '! grep -q "D-mod-k" "$tmp/ft3knue.out" && grep -q "8 VLs (" "$tmp/ft3knue.out"'
t_expect "ft3k: D-mod-k's maximum EFI ($(max_efi "$tmp/ft3k.out")) is below Nue's ($(max_efi "$tmp/ft3knue.out"))" \
	test "$(max_efi "$tmp/ft3k.out")" -lt "$(max_efi "$tmp/ft3knue.out")"
route_args=(-e sar-nue --vls 8 -O nue_vls=8)
offline ft3kbroken fattree --radix 36 --hosts 3000 --levels 3 --remove-links 2 --seed 3
t_expect "ft3kbroken: two links missing, Nue searches" \
	eval '! grep -q "D-mod-k" "$tmp/ft3kbroken.out" && grep -q "8 VLs (" "$tmp/ft3kbroken.out"'
route_args=()
no_ibdmchk=0
offline ktree8 ktree --k 8 --n 3 --hosts-per-leaf 4
offline random64 random --switches 64 --degree 8 --hosts-per-switch 4 --seed 5
offline dragonfly dragonfly --a 6 --p 3 --h 3 --remove-links 4 --seed 2
offline mesh torus --dims 5x5x4 --mesh --hosts-per-switch 2 --remove-switches 2 --seed 9
t_done
