#!/bin/bash
#
# update_bench.sh - how long the five-phase update takes on a fabric of about 2,000 hosts
# under ibsim: OpenSM (lmc 1, qos) with the plugin, planes=on (update=auto makes reroutes
# five-phase), sarnue-agents on hosts of different leaves acknowledging at once (command
# `true`), and reroutes requested with `sarnue ctl jobs`, alternating two job maps whose jobs
# span several leaves.  Per round: subscribers waited for, the routing time (job map installed
# to phase 1, from OpenSM's log), phases 1-4 and their total (from
# `sarnue ctl --json status`), LFT blocks OpenSM wrote and on how many switches, all LFT blocks
# of the fabric (switches x 64-LID blocks up to the highest LID), and the outcome; then the
# mean per phase.  Prints; asserts nothing.
#
# ibsim serves at most 10 clients (IBSIM_MAX_CLIENTS, fixed when ibsim is built); OpenSM takes
# one, so more agents than the remaining slots are refused by ibsim and the rounds run with
# those that attached (the table says how many).  --ibsim FILE runs an ibsim built with a larger
# IBSIM_MAX_CLIENTS instead of the one in PATH.
#
# OpenSM runs without its routing log flag, so neither OpenSM nor the plugin writes dump files:
# both write them on OpenSM's sweeper thread after the tables went out, and on this fabric the
# plugin's path-SL dump alone is some 200 MB, which would delay the reroute of phase 3 by
# seconds.  --dumps turns them on.
#
# usage: test/bench/update_bench.sh [--quick] [--agents N] [--rounds R] [--engine E]
#                                   [--ibsim FILE] [--dumps] [--json]
#   run from a build tree after `make`.
set -u
top=$(cd -- "$(dirname -- "$0")/../.." && pwd)
: "${SARNUE_BIN:=$top/sarnue}" "${SARNUE_PLUGIN_DIR:=$top/.libs}"
AGENT=${SARNUE_AGENT:-$(dirname -- "$SARNUE_BIN")/sarnue-agent}
agents=64 rounds=3 engine=sar-dfsssp json=0 dumps=0 ibsim_bin=""
leaves=56 spines=18 hpl=36
usage() {
	cat >&2 <<EOF
usage: $0 [--quick] [--agents N] [--rounds R] [--engine sar-dfsssp|sar-nue]
          [--ibsim FILE] [--dumps] [--json]
  --quick     a fat tree of 6 leaves, 3 spines, 6 hosts per leaf (36 hosts) instead of
              56 leaves, 18 spines, 36 hosts per leaf (2,016 hosts)
  --agents N  host agents to start, spread over the leaves (default 64; ibsim attaches
              at most 9 next to OpenSM)
  --rounds R  reroutes to time (default 3)
  --engine E  routing engine of the base plane (default sar-dfsssp)
  --ibsim FILE  the ibsim to run (e.g. one built with a larger IBSIM_MAX_CLIENTS)
  --dumps     let OpenSM and the plugin write their dump files (slows phase 3 down)
  --json      one JSON object on standard output instead of the table
EOF
	exit 2
}
while (($#)); do
	case $1 in
	--quick) leaves=6 spines=3 hpl=6 ;;
	--agents) (($# > 1)) || usage; agents=$2; shift ;;
	--rounds) (($# > 1)) || usage; rounds=$2; shift ;;
	--engine) (($# > 1)) || usage; engine=$2; shift ;;
	--ibsim) (($# > 1)) || usage; ibsim_bin=$2; shift ;;
	--dumps) dumps=1 ;;
	--json) json=1 ;;
	-h | --help) usage ;;
	*) usage ;;
	esac
	shift
done
[[ $agents =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]] || usage
[[ $engine == sar-dfsssp || $engine == sar-nue ]] || usage
[[ -x $AGENT ]] || { echo "no $AGENT: run make first" >&2; exit 1; }
if [[ -n $ibsim_bin ]]; then
	[[ -x $ibsim_bin && $(basename -- "$ibsim_bin") == ibsim ]] ||
		{ echo "--ibsim: $ibsim_bin is not an executable named ibsim" >&2; exit 2; }
	PATH=$(cd -- "$(dirname -- "$ibsim_bin")" && pwd):$PATH
fi

say() { echo "update_bench: $*" >&2; }

. "$top/sim/sim.sh"
sim_setup 2>/dev/null || exit 1

net=$SIM_TMP/fabric.net
"$SARNUE_BIN" gen fattree2 --leaves "$leaves" --spines "$spines" --hosts-per-leaf "$hpl" \
	-o "$net" 2>"$SIM_TMP/gen.err" || { cat "$SIM_TMP/gen.err" >&2; exit 1; }
hosts=$((leaves * hpl))
say "fabric: fattree2, $leaves leaves, $spines spines, $hosts hosts"

# Two job maps with jobs spanning leaves (host names are node%04d, leaf l holds hosts
# l*hpl+1 .. (l+1)*hpl): map A puts the first half of each leaf into job 1 + l % 8, map B the
# second half into job 1 + (3l) % 5; each changes sar-dfsssp's weights differently.
awk -v L="$leaves" -v H="$hpl" 'BEGIN {
	for (l = 0; l < L; l++) for (i = 1; i <= H / 2; i++) printf "node%04d %d\n", l * H + i, 1 + l % 8
}' >"$SIM_TMP/a.map"
awk -v L="$leaves" -v H="$hpl" 'BEGIN {
	for (l = 0; l < L; l++) for (i = H / 2 + 1; i <= H; i++) printf "node%04d %d\n", l * H + i, 1 + (3 * l) % 5
}' >"$SIM_TMP/b.map"

