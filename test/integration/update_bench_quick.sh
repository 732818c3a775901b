#!/bin/bash
# The five-phase update benchmark in its quick form (36 hosts, three agents, two rounds).
# Asserts only what must hold whatever the speed: every agent subscribed, both rounds ended
# "done" with every agent waited for, each wrote changed LFT blocks but not more than the
# fabric has, and the JSON carries four phase durations per round.  The figures are not judged.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm python3
out=$(SARNUE_BIN=$SARNUE_BIN SARNUE_PLUGIN_DIR=$SARNUE_PLUGIN_DIR \
	bash "$SARNUE_SRCDIR/test/bench/update_bench.sh" --quick --agents 3 --rounds 2 --json 2>/dev/null)
rc=$?
printf '%s\n' "$out"
t_expect "update_bench.sh --quick ran" test "$rc" = 0
# field EXPRESSION: evaluates a Python expression on the JSON object j.
field() {
	python3 -c 'import json, sys; j = json.loads(sys.stdin.read()); print(eval(sys.argv[1]))' "$1" <<<"$out" 2>/dev/null
}
t_expect "three agents subscribed" test "$(field 'j["agents"]')" = 3
t_expect "two rounds, both done" test "$(field '[r["outcome"] for r in j["rounds"]]')" = "['done', 'done']"
t_expect "every round waited for the three agents" test "$(field 'all(r["subscribers"] == 3 for r in j["rounds"])')" = True
t_expect "every round wrote changed blocks, fewer than the fabric has" \
	test "$(field 'all(0 < r["changed_blocks"] <= r["fabric_blocks"] for r in j["rounds"])')" = True
t_expect "four phase durations per round" \
	test "$(field 'all(len(r["phase_seconds"]) == 4 for r in j["rounds"])')" = True
t_done
