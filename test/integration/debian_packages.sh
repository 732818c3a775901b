#!/bin/bash
# The Debian packages (debian/): built with `dpkg-buildpackage -b` from a clean copy of the
# source, lintian without errors, installed with dpkg; then OpenSM under ibsim loads the
# installed plugin by "event_plugin_name sarnue" alone (no LD_LIBRARY_PATH) and routes, the
# installed sarnue checks its dumps, the service user and /run/sarnue exist, a client builds
# with pkg-config against libsarnue-client-dev, bash completion and the manual pages are found.
# Everything is purged at the end, also on failure, and the user and directories the packages
# made are removed, so the machine is left as it was.  Needs root; skipped otherwise.
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
((EUID == 0)) || { echo "SKIP: needs root (dpkg -i)"; exit 77; }
t_skip_unless dpkg-buildpackage dh lintian ibsim opensm
[[ -r /usr/share/perl5/Debian/Debhelper/Sequence/autoreconf.pm ]] ||
	{ echo "SKIP: debhelper without dh_autoreconf"; exit 77; }
packages=(sarnue opensm-plugin-sarnue sarnue-filterd sarnue-agent libsarnue-client0
	libsarnue-client-dev)
for p in "${packages[@]}"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		echo "SKIP: $p is installed already; the test would not leave the machine as it was"
		exit 77
	fi
done
# The plugin must come from the package, never from the build tree.
unset LD_LIBRARY_PATH SARNUE_PLUGIN_DIR
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-deb.XXXXXXXX")
had_user=0 had_run=0 had_state=0
getent passwd sarnue >/dev/null && had_user=1
[[ -e /run/sarnue ]] && had_run=1
[[ -e /var/lib/sarnue ]] && had_state=1
installed=0

# Purges what this test installed and what the packages made.  Each step may run again: a
# signal during the last call runs it once more from the trap, which then finishes the job.
cleanup_packages() {
	((installed)) || return 0
	dpkg -P "${packages[@]}" >"$tmp/purge.log" 2>&1 || cat "$tmp/purge.log"
	((had_user)) || ! getent passwd sarnue >/dev/null || userdel sarnue
	((had_user)) || ! getent group sarnue >/dev/null || groupdel sarnue 2>/dev/null
	((had_run)) || rmdir /run/sarnue 2>/dev/null
	((had_state)) || rmdir /var/lib/sarnue 2>/dev/null
	installed=0
}
trap 'cleanup_packages; rm -rf -- "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A clean copy of the sources: the files git tracks (as after `git clean -dfx`), else those
# of `make distdir`.
src=$tmp/build/sarnue
mkdir -p "$src"
if git -C "$SARNUE_SRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$SARNUE_SRCDIR" && git ls-files -z | tar -cf - --null --no-recursion -T -) |
		tar -xf - -C "$src"
else
	make -s -C "${SARNUE_BIN%/*}" distdir distdir="$src" >"$tmp/distdir.log" 2>&1
fi
t_expect "the source copy has debian/rules" test -x "$src/debian/rules"

start=$SECONDS
(cd "$src" && DEB_BUILD_OPTIONS="parallel=2 noautodbgsym" dpkg-buildpackage -b -us -uc) \
	>"$tmp/build.log" 2>&1
rc=$?
echo "dpkg-buildpackage: $((SECONDS - start)) s"
((rc == 0)) || tail -n 20 "$tmp/build.log"
t_expect "dpkg-buildpackage -b -us -uc succeeds" test "$rc" = 0
debs=()
for p in "${packages[@]}"; do
	f=("$tmp/build/${p}_"*.deb)
	t_expect "package $p was built" test -f "${f[0]}" && debs+=("${f[0]}")
