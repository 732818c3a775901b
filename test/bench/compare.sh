#!/bin/bash
#
# compare.sh - routing engines side by side on the same generated fabrics, inside OpenSM under
# ibsim: sarnue's engines (sar-updn, sar-nue, sar-dfsssp, sar-dmodk) and OpenSM's built-in ones (nue,
# dfsssp, updn, ftree, minhop, lash).  Per run: route time from OpenSM's log ("building
# routing with" to "tables configured"), VLs in use, escape-path fall-backs (Nue engines),
# mean and maximum hops over all routes (to switch LIDs too), mean hops of the routes between
# CAs and routers only (cahops: the routes the EFI counts), unreachable pairs and credit loops
# found by sarnue check and by ibdmchk (with sarnue's path-SL and SL2VL dumps), the maximum
# edge forwarding index (EFI) over switch-to-switch channels, the highest link load over all
# shift permutations, the size of the plugin's path-SL dump (sarnue-path-sl.dump, "SLdump"),
# and whether OpenSM fell back to another engine.  --offline adds a table of `sarnue route`
# (route time without verification, peak memory, engine summary) for sarnue's engines on
# fabrics too large for ibsim (13,824 to 20,000 hosts); with --dumps it also writes the dump
# files there (-o) and shows the time that took and their sizes, all files and path-SL dump
# (gigabytes of LFTs on those fabrics).  Prints; asserts nothing.
#
# Layered engines (sar-nue, nue, sar-dfsssp, dfsssp, lash) run once per VL count of --vls, with
# qos TRUE above 1 VL; the others run once on 1 VL.  Credit loops of the built-in layered
# engines are shown as n/a above 1 VL: OpenSM does not dump their path SLs.
#
# usage: test/bench/compare.sh [--quick|--large] [--offline [--dumps]] [--vls "1 8"] [--engines "E ..."]
#                              [--fabrics "NAME ..."] [--repeat N] [--options "KEY=VALUE ..."]
#   run from a build tree after `make`.  Default: fabrics of a few hundred hosts, among them
#   one of each exascale family of `sarnue gen` (Fishnet, Fishnet-lite, MLFM, OFT, Cascade,
#   Dragonfly+); --quick: two small ones (run by the test suite); --large: up to 4,864 hosts
#   (minutes per engine).
#   --fabrics keeps only the named fabrics of the chosen set (and of --offline's).  --repeat N
#   starts OpenSM N times per row and shows the median route time (times of a few milliseconds
#   vary by half between runs); the other columns are the first run's.  The repeated runs take
#   the engines of a VL count in turn, so a slow spell of the machine hits them alike.
#   --options adds plugin options (see `sarnue route --help`) to sarnue's engines, inside OpenSM
#   and offline, e.g. --options "nue_orders=2"; the built-in engines ignore them.
#   --optimal adds the columns "AR gap": the routing's busiest channel under all-to-all over
#   the smallest maximum any routing could reach (`sarnue check --optimal`, solved once per
#   fabric: exactly by its linear program, or bounded 2% apart; a range "a-b" where the bounds
#   stayed further apart after 120 s), and "a2a tput":
#   all-to-all in the max-min throughput model (`sarnue check --throughput alltoall`), the
#   aggregate and the slowest flow as fractions of the injection rate.
set -u
top=$(cd -- "$(dirname -- "$0")/../.." && pwd)
# shellcheck source=test/bench/lib.sh
. "$top/test/bench/lib.sh"
: "${SARNUE_BIN:=$top/sarnue}" "${SARNUE_PLUGIN_DIR:=$top/.libs}"
quick=0 big=0 offline=0 dumps=0 vls="1 8" only="" repeat=1 extra="" optimal=0
engines="sar-updn sar-nue sar-dfsssp sar-dmodk updn nue dfsssp ftree minhop lash"
usage() {
	echo "usage: $0 [--quick|--large] [--offline [--dumps]] [--vls \"K ...\"] [--engines \"ENGINE ...\"]" \
		"[--fabrics \"NAME ...\"] [--repeat N] [--options \"KEY=VALUE ...\"] [--optimal]" >&2
	exit 2
}
while (($#)); do
	case $1 in
	--quick) quick=1 ;;
	--large) big=1 ;;
	--offline) offline=1 ;;
	--dumps) dumps=1 ;;
	--vls) (($# > 1)) || usage; vls=$2; shift ;;
	--engines) (($# > 1)) || usage; engines=$2; shift ;;
	--fabrics) (($# > 1)) || usage; only=$2; shift ;;
	--repeat) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || usage; repeat=$2; shift ;;
	--options) (($# > 1)) || usage; extra=$2; shift ;;
	--optimal) optimal=1 ;;
	*) usage ;;
	esac
	shift
done

# The built-in nue takes minutes on the 16-ary 3-tree with 8 VLs, beyond sim.sh's default.
: "${SIM_OPENSM_TIMEOUT:=900}"
export SIM_OPENSM_TIMEOUT
. "$top/sim/sim.sh"
sim_setup >/dev/null 2>&1 || exit 1
sim_route_option_args "$extra"

if ((quick)); then
	fabrics=(
		"fattree2-6x3 fattree2 --leaves 6 --spines 3 --hosts-per-leaf 4"
		"torus-4x4x3-minus1 torus --dims 4x4x3 --hosts-per-switch 4 --remove-switch-id S-0006"
	)
elif ((big)); then
	fabrics=(
		"ktree-16-3 ktree --k 16 --n 3"
		"torus-8x8x8 torus --dims 8x8x8 --hosts-per-switch 4"
		"torus-8x8x8-1pct torus --dims 8x8x8 --hosts-per-switch 4 --remove-links 1% --seed 1"
		"random-256-d8 random --switches 256 --degree 8 --hosts-per-switch 8 --seed 1"
		"dragonfly-a8p4h4 dragonfly --a 8 --p 4 --h 4"
		"kautz-3-3 kautz --d 3 --n 3 --hosts-per-switch 4"
		"islands-3x216 islands --islands 3 --hosts-per-island 216 --radix 36 --core-radix 72"
	)
else
	fabrics=(
		"fattree2-18x9 fattree2 --leaves 18 --spines 9 --hosts-per-leaf 18"
		"torus-6x6x6-1pct torus --dims 6x6x6 --hosts-per-switch 2 --remove-links 1% --seed 1"
		"random-64-d6 random --switches 64 --degree 6 --hosts-per-switch 4 --seed 1"
		"dragonfly-a4p2h2 dragonfly --a 4 --p 2 --h 2"
		"kautz-2-3 kautz --d 2 --n 3 --hosts-per-switch 4"
		"islands-2x72 islands --islands 2 --hosts-per-island 72 --radix 24 --core-radix 48"
		# The exascale families, one instance each of a few hundred hosts.
		"fishnet-petersen fishnet --base petersen --hosts-per-switch 2"
		"fishnetlite-petersen fishnet-lite --base petersen --hosts-per-switch 3"
		"mlfm-h6 mlfm --h 6"
		"oft-k6 oft --k 6"
		"cascade-2g cascade --g 2 --h 1 --p 2 --black-links 1"
		"dfplus-4 dfplus --leaves 4 --spines 4 --hosts-per-leaf 4 --h 4"
	)
fi
large=(
	"ktree-24-3 ktree --k 24 --n 3 --hosts-per-leaf 24"
	"torus-16x16x16-1pct torus --dims 16x16x16 --hosts-per-switch 4 --remove-links 1% --seed 1"
	# The same torus with sar-nue's layers from METIS instead of its torus blocks (with 8 VLs;
	# with 1 VL there is one layer either way).  Words after " -- " are sarnue route's.
	"torus-16x16x16-metis torus --dims 16x16x16 --hosts-per-switch 4 --remove-links 1% --seed 1 -- -O nue_partition=metis"
	"random-2000-d12 random --switches 2000 --degree 12 --hosts-per-switch 10 --seed 1"
)

osm_route_seconds() {
	awk -v eng="$2" '
		function t(line,   a) { split($3, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] + $4 / 1e6 }
		index($0, "building routing with \x27" eng "\x27") { start = t($0) }
		start && / tables configured on all switches/ { printf "%.3f", t($0) - start; exit }
	' "$1"
}

# OpenSM's settings for engine $1 on $2 VLs.
engine_settings() {
	SIM_CONF="" SIM_ROUTING_ENGINE=$1 SIM_QOS=FALSE
	SIM_PLUGIN_OPTIONS="nue_vls=$2 dfsssp_vls=$2 dump=always${extra:+ $extra}"
	SIM_OPENSM_EXTRA="nue_max_num_vls $2"
	(($2 > 1)) && SIM_QOS=TRUE
	export SIM_CONF SIM_ROUTING_ENGINE SIM_QOS SIM_PLUGIN_OPTIONS SIM_OPENSM_EXTRA
}

# A file's size for the tables: 278, 12K, 3.2G; "-" when there is none.
file_size() {
	[[ -f $1 ]] || { echo -; return; }
	numfmt --to=iec "$(stat -c %s "$1")"
}

# One OpenSM run; sets RESULT to "time fallbacks meanhops maxhops cahops unreachable
# creditloops ibdmchk maxefi maxshiftload sldump status".  Not run in a subshell: sim.sh numbers its
# OpenSM logs, and OpenSM appends to an existing log.
run_engine() {
	local eng=$1 k=$2 json used secs fb hops cl ibdm efi shift_load
	engine_settings "$eng" "$k"
	# A run that ends before OpenSM dumps its tables must not be judged on the last run's.
	rm -f "$SIM_DUMP_DIR"/sarnue-*.dump "$SIM_DUMP_DIR"/opensm.fdbs \
		"$SIM_DUMP_DIR"/opensm-subnet.lst
	sim_run_opensm_once >/dev/null 2>&1
	used=$(sim_routing_engine_used 2>/dev/null)
	[[ $used == "$eng" ]] || { RESULT="- - - - - - - - - - - fell-back-to-${used:-none}"; return; }
	[[ -s $SIM_DUMP_DIR/opensm.fdbs ]] || { RESULT="- - - - - - - - - - - no-tables-dumped"; return; }
	secs=$(osm_route_seconds "$SIM_OPENSM_LOG" "$eng")
	case $eng in
	nue) fb=$(grep -c 'fallback to escape paths' "$SIM_OPENSM_LOG") ;;
	sar-nue) fb=$(sed -n 's/.* \([0-9]*\) fall-backs to escape paths.*/\1/p' <(sim_log "$SIM_OPENSM_LOG") | tail -n 1) ;;
	*) fb=- ;;
	esac
	json=$("$SARNUE_BIN" check --dump-dir "$SIM_DUMP_DIR" --patterns --permutations 5 \
		--bisections 5 --json 2>/dev/null)
	hops=$(grep -o '"hops": {[^}]*}' <<<"$json")
	cl=$(json_field credit_loops "$json")
	# OpenSM does not dump the built-in's path SLs: with layers, its credit loops are unknown.
	[[ $eng == nue && $k -gt 1 ]] && cl=n/a
	# OpenSM's own engines that spread layers over VLs: credit loops need their path SLs.
	[[ $eng == dfsssp || $eng == lash ]] && cl=n/a
	# ibdmchk as the independent credit-loop check; too slow for the path-SL dumps of
	# thousands of hosts.
	ibdm=n/a
	if [[ $cl != n/a ]] && ((hosts <= 1500)); then
		local sl=()
		[[ $eng == sar-* ]] &&
			sl=(-c "$SIM_DUMP_DIR/sarnue-path-sl.dump" -d "$SIM_DUMP_DIR/sarnue-sl2vl.dump")
		if sim_ibdmchk "${sl[@]}" >/dev/null 2>&1; then ibdm=ok; else ibdm=loop; fi
	fi
	efi=$(grep -o '"efi": {[^}]*' <<<"$json")
	shift_load=$(grep -o '"shift": {[^}]*' <<<"$json")
	RESULT="${secs:-?} ${fb:-?} $(json_field mean "$hops") $(json_field max "$hops")"
	RESULT+=" $(json_field mean_hops "$json")"
	RESULT+=" $(json_field unreachable "$json") $cl $ibdm $(json_field max "$efi")"
	RESULT+=" $(json_field max_load "$shift_load")"
	RESULT+=" $(file_size "$SIM_DUMP_DIR/sarnue-path-sl.dump") ok"
	((optimal)) && AR="$(ar_gap) $(a2a_throughput)"
}

