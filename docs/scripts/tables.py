#!/usr/bin/python3
"""Regenerates the tables of the docs that come from runs (`make docs-tables`).

    docs/scripts/tables.py PEBBLESIM [TABLE ...] [--rows EPSILON,D,M ...]

Each table sits in its document between the lines
    <!-- table NAME: begin (docs/scripts/tables.py) -->
    <!-- table NAME: end -->
and is replaced in place. Tables:
    values-eta   docs/VALUES.md: eta, the bound and the measured epsilon
                 for g = 1..8, B = 0.5, 1, 2 and each polynomial, d = 16
    frontier     docs/EXACT.md: `pebblesim frontier` at epsilon = 1e-2, 1e-3,
                 1e-4, d = 16 and 64, M = 8k and 64k (minimax, B = 1)
    frontier-decode  docs/EXACT.md: `pebblesim frontier --causal --decode P`
                 at n = P + 64, P = 1k .. 1M, d = 16, M = 8k, epsilon = 1e-2
                 and 1e-3, g by the a-priori bound (minimax, B = 1) and by
                 the measured per-step epsilon (Taylor, seed 1)
--rows reruns only the frontier rows named (e.g. --rows 1e-2,16,8k) and
keeps the others as the document has them.
"""
import json
import math
import re
import subprocess
import sys

KINDS = ("taylor", "chebyshev", "minimax")


