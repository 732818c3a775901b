#!/bin/bash
# The demo (sim/sarnue-demo, what `./quickstart demo` runs): every row of both tables is
# there; sarnue's rows come from OpenSM routing with sarnue's engine and verified with no
# unreachable pair and no credit loop by sarnue check and ibdmchk; the built-in rows name the
# engine OpenSM itself logged as configuring the switches, run by run, and a fall-back says
# why; the SAR ratio is the ratio of the two runs' maximum loads, and the job map lowers the
# maximum; the screen fits in 30 lines; and when sarnue's engines cannot run (no plugin to
# load) the demo exits non-zero and says why.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless ibsim opensm ibdmchk python3
demo=$(dirname -- "$SARNUE_BIN")/sim/sarnue-demo
[[ -x $demo ]] || { t_fail "$demo built"; t_done; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-demo-test.XXXXXXXX")
kept=""
trap 'rm -rf -- "$tmp" ${kept:+"$kept"}' EXIT
export LD_LIBRARY_PATH=$SARNUE_PLUGIN_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# --json, keeping the temp dir for the OpenSM logs.
rc=0
"$demo" --json --keep >"$tmp/out.json" 2>"$tmp/err" || rc=$?
kept=$(sed -n 's/^sim: kept temp dir: //p' "$tmp/err" | tail -n 1)
t_expect "--json: exit status 0 (was $rc: $(head -c 300 "$tmp/out.json"))" test "$rc" = 0
t_expect "--keep: the temp dir is kept ($kept)" test -n "$kept" -a -d "$kept"

# Every OpenSM run, in order: the engine asked for (opensm.conf is rewritten per run, so the
# log of run N is judged against the row N) and the engine OpenSM logged as configuring the
# switches.
for log in "$kept"/opensm-*-once.log; do
	n=${log##*/opensm-}
	printf '%s %s\n' "${n%%-*}" "$(awk '/ tables configured on all switches/ {
		for (i = 1; i < NF; i++) if ($(i + 1) == "tables") e = $i } END { print e }' "$log")"
done | sort -n | cut -d ' ' -f 2 >"$tmp/logged"

python3 - "$tmp/out.json" "$tmp/logged" >"$tmp/py.out" 2>&1 <<'PY'
import json, sys

def check(what, cond):
    print(("ok: " if cond else "FAIL: ") + what)

d = json.load(open(sys.argv[1]))
logged = open(sys.argv[2]).read().split()
check("ok is true and failed_why empty", d["ok"] is True and d["failed_why"] == "")
print("# the demo took %s s" % d["seconds"])
torus = {r["engine"]: r for r in d["torus"]["rows"]}
jobs = {r["engine"]: r for r in d["jobs"]["rows"]}
check("torus rows: minhop, dfsssp, nue, sar-nue", list(torus) == ["minhop", "dfsssp", "nue", "sar-nue"])
check("job rows: dfsssp, sar-dfsssp", list(jobs) == ["dfsssp", "sar-dfsssp"])
rows = d["torus"]["rows"] + d["jobs"]["rows"]
check("one OpenSM run per row (%d logs, %d rows)" % (len(logged), len(rows)), len(logged) == len(rows))
for r, eng in zip(rows, logged):
    check("%s: 'used' (%s) is the engine OpenSM logged (%s)" % (r["engine"], r["used"], eng),
          r["used"] == eng)
for name, r in torus.items():
    check("torus %s: figures are numbers" % name,
          all(isinstance(r[k], (int, float)) for k in
              ("unreachable", "credit_loops", "max_efi", "route_seconds")))
    check("torus %s: ibdmchk gave a verdict (%s)" % (name, r["ibdmchk"]),
          r["ibdmchk"] in ("ok", "loop", "switch loop"))
    check("torus %s: fell_back iff another engine was used, and then says why" % name,
          r["fell_back"] == (r["used"] != name) and (r["why"] != "") == r["fell_back"])
s = torus["sar-nue"]
check("sar-nue: used by OpenSM, 0 unreachable, 0 credit loops, ibdmchk ok",
      s["used"] == "sar-nue" and s["unreachable"] == 0 and s["credit_loops"] == 0
      and s["ibdmchk"] == "ok")
for name in ("minhop", "dfsssp", "nue"):
    r = torus[name]
    check("%s: its credit loop is reported by both checkers (%s, %s)" % (name, r["credit_loops"], r["ibdmchk"]),
          (r["credit_loops"] > 0) == (r["ibdmchk"] != "ok"))
j = jobs["sar-dfsssp"]
check("sar-dfsssp: used, verified (0 unreachable, 0 credit loops, ibdmchk ok)",
      j["used"] == "sar-dfsssp" and j["verified"] == "yes" and j["unreachable"] == 0
      and j["credit_loops"] == 0 and j["ibdmchk"] == "ok")
b = jobs["dfsssp"]
check("dfsssp: OpenSM's own dfsssp routed the fat tree", b["used"] == "dfsssp")
for r in (b, j):
    check("%s: job loads are positive numbers" % r["engine"],
          all(isinstance(r[k], (int, float)) and r[k] > 0 for k in
              ("max_load", "mean_load", "mean_job_max_load", "mean_job_channels")))
ratio = round(j["max_load"] / b["max_load"], 2)
check("max_load_ratio %s = %s / %s" % (d["jobs"]["max_load_ratio"], j["max_load"], b["max_load"]),
      abs(d["jobs"]["max_load_ratio"] - ratio) < 0.006)
check("the job map lowers the busiest link's job load (%s < %s)" % (j["max_load"], b["max_load"]),
      j["max_load"] < b["max_load"])
PY
cat "$tmp/py.out"
T_CHECKS=$((T_CHECKS + $(grep -cE '^(ok|FAIL): ' "$tmp/py.out")))
T_FAILS=$((T_FAILS + $(grep -c '^FAIL: ' "$tmp/py.out")))
grep -qE '^(ok|FAIL): ' "$tmp/py.out" || t_fail "the JSON was read: $(tail -n 3 "$tmp/py.out")"

# The screen: the tables' rows and conclusions, the verdict, at most 30 lines.
rc=0
"$demo" >"$tmp/out.txt" 2>"$tmp/err.txt" || rc=$?
cat "$tmp/out.txt"
t_expect "text: exit status 0 (was $rc)" test "$rc" = 0
for row in '^ +minhop +minhop ' '^ +dfsssp +[a-z-]+' '^ +nue +nue ' \
	'^ +sar-nue +sar-nue +0 +0 +ok ' '^ +dfsssp +dfsssp +[0-9]+ ' \
	'^ +sar-dfsssp +sar-dfsssp +[0-9]+ .* yes ' '^ +=> sar-nue: no credit loop' \
	'^ +=> with the job map .*ratio [0-9.]+$' '^verdict: OK'; do
	t_expect "text: a line /$row/" grep -qE -- "$row" "$tmp/out.txt"
done
lines=$(wc -l <"$tmp/out.txt")
t_expect "text: one screen ($lines lines <= 30)" test "$lines" -le 30
t_expect "text: nothing on stderr" test ! -s "$tmp/err.txt"

# Without the plugin, sarnue's engines cannot run: exit 1 and the reason.
mkdir -p "$tmp/noplugin"
rc=0
SARNUE_PLUGIN_DIR=$tmp/noplugin LD_LIBRARY_PATH=$tmp/noplugin "$demo" >"$tmp/fail.txt" 2>&1 || rc=$?
t_expect "no plugin: exit status 1 (was $rc)" test "$rc" = 1
t_expect "no plugin: the verdict says why ($(grep verdict "$tmp/fail.txt"))" \
	grep -qE '^verdict: FAILED: sar-nue: .+' "$tmp/fail.txt"
t_done
