#!/bin/sh
# The cost model of doc/barrier_model.md: barrier latency of the GBA and of
# a software dissemination barrier for 2 .. 32 x 708 members, from per-hop
# costs given in microseconds (environment; defaults: the hardware column
# of the document).  Prints one row per member count.
#
#   ST    the member's store reaching its NIC (posted write), and the
#         NIC's store of the release into the member's flag plus the
#         member's poll seeing it (each once per barrier)
#   HOP   one link hop, NIC <-> switch or switch <-> switch, one way
#   AGG   the switch's handling of the last arrival (count, compare)
#   CNT   the switch's counter update per arrival, when all members
#         arrive at once and their updates queue on the group's counter
#   REL   the switch's time per release store it emits on one port
#   PPN   members per host (one NIC port each host)
#   MSG   a software barrier's per-round cost beyond the links: the
#         sender's and receiver's overheads of one small message
#   SWLAT one switch traversal inside the fabric for a software message
#   LEAF  members per leaf switch (708: one GBA group per leaf)
#
#   bench/barrier_model.sh            the document's hardware figures
#   ST=.. HOP=.. bench/barrier_model.sh   other figures
ST=${ST:-0.3}
HOP=${HOP:-0.3}
AGG=${AGG:-0.05}
CNT=${CNT:-0.002}
REL=${REL:-0.01}
PPN=${PPN:-1}
MSG=${MSG:-0.6}
SWLAT=${SWLAT:-0.3}
LEAF=${LEAF:-708}
NS=${NS:-"2 4 8 16 32 64 128 256 512 708 1416 2832 5664 11328 22656"}

awk -v st="$ST" -v hop="$HOP" -v agg="$AGG" -v cnt="$CNT" -v rel="$REL" -v ppn="$PPN" \
	-v msg="$MSG" -v swlat="$SWLAT" -v leaf="$LEAF" -v ns="$NS" '
function ceil(x) { return x == int(x) ? x : int(x) + 1 }
function log2c(n, r) { r = 0; while (2 ^ r < n) r++; return r }
BEGIN {
	printf "%8s %7s %11s %8s %9s %13s %9s\n", "members", "leaves",
		"gba_us", "rounds", "sw_hops", "dissem_us", "sw/gba"
	k = split(ns, n, " ")
	for (i = 1; i <= k; i++) {
		N = n[i]
		leaves = ceil(N / leaf)
		per_leaf = N < leaf ? N : leaf
		# arrival: store, link to the leaf, the last arrival counted;
		# a spine level when one leaf is not enough (the leaves arrive
		# as members of a spine group and are released by it)
		t = st + hop + agg + per_leaf * cnt
		if (leaves > 1)
			t += 2 * hop + agg + leaves * cnt
		# release: the members of one host are released in turn on its
		# port, then the link and the flag store seen by the poll
		t += ppn * rel + hop + st
		# dissemination: ceil(log2 N) rounds, each a message across
		# the fabric: one switch within a leaf, three through a spine
		r = log2c(N)
		sh = leaves > 1 ? 3 : 1
		d = r * (msg + (sh + 1) * hop + sh * swlat)
		printf "%8d %7d %11.2f %8d %9d %13.2f %8.1fx\n", N, leaves, t,
			r, sh, d, d / t
	}
}'
