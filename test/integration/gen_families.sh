#!/bin/bash
# The topology families of `sarnue gen` (xgft, fattree, islands, hyperx, slimfly, kautz, and the
# exascale fishnet, fishnet-lite, mlfm, oft, cascade and dfplus): the written net file is parsed
# here, independently of the generator, and must have the switch, host and link counts of the
# doc/gen.md formulas (and for the exascale families the switch degrees), every link at both ends,
# a connected graph, host descriptions after the hostname pattern and the family's diameter.
# Faults work on every family, output is deterministic, large fabrics are fast, bad parameters
# are refused with exit status 2, small exascale instances are routed offline by sar-nue and
# sar-dfsssp and verified by sarnue check, and small instances come up under ibsim with OpenSM.
# The size helpers print three counts that become three arguments:
# shellcheck disable=SC2046
set -u
. "$SARNUE_SRCDIR/test/lib/testlib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sarnue-families.XXXXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# net_stats FILE PATTERN [all|hosts]: prints "switches hosts links asym hostlinks connected
# diameter baddesc".  links counts switch-to-switch links; asym counts port lines whose far end
# does not point back; hostlinks counts host port lines that reach a switch; connected is 1 if
# the switch graph is connected; diameter is the switch graph's, from every switch with "all",
# the largest distance between two switches with hosts with "hosts", else -1.
net_stats() {
	awk -v pat="$2" -v all="${3:-}" '
	function unq(s) { gsub(/"/, "", s); return s }
	/^Switch/ { node = unq($3); sw[++nsw] = node; kind = "S"; next }
	/^Hca/ {
		node = unq($3); nh++; kind = "H"
		d = $0; sub(/^[^#]*# "/, "", d); sub(/"$/, "", d)
		if (d != sprintf(pat, substr(node, 3) + 0) " HCA-1") bad++
		next
	}
	/^\[/ {
		split($0, f, /[][\t"]+/)
		here = node SUBSEP f[2]
		if (here in end) asym++
		end[here] = f[3] SUBSEP f[4]
		line[++nl] = here
		if (kind == "S" && f[3] ~ /^S-/) { ends++; adj[node, ++deg[node]] = f[3] }
		if (kind == "S" && f[3] ~ /^H-/) hashost[node] = 1
		if (kind == "H" && f[3] ~ /^S-/) hl++
		next
	}
	function bfs(s,    head, tail, u, v, j, far) {
		delete dist; head = 1; tail = 0; queue[++tail] = s; dist[s] = 0; far = 0
		while (head <= tail) {
			u = queue[head++]
			for (j = 1; j <= deg[u]; j++) {
				v = adj[u, j]
				if (!(v in dist)) {
					dist[v] = dist[u] + 1; queue[++tail] = v
					if (dist[v] > far && (all != "hosts" || v in hashost)) far = dist[v]
				}
			}
		}
		reached = tail
		return far
	}
	END {
		for (i = 1; i <= nl; i++)
			if (!(end[line[i]] in end) || end[end[line[i]]] != line[i]) asym++
		diam = -1
		if (nsw) { e = bfs(sw[1]); conn = reached == nsw }
		if (all && conn)
			for (i = 1; i <= nsw; i++) {
				if (all == "hosts" && !(sw[i] in hashost)) continue
				e = bfs(sw[i]); if (e > diam) diam = e
			}
		printf "%d %d %d %d %d %d %d %d\n", nsw, nh, ends / 2, asym, hl, conn, diam, bad
	}' "$1"
}

# degrees FILE: the switch-to-switch degrees of the switches of net file FILE, as
# "COUNTxDEGREE ..." in ascending degree (a link counts at both ends, parallel links each).
degrees() {
	awk '/^Switch/ { node = $3; d[node] = 0 } /^\[/ && node != "" && $0 ~ /"S-/ { d[node]++ }
		/^Hca/ { node = "" }
		END { for (n in d) c[d[n]]++; for (k in c) print k, c[k] }' "$1" |
		sort -n | awk '{ printf "%s%dx%d", (NR > 1 ? " " : ""), $2, $1 } END { print "" }'
}

# family NAME EXPECT_SW EXPECT_HOSTS EXPECT_LINKS DIAMETER_TEST -- GEN ARGS...
# DIAMETER_TEST is "", or "eq N" / "le N" for the switch-graph diameter, or "heq N" / "hle N"
# for the largest distance between switches that carry hosts.
family() {
	local name=$1 esw=$2 eh=$3 el=$4 dtest=$5 pat=node%04d i j
	shift 6
	for ((i = 1; i < $#; i++)); do
		j=$((i + 1))
		[[ ${!i} == --hostname-pattern ]] && pat=${!j}
	done
	local net=$tmp/$name.net
	if ! "$SARNUE_BIN" gen "$@" -o "$net" 2>"$tmp/$name.err"; then
		t_fail "$name: sarnue gen $* ($(head -c 300 "$tmp/$name.err"))"
		return
	fi
	local sw h l asym hl conn diam bad
	local mode=${dtest:+all}
	[[ $dtest == h* ]] && mode=hosts
	read -r sw h l asym hl conn diam bad < <(net_stats "$net" "$pat" "$mode")
	if [[ "$sw $h $l" == "$esw $eh $el" ]]; then
		t_ok "$name: $sw switches, $h hosts, $l switch links as the formulas say"
	else
		t_fail "$name: got $sw switches, $h hosts, $l links; expected $esw, $eh, $el"
	fi
	t_expect "$name: every link listed at both ends" test "$asym" = 0
	t_expect "$name: connected (switch graph and every host)" test "$conn:$hl" = "1:$h"
	t_expect "$name: host descriptions follow $pat" test "$bad" = 0
	if [[ -n $dtest ]]; then
		local op=${dtest% *}
		local what=switch
		[[ $mode == hosts ]] && what=host-switch
		t_expect "$name: $what diameter $diam is $dtest" \
			test "$diam" "-${op#h}" "${dtest#* }"
	fi
}

# The formulas of doc/gen.md, computed here in the shell.
xgft_size() { # R H M-LIST W-LIST -> "switches hosts links"
	local r=$1 h=$2 m w l j n sw=0 links=0 prev=0 hosts=1
	IFS=, read -ra m <<<"$3"
	IFS=, read -ra w <<<"$4"
	for ((l = 1; l <= h; l++)); do
		n=1
		for ((j = 1; j <= h; j++)); do
			if ((j > l)); then n=$((n * m[j - 1])); else n=$((n * w[j - 1])); fi
		done
		((l >= 2)) && links=$((links + r * w[l - 1] * prev))
		sw=$((sw + n))
		prev=$n
	done
	for j in "${m[@]}"; do hosts=$((hosts * j)); done
	echo "$sw $hosts $links"
}
hyperx_size() { # T K S1 [S2 [S3]]
	local t=$1 k=$2 s n=1 deg=0
	shift 2
	for s; do n=$((n * s)); deg=$((deg + s - 1)); done
	echo "$n $((t * n)) $((k * n * deg / 2))"
}
slimfly_delta() { case $(($1 % 4)) in 1) echo 1 ;; 0) echo 0 ;; 3) echo -1 ;; esac }
slimfly_size() { # Q R [T]
	local q=$1 r=$2 d k t
	d=$(slimfly_delta "$q")
	k=$(((3 * q - d) / 2))
	t=${3:-$(((k + 1) / 2))}
	echo "$((2 * q * q)) $((2 * q * q * t)) $((r * q * q * k))"
}
kautz_size() { # D N T R
	local d=$1 n=$2 t=$3 r=$4 dn=1 i
	for ((i = 0; i < n; i++)); do dn=$((dn * d)); done
	local v=$(((d + 1) * dn))
	echo "$v $((t * v)) $((r * d * v))"
}

# XGFT, and ktree as the XGFT(n; k..k; 1,k..k) it is.
for c in "1 2 4,4 1,4" "2 3 2,3,2 1,2,3" "1 1 22 1" "1 3 3,2,2 1,3,1"; do
	read -r r h m w <<<"$c"
	family "xgft-$h-$m-$w-r$r" $(xgft_size "$r" "$h" "$m" "$w") "" -- \
		xgft --h "$h" --m "$m" --w "$w" --links-per-pair "$r"
done
family xgft-pattern $(xgft_size 1 3 2,2,2 1,2,2) "eq 4" -- xgft --h 3 --m 2,2,2 --w 1,2,2 \
	--hostname-pattern 'cn-%03d.x'
"$SARNUE_BIN" gen ktree --k 3 --n 3 -o "$tmp/kt.net" 2>/dev/null
"$SARNUE_BIN" gen xgft --h 3 --m 3,3,3 --w 1,3,3 -o "$tmp/xg.net" 2>/dev/null
t_expect "ktree --k 3 --n 3 is wired exactly as xgft --h 3 --m 3,3,3 --w 1,3,3" \
	cmp -s <(sed 's/#.*//' "$tmp/kt.net") <(sed 's/#.*//' "$tmp/xg.net")
t_grep "the two differ in the switch names only" 'Switch.*"S-0001".*# "ktree level 0 switch 0"' "$tmp/kt.net"

# Real-life fat trees; counts worked out by hand from doc/gen.md's rules.
# 36 ports, 324 hosts: 18 leaves (18 hosts, 18 up), 9 spines joined by 2 links: 18*18 links.
family ft-36-324 27 324 324 "eq 2" -- fattree --radix 36 --hosts 324
# 12 ports at 2:1: 4 up, 8 hosts; 7 leaves; p = 1 (7*2 > 12), 4 spines; 7*4 links.
family ft-12-50-taper 11 50 28 "eq 2" -- fattree --levels 2 --radix 12 --hosts 50 --taper 2:1
# 8 ports at 3:1: 2 up, 6 hosts; K = 4; 17 leaves -> 5 pods of 4 (20 leaves), 2 spines per
# pod, spine up ports 4 in bundles of 1 (5*2 > 8): 4 cores per plane, 8 cores.
# Links 20*2 + 10*4 = 80.
family ft-8-100-3level 38 100 80 "eq 4" -- fattree --levels 3 --radix 8 --hosts 100 --taper 3:1
# 8 ports, 12 hosts: 3 leaves with 4 up; bundles of 2 give 2 spines, --links-per-pair 1 four.
family ft-8-12 5 12 12 "eq 2" -- fattree --radix 8 --hosts 12
family ft-8-12-lpp1 7 12 12 "eq 2" -- fattree --radix 8 --hosts 12 --links-per-pair 1
# The classic 3-level tree of 36-port switches: 648 leaves, 648 spines, 324 cores.
family ft-36-11664 1620 11664 23328 "" -- fattree --levels 3 --radix 36 --hosts 11664

# Islands.  3 islands of 16 hosts, 8 ports: 4 leaves and 4 top switches each, 12 top
# switches with 4 up ports, directors of 24 ports take bundles of 2: 2 directors.
family isl-3x16 26 48 96 "eq 4" -- islands --islands 3 --hosts-per-island 16 --radix 8 \
	--core-radix 24
# Taurus-like: 19 leaves and 18 spines per island, spines split 3:1 (27 down, 9 up), need 7
# up ports, 108 spines on 216-port directors in bundles of 2 with 8 up ports: 4 directors.
family isl-taurus 226 2040 2916 "eq 4" -- islands --islands 6 --hosts-per-island 340 \
	--radix 36 --core-taper 3:1 --core-radix 216
# One island still has its director layer: spines split 2:1 (5 down, 3 up), 4 spines need 2
# up ports each, one 8-port director takes bundles of 2.  16 + 8 links.
family isl-1 9 16 24 "eq 2" -- islands --islands 1 --hosts-per-island 16 --radix 8 \
	--core-taper 2:1
# 3-level islands: 6 leaves, 8 spines, 8 island cores each; 4 directors; 48+64+64 links.
family isl-3level 48 40 176 "eq 6" -- islands --islands 2 --hosts-per-island 20 --radix 8 \
	--levels 3 --core-radix 16

# HyperX: diameter = number of dimensions.
family hx-4x4 $(hyperx_size 2 1 4 4) "eq 2" -- hyperx --dims 4x4 --hosts-per-switch 2
family hx-3x3x2-k2 $(hyperx_size 1 2 3 3 2) "eq 3" -- hyperx --dims 3x3x2 --links-per-pair 2
family hx-5 $(hyperx_size 3 1 5) "eq 1" -- hyperx --dims 5 --hosts-per-switch 3
family hx-2x3x4 $(hyperx_size 1 1 2 3 4) "eq 3" -- hyperx --dims 2x3x4 --hostname-pattern 'h%x'

# Slim Fly: diameter 2 for primes and for GF(4), GF(8), GF(9).
for q in 3 4 5 7 8 9; do
	family "sf-q$q" $(slimfly_size "$q" 1) "eq 2" -- slimfly --q "$q"
done
family sf-q5-t1-r2 $(slimfly_size 5 2 1) "eq 2" -- slimfly --q 5 --hosts-per-switch 1 \
	--links-per-pair 2

# Kautz: every arc is a link; diameter at most N + 1 (the length of the strings).
family kz-2-3 $(kautz_size 2 3 1 1) "le 4" -- kautz --d 2 --n 3
family kz-1-1 $(kautz_size 1 1 1 1) "le 2" -- kautz --d 1 --n 1
family kz-3-2-r2 $(kautz_size 3 2 2 2) "le 3" -- kautz --d 3 --n 2 --hosts-per-switch 2 \
	--links-per-pair 2
family kz-5-2 $(kautz_size 5 2 1 1) "le 3" -- kautz --d 5 --n 2
family kz-12-1 $(kautz_size 12 1 1 1) "le 2" -- kautz --d 12 --n 1

# The exascale families.  Fishnet: n(n+1) routers from a base of n routers and degree k',
# each with k' local and k' global links (Fishnet-lite: 1 global link); MMS bases have
# n = 2q^2 and k' = (3q - delta)/2.
fishnet_size() { # N K T LITE -> switches hosts links
	local n=$1 k=$2 t=$3 sw=$(($1 * ($1 + 1)))
	if (($4)); then echo "$sw $((t * sw)) $((sw * (k + 1) / 2))"; else echo "$sw $((t * sw)) $((sw * k))"; fi
}
mlfm_size() { # H L P: l(h+1) LRs and h(h+1)/2 GRs; every LR has h links
	echo "$(($2 * ($1 + 1) + $1 * ($1 + 1) / 2)) $(($3 * $2 * ($1 + 1))) $(($2 * $1 * ($1 + 1)))"
}
oft_size() { # K T: three levels of R = K^2 - K + 1 routers, 2K links per L1 router
	local r=$(($1 * $1 - $1 + 1))
	echo "$((3 * r)) $((2 * $2 * r)) $((2 * $1 * r))"
}
cascade_size() { # G H P B: 96 switches per group, 720 green + 240B black links, and
	# 4*floor(24H/(G-1)) links per pair of groups
	local g=$1 per=0
	((g > 1)) && per=$((4 * (24 * $2 / (g - 1))))
	echo "$((96 * g)) $((96 * g * $3)) $((g * (720 + 240 * $4) + g * (g - 1) * per / 2))"
}
dfplus_size() { # L S P H G: floor(S*H/(G-1)) links per pair of groups
	local l=$1 s=$2 p=$3 h=$4 g=$5 per=0
	((g > 1)) && per=$((s * h / (g - 1)))
	echo "$((g * (l + s))) $((g * l * p)) $((g * l * s + g * (g - 1) * per / 2))"
}
# degree_is NAME EXPECTED: the switch degrees of the net file family NAME wrote.
degree_is() {
	local got
	got=$(degrees "$tmp/$1.net")
	t_expect "$1: switch degrees $got (expected $2)" test "$got" = "$2"
}

# Fishnet: diameter 4 between routers (one local hop, the global one, two local hops);
# Fishnet-lite: 5.  The 5-cycle is the paper's Fig. 1, q = 5 the Hoffman-Singleton graph.
family fn-c5 $(fishnet_size 5 2 1 0) "eq 4" -- fishnet --base c5
degree_is fn-c5 "30x4"
family fn-petersen $(fishnet_size 10 3 2 0) "eq 4" -- fishnet --base petersen --hosts-per-switch 2
degree_is fn-petersen "110x6"
family fn-q3 $(fishnet_size 18 5 2 0) "eq 4" -- fishnet --q 3
degree_is fn-q3 "342x10"
family fn-q5 $(fishnet_size 50 7 3 0) "" -- fishnet
degree_is fn-q5 "2550x14"
family fl-c5 $(fishnet_size 5 2 1 1) "eq 5" -- fishnet-lite --base c5
degree_is fl-c5 "30x3"
family fl-petersen $(fishnet_size 10 3 1 1) "eq 5" -- fishnet-lite --base petersen
degree_is fl-petersen "110x4"
family fl-q4 $(fishnet_size 32 6 3 1) "le 5" -- fishnet-lite --q 4
degree_is fl-q4 "1056x7"

# MLFM: every two local routers (the ones with hosts) are two hops apart.
family mlfm-3 $(mlfm_size 3 3 3) "heq 2" -- mlfm --h 3
degree_is mlfm-3 "12x3 6x6"
family mlfm-4-2-3 $(mlfm_size 4 2 3) "heq 2" -- mlfm --h 4 --l 2 --p 3
degree_is mlfm-4-2-3 "20x4"
family mlfm-15 $(mlfm_size 15 15 15) "heq 2" -- mlfm
degree_is mlfm-15 "240x15 120x30"

# OFT: host routers two hops apart, every router of radix 2K; K - 1 = 4 and 9 need GF(q).
family oft-3 $(oft_size 3 3) "heq 2" -- oft --k 3
degree_is oft-3 "14x3 7x6"
family oft-4 $(oft_size 4 4) "heq 2" -- oft --k 4
degree_is oft-4 "26x4 13x8"
family oft-5-t2 $(oft_size 5 2) "heq 2" -- oft --k 5 --hosts-per-switch 2
degree_is oft-5-t2 "42x5 21x10"
family oft-10 $(oft_size 10 10) "heq 2" -- oft --k 10
degree_is oft-10 "182x10 91x20"
# The wiring of K = 4 is the thesis's 4-ML3B table (Table 7.2): the L1 routers of each L0 router.
t_expect "oft-4: L0 routers wired by the 4-ML3B table" test "$(awk '
	/^Switch/ { s = substr($3, 4, 4) + 0; next }
	/^\[/ && s <= 13 && $0 ~ /"S-/ { split($0, f, /"S-/); row[s] = row[s] (row[s] == "" ? "" : ",") (f[2] + 0 - 14) }
	END { for (i = 1; i <= 13; i++) printf "%s[%s]", (i > 1 ? " " : ""), row[i]; print "" }' "$tmp/oft-4.net")" \
	= "[9,10,11,12] [9,0,1,2] [9,3,4,5] [9,6,7,8] [10,0,3,6] [10,1,4,7] [10,2,5,8] [11,0,4,8] [11,1,5,6] [11,2,3,7] [12,0,5,7] [12,1,3,8] [12,2,4,6]"

# Cascade: two groups as in Domke's Table 6.1 (192 switches, 1,536 hosts, 3,072 channels);
# within a group two hops, so at most 5 between any two switches.
family cascade-t61 $(cascade_size 2 2 8 3) "le 5" -- cascade --g 2 --h 2 --p 8
degree_is cascade-t61 "192x32"
family cascade-3-1 $(cascade_size 3 1 1 1) "le 5" -- cascade --g 3 --h 1 --p 1 --black-links 1
degree_is cascade-3-1 "288x21"
family cascade-7 $(cascade_size 7 10 4 3) "" -- cascade --g 7
degree_is cascade-7 "672x40"

# Dragonfly+: leaves (the switches with hosts) three hops apart.
family dfp-2 $(dfplus_size 2 2 2 2 5) "heq 3" -- dfplus --leaves 2 --spines 2 \
	--hosts-per-leaf 2 --h 2
degree_is dfp-2 "10x2 10x4"
family dfp-3-2 $(dfplus_size 3 2 4 3 4) "heq 3" -- dfplus --leaves 3 --spines 2 \
	--hosts-per-leaf 4 --h 3 --g 4
degree_is dfp-3-2 "12x2 8x6"
family dfp-8 $(dfplus_size 8 8 8 8 65) "" -- dfplus
degree_is dfp-8 "520x8 520x16"

# Faults are generic: link and switch removal on every new family keeps the rest intact.
read -r s h l < <(slimfly_size 5 1)
family sf-faults "$((s - 1))" "$((h - 4))" "$((l - 7 - 3))" "" -- slimfly --q 5 \
	--remove-switches 1 --remove-links 3 --seed 4
read -r s h l < <(kautz_size 3 2 1 1)
family kz-faults "$((s - 1))" "$((h - 1))" "$((l - 6 - 5))" "" -- kautz --d 3 --n 2 \
	--remove-switch-id S-0004 --remove-links 5
read -r s h l < <(hyperx_size 1 1 4 4)
family hx-faults "$s" "$h" "$((l - 5))" "" -- hyperx --dims 4x4 --remove-links 10%
read -r s h l < <(xgft_size 1 3 2,3,2 1,2,3)
family xgft-faults "$s" "$h" "$((l - 4))" "" -- xgft --h 3 --m 2,3,2 --w 1,2,3 --remove-links 4
family ft-faults 38 100 77 "" -- fattree --levels 3 --radix 8 --hosts 100 --taper 3:1 \
	--remove-links 3 --seed 9
family isl-faults 26 48 93 "" -- islands --islands 3 --hosts-per-island 16 --radix 8 \
	--core-radix 24 --remove-links 3
read -r s h l < <(oft_size 4 4)
family oft-faults "$s" "$h" "$((l - 5))" "" -- oft --k 4 --remove-links 5 --seed 2
read -r s h l < <(cascade_size 2 2 4 1)
family cascade-faults "$((s - 1))" "$((h - 4))" "$((l - 22))" "" -- cascade --g 2 --h 2 \
	--black-links 1 --remove-switch-id S-0001
t_grep "the removed links are reported" '^gen: removed link S-[0-9]+\[[0-9]+\] <-> S-' \
	"$tmp/isl-faults.err"

# Deterministic: the same command line gives the same bytes, faults included.
for args in "slimfly --q 7 --remove-links 2% --seed 3" "kautz --d 3 --n 3 --remove-switches 2" \
	"islands --islands 3 --hosts-per-island 16 --radix 8 --core-radix 24 --remove-links 4" \
	"fishnet --q 3 --remove-links 1% --seed 3" "dfplus --leaves 3 --remove-switches 2"; do
	# shellcheck disable=SC2086 # word splitting wanted
	"$SARNUE_BIN" gen $args -o "$tmp/d1.net" 2>/dev/null
	# shellcheck disable=SC2086
	"$SARNUE_BIN" gen $args -o "$tmp/d2.net" 2>/dev/null
	t_expect "byte-identical output twice: $args" cmp -s "$tmp/d1.net" "$tmp/d2.net"
done

# Large fabrics in seconds: a 20,000-host fat tree, a 20,736-host HyperX, a q = 23 Slim Fly.
fast() {
	local name=$1 esw=$2 eh=$3 el=$4 start
	shift 4
	start=$(date +%s%N)
	if ! "$SARNUE_BIN" gen "$@" -o "$tmp/$name.net" 2>/dev/null; then
		t_fail "$name: sarnue gen $*"
		return
	fi
	local ms=$((($(date +%s%N) - start) / 1000000))
	t_expect "$name: generated in ${ms} ms (limit 5 s)" test "$ms" -lt 5000
	local sw h l rest
	read -r sw h l rest < <(net_stats "$tmp/$name.net" node%04d)
	t_expect "$name: $sw switches, $h hosts, $l links (expected $esw, $eh, $el)" \
		test "$sw $h $l" = "$esw $eh $el"
}
# 24 hosts per leaf: 834 leaves -> 35 pods of 24 (840), 24 spines per pod, 24 cores per plane.
fast ft-48-20000 2256 20000 40320 fattree --radix 48 --hosts 20000
fast hx-12x12x8 $(hyperx_size 18 1 12 12 8) hyperx --dims 12x12x8 --hosts-per-switch 18
fast sf-q23 $(slimfly_size 23 1) slimfly --q 23
# The exascale families just below the LID limit (49,151 LIDs for hosts and switches).
fast fn-q7 $(fishnet_size 98 11 4 0) fishnet --q 7 --hosts-per-switch 4
fast fl-q7 $(fishnet_size 98 11 4 1) fishnet-lite --q 7 --hosts-per-switch 4
fast mlfm-32 $(mlfm_size 32 32 32) mlfm --h 32
fast oft-28 $(oft_size 28 28) oft --k 28
fast cascade-100 $(cascade_size 100 10 4 3) cascade --g 100
fast dfp-16 $(dfplus_size 16 16 16 16 150) dfplus --leaves 16 --spines 16 --hosts-per-leaf 16 \
	--h 16 --g 150

# Bad parameters: exit status 2, the option named, no file written.
refuse() {
	local pattern=$1 rc
	shift
	rm -f "$tmp/bad.net"
	"$SARNUE_BIN" gen "$@" -o "$tmp/bad.net" >/dev/null 2>"$tmp/bad.err"
	rc=$?
	if [[ $rc == 2 ]] && grep -qE -- "$pattern" "$tmp/bad.err" && [[ ! -e $tmp/bad.net ]]; then
		t_ok "refused with exit 2 and /$pattern/: $*"
	else
		t_fail "$*: expected exit 2, /$pattern/ and no file (got $rc: $(head -c 300 "$tmp/bad.err"))"
	fi
}
refuse '--w 2,4: w1 must be 1' xgft --h 2 --m 4,4 --w 2,4
refuse '--m 4,4: expected 3 values' xgft --h 3 --m 4,4 --w 1,4,4
refuse 'missing --w' xgft --h 2 --m 4,4
refuse '--m 4,0: every value must be at least 1' xgft --h 2 --m 4,0 --w 1,4
refuse '--hosts 700: a fat tree of 2 levels of 36-port switches .* at most 648 hosts' \
	fattree --levels 2 --radix 36 --hosts 700
refuse 'missing --radix' fattree --hosts 100
refuse '--taper 0:1: both sides must be between 1' fattree --radix 36 --hosts 100 --taper 0:1
refuse '--taper 1:2: leaves no down port on a switch of 2 ports' fattree --radix 2 --hosts 4 \
	--taper 1:2
refuse '--levels 5: must be between 2 and 4' fattree --radix 36 --hosts 100 --levels 5
refuse '--links-per-pair 3:' fattree --radix 8 --hosts 12 --links-per-pair 3
refuse '--islands 6: the 108 top switches of the islands do not fit the 36 ports' \
	islands --islands 6 --hosts-per-island 324 --radix 36
refuse '--hosts-per-island 400: an island of 2 levels' islands --islands 2 \
	--hosts-per-island 400 --radix 36
refuse '--core-taper 1:1x: expected DOWN:UP' islands --islands 2 --hosts-per-island 10 \
	--radix 8 --core-taper 1:1x
refuse '--dims 1x3: every HyperX dimension must be at least 2' hyperx --dims 1x3
refuse '--q 6: not a prime power' slimfly --q 6
refuse '--q 2: .*smallest Slim Fly has q = 3' slimfly --q 2
refuse '--q 729: fabric too large' slimfly --q 729
refuse '--radix 20: switch S-0001 .* needs 29 ports' slimfly --q 13 --radix 20
refuse '--d 0: must be at least 1' kautz --d 0 --n 2
refuse '--n 0: must be at least 1' kautz --d 2 --n 0
refuse 'missing --n' kautz --d 2
refuse '--d 2 --n 20: fabric too large' kautz --d 2 --n 20
refuse '--d: not an option of the hyperx topology' hyperx --dims 4x4 --d 2
refuse "unknown topology 'slimfly2'" slimfly2 --q 5
refuse '--base k4: expected mms, petersen or c5' fishnet --base k4
refuse '--q 5: only with --base mms' fishnet-lite --base c5 --q 5
refuse '--q 6: not a prime power' fishnet --q 6
refuse '--q 23: fabric too large' fishnet --q 23
refuse '--h 0: an MLFM needs at least 2 positions' mlfm --h 0
refuse '--l 200: a global router would need 2L = 400 ports' mlfm --h 3 --l 200
refuse '--k 7: K - 1 must be a prime power' oft --k 7
refuse '--k 2: K - 1 must be a prime power' oft --k 2
refuse '--h 11: a Cascade switch has 1 to 10 global links' cascade --h 11
refuse '--g 242: at most 24.H.1 = 241 groups' cascade --g 242
refuse '--g 50: at most 24.H.1 = 49 groups' cascade --g 50 --h 2
refuse '--black-links 0: must be at least 1' cascade --black-links 0
refuse '--radix 40: switch S-0001 .* needs 44 ports' cascade --radix 40
refuse '--g 66: at most S.H.1 = 65 groups' dfplus --g 66
refuse '--k: not an option of the mlfm topology' mlfm --k 3

# Small instances of the exascale families routed offline by sar-nue and sar-dfsssp, and the
# dumps verified by sarnue check: every pair reached, no credit loop.
for name in fn-c5 fl-petersen mlfm-3 oft-4 cascade-3-1 dfp-2; do
	for eng in sar-nue sar-dfsssp; do
		out=$tmp/$name.$eng
		if ! "$SARNUE_BIN" route -e "$eng" "$tmp/$name.net" -o "$out" >"$out.route" 2>&1; then
			t_fail "$name: sarnue route -e $eng ($(tail -n 3 "$out.route"))"
			continue
		fi
		"$SARNUE_BIN" check --dump-dir "$out" >"$out.check" 2>&1
		# shellcheck disable=SC2016 # awk's fields
		t_expect "$name: $eng routed it and sarnue check verified every pair, no credit loop" \
			awk '/^unreachable:/ { u = $2 } /^credit loops:/ { c = $3 } /^verdict:/ { v = $2 }
				END { exit !(u == "0" && c == "0" && v == "OK") }' "$out.check"
	done
done

# Small instances of every new family come up under ibsim and OpenSM.
if command -v ibsim >/dev/null 2>&1 && PATH=$PATH:/usr/sbin:/sbin command -v opensm >/dev/null 2>&1; then
	PATH=$PATH:/usr/sbin:/sbin
	. "$SARNUE_SRCDIR/sim/sim.sh"
	if sim_setup; then
		# sim_setup's cleanup trap replaces ours.
		# shellcheck disable=SC2016 # expanded when the cleanup runs
		sim_at_exit 'rm -rf -- "$tmp"'
		for name in xgft-pattern ft-8-100-3level isl-3x16 hx-3x3x2-k2 sf-q4 kz-2-3 fn-c5 \
			fl-c5 mlfm-3 oft-3 dfp-2; do
			SIM_ROUTING_ENGINE=minhop
			export SIM_ROUTING_ENGINE
			SIM_CONF=""
			if ! sim_start_ibsim "$tmp/$name.net"; then
				t_fail "$name: ibsim loaded the net file"
				continue
			fi
			# shellcheck disable=SC2119 # no extra OpenSM arguments
			if sim_run_opensm_once; then
				t_ok "$name: OpenSM brought the subnet up"
				t_expect "$name: minhop configured the tables on all switches" \
					test "$(sim_routing_engine_used)" = minhop
			else
				t_fail "$name: OpenSM brought the subnet up"
			fi
			sim_stop_ibsim
		done
	else
		t_fail "sim_setup"
	fi
else
	echo "skip: ibsim or opensm not installed, no OpenSM runs"
fi
t_done
