#!/usr/bin/python3
"""The Python module pebblesim (src/python/pebblesim), run by make check.

Each function's document is compared with the binary's --json on the same
arguments (every key but the time taken); Trace is validated in the
engine and its verdicts compared with the file's; errors carry the
library's message and exit status.

    PEBBLESIM_BIN=build/pebblesim PYTHONPATH=src/python /usr/bin/python3 tests/test_python.py

PEBBLESIM_LIBRARY, when set, names the libpebblesim.so to test (the
installed one, scripts/check-extending.sh).
"""

import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

import pebblesim

BIN = os.path.abspath(os.environ.get("PEBBLESIM_BIN", "build/pebblesim"))
PLUGIN = os.environ.get("PEBBLESIM_TEST_PLUGIN",
                        os.path.join(os.path.dirname(BIN), "plugins", "rowfused.so"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = os.path.join(ROOT, "examples", "tiny.jsonl")
TINY_BROKEN = os.path.join(ROOT, "examples", "tiny-broken.jsonl")


def binary(*args):
    """The binary's --json document and exit status."""
    p = subprocess.run([BIN] + list(args) + ["--json"], capture_output=True, text=True)
    return json.loads(p.stdout), p.returncode


def untimed(doc):
    """A document without the time it took (which differs run to run)."""
    if isinstance(doc, list):
        return [untimed(x) for x in doc]
    if isinstance(doc, dict):
        return {k: untimed(v) for k, v in doc.items() if k != "seconds"}
    return doc


class Documents(unittest.TestCase):
    def test_run(self):
        doc = pebblesim.run(n=64, d=4, g=2, M=100, strategy="keylemma")
        want, status = binary("run", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
                              "--strategy", "keylemma")
        self.assertEqual(status, 0)
        self.assertTrue(doc["valid"])
        self.assertIn("seconds", doc)
        self.assertEqual(untimed(doc), untimed(want))

    def test_run_options(self):
        doc = pebblesim.run(n=32, d=3, g=2, M=64, no_normalize=True, strategy="generic",
                            tiles="tall")
        want, _ = binary("-n", "32", "-d", "3", "-g", "2", "-M", "64", "--no-normalize",
                         "--strategy", "generic", "--tiles", "tall")
        self.assertFalse(doc["dag"]["normalize"])
        self.assertEqual(untimed(doc), untimed(want))
        exact = pebblesim.run(n=64, d=4, M=256, attention="exact")
        self.assertEqual(exact["strategy"], "flash")
        self.assertEqual(exact["dag"]["kind"], "exact-attention")

    def test_compare(self):
        doc = pebblesim.compare(n=32, d=4, g=2, M=100)
        want, _ = binary("compare", "-n", "32", "-d", "4", "-g", "2", "-M", "100")
        self.assertEqual(untimed(doc), untimed(want))
        self.assertIn("colpass", [row["strategy"] for row in doc])

    def test_sweep(self):
        doc = pebblesim.sweep(n="64:256:x2", d=4, g=2, M=512, predict=True,
                              strategies=["colpass", "flash"])
        want, _ = binary("sweep", "-n", "64:256:x2", "-d", "4", "-g", "2", "-M", "512",
                         "--predict", "--strategies", "colpass,flash")
        self.assertEqual(untimed(doc), untimed(want))
        self.assertEqual(sorted({row["value"] for row in doc["rows"]}), [64, 128, 256])

    def test_shards_merged(self):
        # sweep(shard=..., csv=...) twice, then sweep(merge=[...]): the whole sweep's rows
        options = dict(n="64:512:x2", d=4, g=2, M=512, predict=True, strategies=["colpass", "flash"])
        whole = pebblesim.sweep(**options)
        with tempfile.TemporaryDirectory() as tmp:
            shards = [os.path.join(tmp, "shard-%d.csv" % k) for k in (1, 2)]
            for k, path in enumerate(shards, 1):
                pebblesim.sweep(shard="%d/2" % k, csv=path, **options)
            merged = pebblesim.sweep(merge=shards)
            want, _ = binary("sweep", "--merge", *shards)
            with self.assertRaises(pebblesim.PebblesimError) as e:
                pebblesim.sweep(merge=shards[1:])
            self.assertIn("missing", e.exception.message)
        self.assertEqual(untimed(merged), untimed(want))
        self.assertEqual([(r["value"], r["strategy"], r["io"]) for r in merged["rows"]],
                         [(r["value"], r["strategy"], r["io"]) for r in whole["rows"]])
        with self.assertRaises(TypeError):
            pebblesim.sweep(merge="a.csv")

    def test_frontier_and_optimal(self):
        doc = pebblesim.frontier(n="16:64:x2", d=4, M=256, epsilon=0.1)
        want, _ = binary("frontier", "-n", "16:64:x2", "-d", "4", "-M", "256", "--epsilon", "0.1")
        self.assertEqual(untimed(doc), untimed(want))
        doc = pebblesim.optimal(n=2, d=1, g=1, M=9)
        want, _ = binary("optimal", "-n", "2", "-d", "1", "-g", "1", "-M", "9")
        self.assertEqual(untimed(doc), untimed(want))

    def test_jobs(self):
        # -j has no long name: the parameter is jobs
        self.assertEqual(untimed(pebblesim.compare(n=32, d=4, g=2, M=100, jobs=2)),
                         untimed(pebblesim.compare(n=32, d=4, g=2, M=100)))

    def test_list(self):
        names = [s["name"] for s in pebblesim.list_strategies()]
        want, _ = binary("list")
        self.assertEqual(names, [s["name"] for s in want])


class Validate(unittest.TestCase):
    def test_file_lines_and_text_agree(self):
        want, status = binary("validate", TINY)
        self.assertEqual(status, 0)
        with open(TINY) as f:
            lines = f.read().splitlines()
        for source in (TINY, lines, [json.loads(x) for x in lines],
                       ("\n".join(lines) + "\n").encode()):
            doc = pebblesim.validate(source)
            self.assertTrue(doc["valid"])
            for key in ("loads", "saves", "io", "peak_red", "lines", "strategy"):
                self.assertEqual(doc[key], want[key], key)

    def test_verdict(self):
        want, status = binary("validate", TINY_BROKEN)
        self.assertEqual(status, 1)
        with open(TINY_BROKEN) as f:
            lines = f.read().splitlines()
        doc = pebblesim.validate(lines)
        self.assertFalse(doc["valid"])
        # the same violation, at the same line; only the file's name differs
        self.assertEqual(doc["violation"]["rule"], want["violation"]["rule"])
        self.assertEqual(doc["violation"]["message"],
                         want["violation"]["message"].replace(TINY_BROKEN, "-"))
        self.assertEqual(pebblesim.validate(TINY_BROKEN, M=8)["valid"], False)

    def test_unreadable(self):
        with self.assertRaises(pebblesim.PebblesimError) as e:
            pebblesim.validate(['{"format":"pebblesim-trace"'])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("-:1", e.exception.message)
        with self.assertRaises(pebblesim.PebblesimError) as e:
            pebblesim.validate(os.path.join(ROOT, "no-such.jsonl"))
        self.assertTrue(e.exception.message.startswith("cannot open trace"), e.exception.message)


class Errors(unittest.TestCase):
    def test_message_and_code(self):
        with self.assertRaises(pebblesim.PebblesimError) as e:
            pebblesim.run(n=64, d=4, g=2, M=100, strategy="nope")
        self.assertEqual(e.exception.code, 2)
        self.assertTrue(e.exception.message.startswith("unknown strategy 'nope'; known: generic"),
                        e.exception.message)
        self.assertIn("pebblesim: unknown strategy", e.exception.details)
        self.assertEqual(e.exception.argv[:2], ["pebblesim", "run"])

    def test_option_of_another_command(self):
        # compare has no trace parameter: Python refuses the keyword by name
        with self.assertRaises(TypeError) as e:
            pebblesim.compare(n=8, d=2, g=1, M=64, trace="x.jsonl")
        self.assertIn("'trace'", str(e.exception))
        # through command(), the command refuses it
        status, _, err = pebblesim.command("compare", "-n", "8", "-d", "2", "-g", "1", "-M", "64",
                                           "--trace", "x.jsonl")
        self.assertEqual(status, 2)
        self.assertIn("option '--trace' does not apply to compare", err)

    def test_wrong_types_name_the_option(self):
        cases = [
            (dict(n=True), TypeError, "n: expected an integer, not bool"),
            (dict(d="4"), TypeError, "d: expected an integer, not str"),
            (dict(M=1.5), TypeError, "M: expected an integer, not float"),
            (dict(no_normalize=1), TypeError, "no_normalize: expected True or False, not int"),
            (dict(strategy=3), TypeError, "strategy: expected a str, not int"),
            (dict(entry_bound="1"), TypeError, "entry_bound: expected a number, not str"),
        ]
        for extra, error, message in cases:
            options = dict(n=8, d=2, g=1, M=64)
            options.update(extra)
            with self.assertRaises(error) as e:
                pebblesim.run(**options)
            self.assertEqual(str(e.exception), message)
        with self.assertRaises(TypeError) as e:
            pebblesim.compare(n=8, d=2, g=1, M=64, strategies=5)
        self.assertIn("strategies: expected a str or a list of str", str(e.exception))
        with self.assertRaises(ValueError) as e:
            pebblesim.compare(n=8, d=2, g=1, M=64, strategies=["flash,colpass"])
        self.assertIn("strategies:", str(e.exception))
        with self.assertRaises(TypeError) as e:
            pebblesim.validate(42)
        self.assertIn("path_or_lines", str(e.exception))

    def test_nul_byte(self):
        # a NUL byte would cut the argument: strategy='key\0lemma' ran as keylemma's prefix
        with self.assertRaises(ValueError) as e:
            pebblesim.run(n=64, d=4, g=2, M=100, strategy="key\0lemma")
        self.assertIn("strategy: a NUL byte", str(e.exception))
        with self.assertRaises(ValueError) as e:
            pebblesim.command("run", "-n", "64", "-d", "4", "-g", "2", "-M", "100",
                              "--strategy", "key\0lemma")
        self.assertIn("a NUL byte", str(e.exception))
        with self.assertRaises(ValueError):
            pebblesim.validate(TINY + "\0x")
        with self.assertRaises(ValueError):
            pebblesim.Trace(n=2, d=1, g=1, M=9, strategy="a\0b")

    def test_trace_to_standard_output(self):
        # the interpreter's standard output (fd 1) must stay untouched
        with tempfile.TemporaryFile() as fd1:
            sys.stdout.flush()
            saved = os.dup(1)
            os.dup2(fd1.fileno(), 1)
            try:
                with self.assertRaises(ValueError) as e:
                    pebblesim.run(n=8, d=2, g=1, M=64, trace="-")
                status, output, err = pebblesim.command("run", "-n", "8", "-d", "2", "-g", "1",
                                                        "-M", "64", "--trace", "-")
                ostatus, ooutput, _ = pebblesim.command("optimal", "-n", "2", "-d", "1", "-g", "1",
                                                        "-M", "9", "--trace=-")
            finally:
                os.dup2(saved, 1)
                os.close(saved)
            fd1.seek(0)
            self.assertEqual(fd1.read(), b"")
        self.assertIn("trace: '-' is standard output", str(e.exception))
        # command() captures the trace as the command's output, the report on stderr
        self.assertEqual(status, 0)
        lines = output.splitlines()
        self.assertEqual(json.loads(lines[0])["format"], "pebblesim-trace")
        self.assertEqual(json.loads(lines[-1])["op"], "end")
        self.assertIn("fast memory", err)
        self.assertEqual(pebblesim.validate(lines)["io"], json.loads(lines[-1])["loads"] +
                         json.loads(lines[-1])["saves"])
        self.assertEqual(ostatus, 0)
        self.assertEqual(json.loads(ooutput.splitlines()[0])["format"], "pebblesim-trace")

    def test_value_with_a_dash_stays_a_value(self):
        with self.assertRaises(pebblesim.PebblesimError) as e:
            pebblesim.run(n=8, d=2, g=1, M=64, strategy="--help")
        self.assertIn("unknown strategy '--help'", e.exception.message)
        with self.assertRaises(pebblesim.PebblesimError) as e:
            pebblesim.run(n="-5", d=2, g=1, M=64)
        self.assertIn("invalid value '-5' for -n", e.exception.message)

    def test_json_keyword(self):
        with self.assertRaises(TypeError):
            pebblesim.run(n=8, d=2, g=1, M=64, json=True)


class Signatures(unittest.TestCase):
    def test_options_as_parameters(self):
        table = json.loads(subprocess.run([BIN, "__complete", "table"], capture_output=True,
                                          text=True, check=True).stdout)
        commands = {c["name"]: c for c in table}
        functions = {"run": pebblesim.run, "compare": pebblesim.compare,
                     "sweep": pebblesim.sweep, "frontier": pebblesim.frontier,
                     "optimal": pebblesim.optimal, "list": pebblesim.list_strategies,
                     "validate": pebblesim.validate}
        for name, function in functions.items():
            params = inspect.signature(function).parameters
            for o in commands[name]["options"]:
                if o["long"] in ("json", "help") or o["short"] == "h":
                    continue
                key = o["long"].replace("-", "_") if o["long"] else \
                    {"j": "jobs", "o": "output"}.get(o["short"], o["short"])
                self.assertIn(key, params, "%s: %s" % (name, key))
                self.assertIsNot(params[key].annotation, inspect.Parameter.empty)
                self.assertEqual(params[key].kind, inspect.Parameter.KEYWORD_ONLY)
                # the docstring carries the option's help
                first = o["help"].split("\n")[0].split()[0]
                self.assertIn("%s: %s" % (key, "--" + o["long"] if o["long"] else "-" + o["short"]),
                              function.__doc__)
                self.assertIn(first, function.__doc__)
        run = inspect.signature(pebblesim.run).parameters
        self.assertEqual(str(run["M"].annotation), "int | str | None")
        self.assertEqual(run["no_normalize"].default, False)
        self.assertIn("strategy: --strategy NAME", pebblesim.run.__doc__)

    def test_module_written_from_the_table(self):
        # _commands.py is the table's: src/python/gen_commands.py writes it again
        generator = os.path.join(ROOT, "src", "python", "gen_commands.py")
        written = os.path.join(os.path.dirname(pebblesim.__file__), "_commands.py")
        p = subprocess.run([sys.executable, generator, BIN], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(written) as f:
            self.assertEqual(f.read(), p.stdout,
                             "src/python/pebblesim/_commands.py differs from the table: "
                             "run src/python/gen_commands.py build/pebblesim > it")

    def test_version(self):
        out = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout
        self.assertEqual(out.split()[-1], pebblesim.__version__)
        self.assertEqual(pebblesim.library_version(), pebblesim.__version__)


class Tables(unittest.TestCase):
    def test_sweep_as_arrays(self):
        import numpy
        doc = pebblesim.sweep(n="64:256:x2", d=4, g=2, M=512, predict=True,
                              strategies=["colpass", "flash"])
        rows = pebblesim.to_numpy(doc)
        self.assertEqual(len(rows), len(doc["rows"]))
        self.assertEqual(rows["io"].dtype, numpy.int64)
        colpass = rows[rows["strategy"] == "colpass"]
        self.assertEqual(list(colpass["value"]), [64, 128, 256])
        self.assertEqual(list(colpass["io"]),
                         [r["io"] for r in doc["rows"] if r["strategy"] == "colpass"])
        # nested objects are columns; a null in a numeric column is NaN
        self.assertEqual(list(rows["by_array.Q.loads"]),
                         [r["by_array"]["Q"]["loads"] for r in doc["rows"]])
        self.assertEqual(rows["upper"].dtype, numpy.float64)
        self.assertTrue(numpy.isnan(rows["upper"][rows["strategy"] == "colpass"]).all())

    def test_compare_as_records(self):
        doc = pebblesim.compare(n=32, d=4, g=2, M=100)
        rows = pebblesim.records(doc)
        self.assertEqual([r["strategy"] for r in rows], [r["strategy"] for r in doc])
        self.assertEqual(rows[0]["dag.kind"], "approx-attention")
        self.assertEqual(list(pebblesim.to_numpy(doc)["io"]), [r["io"] for r in doc])

    def test_trace_as_rows(self):
        want = pebblesim.validate(TINY)
        for source in (TINY, TraceBuilder().tiny()):
            rows = pebblesim.to_numpy(source)
            self.assertEqual(int(rows["io"].sum()), want["io"])
            self.assertEqual(int((rows["op"] == "load").sum() + (rows["op"] == "save").sum()),
                             sum(1 for r in pebblesim.records(source) if r["io"]))
        t = pebblesim.Trace(n=4, d=2, g=1, M=20)
        t.load("Q", i=range(4), a=[0, 1])
        (row,) = pebblesim.records(t)
        self.assertEqual((row["op"], row["kind"], row["nodes"], row["io"]), ("load", "Q", 8, 8))

    def test_without_pandas(self):
        # where pandas cannot be imported: to_pandas says what to install,
        # the other tables work
        code = ("import sys; sys.modules['pandas'] = None\n"
                "import pebblesim\n"
                "doc = pebblesim.sweep(n='64:128:x2', d=4, g=2, M=512, predict=True)\n"
                "print(len(pebblesim.to_numpy(doc)), len(pebblesim.records(doc)))\n"
                "try:\n    pebblesim.to_pandas(doc)\nexcept ImportError as e:\n    print(e)\n")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        counts, message = p.stdout.splitlines()[:2]
        self.assertEqual(counts.split()[0], counts.split()[1])
        self.assertIn("to_pandas needs pandas (Debian: python3-pandas)", message)

    def test_pandas_where_installed(self):
        doc = pebblesim.sweep(n="64:128:x2", d=4, g=2, M=512, predict=True,
                              strategies=["colpass", "flash"])
        try:
            import pandas
        except ImportError:
            with self.assertRaises(ImportError) as e:
                pebblesim.to_pandas(doc)
            self.assertIn("python3-pandas", str(e.exception))
            return
        frame = pebblesim.to_pandas(doc)
        self.assertIsInstance(frame, pandas.DataFrame)
        self.assertEqual(len(frame), len(doc["rows"]))
        self.assertEqual(list(frame["io"]), [r["io"] for r in doc["rows"]])
        self.assertEqual(len(pebblesim.to_pandas(TINY)), len(pebblesim.records(TINY)))


class Package(unittest.TestCase):
    def test_pip_install(self):
        """pip install --no-build-isolation: the module finds its library
        without LD_LIBRARY_PATH, from a directory away from the sources."""
        sources = os.path.join(ROOT, "src", "python", "pebblesim")
        if os.path.dirname(os.path.abspath(pebblesim.__file__)) != sources:
            self.skipTest("the module tested is an installed one (check-extending)")
        with tempfile.TemporaryDirectory() as target:
            env = {k: v for k, v in os.environ.items()
                   if k not in ("LD_LIBRARY_PATH", "PEBBLESIM_LIBRARY", "PYTHONPATH")}
            p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index",
                                "--no-build-isolation", "--no-deps", "--target",
                                os.path.join(target, "site"), ROOT],
                               capture_output=True, text=True, env=env)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            env["PYTHONPATH"] = os.path.join(target, "site")
            code = ("import pebblesim, json; print(json.dumps([pebblesim.__file__, "
                    "pebblesim.__version__, pebblesim.run(n=64, d=4, g=2, M=100)['io'], "
                    "pebblesim.run(dag=%r, M=5, strategy='belady')['valid']]))"
                    % os.path.join(ROOT, "examples", "tree.graphml"))
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               env=env, cwd=target)
            self.assertEqual(p.returncode, 0, p.stderr)
            where, version, io, valid = json.loads(p.stdout)
            self.assertTrue(where.startswith(os.path.join(target, "site")), where)
            self.assertEqual(version, pebblesim.__version__)
            self.assertEqual(io, pebblesim.run(n=64, d=4, g=2, M=100)["io"])
            self.assertTrue(valid)
            self.assertTrue(os.path.exists(os.path.join(target, "site", "pebblesim",
                                                        "libpebblesim.so")))


