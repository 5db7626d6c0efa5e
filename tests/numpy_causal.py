#!/usr/bin/python3
"""An independent check of causal attention's values (MODEL.md sections 7, 8).

For several n and d, with and without normalisation, a causal run of flash
with values on inputs written here writes its outputs; NumPy recomputes
softmax over j <= i of Q K^T / sqrt d, times V (without normalisation
exp(Q K^T / sqrt d) V over j <= i), which must equal the run's to 1e-9 of
the largest. Decoding (--decode P) is checked the same way: NumPy draws
the stand-in's matrices from splitmix64 as docs/VALUES.md fixes it and
runs the recurrence from A[P-1] (Q's row P-1) and the prompt's cache.
`frontier --decode P --bound measured` is checked too: NumPy draws its
random prompt from splitmix64 with the seed, runs the recurrence with the
polynomial the frontier chose (its coefficients), and recomputes the
per-step epsilon (at each generated row, |A[t] - softmax of the same q_t
over the same keys and values|) and the drift (against the recurrence run
with softmax), which must equal the frontier's to 1e-9 relative.
Run by `make check` as
`/usr/bin/python3 tests/numpy_causal.py BINARY`; without NumPy it fails.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    sys.exit("numpy_causal.py: NumPy is missing: apt-get install python3-numpy "
             "(scripts/deps.sh installs it)")


def expected(q, k, v, normalize):
    n, d = q.shape
    scores = q @ k.T / math.sqrt(d)
    mask = np.tril(np.ones((n, n), dtype=bool))
    if normalize:
        scores = np.where(mask, scores, -np.inf)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        return weights @ v / weights.sum(axis=1, keepdims=True)
    return np.where(mask, np.exp(scores), 0.0) @ v


MASK64 = (1 << 64) - 1


def splitmix64(seed, count, bound):
    """count draws uniform in [-bound, bound), as src/values.c draws them"""
    state, out = seed, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        out.append((2.0 * ((z >> 11) * 2.0 ** -53) - 1.0) * bound)
    return np.array(out)


def decoded(q, k, v, prompt, normalize, seed=1, bound=1.0):
    """the generated rows' outputs, by the recurrence of MODEL.md section 8"""
    n, d = q.shape
    w = splitmix64(seed ^ 0xD3C0DE, 3 * d * d, 1 / math.sqrt(d)).reshape(3, d, d)
    keys, values, last, outs = list(k[:prompt]), list(v[:prompt]), q[prompt - 1], []
    for _ in range(prompt, n):
        qt, kt, vt = (bound * np.tanh(w[m] @ last) for m in range(3))
        keys.append(kt)
        values.append(vt)
        x = np.array(keys) @ qt / math.sqrt(d)
        e = np.exp(x - x.max()) if normalize else np.exp(x)
        last = e @ np.array(values) / (e.sum() if normalize else 1.0)
        outs.append(last)
    return np.array(outs)


def decode_epsilon(q, k, v, prompt, coefficients, seed, bound):
    """the per-step epsilon and the drift of the recurrence run with the
    polynomial of these coefficients (docs/VALUES.md "The per-step
    epsilon")"""
    n, d = q.shape
    w = splitmix64(seed ^ 0xD3C0DE, 3 * d * d, 1 / math.sqrt(d)).reshape(3, d, d)
    poly = np.polynomial.Polynomial(coefficients)
    runs = []
    for approximate in (True, False):
        keys, values, last, outs, steps = list(k[:prompt]), list(v[:prompt]), q[prompt - 1], [], []
        for _ in range(prompt, n):
            qt, kt, vt = (bound * np.tanh(w[m] @ last) for m in range(3))
            keys.append(kt)
            values.append(vt)
            x = np.array(keys) @ qt / math.sqrt(d)
            e = np.exp(x - x.max())
            softmax = e @ np.array(values) / e.sum()
            weights = poly(x) if approximate else e
            last = weights @ np.array(values) / weights.sum()
            outs.append(last)
            steps.append(np.max(np.abs(last - softmax)))
        runs.append((np.array(outs), max(steps)))
    return runs[0][1], float(np.max(np.abs(runs[0][0] - runs[1][0])))


