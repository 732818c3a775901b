#!/bin/bash
# The C unit tests once more, built with AddressSanitizer and UndefinedBehaviorSanitizer.
# `make check` runs them under valgrind, which sees heap errors and leaks but not an overrun of
# an array on the stack, nor undefined behaviour such as a NULL pointer handed to memcpy.  Then
# the offline tools built the same way generate, route (every engine; 1, 4 and 8 VLs; LMC 1
# with two planes; a job map) and check a few fabrics.  The distributed files (make distdir)
# are configured and built in a temp dir: the tree under test is left alone.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless gcc make

# The make running this test passes its TESTS down in MAKEFLAGS: the inner builds must not see
# it, or they would run this test again inside themselves.
unset MAKEFLAGS MFLAGS MAKEOVERRIDES MAKELEVEL
if [[ -n ${SARNUE_SANITIZER_RUN:-} ]]; then
	echo "SKIP: already inside a sanitizer build"
	exit 77
fi
export SARNUE_SANITIZER_RUN=1

SAN_CFLAGS="-g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
SAN_LDFLAGS="-fsanitize=address,undefined"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-san.XXXXXX") || { t_fail "temp dir"; t_done; exit 1; }
if [[ ${SARNUE_KEEP_TMP:-0} == 1 ]]; then
	echo "keeping $tmp"
else
	trap 'rm -rf -- "$tmp"' EXIT
fi

echo 'int main(void) { return 0; }' >"$tmp/probe.c"
# shellcheck disable=SC2086 # the flags are words
if ! gcc $SAN_CFLAGS $SAN_LDFLAGS "$tmp/probe.c" -o "$tmp/probe" 2>/dev/null || ! "$tmp/probe"; then
	echo "SKIP: gcc cannot build and run with -fsanitize=address,undefined"
	exit 77
fi

builddir=$(dirname -- "$SARNUE_BIN")
if ! make -s -C "$builddir" distdir distdir="$tmp/src" >"$tmp/distdir.log" 2>&1; then
	t_fail "make distdir"
	cat "$tmp/distdir.log"
	t_done
	exit 1
fi
cd "$tmp/src" || exit 1
if ! ./configure -q --enable-asserts CFLAGS="$SAN_CFLAGS" LDFLAGS="$SAN_LDFLAGS" >configure.log 2>&1; then
	t_fail "configure with sanitizers"
	tail -n 20 configure.log config.log
	t_done
	exit 1
fi

units=()
for f in test/unit/test_*.c; do
	units+=("${f%.c}")
done
t_expect "found the unit tests (${#units[@]})" test "${#units[@]}" -ge 10
# VALGRIND empty: the sanitizers and valgrind do not run together.
make -s -j"$(nproc)" check TESTS="${units[*]}" VALGRIND= >check.log 2>&1
for u in "${units[@]}"; do
	if grep -q "^PASS: $u\$" check.log; then
		t_ok "$u under ASan and UBSan"
	else
		t_fail "$u under ASan and UBSan"
		tail -n 40 "$u.log" 2>/dev/null || tail -n 40 check.log
	fi
done

# The tools: every run must end without a sanitizer report, and the routings must verify.
san=$tmp/src/sarnue
clean_run() { # NAME CMD...: runs CMD, fails on a sanitizer report or a non-zero exit
	local name=$1
	shift
	if "$@" >"$tmp/run.out" 2>&1 && ! grep -q 'Sanitizer\|runtime error' "$tmp/run.out"; then
		return 0
	fi
	t_fail "$name"
	tail -n 30 "$tmp/run.out"
	return 1
}
nets=()
for g in "torus --dims 4x4x3 --hosts-per-switch 2 --remove-links 5% --seed 3" \
	"random --switches 40 --degree 5 --hosts-per-switch 3 --seed 2" \
	"dragonfly --a 4 --p 2 --h 2" "fattree2 --leaves 6 --spines 3 --hosts-per-leaf 4"; do
	net=$tmp/${g%% *}.net
	# shellcheck disable=SC2086 # the generator arguments are words
	clean_run "sarnue gen $g" "$san" gen $g -o "$net" && nets+=("$net")
done
nets+=("$SARNUE_SRCDIR/test/lib/nets/ring5.net")
printf 'node0001 1\nnode0002 1\nnode0010 1\nnode0011 2\nnode0020 2\nghost 3\n' >"$tmp/jobs.map"
runs=0
for net in "${nets[@]}"; do
	for engine in sar-updn sar-nue sar-dfsssp; do
		for args in "-O nue_vls=1" "-O nue_vls=4 -O job_map=$tmp/jobs.map" "-O nue_vls=8" \
			"--lmc 1 -O planes=on -O nue_vls=2"; do
			lmc=0
			[[ $args == *--lmc* ]] && lmc=1
			rm -rf -- "$tmp/out"
			# shellcheck disable=SC2086
			clean_run "route -e $engine $args $(basename -- "$net")" \
				"$san" route -e "$engine" $args "$net" -o "$tmp/out" || continue
			clean_run "check of $engine $args $(basename -- "$net")" "$san" check \
				--dump-dir "$tmp/out" --lmc "$lmc" --job-map "$tmp/jobs.map" --patterns \
				--shifts 8 --permutations 4 --bisections 4 --svg "$tmp/out/loads.svg" --json &&
				grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' "$tmp/run.out" &&
				runs=$((runs + 1))
		done
	done
done
t_expect "every offline routing ran clean and verified ($runs of $((${#nets[@]} * 12)))" \
	test "$runs" -eq $((${#nets[@]} * 12))
t_done