def run_json(binary, args):
    out = subprocess.run([binary, *args, "--json"], capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        sys.exit(f"tables.py: {' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def number(x):
    return "none" if x is None else f"{x:.2e}"


def values_eta(binary):
    lines = ["| B | g | " + " | ".join(f"{k}: eta, bound, epsilon" for k in KINDS) + " |",
             "|---|---|" + "---|" * len(KINDS)]
    for bound in ("0.5", "1", "2"):
        for g in range(1, 9):
            cells = []
            for kind in KINDS:
                rep = run_json(binary, ["-n", "64", "-d", "16", "-g", str(g), "-M", "8k",
                                        "--strategy", "resident", "--values", "--entry-bound", bound,
                                        "--polynomial", kind])
                v = rep["values"]
                p = v["polynomial"]
                name = "" if p["name"] == kind else f" ({p['name']})"
                cells.append(f"{number(p['eta'])}, {number(p['bound'])}, "
                             f"{number(v['error_vs_softmax'])}{name}")
            lines.append(f"| {bound} | {g} | " + " | ".join(cells) + " |")
    return "docs/VALUES.md", "\n".join(lines)


FRONTIER_ROWS = [(eps, d, M) for eps in ("1e-2", "1e-3", "1e-4") for d in ("16", "64")
                 for M in ("8k", "64k")]


def frontier_row(binary, eps, d, M):
    rep = run_json(binary, ["frontier", "-n", "1k:1M:x4", "-d", d, "-M", M,
                            "--epsilon", eps, "--polynomial", "minimax"])
    return frontier_text(rep, eps, d, M)


def none_where(rep):
    """No interval: over the whole range where every n was compared, else
    at the n that were (frontier's `examined`)."""
    ex = rep["examined"]
    if ex["complete"]:
        return "none in [1024, 1048576]"
    every = ex["every_n"]
    count = (every["to"] - every["from"] + 1 if every else 0) + ex["grid_points_above"] + ex["bisection_points"]
    return f"none at the {count} n compared (an interval between two of them would not be seen)"


def frontier_text(rep, eps, d, M):
    p = rep["polynomial"]
    if p["g"] is None:
        return f"| {eps} | {d} | {M} | none up to 30 | - | no a-priori guarantee | - |"
    bound = p["bound"]
    if all(q["io"] is None for q in rep["points"]):
        r = math.comb(int(d) + p["g"], p["g"])
        return (f"| {eps} | {d} | {M} | {p['g']} | {bound:.2e} | not planned: r = C({int(d) + p['g']}, "
                f"{p['g']}) = {r:.2e} monomials, above pebblesim's limit of 2^26 | - |")
    where = ", ".join(f"[{i['from']}, {i['to']}]" for i in rep["intervals"]) or none_where(rep)
    conf = ", ".join(f"n = {c['n']}: {'yes' if c['simulated'] else 'too large'}"
                     for c in rep["confirmations"]) or "-"
    return f"| {eps} | {d} | {M} | {p['g']} | {bound:.2e} | {where} | {conf} |"


def table_lines(path, name):
    """The lines of table name as the document has them."""
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    m = re.search(r"<!-- table %s: begin[^\n]*-->\n(.*?)<!-- table %s: end -->"
                  % (re.escape(name), re.escape(name)), doc, re.S)
    return m.group(1).splitlines() if m else []


def frontier(binary, rows=None):
    lines = ["| epsilon | d | M | g (minimax) | bound | approximate attention moves less for n in | ends confirmed by simulation |",
             "|---|---|---|---|---|---|---|"]
    kept = {}
    for line in table_lines("docs/EXACT.md", "frontier")[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        kept[tuple(cells[:3])] = line
    for eps, d, M in FRONTIER_ROWS:
        if rows is not None and (eps, d, M) not in rows:
            if (eps, d, M) not in kept:
                sys.exit(f"tables.py: no row {eps},{d},{M} in docs/EXACT.md to keep: run it too")
            lines.append(kept[(eps, d, M)])
            continue
        lines.append(frontier_row(binary, eps, d, M))
        print(lines[-1], file=sys.stderr, flush=True)
    return "docs/EXACT.md", "\n".join(lines)


DECODE_PROMPTS = (1024, 4096, 16384, 65536, 262144, 1048576)


def frontier_decode(binary):
    """decoding 64 tokens at equal per-step accuracy, approximate against
    flash-decode, per generated token"""
    lines = ["| epsilon | g by | P | g | per-step epsilon | approximate I/O per token | "
             "flash-decode I/O per token | approximate / exact |",
             "|---|---|---|---|---|---|---|---|"]
    for eps in ("1e-2", "1e-3"):
        for how, extra in (("a-priori (minimax)", ["--polynomial", "minimax"]),
                           ("measured (taylor)", ["--bound", "measured"])):
            for P in DECODE_PROMPTS:
                rep = run_json(binary, ["frontier", "--causal", "--decode", str(P), "-n", str(P + 64),
                                        "-d", "16", "-M", "8k", "--epsilon", eps, *extra])
                g = rep["polynomial"]["g"]
                point = rep["points"][0] if rep["points"] else None
                if how.startswith("a-priori"):
                    at = f"bound {number(rep['polynomial']['bound'])}"
                else:
                    m = rep["measured"]
                    at = (f"{number(m['epsilon'])} ({m['prompt_rows']} prompt rows"
                          f"{'' if m['prompt_rows'] == P else ', not P'}; drift {number(m['drift'])})")
                if g is None or point is None or point["io"] is None:
                    cells = [f"{P:,}", "none" if g is None else str(g), at, "not planned", "-", "-"]
                else:
                    cells = [f"{P:,}", str(g), at,
                             f"{point['io_per_token']:,.2f} ({point['strategy']})",
                             f"{point['flash_io_per_token']:,.2f}",
                             f"{point['io'] / point['flash_io']:.3g}"]
                lines.append(f"| {eps} | {how} | " + " | ".join(cells) + " |")
                print(lines[-1], file=sys.stderr, flush=True)
    return "docs/EXACT.md", "\n".join(lines)


TABLES = {"values-eta": values_eta, "frontier": frontier, "frontier-decode": frontier_decode}


def splice(path, name, text):
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    pattern = re.compile(r"(<!-- table %s: begin[^\n]*-->\n).*?(<!-- table %s: end -->)"
                         % (re.escape(name), re.escape(name)), re.S)
    if not pattern.search(doc):
        sys.exit(f"tables.py: no markers of table {name} in {path}")
    doc = pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(2), doc)
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    args, rows = sys.argv[2:], None
    if "--rows" in args:
        at = args.index("--rows")
        rows = set()
        for spec in args[at + 1:]:
            row = tuple(spec.split(","))
            if row not in FRONTIER_ROWS:
                sys.exit(f"tables.py: unknown frontier row {spec}: "
                         + " ".join(",".join(r) for r in FRONTIER_ROWS))
            rows.add(row)
        args = args[:at]
    binary, names = sys.argv[1], args or list(TABLES)
    if rows is not None and names != ["frontier"]:
        sys.exit("tables.py: --rows selects rows of the frontier table only")
    for name in names:
        if name not in TABLES:
            sys.exit(f"tables.py: unknown table {name}: {', '.join(TABLES)}")
        path, text = TABLES[name](binary, rows) if name == "frontier" else TABLES[name](binary)
        splice(path, name, text)
        print(f"tables.py: {name} written to {path}")


if __name__ == "__main__":
    main()
