#!/bin/bash
# The fuzzer of every reader of outside input (test/fuzz/run.sh) as part of make check: built
# with libFuzzer, ASan and UBSan, seeded from its corpus, run for SARNUE_FUZZ_SECONDS (default
# 60) with a fixed seed so that a finding reproduces.  A crash, sanitizer report or hang fails
# the suite; the input is printed and kept for replay.  Skipped without clang.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
command -v clang >/dev/null || {
	echo "SKIP: needs clang with libFuzzer (clang libclang-rt-dev)"
	exit 77
}
work=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-fuzz.XXXXXXXX")
SARNUE_FUZZ_SEED=${SARNUE_FUZZ_SEED:-1} bash "$SARNUE_SRCDIR/test/fuzz/run.sh" \
	"${SARNUE_FUZZ_SECONDS:-60}" "$work"
rc=$?
case $rc in
0)
	t_ok "fuzzing for ${SARNUE_FUZZ_SECONDS:-60} s: no findings"
	rm -rf -- "$work"
	;;
1)
	for f in "$work"/crash-* "$work"/timeout-* "$work"/oom-* "$work"/leak-*; do
		[[ -e $f ]] || continue
		echo "finding $f (first byte picks the reader, see enum kind in fuzz_inputs.c):"
		od -A d -c "$f" | head -n 20
	done
	t_fail "fuzzing found an input that fails; kept in $work, replay: $work/fuzz_inputs FILE"
	;;
*)
	t_fail "the fuzz harness did not build or start (exit $rc); see above"
	;;
esac
t_done
