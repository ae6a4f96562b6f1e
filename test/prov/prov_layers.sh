#!/bin/sh
# The provider's layering (the comment at the top of
# prov/gba/include/gba_prov.h), checked on the built objects and on the
# sources:
#
#   0 provider-wide   parameters, locks, errors, wait objects, fi_info
#   1 fid classes     wait set, EQ, CQ, counter, poll set, MR, AV,
#                     AV set
#   2 operations      completion reporting, peers, triggers, messages,
#                     RMA, atomics, collectives, deferred work
#   3 endpoint        the endpoint, its engine callbacks, progress
#   4 containers      domain, fabric, the provider entry
#
# A module may use a symbol of a module of its own layer or of a lower
# one, never of a higher one, and the modules' use of each other has no
# cycle (nm: what one object leaves undefined and another defines).  The
# one exception is gba_prov, the provider structure every module logs
# with (FI_WARN), which the entry defines, as in every libfabric
# provider.  A source file includes only the provider headers of its
# layer and below (gba_prov.h: 0, gba_obj.h: 1, gba_ep.h: 2 and up).
# A module missing from the table below fails the test: place it.
#
# Usage: test/prov/prov_layers.sh (from make check: top_builddir and
# top_srcdir set).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
objdir=$top_builddir/prov/gba/src/.libs
srcdir=$top_srcdir/prov/gba
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/layers" <<'EOF'
gba_params 0
gba_lock 0
gba_errno 0
gba_fid 0
gba_wait 0
gba_info 0
gba_wait_set 1
gba_eq 1
gba_cq 1
gba_cntr 1
gba_poll 1
gba_mr 1
gba_av 1
gba_av_shared 1
gba_av_set 1
gba_work 2
gba_comp 2
gba_trigger 2
gba_peer 2
gba_rma 2
gba_atomic_exec 2
gba_atomic 2
gba_coll_sw 2
gba_coll 2
gba_coll_join 2
gba_msg 2
gba_deferred 2
gba_eng 3
gba_progress 3
gba_ep 3
gba_domain 4
gba_fabric 4
gba_init 4
EOF
cat >"$tmp/headers" <<'EOF'
gba_prov.h 0
gba_obj.h 1
gba_ep.h 2
gba_coll.h 2
EOF

command -v nm >/dev/null || { echo "SKIP: no nm"; exit 77; }
fail=0

# the objects of the convenience library the module and the tests link:
# libtool names them <lib>_la-<module>.o
set -- "$objdir"/libgba_prov_la-gba_*.o
[ -f "$1" ] || { echo "FAIL: no provider objects in $objdir"; exit 1; }
for o in "$@"; do
	m=$(basename "$o" .o)
	m=${m##*-}
	nm --defined-only -g "$o" | awk -v m="$m" '$2 ~ /[TDRBC]/ { print $3, m }'
done | sort -u >"$tmp/defs"
for o in "$@"; do
	m=$(basename "$o" .o)
	m=${m##*-}
	nm -u "$o" | awk -v m="$m" '{ print $2, m }'
done | sort -u >"$tmp/uses"

# edges: user module, defining module, symbol (gba_prov exempt)
join "$tmp/uses" "$tmp/defs" |
	awk '$1 != "gba_prov" && $2 != $3 { print $2, $3, $1 }' |
	sort -u >"$tmp/edges"

# every module placed
for m in $(cut -d' ' -f2 "$tmp/defs" | sort -u); do
	grep -q "^$m " "$tmp/layers" || {
		echo "FAIL: module $m is not in the layer table of $0"
		fail=1
	}
done

# no use of a higher layer
awk 'NR == FNR { layer[$1] = $2; next }
	($1 in layer) && ($2 in layer) && layer[$2] > layer[$1] {
		printf "FAIL: %s (layer %d) uses %s of %s (layer %d)\n",
			$1, layer[$1], $3, $2, layer[$2]
		bad = 1
	}
	END { exit bad }' "$tmp/layers" "$tmp/edges" || fail=1

# no cycle (tsort names one)
cut -d' ' -f1,2 "$tmp/edges" | sort -u >"$tmp/pairs"
if ! tsort "$tmp/pairs" >/dev/null 2>"$tmp/tsort"; then
	echo "FAIL: the modules use each other in a cycle, for one:"
	awk '/input contains a loop/ { n++; next } n == 1 { print "  " $2 }' \
		"$tmp/tsort"
	fail=1
fi

# includes: a source includes only provider headers of its layer and below
for f in "$srcdir"/src/*.[ch] "$srcdir"/include/*.h; do
	b=$(basename "$f")
	case $b in
	*.c) l=$(awk -v m="${b%.c}" '$1 == m { print $2 }' "$tmp/layers") ;;
	*.h) l=$(awk -v m="$b" '$1 == m { print $2 }' "$tmp/headers") ;;
	esac
	if [ -z "$l" ]; then
		echo "FAIL: $b is not in the layer tables of $0"
		fail=1
		continue
	fi
	for h in $(sed -n 's/^#include "\(gba_[a-z_]*\.h\)".*/\1/p' "$f"); do
		hl=$(awk -v m="$h" '$1 == m { print $2 }' "$tmp/headers")
		[ -n "$hl" ] || continue
		if [ "$hl" -gt "$l" ]; then
			echo "FAIL: $b (layer $l) includes $h (layer $hl)"
			fail=1
		fi
	done
done

n=$(wc -l <"$tmp/pairs")
echo "$# modules, $n uses between them"
[ "$fail" = 0 ] && echo "PASS: no module uses a higher layer, no cycle"
exit $fail