done
if ((${#debs[@]} != ${#packages[@]})); then
	t_done
	exit 1
fi

lintian --fail-on error "$tmp/build/"*.changes >"$tmp/lintian.log" 2>&1
rc=$?
t_expect "lintian finds no error$(grep '^E:' "$tmp/lintian.log" | head -n 10)" test "$rc" = 0
echo "lintian: $(grep -c '^W:' "$tmp/lintian.log") warnings"
grep '^W:' "$tmp/lintian.log"

installed=1
dpkg -i "${debs[@]}" >"$tmp/install.log" 2>&1 || tail -n 15 "$tmp/install.log"
t_expect "dpkg -i installs all six packages" \
	test "$(dpkg-query -W -f='${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null |
		grep -c '^ii')" = "${#packages[@]}"

# Where things went.
plugin=/usr/lib/$multiarch/libsarnue.so
t_expect "opensm-plugin-sarnue holds $plugin" grep -qxF "$plugin" <(dpkg -L opensm-plugin-sarnue)
t_expect "the dynamic linker's cache lists libsarnue.so at $plugin" \
	grep -qE "^[[:space:]]*libsarnue\.so .*=> (/usr)?/lib/$multiarch/libsarnue\.so\$" <(ldconfig -p)
t_expect "sarnue is /usr/bin/sarnue" test -x /usr/bin/sarnue
t_expect "the daemons are in /usr/sbin" test -x /usr/sbin/sarnue-filterd -a -x /usr/sbin/sarnue-agent
t_expect "the service user sarnue exists" test -n "$(getent passwd sarnue)"
t_expect "/run/sarnue exists" test -d /run/sarnue
for unit in sarnue-filterd sarnue-agent; do
	t_expect "$unit.service is installed in /lib/systemd/system" \
		grep -qxF "/lib/systemd/system/$unit.service" <(dpkg -L "$unit")
	t_expect "$unit.service starts /usr/sbin/$unit" \
		grep -q "/usr/sbin/$unit " "/lib/systemd/system/$unit.service"
	if command -v systemctl >/dev/null; then
		state=$(systemctl is-enabled "$unit.service" 2>/dev/null)
		t_expect "$unit.service is not enabled by the package ($state)" test "$state" != enabled
	fi
done
t_expect "man finds sarnue(1) and sarnue-filterd(8)" \
	test -n "$(man -w sarnue 2>/dev/null)" -a -n "$(man -w 8 sarnue-filterd 2>/dev/null)"
t_expect "the operator's guide is in /usr/share/doc/sarnue" \
	test -e /usr/share/doc/sarnue/README.md -o -e /usr/share/doc/sarnue/README.md.gz
compdir=$(pkg-config --variable=completionsdir bash-completion 2>/dev/null)
compdir=${compdir:-/usr/share/bash-completion/completions}
t_expect "bash completion is in $compdir" test -s "$compdir/sarnue"
if [[ -r /usr/share/bash-completion/bash_completion ]]; then
	t_expect "bash-completion loads the completion of sarnue-filterd on demand" bash -c \
		'. /usr/share/bash-completion/bash_completion; __load_completion sarnue-filterd &&
		 complete -p sarnue-filterd | grep -q _sarnue_filterd'
fi

# A client program with the installed -dev package and pkg-config alone.
cat >"$tmp/client.c" <<'EOF'
#include <sarnue-client.h>
#include <stdio.h>

int main(void)
{
	void (*volatile get_stats)(const struct sarnue_client *, struct sarnue_client_stats *) =
		sarnue_client_get_stats;

	printf("%d\n", SARNUE_CLIENT_MAX_RANGES);
	return get_stats == NULL;
}
EOF
# shellcheck disable=SC2046
cc -Wall -Werror -o "$tmp/client" "$tmp/client.c" $(pkg-config --cflags --libs sarnue-client) \
	>"$tmp/cc.log" 2>&1
t_expect "a client builds with pkg-config --cflags --libs sarnue-client$(head -c 300 "$tmp/cc.log")" \
	test -x "$tmp/client"
t_expect "the client runs with the packaged libsarnue-client.so.0" \
	grep -qE "libsarnue-client\.so\.0 => (/usr)?/lib/$multiarch/" <(ldd "$tmp/client")

# OpenSM under ibsim with the installed plugin and the installed harness.
if [[ -r /usr/share/sarnue/sim.sh ]]; then
	# shellcheck source=/dev/null
	. /usr/share/sarnue/sim.sh
	sim_setup || exit 1
	# sim.sh's cleanup replaces this script's EXIT trap: it runs the same.
	# shellcheck disable=SC2016
	sim_at_exit 'cleanup_packages; rm -rf -- "$tmp"'
	/usr/bin/sarnue gen fattree2 --leaves 3 --spines 2 --hosts-per-leaf 2 -o "$SIM_TMP/ft.net" \
		2>/dev/null
	export SIM_PLUGIN=sarnue SIM_ROUTING_ENGINE=sar-updn
	if sim_start_ibsim "$SIM_TMP/ft.net" && sim_run_opensm_once; then
		t_grep "event_plugin_name sarnue in opensm.conf" '^event_plugin_name sarnue$' "$SIM_CONF"
		t_expect "OpenSM routed with sar-updn" test "$(sim_routing_engine_used)" = sar-updn
		t_grep "the installed plugin logged its routing" 'sarnue: sar-updn: routed' "$SIM_OPENSM_LOG"
		json=$(/usr/bin/sarnue check --dump-dir "$SIM_DUMP_DIR" --json)
		t_expect "/usr/bin/sarnue check verifies OpenSM's dumps" \
			grep -q '"unreachable": 0, "forwarding_loops": 0, "credit_loops": 0' <<<"$json"
		t_expect "/usr/bin/sarnue check saw pairs" grep -qv '"pairs": 0,' <<<"$json"
		sim_stop_ibsim
	else
		t_fail "ibsim and OpenSM with the installed plugin brought the subnet up"
	fi
	# The packaged demo driver finds the installed sarnue, harness and plugin by itself.
	text=$(env -u SARNUE_BIN -u SARNUE_SIM_LIB /usr/libexec/sarnue/sarnue-sim 2>"$tmp/sim.err")
	grep -q 'verdict: *OK' <<<"$text" || tail -n 10 "$tmp/sim.err"
	t_expect "the packaged sarnue-sim routes its demo fabric: verdict OK" \
		grep -q 'verdict: *OK' <<<"$text"
else
	t_fail "the harness is installed as /usr/share/sarnue/sim.sh"
fi

cleanup_packages
t_expect "dpkg -P removed every package" \
	test -z "$(dpkg-query -W -f='${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null | grep '^ii')"
t_expect "the plugin left the dynamic linker's cache" \
	test -z "$(ldconfig -p | grep -F libsarnue.so)"
t_expect "the user sarnue is as before" test "$(getent passwd sarnue >/dev/null && echo 1 || echo 0)" = "$had_user"
t_expect "/run/sarnue is as before" test "$([[ -e /run/sarnue ]] && echo 1 || echo 0)" = "$had_run"
t_done