export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=$engine SIM_QOS=TRUE SIM_LMC=1
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SIM_OPENSM_EXTRA="ignore_other_sm TRUE"
export SIM_PLUGIN_OPTIONS="planes=on"
export SIM_OPENSM_LOGFLAGS=0x03
((dumps)) && SIM_OPENSM_LOGFLAGS=0x43

sim_start_ibsim "$net" 2>/dev/null || { say "ibsim did not start"; exit 1; }
mapfile -d '' -t envp < <(_sim_client_env)
t0=$SECONDS
if ! sim_start_opensm 2>/dev/null || ! sim_wait_subnet_up 900 2>/dev/null; then
	say "OpenSM did not bring the subnet up"
	exit 1
fi
say "OpenSM up in $((SECONDS - t0)) s ($engine, lmc 1, planes=on)"

# Agent k sits on leaf k mod L, host (k div L) of that leaf.
started=() refused=0
for ((k = 0; k < agents; k++)); do
	l=$((k % leaves)) i=$((k / leaves))
	((i < hpl)) || break
	h=$(printf 'H-%04d' $((l * hpl + i + 1)))
	log=$SIM_TMP/agent-$h.log
	"${envp[@]}" SIM_HOST="$h" SIM_SET_ISSM=1 "$AGENT" --exec true --log "$log" \
		--json "$SIM_TMP/agent-$h.json" >"$SIM_TMP/agent-$h.out" 2>&1 &
	pid=$!
	sim_track_pid "$pid" "agent-$h" 2>/dev/null
	# Either it subscribes, or it exits (ibsim refused it), or ibsim says it refused.
	end=$((SECONDS + 120)) ok=0
	while ((SECONDS < end)); do
		grep -q "subscribed on " "$log" 2>/dev/null && { ok=1; break; }
		_sim_tracked_alive "$pid" || break
		sleep 0.2
	done
	if ((ok)); then
		started+=("$h")
	else
		refused=$((refused + 1))
		sim_stop_pid "$pid" 5 2>/dev/null
		say "agent on $h did not subscribe: $(tail -n 1 "$SIM_TMP/agent-$h.out" "$log" 2>/dev/null | grep -v '^==>' | grep . | tail -n 1)"
		# One refusal is enough to know ibsim's client limit.
		break
	fi
