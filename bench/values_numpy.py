#!/usr/bin/python3
"""make bench: the values of the headline's run evaluated with NumPy.

    values_numpy.py N D G [RUNS]

What `--values` computes beside the pebbling (docs/VALUES.md), on random
inputs: the outputs through the DAG, U1 and U2 (every monomial of degree
at most G in the D features of Q and of K, each degree's columns at once
as the products of the degree below's and a feature), H = U2^T [V 1],
N = U1 H and A = N[:, :D] / N[:, D]; and the two direct evaluations it
sets them beside, D~^-1 P(Q K^T / sqrt D) V (P of degree G, by Horner)
and softmax(Q K^T / sqrt D) V, each of order N^2 D. Prints {"seconds":
..., "macs": ...} as JSON: the median of RUNS evaluations (5 by default)
and the DAG's macs (2 N r (D + 1)). The evaluation alone is timed, not
Python's start or NumPy's import.
"""
import itertools
import json
import math
import sys
import time

import numpy as np


def monomials(d, g):
    """The monomials by degree: for each degree k >= 1, the index of each
    one's monomial of degree k - 1 (its parent) and its last feature; the
    constant is column 0, degree k's columns follow degree k - 1's."""
    levels, prev, first = [], [()], 1
    for k in range(1, g + 1):
        cur = list(itertools.combinations_with_replacement(range(d), k))
        at = {m: first - len(prev) + i for i, m in enumerate(prev)}
        levels.append((np.array([at[m[:-1]] for m in cur]), np.array([m[-1] for m in cur])))
        first += len(cur)
        prev = cur
    return levels, first


def features(x, tree):
    """U^T: a row a monomial, so that a degree's rows are gathered and
    multiplied whole."""
    levels, r = tree
    xt = np.ascontiguousarray(x.T)
    ut = np.empty((r, x.shape[0]))
    ut[0] = 1.0
    at = 1
    for parents, last in levels:
        ut[at:at + len(parents)] = ut[parents] * xt[last]
        at += len(parents)
    return ut


def evaluate(q, k, v, tree, g):
    u1t, u2t = features(q, tree), features(k, tree)
    h = u2t @ np.hstack([v, np.ones((v.shape[0], 1))])
    n = u1t.T @ h
    a = n[:, :-1] / n[:, -1:]
    # the direct evaluations: P(S) and exp(S), S = Q K^T / sqrt d
    s = q @ k.T / np.sqrt(q.shape[1])
    p = np.full_like(s, 1.0 / math.factorial(g))
    for l in range(g - 1, -1, -1):
        p = p * s + 1.0 / math.factorial(l)
    direct = (p @ v) / p.sum(axis=1, keepdims=True)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    softmax = (e @ v) / e.sum(axis=1, keepdims=True)
    return a, direct, softmax


def main():
    n, d, g = (int(a) for a in sys.argv[1:4])
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    rng = np.random.default_rng(1)
    q, k, v = (rng.uniform(-0.5, 0.5, (n, d)) for _ in range(3))
    tree = monomials(d, g)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        evaluate(q, k, v, tree, g)
        times.append(time.perf_counter() - start)
    times.sort()
    print(json.dumps({"seconds": times[len(times) // 2], "macs": 2 * n * tree[1] * (d + 1)}))


if __name__ == "__main__":
    main()