def check_frontier(binary, failures):
    """frontier --decode's measured per-step epsilon and drift, again"""
    checked = 0
    for prompt, tokens, d, bound, kind, seed in ((16, 24, 3, 1.0, "taylor", 1),
                                                 (40, 8, 4, 0.5, "minimax", 5),
                                                 (7, 33, 2, 1.5, "chebyshev", 2)):
        args = [binary, "frontier", "--causal", "--decode", str(prompt), "-n",
                f"{prompt + 1}:{prompt + tokens}", "-d", str(d), "-M", "4k", "--epsilon", "1e-3",
                "--bound", "measured", "--polynomial", kind, "--entry-bound", str(bound),
                "--seed", str(seed), "--json"]
        where = " ".join(args[1:])
        run = subprocess.run(args, capture_output=True, text=True, check=False)
        if run.returncode != 0:
            failures.append(f"{where}: exit {run.returncode}: {run.stderr.strip()}")
            continue
        report = json.loads(run.stdout)
        measured = report["measured"]
        if (measured["prompt_rows"], measured["tokens"]) != (prompt, tokens):
            failures.append(f"{where}: measured on {measured['prompt_rows']} + {measured['tokens']} rows")
            continue
        n = prompt + tokens
        x = splitmix64(seed, 3 * n * d, bound).reshape(3, n, d)
        epsilon, drift = decode_epsilon(*x, prompt, report["polynomial"]["coefficients"], seed, bound)
        for name, want, got in (("per-step epsilon", epsilon, measured["epsilon"]),
                                ("drift", drift, measured["drift"])):
            if not abs(got - want) <= 1e-9 * abs(want):
                failures.append(f"{where}: {name} {got}, NumPy's {want}")
        checked += 1
    return checked


def main(binary):
    rng = np.random.default_rng(7)
    failures = []
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1, 5, 24, 61):
            for d in (1, 3, 8):
                inputs = rng.uniform(-1.5, 1.5, (3, n, d))
                paths = []
                for name, x in zip("qkv", inputs):
                    paths.append(os.path.join(tmp, name + ".npy"))
                    np.save(paths[-1], x)
                for normalize in (True, False):
                    out = os.path.join(tmp, "out.npy")
                    args = [binary, "--attention", "exact", "--causal", "-n", str(n),
                            "-d", str(d), "-M", str(8 * d + 64), "--values", "--q", paths[0],
                            "--k", paths[1], "--v", paths[2], "--json", "--output", out]
                    if not normalize:
                        args.append("--no-normalize")
                    run = subprocess.run(args, capture_output=True, text=True, check=False)
                    where = f"n = {n} d = {d}{'' if normalize else ' --no-normalize'}"
                    if run.returncode != 0:
                        failures.append(f"{where}: exit {run.returncode}: {run.stderr.strip()}")
                        continue
                    report = json.loads(run.stdout)
                    if report["dag"].get("causal") is not True or not report["valid"]:
                        failures.append(f"{where}: the report is not of a valid causal run")
                    want = expected(*inputs, normalize)
                    gap = np.max(np.abs(np.load(out)[:, :d] - want))
                    if not gap <= 1e-9 * np.max(np.abs(want)):
                        failures.append(f"{where}: outputs {gap} from NumPy's")
                    checked += 1
                    for prompt in sorted({1, n // 2, n - 1} - {0}):
                        if prompt >= n:
                            continue
                        run = subprocess.run(args + ["--decode", str(prompt)], capture_output=True,
                                             text=True, check=False)
                        where_p = f"{where} --decode {prompt}"
                        if run.returncode != 0:
                            failures.append(f"{where_p}: exit {run.returncode}: {run.stderr.strip()}")
                            continue
                        want = decoded(*inputs, prompt, normalize)
                        gap = np.max(np.abs(np.load(out) - want))
                        if not gap <= 1e-9 * np.max(np.abs(want)):
                            failures.append(f"{where_p}: outputs {gap} from NumPy's recurrence")
                        checked += 1
    frontiers = check_frontier(binary, failures)
    for f in failures:
        print("numpy_causal.py: " + f, file=sys.stderr)
    if failures or checked < 60 or frontiers < 3:
        sys.exit(f"numpy_causal.py: {len(failures)} failures in {checked} runs and {frontiers} frontiers")
    print(f"numpy_causal.py: {checked} causal and decoding runs: the outputs agree with NumPy's; "
          f"{frontiers} frontier --decode runs: the per-step epsilon and the drift agree with NumPy's")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: numpy_causal.py PEBBLESIM")
    main(sys.argv[1])
