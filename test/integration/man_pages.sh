#!/bin/bash
# The manual pages in doc/man: each renders with groff's man macros without a single warning,
# and names every option its program's --help lists (and, for sarnue-route, every -O key), so
# a new option cannot reach --help without reaching its page.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless groff
bindir=${SARNUE_BIN%/*}
man=$SARNUE_SRCDIR/doc/man
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-man.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# help_options: the options of a help text on stdin, one per line: those of its SYNOPSIS and
# those its option lines start with.  Options of other tools, named in the prose, are on
# neither.
help_options() {
	local help
	help=$(cat)
	{
		sed -n '/^SYNOPSIS$/,/^[A-Z]/p' <<<"$help" | grep -oE -- '(^|[ [|])--?[A-Za-z0-9][A-Za-z0-9-]*'
		grep -E '^ +-' <<<"$help" |
			grep -oE '^ +(-[A-Za-z0-9]( [A-Z][A-Z0-9_]*)?, +)*--?[A-Za-z0-9][A-Za-z0-9-]*'
	} | grep -oE -- '--?[A-Za-z0-9][A-Za-z0-9-]*' | sort -u
}

# page_text PAGE: the page's source with roff escapes undone, for plain grep.
page_text() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/\\e/\\/g' "$1"
}

# check_page PAGE HELP-COMMAND...: renders PAGE and looks for the options of the help.
check_page() {
	local page=$1 opt missing=
	shift
	t_expect "${page##*/}: present" test -s "$page" || return
	groff -man -Tutf8 -ww -z "$page" >"$tmp/warn" 2>&1
	t_expect "${page##*/}: groff -man -ww renders it without warnings$(head -c 300 "$tmp/warn")" \
		test ! -s "$tmp/warn"
	if command -v man >/dev/null; then
		MANWIDTH=80 man --warnings -l "$page" >/dev/null 2>"$tmp/warn"
		t_expect "${page##*/}: man -l renders it without warnings$(head -c 300 "$tmp/warn")" \
			test ! -s "$tmp/warn"
	fi
	"$@" --help >"$tmp/help" || t_fail "$* --help"
	page_text "$page" >"$tmp/page"
	for opt in $(help_options <"$tmp/help"); do
		grep -qE -- "(^|[^A-Za-z0-9-])$opt([^A-Za-z0-9-]|\$)" "$tmp/page" ||
			missing="$missing $opt"
	done
	t_expect "${page##*/}: names every option of '$* --help'${missing:+ (missing:$missing)}" \
		test -z "$missing"
}

check_page "$man/sarnue.1" "$SARNUE_BIN"
for cmd in gen route check topo-order trace ctl; do
	check_page "$man/sarnue-$cmd.1" "$SARNUE_BIN" "$cmd"
done
check_page "$man/sarnue-filterd.8" "$bindir/sarnue-filterd"
check_page "$man/sarnue-agent.8" "$bindir/sarnue-agent"
check_page "$man/sarnue-demo.1" "$bindir/sim/sarnue-demo"

# The engine options sarnue route -O and the plugin's event_plugin_options take: in both pages.
for page in sarnue-route.1 sarnue-plugin.5; do
	missing=
	page_text "$man/$page" >"$tmp/page"
	for key in $("$SARNUE_BIN" route --help | grep -oE '^ {6}[a-z_]+=' | tr -d ' ='); do
		grep -q "^$key=" "$tmp/page" || missing="$missing $key"
	done
	t_expect "$page names every -O key${missing:+ (missing:$missing)}" test -z "$missing"
done
# The pages without a program's --help: they render, and the client page names every function
# of the header.
for page in sarnue-plugin.5 libsarnue-client.3; do
	t_expect "$page: present" test -s "$man/$page"
	groff -man -Tutf8 -ww -z "$man/$page" >"$tmp/warn" 2>&1
	t_expect "$page: groff -man -ww renders it without warnings$(head -c 300 "$tmp/warn")" \
		test ! -s "$tmp/warn"
done
missing=
page_text "$man/libsarnue-client.3" >"$tmp/page"
for fn in $(grep -oE '^[a-z].*[ *](sarnue_[a-z_]+)\(' "$SARNUE_SRCDIR/client/sarnue-client.h" |
	grep -oE 'sarnue_[a-z_]+\($' | tr -d '('); do
	grep -q "$fn" "$tmp/page" || missing="$missing $fn"
done
t_expect "libsarnue-client.3 names every function of sarnue-client.h${missing:+ (missing:$missing)}" \
	test -z "$missing"

# Every page is installed (Makefile.am) and every unit names an installed page.
for page in "$man"/*.[1358]; do
	t_expect "${page##*/} is in dist_man_MANS" \
		grep -qE "doc/man/${page##*/}( |\$)" "$SARNUE_SRCDIR/Makefile.am"
done
for unit in "$SARNUE_SRCDIR"/dist/*.service.in; do
	doc=$(grep -m 1 -oE '^Documentation=man:sarnue[a-z-]*\([18]\)' "$unit" |
		sed -E 's/^Documentation=man:(.*)\((.)\)$/\1.\2/')
	t_expect "${unit##*/}: Documentation= names its page ($doc)" test -n "$doc" -a -s "$man/$doc"
done
t_done
