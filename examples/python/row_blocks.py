#!/usr/bin/python3
"""A pebbling strategy written in Python, validated by pebblesim's engine.

"row blocks", beyond the paper: H is built a block of monomials at a
time from K and V rows streamed through, and saved; then the query rows
are taken h at a time, each block of H loaded once for them, the U1
entries streamed through fused macs (MODEL.md section 3, "fuse"):

    for each block of t monomials:
        for j:  load K[j,:], V[j,:];  H[block,B] += U2[j,block] [V[j,:] 1];  delete them
        save H[block,B]
    for each block of h query rows:
        load Q[rows,:]
        for each block of t monomials:  load H[block,B];  N[rows,B] += U1 H;  delete H
        for each row:  A[i,:] = N[i,:] / N[i,d], saved

Its cost model (below) counts those loads and saves; the engine checks
every move and counts them again. The script prints both, beside
pebblesim's colpass and FlashAttention on the same n, d and M.

    PYTHONPATH=src/python python3 examples/python/row_blocks.py -n 256 -d 4 -g 2 -M 256
"""

import argparse
import math
import sys

import pebblesim


def plan(n, d, r, M):
    """Block sizes (t monomials, h rows) and the predicted loads and saves."""
    nb = d + 1  # |B|: the value columns and the ones column
    t = max(1, min(r, (M // 2) // nb))
    # phase H holds a K and a V row, H's block, U2 and the product
    if 2 * d + t * nb + 2 > M:
        raise SystemExit("row_blocks: M = %d is too small (it needs %d)" % (M, 2 * d + nb + 2))
    # phase N holds h rows of Q and N, H's block, U1 and the product
    h = min(n, (M - t * nb - 2) // (d + nb))
    if h < 1:
        raise SystemExit("row_blocks: M = %d is too small for a row of Q and N" % M)
    monomial_blocks = math.ceil(r / t)
    row_blocks = math.ceil(n / h)
    loads = monomial_blocks * n * 2 * d + n * d + row_blocks * r * nb
    saves = r * nb + n * d
    return t, h, loads, saves


def pebble(n, d, g, M):
    """The sequence, as a pebblesim.Trace."""
    r = math.comb(d + g, g)
    t, h, loads, saves = plan(n, d, r, M)
    nb = d + 1
    trace = pebblesim.Trace(n=n, d=d, g=g, M=M, strategy="row-blocks")
    for m0 in range(0, r, t):
        block = range(m0, min(r, m0 + t))
        for j in range(n):
            trace.load("K", j=j, a=range(d))
            trace.load("V", j=j, b=range(d))
            trace.mac("H", j=j, m=block, b=range(nb), fuse=True)
            trace.delete("K", j=j, a=range(d))
            trace.delete("V", j=j, b=range(d))
        trace.save("H", m=block, b=range(nb))
        trace.delete("H", m=block, b=range(nb))
    for i0 in range(0, n, h):
        rows = range(i0, min(n, i0 + h))
        trace.load("Q", i=rows, a=range(d))
        for m0 in range(0, r, t):
            block = range(m0, min(r, m0 + t))
            trace.load("H", m=block, b=range(nb))
            trace.mac("N", i=rows, m=block, b=range(nb), fuse=True)
            trace.delete("H", m=block, b=range(nb))
        for i in rows:
            trace.compute("A", i=i, b=range(d))
            trace.save("A", i=i, b=range(d))
            trace.delete("A", i=i, b=range(d))
            trace.delete("N", i=i, b=range(nb))
        trace.delete("Q", i=rows, a=range(d))
    return trace, (t, h, loads, saves)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=256)
    ap.add_argument("-d", type=int, default=4)
    ap.add_argument("-g", type=int, default=2)
    ap.add_argument("-M", type=int, default=256)
    args = ap.parse_args()
    trace, (t, h, loads, saves) = pebble(args.n, args.d, args.g, args.M)
    report = trace.validate()
    if not report["valid"]:
        print("row-blocks: invalid: %s" % report["violation"], file=sys.stderr)
        return 1
    print("row-blocks (Python)  t = %d monomials, h = %d rows: %d set operations"
          % (t, h, len(trace)))
    print("  engine             %d loads + %d saves = %d I/O, peak %d of %d red pebbles"
          % (report["loads"], report["saves"], report["io"], report["peak_red"], args.M))
    agrees = (report["loads"], report["saves"]) == (loads, saves)
    print("  cost model         %d loads + %d saves = %d I/O (%s)"
          % (loads, saves, loads + saves, "agrees" if agrees else "DISAGREES"))
    colpass = pebblesim.run(n=args.n, d=args.d, g=args.g, M=args.M, strategy="colpass")
    flash = pebblesim.run(n=args.n, d=args.d, M=args.M, attention="exact")
    print("colpass              %d I/O (%.2fx row-blocks)" % (colpass["io"], colpass["io"] / report["io"]))
    print("flash (exact)        %d I/O (%.2fx row-blocks)" % (flash["io"], flash["io"] / report["io"]))
    return 0 if agrees else 1


if __name__ == "__main__":
    sys.exit(main())
