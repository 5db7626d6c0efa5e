#!/usr/bin/python3
"""An independent check of the polynomial replacing exp (docs/VALUES.md).

For each kind, d and g, a run with values on inputs written here prints
values.polynomial in its JSON; NumPy then recomputes
  - Chebyshev's coefficients with chebinterpolate and cheb2poly, Taylor's
    as 1/l!, and compares them with the run's;
  - eta on a grid of a million points, which must not exceed the run's;
  - the outputs D~^-1 P(Q K^T / sqrt d) V from the run's coefficients,
    which must equal the run's A to 1e-9 of the largest;
  - the same causally (MODEL.md section 7, row i weighting keys j <= i
    only) for every causal strategy, at an M that holds the state beside
    a row and at one that needs passes over value columns;
  - decoding (--decode P): recurrent-decode's outputs against NumPy's
    recurrence through the stand-in map of docs/VALUES.md (its matrices
    drawn by tests/numpy_causal.py's splitmix64), at the least M and where
    the state fits.
Run by `make check` as `/usr/bin/python3 tests/numpy_polynomial.py BINARY`;
without NumPy it fails (scripts/deps.sh installs python3-numpy).
"""
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from numpy.polynomial import chebyshev, polynomial
except ImportError:
    sys.exit("numpy_polynomial.py: NumPy is missing: apt-get install python3-numpy "
             "(scripts/deps.sh installs it)")


def main(binary):
    rng = np.random.default_rng(1)
    failures = []
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for d in (1, 4, 16):
            for g in (1, 3, 5):
                if d == 16 and g > 3:
                    continue
                n, bound = 24, 0.75
                paths = []
                inputs = rng.uniform(-bound, bound, (3, n, d))
                for name, x in zip("qkv", inputs):
                    paths.append(os.path.join(tmp, name + ".npy"))
                    np.save(paths[-1], x)
                q, k, v = inputs
                for kind in ("taylor", "chebyshev", "minimax"):
                    out = os.path.join(tmp, "a.npy")
                    run = subprocess.run(
                        [binary, "-n", str(n), "-d", str(d), "-g", str(g), "-M", "64k",
                         "--strategy", "naive", "--values", "--q", paths[0], "--k", paths[1],
                         "--v", paths[2], "--polynomial", kind, "--json", "--output", out],
                        capture_output=True, text=True, check=False)
                    where = f"{kind} d = {d} g = {g}"
                    if run.returncode != 0:
                        failures.append(f"{where}: exit {run.returncode}: {run.stderr.strip()}")
                        continue
                    poly = json.loads(run.stdout)["values"]["polynomial"]
                    c = np.array(poly["coefficients"])
                    beta = poly["interval"]
                    if not math.isclose(beta, max(abs(q).max(), abs(k).max()) ** 2 * math.sqrt(d),
                                        rel_tol=1e-15):
                        failures.append(f"{where}: interval {beta} is not B^2 sqrt d")
                    if poly["name"] == "chebyshev":
                        # compared in the Chebyshev basis of t = x / beta, where the
                        # coefficients are well conditioned: NumPy's cheb2poly in
                        # double loses more to cancellation than the run's long double
                        want = chebyshev.chebinterpolate(lambda t: np.exp(beta * t), g)
                        got = chebyshev.poly2cheb(c * beta ** np.arange(g + 1))
                        if not np.max(np.abs(got - want)) <= 1e-14 * np.max(np.abs(want)):
                            failures.append(f"{where}: Chebyshev coefficients {got.tolist()} "
                                            f"against chebinterpolate's {want.tolist()}")
                    elif poly["name"] == "taylor":
                        want = np.array([1 / math.factorial(l) for l in range(g + 1)])
                        if not np.array_equal(c, want):
                            failures.append(f"{where}: coefficients {c.tolist()} against 1/l!")
                    xs = np.linspace(-beta, beta, 1_000_001)
                    eta = np.max(np.abs(polynomial.polyval(xs, c) * np.exp(-xs) - 1))
                    if not eta <= poly["eta"]:
                        failures.append(f"{where}: NumPy's eta {eta} above the run's {poly['eta']}")
                    if poly["name"] == "minimax" and not eta <= chebyshev_eta(beta, g, xs):
                        failures.append(f"{where}: minimax's eta {eta} above Chebyshev's")
                    weights = polynomial.polyval(q @ k.T / math.sqrt(d), c)
                    expect = weights @ v / weights.sum(axis=1)[:, None]
                    gap = np.max(np.abs(np.load(out) - expect))
                    if not gap <= 1e-9 * np.max(np.abs(expect)):
                        failures.append(f"{where}: outputs {gap} from NumPy's")
                    checked += 1
        checked += check_causal(binary, tmp, rng, failures)
        checked += check_decode(binary, tmp, rng, failures)
    for f in failures:
        print("numpy_polynomial.py: " + f, file=sys.stderr)
    if failures or checked < 60:
        sys.exit(f"numpy_polynomial.py: {len(failures)} failures in {checked} runs")
    print(f"numpy_polynomial.py: {checked} runs: coefficients, eta and outputs agree with NumPy")


