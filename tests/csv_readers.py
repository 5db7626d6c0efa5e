#!/usr/bin/python3
"""The sweep CSV read by the readers data scientists use (docs/CLI.md).

A sweep is run in three shards, merged, and partly merged (--partial);
each CSV is then read by
  - csv.DictReader: its first line is the header, every row has every
    field, and the numbers read back as the JSON of the same merge has them;
  - numpy.genfromtxt(names=True), which splits every line at its commas:
    the same columns and numbers;
  - pandas.read_csv, where python3-pandas is installed (skipped, and said
    so, where it is not): the same again.
Run by `make check` as `/usr/bin/python3 tests/csv_readers.py BINARY`;
without NumPy it fails (scripts/deps.sh installs python3-numpy).
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    sys.exit("csv_readers.py: NumPy is missing: apt-get install python3-numpy "
             "(scripts/deps.sh installs it)")
try:
    import pandas
except ImportError:
    pandas = None

SWEEP = ["-n", "256:4096:x2", "-d", "8", "-g", "2", "-M", "2k", "--predict",
         "--strategies", "colpass,flash,generic"]


def run(binary, *args):
    done = subprocess.run([binary, *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("csv_readers.py: pebblesim %s: exit %d: %s"
                 % (" ".join(args), done.returncode, done.stderr))
    return done.stdout


def check(path, want, shard):
    """path's rows against want (the JSON's rows): every reader the same."""
    with open(path, newline="") as f:
        header = f.readline().rstrip("\n").split(",")
        f.seek(0)
        rows = list(csv.DictReader(f))
    assert header[:3] == ["dag", "n", "d"] and header[-2:] == ["sweep", "shard"], header
    assert len(rows) == len(want), (path, len(rows), len(want))
    for row, w in zip(rows, want):
        assert None not in row and None not in row.values(), (path, row)
        assert row["strategy"] == w["strategy"] and int(row["n"]) == w["n"], (row, w)
        assert (row["io"] == "") == ("io" not in w), (row, w)
        if "io" in w:
            assert int(row["io"]) == w["io"], (row, w)
        assert row["sweep"].startswith("param=n range=256:4096:x2 d=8 g=2 M=2048"), row
        assert row["shard"] == shard, (row["shard"], shard)
    # numpy splits at every comma: no field may hold one
    table = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
    assert list(table.dtype.names) == header, (table.dtype.names, header)
    assert table.shape == (len(rows),), table.shape
    assert [int(v) for v in table["n"]] == [w["n"] for w in want]
    ran = [k for k, w in enumerate(want) if "io" in w]
    assert [int(table["io"][k]) for k in ran] == [want[k]["io"] for k in ran]
    if pandas is not None:
        frame = pandas.read_csv(path)
        assert list(frame.columns) == header, list(frame.columns)
        assert len(frame) == len(rows)
        assert [int(frame["io"][k]) for k in ran] == [want[k]["io"] for k in ran]
        assert list(frame["shard"]) == [shard] * len(rows)


def main(binary):
    with tempfile.TemporaryDirectory(prefix="pebblesim-csv-readers-") as tmp:
        shards = []
        for k in (1, 2, 3):
            path = os.path.join(tmp, "s%d.csv" % k)
            run(binary, "sweep", *SWEEP, "-j", "1", "--shard", "%d/3" % k, "--csv", path)
            shards.append(path)
        merged = os.path.join(tmp, "all.csv")
        want = json.loads(run(binary, "sweep", "--merge", *shards, "--json"))["rows"]
        run(binary, "sweep", "--merge", *shards, "--csv", merged)
        check(merged, want, "1/1")
        # a partial merge: the missing points are rows "not run", with a why
        partial = os.path.join(tmp, "part.csv")
        want = json.loads(run(binary, "sweep", "--merge", *shards[:2], "--partial",
                              "--json"))["rows"]
        run(binary, "sweep", "--merge", *shards[:2], "--partial", "--csv", partial)
        check(partial, want, "partial")
        assert any(w.get("why") == "in none of the files merged (--partial)" for w in want)
    print("csv_readers.py: the sweep CSV read alike by csv.DictReader, numpy.genfromtxt%s"
          % (" and pandas.read_csv" if pandas is not None
             else " (pandas.read_csv skipped: python3-pandas is not installed)"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: csv_readers.py BINARY")
    main(sys.argv[1])