class TraceBuilder(unittest.TestCase):
    def tiny(self):
        """examples/tiny.jsonl, written with Trace's set operations."""
        t = pebblesim.Trace(n=2, d=1, g=1, M=9, strategy="hand-written")
        for j in range(2):
            t.load("K", j=j, a=0).load("V", j=j, b=0)
            t.mac("H", j=j, m=[0, 1], b=range(2), fuse=True)
            t.delete("K", j=j, a=0).delete("V", j=j, b=0)
        for i in range(2):
            t.load("Q", i=i, a=0)
            t.mac("N", i=i, m=range(2), b=[0, 1], fuse=True)
            t.compute("A", i=i, b=0).save("A", i=i, b=0)
            t.delete("Q", i=i, a=0).delete("N", i=i, b=range(2)).delete("A", i=i, b=0)
        return t

    def test_valid(self):
        t = self.tiny()
        doc = t.validate()
        self.assertTrue(doc["valid"], doc.get("violation"))
        self.assertEqual(doc["lines"], len(t) + 1)
        self.assertEqual(doc["strategy"], "hand-written")
        # the same counts as the hand-written file: 2 K, 2 V, 2 Q loads; 2 saves
        want, _ = binary("validate", TINY)
        for key in ("loads", "saves", "macs", "computes"):
            self.assertEqual(doc[key], want[key], key)

    def test_lines(self):
        t = pebblesim.Trace(n=4, d=2, g=1, M=20)
        t.load("Q", i=range(0, 4, 2), a=range(2))
        self.assertEqual(json.loads(t.lines()[1]),
                         {"op": "load", "kind": "Q", "i": [0, 2], "a": {"lo": 0, "hi": 2}})
        header = json.loads(t.lines()[0])
        self.assertEqual(header["dag"], {"kind": "approx-attention", "n": 4, "d": 2, "g": 1,
                                         "normalize": True})

    def test_broken_rule(self):
        t = self.tiny()
        t.load("A", i=0, b=0)          # line 26: A[0,0] was saved; valid
        t.save("N", i=0, b=1)          # line 27: N[0,1] was deleted unsaved
        doc = t.validate()
        self.assertFalse(doc["valid"])
        self.assertTrue(doc["violation"]["message"].startswith("-:27: save N[0,1]"),
                        doc["violation"])
        # the same trace given as its lines: the same verdict
        want = pebblesim.validate(t.lines())
        self.assertEqual(doc["violation"], want["violation"])
        # under less memory the first violation comes earlier
        self.assertFalse(self.tiny().validate(M=4)["valid"])

    def test_write(self):
        path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "pebblesim-test-python-%d.jsonl" % os.getpid())
        try:
            self.tiny().write(path)
            self.assertTrue(pebblesim.validate(path)["valid"])
        finally:
            os.unlink(path)

    def test_kinds_and_coordinates(self):
        t = pebblesim.Trace(n=2, d=1, g=1, M=9)
        with self.assertRaises(ValueError) as e:
            t.load("Z", j=0)
        self.assertEqual(str(e.exception), "kind: 'Z' is not a kind of approximate attention's "
                         "DAG: Q, K, V, U1, U2, H, N, A, P2, P1")
        with self.assertRaises(ValueError) as e:
            t.load("K", j=0)
        self.assertEqual(str(e.exception), "load K needs the coordinate a")
        with self.assertRaises(ValueError) as e:
            t.load("K", j=0, a=0, b=0)
        self.assertEqual(str(e.exception), "load K takes the coordinates j, a, not 'b'")
        with self.assertRaises(ValueError) as e:
            t.mac("A", i=0, m=0, b=0)
        self.assertIn("'A' is not a sum a mac goes into", str(e.exception))
        with self.assertRaises(TypeError) as e:
            t.load("K", j="0", a=0)
        self.assertIn("j: expected an integer", str(e.exception))
        with self.assertRaises(ValueError) as e:
            t.load("K", j=-1, a=0)
        self.assertEqual(str(e.exception), "j: -1 is negative")
        with self.assertRaises(ValueError):
            pebblesim.Trace(n=2, d=1, M=9, attention="exact").load("U1", i=0, m=0)
        with self.assertRaises(TypeError) as e:
            pebblesim.Trace(n="2", d=1, g=1, M=9)
        self.assertIn("n: expected an integer", str(e.exception))
        self.assertEqual(len(t), 0)

    def test_exact(self):
        with self.assertRaises(ValueError):
            pebblesim.Trace(n=4, d=2, g=1, M=20, attention="exact")
        t = pebblesim.Trace(n=1, d=1, M=16, attention="exact")
        t.load("Q", i=0, a=0).load("K", j=0, a=0).load("V", j=0, b=0)
        t.mac("S", i=0, j=0, a=0)
        t.mac("O", i=0, j=0, b=range(2), fuse=True)
        t.compute("A", i=0, b=0).save("A", i=0, b=0)
        doc = t.validate()
        self.assertTrue(doc["valid"], doc.get("violation"))
        self.assertEqual((doc["loads"], doc["saves"]), (3, 1))