def check_causal(binary, tmp, rng, failures):
    """Causal runs against NumPy's masked evaluation; returns how many."""
    checked = 0
    for d in (1, 4, 16):
        for g in (1, 3):
            n = 24
            inputs = rng.uniform(-0.75, 0.75, (3, n, d))
            paths = []
            for name, x in zip("qkv", inputs):
                paths.append(os.path.join(tmp, "causal-" + name + ".npy"))
                np.save(paths[-1], x)
            q, k, v = inputs
            r = math.comb(d + g, g)
            # the state of every column beside a row, and room for about
            # a third of it (passes over value columns)
            for strategy, M in (("recurrent", r * (d + 1) + 3 * d + 4),
                                ("causal-colpass", r * (d + 1) + 3 * d + 4),
                                ("causal-colpass", max(r * (d + 1) // 3, 2 * r + d + 5)),
                                ("best", 64 * 1024)):
                out = os.path.join(tmp, "causal-a.npy")
                run = subprocess.run(
                    [binary, "--causal", "-n", str(n), "-d", str(d), "-g", str(g), "-M", str(M),
                     "--strategy", strategy, "--values", "--q", paths[0], "--k", paths[1],
                     "--v", paths[2], "--json", "--output", out],
                    capture_output=True, text=True, check=False)
                where = f"causal {strategy} d = {d} g = {g} M = {M}"
                if run.returncode != 0:
                    failures.append(f"{where}: exit {run.returncode}: {run.stderr.strip()}")
                    continue
                c = np.array(json.loads(run.stdout)["values"]["polynomial"]["coefficients"])
                weights = np.tril(polynomial.polyval(q @ k.T / math.sqrt(d), c))
                expect = weights @ v / weights.sum(axis=1)[:, None]
                gap = np.max(np.abs(np.load(out) - expect))
                if not gap <= 1e-9 * np.max(np.abs(expect)):
                    failures.append(f"{where}: outputs {gap} from NumPy's")
                checked += 1
    return checked


def check_decode(binary, tmp, rng, failures):
    """Approximate decoding against NumPy's recurrence; returns how many."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from numpy_causal import splitmix64  # pylint: disable=import-outside-toplevel
    checked = 0
    for n, prompt, d, g in ((2, 1, 1, 1), (9, 4, 3, 2), (12, 3, 4, 3), (7, 6, 2, 0), (20, 10, 5, 2)):
        inputs = rng.uniform(-1.0, 1.0, (3, n, d))
        paths = []
        for name, x in zip("qkv", inputs):
            paths.append(os.path.join(tmp, "decode-" + name + ".npy"))
            np.save(paths[-1], x)
        q, k, v = inputs
        r = math.comb(d + g, g)
        for normalize in (True, False):
            nb = d + 1 if normalize else d
            for M in (3 * d + 3 * nb + 2, r * nb + 3 * d + 3 * nb + 2):
                out = os.path.join(tmp, "decode-a.npy")
                args = [binary, "--causal", "--decode", str(prompt), "-n", str(n), "-d", str(d),
                        "-g", str(g), "-M", str(M), "--values", "--q", paths[0], "--k", paths[1],
                        "--v", paths[2], "--json", "--output", out]
                run = subprocess.run(args + ([] if normalize else ["--no-normalize"]),
                                     capture_output=True, text=True, check=False)
                where = f"decode P = {prompt} n = {n} d = {d} g = {g} M = {M}{'' if normalize else ' unnormalised'}"
                if run.returncode != 0:
                    failures.append(f"{where}: exit {run.returncode}: {run.stderr.strip()}")
                    continue
                c = np.array(json.loads(run.stdout)["values"]["polynomial"]["coefficients"])
                w = splitmix64(1 ^ 0xD3C0DE, 3 * d * d, 1 / math.sqrt(d)).reshape(3, d, d)
                keys, values, last, expect = list(k[:prompt]), list(v[:prompt]), q[prompt - 1], []
                for _ in range(prompt, n):
                    qt, kt, vt = (np.tanh(w[m] @ last) for m in range(3))
                    keys.append(kt)
                    values.append(vt)
                    weights = polynomial.polyval(np.array(keys) @ qt / math.sqrt(d), c)
                    last = weights @ np.array(values) / (weights.sum() if normalize else 1.0)
                    expect.append(last)
                expect = np.array(expect)
                gap = np.max(np.abs(np.load(out) - expect))
                if not gap <= 1e-9 * np.max(np.abs(expect)):
                    failures.append(f"{where}: outputs {gap} from NumPy's recurrence")
                checked += 1
    return checked


def chebyshev_eta(beta, g, xs):
    c = chebyshev.cheb2poly(chebyshev.chebinterpolate(lambda t: np.exp(beta * t), g))
    c = c / beta ** np.arange(g + 1)
    return np.max(np.abs(polynomial.polyval(xs, c) * np.exp(-xs) - 1))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: numpy_polynomial.py PEBBLESIM")
    main(sys.argv[1])