# All-to-all in the throughput model: "AGGREGATE/SLOWEST" as fractions of the injection rate.
a2a_throughput() {
	local j
	j=$("$SARNUE_BIN" check -q --dump-dir "$SIM_DUMP_DIR" --throughput alltoall \
		--json 2>/dev/null)
	printf '%s/%s' "$(json_field aggregate "$j")" "$(json_field min "$j")"
}

# The routing in the dumps: its busiest channel under all-to-all over the fabric's optimum,
# which the first routing of each fabric solves (OPT_LO and OPT_HI, its bounds: equal where the
# LP solved it, else from the approximation, 2% apart or after 120 s; "-" until then, "none" if
# it failed).  Prints the ratio, or its range where the bounds are apart.
ar_gap() {
	local j
	if [[ $OPT_LO == - ]]; then
		j=$("$SARNUE_BIN" check -q --dump-dir "$SIM_DUMP_DIR" --no-metrics --optimal \
			--tolerance 0.02 --optimal-seconds 120 --json 2>/dev/null)
		OPT_LO=none
		if [[ $j == *'"method": "lp"'* || $j == *'"method": "bounds"'* ]]; then
			OPT_LO=$(json_field optimum "$j")
			OPT_HI=$(json_field optimum_upper "$j")
		fi
	fi
	[[ $OPT_LO == none ]] && { echo n/a; return; }
	j=$("$SARNUE_BIN" check -q --dump-dir "$SIM_DUMP_DIR" --no-metrics --optimal --lp-limit 0 \
		--optimal-seconds 0 --json 2>/dev/null)
	awk -v m="$(json_field routing_max "$j")" -v lo="$OPT_LO" -v hi="$OPT_HI" 'BEGIN {
		if (!(lo > 0 && hi > 0) || m == "") { print "?"; exit }
		if (hi <= lo * 1.005) printf "%.3f", m / hi; else printf "%.2f-%.2f", m / hi, m / lo }'
}

