#!/bin/bash
# What `make install` puts where: the command in bin/, the daemons in sbin/, the test harness
# out of PATH (pkglibexecdir), the man pages, sysusers.d and tmpfiles.d; the installed units
# start the daemons from sbin/, pass `systemd-analyze verify` and rate below 5 (OK) in
# `systemd-analyze security`; bash completion is where bash-completion loads it, and a client
# program builds against the installed libsarnue-client with nothing but
# `pkg-config --cflags --libs sarnue-client`.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
t_skip_unless make
builddir=${SARNUE_BIN%/*}
[[ -f $builddir/Makefile ]] || { echo "SKIP: no Makefile in $builddir"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-install.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

make -s -C "$builddir" install DESTDIR="$tmp/root" >"$tmp/log" 2>&1 ||
	{ t_fail "make install DESTDIR=...: $(tail -c 400 "$tmp/log")"; t_done; exit 1; }
prefix=$(sed -n 's/^prefix = //p' "$builddir/Makefile")
root=$tmp/root$prefix

t_expect "bin/ holds only sarnue" test "$(ls "$root/bin")" = sarnue
t_expect "sbin/ holds the daemons" test "$(ls "$root/sbin" | tr '\n' ' ')" = "sarnue-agent sarnue-filterd "
t_expect "sarnue-sim is in pkglibexecdir" test -x "$root/libexec/sarnue/sarnue-sim"
t_expect "sarnue-demo is in pkglibexecdir" test -x "$root/libexec/sarnue/sarnue-demo"
t_expect "sim.sh is in pkgdatadir" test -f "$root/share/sarnue/sim.sh"
t_expect "the guide and its documents are in docdir" \
	test -s "$root/share/doc/sarnue/README.md" -a -s "$root/share/doc/sarnue/multicast.md" \
	-a -s "$root/share/doc/sarnue/nue.md"
for page in man1/sarnue.1 man1/sarnue-gen.1 man1/sarnue-route.1 man1/sarnue-check.1 \
	man1/sarnue-topo-order.1 man1/sarnue-ctl.1 man1/sarnue-demo.1 man8/sarnue-filterd.8 man8/sarnue-agent.8; do
	t_expect "man page $page installed" test -s "$root/share/man/$page"
done
t_grep "sysusers.d/sarnue.conf creates the user sarnue" '^u sarnue ' "$root/lib/sysusers.d/sarnue.conf"
t_grep "tmpfiles.d/sarnue.conf creates /run/sarnue" '^d /run/sarnue ' "$root/lib/tmpfiles.d/sarnue.conf"

compdir=$(sed -n 's/^bashcompdir = //p' "$builddir/Makefile" | sed "s|\${datarootdir}|$prefix/share|")
t_expect "bash completion of sarnue in $compdir" test -s "$tmp/root$compdir/sarnue"
for prog in sarnue-filterd sarnue-agent; do
	t_expect "bash completion of $prog is a link to sarnue's" \
		test "$(readlink "$tmp/root$compdir/$prog")" = sarnue
done

# The client library through pkg-config alone: the .pc's prefix is moved under DESTDIR by
# PKG_CONFIG_SYSROOT_DIR, as if installed there.
pc=$root/lib/pkgconfig/sarnue-client.pc
t_grep "sarnue-client.pc is installed with the package version" \
	"^Version: $(sed -n 's/^VERSION = //p' "$builddir/Makefile")\$" "$pc"
if command -v pkg-config >/dev/null && command -v cc >/dev/null; then
	cat >"$tmp/client.c" <<'EOF_C'
#include <sarnue-client.h>
#include <stdio.h>

int main(void)
{
	/* Linked, not called: a client needs a umad port. */
	void (*volatile get_stats)(const struct sarnue_client *, struct sarnue_client_stats *) =
		sarnue_client_get_stats;

	printf("%d\n", SARNUE_CLIENT_MAX_RANGES);
	return get_stats == NULL;
}
EOF_C
	flags=$(PKG_CONFIG_PATH=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$tmp/root \
		pkg-config --cflags --libs sarnue-client 2>"$tmp/pc.err")
	t_expect "pkg-config --cflags --libs sarnue-client: $flags$(head -c 200 "$tmp/pc.err")" \
		test -n "$flags"
	# shellcheck disable=SC2086
	cc -Wall -Werror -o "$tmp/client" "$tmp/client.c" $flags >"$tmp/cc.err" 2>&1
	t_expect "a client program compiles and links with those flags only$(head -c 300 "$tmp/cc.err")" \
		test -x "$tmp/client"
	t_expect "the client program runs against the installed library" \
		test "$(LD_LIBRARY_PATH=$root/lib "$tmp/client")" = \
		"$(sed -n 's/^#define SARNUE_CLIENT_MAX_RANGES //p' "$SARNUE_SRCDIR/client/sarnue-client.h")"
	t_expect "it resolves libsarnue-client from the install" \
		grep -q "$root/lib/libsarnue-client.so" <<<"$(LD_LIBRARY_PATH=$root/lib ldd "$tmp/client")"
fi

for unit in sarnue-filterd sarnue-agent; do
	file=$root/lib/systemd/system/$unit.service
	t_grep "$unit.service starts $prefix/sbin/$unit" "$prefix/sbin/$unit " "$file"
	t_grep "$unit.service: Documentation=man:$unit(8)" "^Documentation=man:$unit\\(8\\)" "$file"
	t_grep "$unit.service: after opensm.service" '^After=.*opensm\.service' "$file"
	t_grep "$unit.service: ReadWritePaths=-/run/sarnue" '^ReadWritePaths=-/run/sarnue$' "$file"
	command -v systemd-analyze >/dev/null || continue
	# verify resolves ExecStart= and man: pages on this host: point both at the DESTDIR copy.
	sed "s|$prefix/sbin/|$root/sbin/|g" "$file" >"$tmp/$unit.service"
	MANPATH=$root/share/man: systemd-analyze verify "$tmp/$unit.service" >"$tmp/verify" 2>&1
	t_expect "$unit.service: systemd-analyze verify is silent$(head -c 300 "$tmp/verify")" \
		test ! -s "$tmp/verify"
	score=$(systemd-analyze security --offline=true "$tmp/$unit.service" 2>/dev/null |
		sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
	t_expect "$unit.service: systemd-analyze security rates it below 5 (${score:-none})" \
		awk -v s="${score:-99}" 'BEGIN { exit !(s < 5) }'
done
t_done