done
nagents=${#started[@]}
say "$nagents agent(s) subscribed (asked for $agents)"
grep -h "can't open new connection" "$SIM_TMP/ibsim.log" 2>/dev/null | head -n 1 | sed 's/^/update_bench: ibsim: /' >&2
t0=$SECONDS
sim_wait_quiet 10 900 || say "OpenSM still sweeping after 900 s"
say "OpenSM settled after the agents' sweeps in $((SECONDS - t0)) s"

# The plugin's last "X LFT block(s) of 64 LIDs differ on Y of Z switch(es)" line up to line N.
differ_line() {
	head -n "$1" "$SIM_OPENSM_LOG" | grep -E "LFT block\(s\) of 64 LIDs differ on" | tail -n 1
}
# The highest LID: the plugin's last "routed N switches, M LIDs" line (M is the highest LID).
max_lid() {
	sed -n 's/.* routed [0-9]* switches, \([0-9]*\) LIDs in .*/\1/p' <(sim_log "$SIM_OPENSM_LOG") | tail -n 1
}

# Columns after "update subs": route, phases 1-4, total, write (seconds), then counts.
row='%5s %-10s %4s %7s %8s %8s %8s %8s %8s %7s %8s %8s %11s  %s\n'
rows=()
sums=(0 0 0 0 0 0 0) # route p1 p2 p3 p4 total write, over the rounds that ended "done"
done_rounds=0
for ((r = 1; r <= rounds; r++)); do
	map=$SIM_TMP/a.map
	((r % 2)) || map=$SIM_TMP/b.map
	before=$(sim_status_field update.updates 2>/dev/null)
	sim_ctl jobs "$map" >/dev/null 2>"$SIM_TMP/ctl.err" || { say "round $r: ctl jobs failed: $(cat "$SIM_TMP/ctl.err")"; continue; }
	t0=$SECONDS
	while :; do
		n=$(sim_status_field update.updates 2>/dev/null)
		[[ $n =~ ^[0-9]+$ ]] && ((n > before)) && break
		((SECONDS - t0 < 900)) || { say "round $r: no update finished in 900 s"; break 2; }
		sleep 0.5
	done
	mapfile -t f < <(sim_status_field update.seq update.subscribers update.phase_seconds \
		update.changed_blocks update.changed_switches update.last_outcome 2>/dev/null)
	seq=${f[0]} subs=${f[1]}
	# The phase durations come as a JSON list.
	read -r p1 p2 p3 p4 <<<"$(tr -d '[],' <<<"${f[2]}")"
	blocks=${f[3]} nsws=${f[4]} outcome=${f[5]}
	wrote=$(grep -n -E "update $seq: OpenSM wrote [0-9]+ changed LFT block" "$SIM_OPENSM_LOG" | head -n 1 | cut -d: -f1)
	dl=$(differ_line "${wrote:-$(wc -l <"$SIM_OPENSM_LOG")}")
	nsw=$(sed -n 's/.* differ on [0-9]* of \([0-9]*\) switch.*/\1/p' <<<"$dl")
	ml=$(max_lid)
	all='?'
	[[ -n $nsw && -n $ml ]] && all=$((nsw * (ml / 64 + 1)))
	read -r p1 p2 p3 p4 total <<<"$(awk -v a="$p1" -v b="$p2" -v c="$p3" -v d="$p4" \
		'BEGIN { printf "%.3f %.3f %.3f %.3f %.3f", a, b, c, d, a + b + c + d }')"
	# Routing time: from the job map's installation to phase 1 (the new tables computed).
	route=$(awk -v seq="$seq" '
		function t(line,   a) { split($3, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] + $4 / 1e6 }
		/sarnue: ctl: job map .* installed/ { start = t($0) }
		index($0, "update " seq ": phase 1 ") { if (start) printf "%.3f", t($0) - start; exit }
	' "$SIM_OPENSM_LOG")
	# LFT write time: OpenSM's "tables configured" (the LFT MADs queued) of phase 3 to the
	# plugin's "OpenSM wrote" (every MAD of the routing answered, UCAST_ROUTING_DONE).
	write=$(awk -v seq="$seq" '
		function t(line,   a) { split($3, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] + $4 / 1e6 }
		/ tables configured on all switches/ { conf = t($0) }
		index($0, "update " seq ": OpenSM wrote ") { if (conf) printf "%.3f", t($0) - conf; exit }
	' "$SIM_OPENSM_LOG")
	say "round $r (update $seq, $(basename "$map")): $total s, $blocks of $all blocks on $nsws switches, $outcome"
	rows+=("$r $seq $subs ${route:-?} $p1 $p2 $p3 $p4 $total ${write:-?} $blocks $nsws $all $outcome")
	if [[ $outcome == "done" ]]; then
		read -r -a sums <<<"$(awk -v a="${sums[*]}" -v b="$route $p1 $p2 $p3 $p4 $total $write" 'BEGIN {
			split(a, x); split(b, y); for (i = 1; i <= 7; i++) printf "%s ", x[i] + y[i] }')"
		done_rounds=$((done_rounds + 1))
	fi
	sim_wait_quiet 3 120 || true
done

odd_agents=$(cat "$SIM_TMP"/agent-*.log 2>/dev/null | grep -c -E 'WRN|ERR')
# OpenSM's ERR lines other than AC01: with qos TRUE and no policy file it logs one per sweep.
err_lines=$(grep -E ' ERR ' "$SIM_OPENSM_LOG" | grep -c -v 'ERR AC01:')
expired=$(grep -c -E 'expired' "$SIM_OPENSM_LOG")
mean() { awk -v s="$1" -v n="$done_rounds" 'BEGIN { printf "%.3f", n ? s / n : 0 }'; }

means=()
for v in "${sums[@]}"; do
	means+=("$(mean "$v")")
done

if ((json)); then
	printf '{"fabric": {"leaves": %d, "spines": %d, "hosts": %d}, "engine": "%s", ' \
		"$leaves" "$spines" "$hosts" "$engine"
	printf '"agents_requested": %d, "agents": %d, "rounds": [' "$agents" "$nagents"
	sep=""
	for x in "${rows[@]}"; do
		read -r r seq subs route p1 p2 p3 p4 total write blocks nsws all outcome <<<"$x"
		printf '%s{"round": %d, "update": %d, "subscribers": %d, "route_seconds": %s, ' \
			"$sep" "$r" "$seq" "$subs" "${route/\?/null}"
		printf '"phase_seconds": [%s, %s, %s, %s], "total_seconds": %s, "write_seconds": %s, ' \
			"$p1" "$p2" "$p3" "$p4" "$total" "${write/\?/null}"
		printf '"changed_blocks": %d, "changed_switches": %d, "fabric_blocks": %s, "outcome": "%s"}' \
			"$blocks" "$nsws" "${all/\?/null}" "$outcome"
		sep=", "
	done
	printf '], "done_rounds": %d, "mean_route_seconds": %s, "mean_phase_seconds": [%s, %s, %s, %s], ' \
		"$done_rounds" "${means[@]:0:5}"
	printf '"mean_total_seconds": %s, "mean_write_seconds": %s, ' "${means[5]}" "${means[6]}"
	printf '"opensm_err_lines": %d, "expired_lines": %d, "agent_warnings": %d}\n' \
		"$err_lines" "$expired" "$odd_agents"
	exit 0
fi

echo "fattree2 $leaves leaves x $spines spines, $hosts hosts, $engine, lmc 1, planes=on;" \
	"$nagents agent(s) of $agents asked for"
# shellcheck disable=SC2059
printf "$row" round update subs "route s" "phase1 s" "phase2 s" "phase3 s" "phase4 s" "total s" \
	"write s" "LFT blks" switches "fabric blks" outcome
for x in "${rows[@]}"; do
	read -r r seq subs route p1 p2 p3 p4 total write blocks nsws all outcome <<<"$x"
	# shellcheck disable=SC2059
	printf "$row" "$r" "$seq" "$subs" "$route" "$p1" "$p2" "$p3" "$p4" "$total" "$write" \
		"$blocks" "$nsws" "$all" "$outcome"
done
# shellcheck disable=SC2059
printf "$row" mean "" "" "${means[@]}" "" "" "" "($done_rounds done)"
echo "OpenSM log: $err_lines ERR line(s) besides AC01, $expired expired subscriber line(s);" \
	"agents: $odd_agents WRN/ERR line(s)"