class Plugin(unittest.TestCase):
    def test_plugin(self):
        self.assertTrue(os.path.exists(PLUGIN), PLUGIN + " (make check builds it)")
        names = [s["name"] for s in pebblesim.list_strategies(plugin=PLUGIN)]
        self.assertEqual(names[-1], "rowfused")
        doc = pebblesim.run(n=16, d=3, g=2, M=64, strategy="rowfused", plugin=PLUGIN)
        self.assertTrue(doc["valid"])
        self.assertEqual(doc["predicted_io"], doc["io"])
        # unloaded after the call
        self.assertNotIn("rowfused", [s["name"] for s in pebblesim.list_strategies()])


class Threads(unittest.TestCase):
    def test_concurrent_calls(self):
        results = {}

        def work(M):
            results[M] = pebblesim.run(n=64, d=4, g=2, M=M, strategy="colpass")["io"]

        threads = [threading.Thread(target=work, args=(M,)) for M in (64, 100, 256, 512)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for M, io in results.items():
            self.assertEqual(io, binary("-n", "64", "-d", "4", "-g", "2", "-M", str(M),
                                        "--strategy", "colpass")[0]["io"])


class Example(unittest.TestCase):
    def test_row_blocks(self):
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(pebblesim.__file__)))
        p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "row_blocks.py"),
                            "-n", "64", "-d", "3", "-g", "2", "-M", "64"],
                           capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("(agrees)", p.stdout)
        self.assertIn("colpass ", p.stdout)
        self.assertIn("flash (exact) ", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=1)
