#!/bin/bash
# The bash completion of sarnue, sarnue-filterd and sarnue-agent (dist/bash-completion/sarnue),
# loaded under bash-completion: it offers every command of `sarnue --help`, every option each
# program's --help lists (so an option cannot be added without its completion), gen's
# topologies, route's engines and -O keys, ctl's commands, and file or directory names where
# an option or argument is a file or a directory.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
bc=/usr/share/bash-completion/bash_completion
[[ -r $bc ]] || { echo "SKIP: bash-completion not installed"; exit 77; }
bindir=${SARNUE_BIN%/*}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-bashcomp.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# bash-completion expects an interactive-like shell: no nounset while it runs.
set +u
# shellcheck source=/dev/null
. "$bc"
# shellcheck source=/dev/null
. "$SARNUE_SRCDIR/dist/bash-completion/sarnue"

# comp WORD...: COMPREPLY for the command line WORD... (the last word is being completed),
# one candidate per line in $tmp/reply, run in $tmp/files (a file, a net file, a directory).
comp() {
	local fn
	fn=$(complete -p "$1" 2>/dev/null | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMP_LINE="$*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	: >"$tmp/reply"
	[[ -n $fn ]] && (cd "$tmp/files" && "$fn" "$1" "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}" &&
		((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}") >"$tmp/reply" 2>/dev/null
	sort -o "$tmp/reply" "$tmp/reply"
}

# expect_reply WHAT EXPECTED WORD...: the candidates are exactly EXPECTED (space separated).
expect_reply() {
	local what=$1 want
	want=$(tr ' ' '\n' <<<"$2" | grep -v '^$' | sort | tr '\n' ' ')
	shift 2
	comp "$@"
	local got
	got=$(tr '\n' ' ' <"$tmp/reply")
	t_expect "$what (got: ${got:-nothing})" test "$got" = "$want"
}

# expect_offers WHAT LIST WORD...: every word of LIST is among the candidates.
expect_offers() {
	local what=$1 list=$2 w missing=
	shift 2
	comp "$@"
	for w in $list; do
		grep -qxF -- "$w" "$tmp/reply" || missing="$missing $w"
	done
	t_expect "$what${missing:+ (missing:$missing)}" test -z "$missing"
}

# help_options: the options a help text on stdin lists, as test/integration/man_pages.sh
# reads them (those of its SYNOPSIS and those its option lines start with), but an option
# line must look like one: the option followed by a metavariable, a list of values, a comma
# or the column of its text; so a quoted command line of another tool does not count.
help_options() {
	local help
	help=$(cat)
	{
		sed -n '/^SYNOPSIS$/,/^[A-Z]/p' <<<"$help" | grep -oE -- '(^|[ [|])--?[A-Za-z0-9][A-Za-z0-9-]*'
		grep -E '^ +-' <<<"$help" |
			grep -oE '^ +(-[A-Za-z0-9]( [A-Z][A-Z0-9_]*)?, +)*--?[A-Za-z0-9][A-Za-z0-9-]*( [A-Z]|  |$|=| [a-z0-9-]+\||, )'
	} | grep -oE -- '(^|[ ,[|])--?[A-Za-z0-9][A-Za-z0-9-]*' | sed 's/^[ ,[|]//' | sort -u
}

mkdir -p "$tmp/files/dumps"
: >"$tmp/files/fabric.net"
: >"$tmp/files/jobs.map"

for prog in sarnue sarnue-filterd sarnue-agent; do
	t_expect "$prog has a completion function" test -n "$(complete -p "$prog" 2>/dev/null)"
done

# Nothing the programs list can be missing.
cmds=$("$SARNUE_BIN" --help | sed -n '/^COMMANDS$/,/^[A-Z]/p' | grep -oE '^  [a-z][a-z-]*' | tr -d ' ')
t_expect "sarnue --help lists commands" test -n "$cmds"
expect_offers "sarnue offers every command of sarnue --help" "$cmds" sarnue ''
expect_offers "sarnue - offers every option of sarnue --help" \
	"$("$SARNUE_BIN" --help | help_options)" sarnue -
for cmd in $cmds; do
	[[ $cmd == help || $cmd == version ]] && continue
	opts=$("$SARNUE_BIN" help "$cmd" | help_options)
	t_expect "sarnue help $cmd lists options" test -n "$opts"
	expect_offers "sarnue $cmd - offers every option of sarnue help $cmd" "$opts" sarnue "$cmd" -
done
for prog in sarnue-filterd sarnue-agent; do
	opts=$("$bindir/$prog" --help | help_options)
	t_expect "$prog --help lists options" test -n "$opts"
	expect_offers "$prog - offers every option of $prog --help" "$opts" "$prog" -
done
topos=$("$SARNUE_BIN" gen --help | sed -n '/^SYNOPSIS$/,/^[A-Z]/p' |
	grep -oE '^ +sarnue gen [a-z0-9|-]+' | awk '{ print $3 }' | tr '|' '\n')
t_expect "sarnue gen --help lists topologies" test -n "$topos"
expect_offers "sarnue gen offers every topology of its SYNOPSIS" "$topos" sarnue gen ''
ctlcmds=$("$SARNUE_BIN" ctl --help | sed -n '/^COMMANDS$/,/^[A-Z]/p' | grep -oE '^    [a-z]+' | tr -d ' ')
t_expect "sarnue ctl --help lists commands" test -n "$ctlcmds"
expect_offers "sarnue ctl offers every command of sarnue ctl --help" "$ctlcmds" sarnue ctl ''
keys=$("$SARNUE_BIN" route --help | grep -oE '^ {6}[a-z_]+=' | tr -d ' ')
t_expect "sarnue route --help lists -O keys" test -n "$keys"
expect_offers "sarnue route -O offers every key of route --help" "$keys" sarnue route -O ''
engines=$("$SARNUE_BIN" route --help | grep -E '^ +-e, --engine' | grep -oE 'sar-[a-z]+')
t_expect "sarnue route --help names the engines" test -n "$engines"
expect_reply "sarnue route -e offers the engines of route --help" "$engines" sarnue route -e ''

# A few cases word by word.
expect_reply "sarnue ro completes to route" "route" sarnue ro
expect_reply "sarnue route --engine sar-d completes the two sar-d engines" \
	"sar-dfsssp sar-dmodk" sarnue route --engine sar-d
expect_reply "sarnue gen fattree2 --lea completes --leaves" "--leaves" sarnue gen fattree2 --lea
expect_reply "sarnue gen torus --dims offers no file names" "" sarnue gen torus --dims ''
expect_reply "sarnue route NETFILE completes file names" "dumps fabric.net jobs.map" sarnue route ''
expect_reply "sarnue route -o completes directories only" "dumps" sarnue route -o ''
expect_reply "sarnue check --dump-dir completes directories only" "dumps" sarnue check --dump-dir ''
expect_reply "sarnue check --subnet completes file names" "dumps fabric.net jobs.map" \
	sarnue check --subnet ''
expect_reply "sarnue ctl -s PATH then offers ctl's commands again" "$ctlcmds" \
	sarnue ctl -s /run/sarnue/ctl.sock ''
expect_reply "sarnue ctl jobs completes file names" "dumps fabric.net jobs.map" sarnue ctl jobs ''
expect_reply "sarnue ctl status takes nothing more" "" sarnue ctl status ''
expect_reply "sarnue topo-order --format offers the formats" \
	"hostfile lines slurm-arbitrary topology-conf" sarnue topo-order --format ''
expect_reply "sarnue help offers the commands" "check ctl gen route topo-order trace" sarnue help ''
expect_reply "sarnue-filterd -f completes file names (the fabric)" "dumps fabric.net jobs.map" \
	sarnue-filterd -f ''
expect_reply "sarnue-filterd --squeue-format offers its values" "auto json text" \
	sarnue-filterd --squeue-format ''
expect_reply "sarnue-agent -j completes file names (the status file)" "dumps fabric.net jobs.map" \
	sarnue-agent -j ''
expect_reply "sarnue-agent -f (--foreground) is followed by options, not a file" "" sarnue-agent -f ''
set -u
t_done
