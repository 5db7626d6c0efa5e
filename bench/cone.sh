#!/bin/sh
# The ancestor cone of some vertices of a HyperdagDB file, as an edge list:
#   bench/cone.sh FILE.hdag V1 [V2 ...] > cone.txt
# keeps V1, V2, ... and every vertex with a path to one of them, renumbered
# 0, 1, ... in the order of their ids, and the edges between them (the
# first pin of a hyperedge is its source, each later pin a child). The
# cones of docs/OPTIMAL.md were cut so; each file begins with a comment
# naming its source and the vertices kept.
set -eu
file=$1
shift
awk -v roots="$*" -v name="$file" '
/^%/ { next }
stage == 0 { H = $1; N = $2; P = $3; stage = 1; left = H; if (!left) stage = 2; left2 = N; next }
stage == 1 { if (--left == 0) stage = 2; next }
stage == 2 { if (--left2 == 0) stage = 3; next }
stage == 3 {
	if (!($1 in src)) { src[$1] = $2; next }
	e++; from[e] = src[$1]; to[e] = $2
}
END {
	n = split(roots, r, " ")
	for (k = 1; k <= n; k++) keep[r[k]] = 1
	# parents first: repeat until nothing is added (the files are small)
	do {
		added = 0
		for (k = 1; k <= e; k++)
			if ((to[k] in keep) && !(from[k] in keep)) { keep[from[k]] = 1; added = 1 }
	} while (added)
	m = 0
	for (v = 0; v < N; v++) if (v in keep) id[v] = m++
	printf "# ancestor cone of vertices %s of %s: %d vertices\n", roots, name, m
	for (k = 1; k <= e; k++)
		if ((from[k] in keep) && (to[k] in keep)) print id[from[k]], id[to[k]]
}' "$file"
