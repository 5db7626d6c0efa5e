#!/usr/bin/python3
"""An independent check of causal attention's values (MODEL.md section 7).

For several n and d, with and without normalisation, a causal run of flash
with values on inputs written here writes its outputs; NumPy recomputes
softmax over j <= i of Q K^T / sqrt d, times V (without normalisation
exp(Q K^T / sqrt d) V over j <= i), which must equal the run's to 1e-9 of
the largest. Run by `make check` as
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
    for f in failures:
        print("numpy_causal.py: " + f, file=sys.stderr)
    if failures or checked < 24:
        sys.exit(f"numpy_causal.py: {len(failures)} failures in {checked} runs")
    print(f"numpy_causal.py: {checked} causal runs: the outputs agree with NumPy's masked softmax")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: numpy_causal.py PEBBLESIM")
    main(sys.argv[1])
