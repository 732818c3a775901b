#!/bin/bash
# The layout's rules, as doc/architecture.md states them, checked on every source file:
#   - only plugin/ includes OpenSM's headers (opensm/, complib/, iba/, vendor/);
#   - each folder includes only the folders below it (lib < fabric < check < engines < programs);
#   - an engine's folder is its own: engines/X/X.h is its public header, every other file of
#     engines/X/ is private to it, and no engine includes another engine's files;
#   - includes of the project's headers name their folder ("engines/nue/nue.h");
#   - no C file, of the product or of the tests, is longer than 1,200 lines.
# A folder the rules do not know fails too: a new folder gets its rule here and in the document.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
cd -- "$SARNUE_SRCDIR" || exit 99

# The folders each area may include from, besides its own; "engine-api" stands for the shared
# engine headers (engines/*.h) and each engine's public header (engines/X/X.h).
allowed_for() {
	case $1 in
	lib) echo "" ;;
	fabric) echo "lib" ;;
	check) echo "lib fabric" ;;
	engines) echo "lib fabric check engine-api" ;;
	engines/*) echo "lib fabric check engines-common" ;;
	update) echo "lib fabric" ;;
	plugin) echo "lib fabric check engine-api update" ;;
	client) echo "update" ;;
	agent) echo "lib client-api" ;;
	filterd) echo "lib fabric check engine-api" ;;
	cli) echo "lib fabric check engine-api" ;;
	*) return 1 ;;
	esac
}

# area FILE: lib, fabric, ..., engines (the shared files) or engines/X (one engine's files).
area() {
	case $1 in
	engines/*/*) echo "${1%/*}" ;;
	*/*) echo "${1%%/*}" ;;
	*) echo "" ;;
	esac
}

# include_allowed FROM-AREA HEADER: whether a file of FROM-AREA may include HEADER.
include_allowed() {
	local from=$1 hdr=$2 to a
	to=$(area "$hdr")
	[[ $to == "$from" ]] && return 0
	for a in $(allowed_for "$from"); do
		case $a in
		engine-api)
			[[ $hdr == engines/*.h && $hdr != engines/*/* ]] && return 0
			[[ $hdr =~ ^engines/([a-z0-9_]+)/([a-z0-9_]+)\.h$ ]] &&
				[[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] && return 0
			;;
		engines-common) [[ $hdr == engines/*.h && $hdr != engines/*/* ]] && return 0 ;;
		client-api) [[ $hdr == client/sarnue-client.h ]] && return 0 ;;
		*) [[ $to == "$a" ]] && return 0 ;;
		esac
	done
	return 1
}

opensm_re='^#[[:space:]]*include[[:space:]]*<(infiniband/)?(opensm|complib|iba|vendor)/'
files=$(find lib fabric check engines update plugin client agent filterd cli \
	-name '*.[ch]' -type f 2>/dev/null | sort)
[[ -n $files ]] || { t_fail "no source files found under $SARNUE_SRCDIR"; t_done; }
bad_area=0 bad_include=0 bad_opensm=0 bad_size=0 includes=0
for f in $files; do
	from=$(area "$f")
	if ! allowed_for "$from" >/dev/null; then
		t_fail "$f: the folder $from has no rule (test/integration/layout_rules.sh, doc/architecture.md)"
		bad_area=$((bad_area + 1))
		continue
	fi
	if [[ $from != plugin ]] && grep -En "$opensm_re" "$f" >/dev/null; then
		t_fail "$f includes an OpenSM header: only plugin/ may ($(grep -En "$opensm_re" "$f" | head -n 1))"
		bad_opensm=$((bad_opensm + 1))
	fi
	while IFS=: read -r line hdr; do
		includes=$((includes + 1))
		if [[ $hdr != */* ]]; then
			t_fail "$f:$line: #include \"$hdr\" does not name its folder"
			bad_include=$((bad_include + 1))
		elif [[ ! -f $hdr ]]; then
			t_fail "$f:$line: #include \"$hdr\": no such header"
			bad_include=$((bad_include + 1))
		elif ! include_allowed "$from" "$hdr"; then
			t_fail "$f:$line: $from/ may not include $hdr"
			bad_include=$((bad_include + 1))
		fi
	done < <(grep -n '^#[[:space:]]*include[[:space:]]*"' "$f" |
		sed 's/^\([0-9]*\):#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1:\2/')
	if [[ $f == *.c ]] && (($(wc -l <"$f") > 1200)); then
		t_fail "$f has $(wc -l <"$f") lines, more than 1,200"
		bad_size=$((bad_size + 1))
	fi
done
# The tests' C files are held to the same length.
for f in $(find test -name '*.c' -type f | sort); do
	if (($(wc -l <"$f") > 1200)); then
		t_fail "$f has $(wc -l <"$f") lines, more than 1,200"
		bad_size=$((bad_size + 1))
	fi
done
n=$(wc -w <<<"$files")
((bad_area == 0)) && t_ok "every one of $n source files lies in a folder with a rule"
((bad_opensm == 0)) && t_ok "no OpenSM header outside plugin/"
((bad_include == 0)) && t_ok "all $includes project includes name their folder and follow the rules"
((bad_size == 0)) && t_ok "no C file over 1,200 lines"

# The checks themselves must be able to fail: a made-up file in each forbidden direction.
include_allowed fabric "engines/nue/nue.h" && t_fail "rule check: fabric/ may include an engine"
include_allowed engines/dfsssp "engines/nue/nue.h" && t_fail "rule check: one engine may include another"
include_allowed cli "engines/nue/nue_private.h" && t_fail "rule check: a private engine header is public"
include_allowed lib "fabric/fabric.h" && t_fail "rule check: lib/ may include fabric/"
include_allowed engines "engines/nue/nue.h" || t_fail "rule check: the dispatcher may not include nue.h"
include_allowed engines/nue "engines/cdg.h" || t_fail "rule check: Nue may not include the shared CDG"
t_ok "the rules refuse an engine including another engine, private headers and upward includes"
t_done