# Appends to TIMES[$1] the route time of one more OpenSM run of engine $1 on $2 VLs, unless it
# fell back.  Not in a subshell, for the same reason as run_engine.
rerun_seconds() {
	engine_settings "$1" "$2"
	sim_run_opensm_once >/dev/null 2>&1
	[[ $(sim_routing_engine_used 2>/dev/null) == "$1" ]] || return 0
	TIMES[$1]+=" $(osm_route_seconds "$SIM_OPENSM_LOG" "$1")"
}

# Median of the numbers on stdin, one per line.
median() {
	sort -n | awk '{ v[NR] = $1 }
		END { if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Generates the fabric of a "name gen-args..." spec; sets name, net, sw and hosts.  Fails
# quietly for a fabric --fabrics leaves out.
gen_fabric() {
	local args summary
	read -r name args <<<"$1"
	[[ -z $only || " $only " == *" $name "* ]] || return 1
	net=$SIM_TMP/$name.net
	route_opt=()
	if [[ $args == *" -- "* ]]; then
		read -r -a route_opt <<<"${args#* -- }"
		args=${args%% -- *}
	fi
	# shellcheck disable=SC2086
	"$SARNUE_BIN" gen $args -o "$net" 2>"$SIM_TMP/gen.err" || { echo "$name: gen failed"; return 1; }
	summary=$(tail -n 1 "$SIM_TMP/gen.err")
	sw=$(sed -n 's/gen: \([0-9]*\) switches.*/\1/p' <<<"$summary")
	hosts=$(sed -n 's/.* \([0-9]*\) hosts.*/\1/p' <<<"$summary")
	OPT_LO=- OPT_HI=-
}

layered() { [[ " sar-nue nue sar-dfsssp dfsssp lash " == *" $1 "* ]]; }
row='%-20s %5s %6s %3s | %-10s %7s %6s %6s %4s %6s %4s %4s %5s %7s %6s %6s %s %s\n'
# shellcheck disable=SC2059
printf "$row" fabric sw hosts VLs engine "time s" fallbk hops max cahops unr cl ibdm maxEFI \
	shift SLdump status "$( ((optimal)) && echo "AR gap  a2a tput")"
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR SIM_PLUGIN=sarnue SIM_OPENSM_LOGFLAGS=0x47
# Per engine of the current VL count: first run's RESULT, route times, VLs.
declare -A RESULTS TIMES VLS_OF AR_OF
for spec in "${fabrics[@]}"; do
	gen_fabric "$spec" || continue
	# A fresh subnet per fabric: OpenSM's guid2lid cache would hand the next fabric sparse LIDs
	# (the Kautz graph after the dragonfly got LIDs up to 1,315 for its 540 ports).
	rm -f -- "$SIM_TMP"/cache/*
	sim_start_ibsim "$net" >/dev/null 2>&1 || { echo "$name: ibsim failed"; continue; }
	for k in $vls; do
		ran=()
		RESULTS=() TIMES=() VLS_OF=() AR_OF=()
		for eng in $engines; do
			kk=$k
			if ! layered "$eng"; then
				[[ $k == "${vls%% *}" ]] || continue
				kk=1
			fi
			AR=""
			run_engine "$eng" "$kk"
			AR_OF[$eng]=$AR
			ran+=("$eng")
			RESULTS[$eng]=$RESULT VLS_OF[$eng]=$kk TIMES[$eng]=${RESULT%% *}
		done
		for ((r = 1; r < repeat; r++)); do
			for eng in "${ran[@]}"; do
				[[ ${RESULTS[$eng]##* } == ok ]] && rerun_seconds "$eng" "${VLS_OF[$eng]}"
			done
		done
		for eng in "${ran[@]}"; do
			read -r secs fb mh xh cah unr cl ibdm efi shl sld status <<<"${RESULTS[$eng]}"
			[[ $status == ok ]] && secs=$(tr ' ' '\n' <<<"${TIMES[$eng]}" | grep . | median)
			# shellcheck disable=SC2059
			printf "$row" "$name" "$sw" "$hosts" "${VLS_OF[$eng]}" "$eng" "$secs" "$fb" \
				"$mh" "$xh" "$cah" "$unr" "$cl" "$ibdm" "$efi" "$shl" "$sld" "$status" \
				"${AR_OF[$eng]}"
		done
	done
	sim_stop_ibsim >/dev/null 2>&1
done

((offline)) || exit 0
echo
orow='%-22s %6s %6s %3s | %-10s %8s %9s %7s %6s %6s %s\n'
# shellcheck disable=SC2059
printf "$orow" "offline (sarnue route)" sw hosts VLs engine "time s" "peak KiB" "dump s" dumps \
	SLdump "engine summary"
for spec in "${large[@]}"; do
	gen_fabric "$spec" || continue
	for k in $vls; do
		for eng in $engines; do
			[[ $eng == sar-* ]] || continue
			layered "$eng" || [[ $k == "${vls%% *}" ]] || continue
			out=() dsecs=- dsize=- slsize=-
			((dumps)) && out=(-v -o "$SIM_TMP/offline-dumps")
			rm -rf -- "$SIM_TMP/offline-dumps"
			json=$("$SARNUE_BIN" route -e "$eng" -O nue_vls="$k" -O dfsssp_vls="$k" \
				-O verify=no "${SIM_ROUTE_OPTION_ARGS[@]}" "${route_opt[@]}" --vls "$k" \
				--json "${out[@]}" "$net" 2>"$SIM_TMP/offline.err")
			json+=$(<"$SIM_TMP/offline.err")
			if ((dumps)); then
				# --verbose times each file: "wrote DIR/FILE: SIZE in SECONDS s".
				dsecs=$(sed -n 's/.* in \([0-9.]*\) s$/\1/p' "$SIM_TMP/offline.err" |
					awk '{ t += $1 } END { printf "%.1f", t }')
				dsize=$(numfmt --to=iec "$(du -sb "$SIM_TMP/offline-dumps" | cut -f1)")
				slsize=$(file_size "$SIM_TMP/offline-dumps/sarnue-path-sl.dump")
				rm -rf -- "$SIM_TMP/offline-dumps"
			fi
			# shellcheck disable=SC2059
			printf "$orow" "$name" "$sw" "$hosts" "$k" "$eng" \
				"$(json_field route_seconds "$json")" "$(json_field peak_rss_kib "$json")" \
				"$dsecs" "$dsize" "$slsize" \
				"$(sed -n 's/.*"summary": "\([^"]*\)".*/\1/p' <<<"$json" | cut -c1-90)"
		done
	done
done
