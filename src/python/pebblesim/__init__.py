"""pebblesim from Python: the red-blue pebble game on the DAG of attention.

A thin layer over libpebblesim.so (ctypes, the standard library only). The
commands run inside this process, and each function returns the document
that `pebblesim COMMAND ... --json` prints, parsed (docs/pebblesim.schema.json):

    >>> import pebblesim
    >>> r = pebblesim.run(n=64, d=4, g=2, M=100, strategy="keylemma")
    >>> r["valid"], r["io"]
    (True, ...)

Keyword arguments are the command's options: `M=8192` is `-M 8192`,
`no_normalize=True` is `--no-normalize`, `strategies=["flash", "colpass"]`
is `--strategies flash,colpass`; False and None leave an option out. The
command checks them as on the command line: an option it does not take is
refused by name.

A verdict is a result: an invalid sequence gives a document with
"valid": false. Bad usage or input raises PebblesimError, carrying the
library's message and the command's exit status (2).

Trace writes a pebbling sequence in Python, operation by operation as the
trace format has them (docs/TRACE_FORMAT.md), and validates it in the
engine without a file: this is how a strategy is written in Python
(docs/EXTENDING.md).

The library is found through the PEBBLESIM_LIBRARY environment variable
(a path to libpebblesim.so), then where `make install` put it, then in
the build tree beside these sources, then where the dynamic loader looks.
"""

import ctypes
import json
import os
import threading

__all__ = [
    "PebblesimError", "Trace", "command", "compare", "library_version",
    "list_strategies", "run", "sweep", "validate",
]

# PS_EXIT_USAGE: bad usage or input (MODEL.md section 4)
EXIT_USAGE = 2


class PebblesimError(Exception):
    """A command refused its options or its input.

    message: the library's message (its first line, without "pebblesim: ");
    code: the command's exit status, 2 (bad usage or input);
    details: everything the command wrote on standard error;
    argv: the command, as the command line would take it.
    """

    def __init__(self, message, code, details="", argv=()):
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details
        self.argv = list(argv)


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("PEBBLESIM_LIBRARY")
    if env:
        yield env
        return
    try:
        from . import _install  # written by make install
        yield os.path.join(_install.LIBDIR, "libpebblesim.so")
    except ImportError:
        pass
    # the sources: src/python/pebblesim beside build/
    yield os.path.join(here, "..", "..", "..", "build", "libpebblesim.so")
    yield "libpebblesim.so.0"
    yield "libpebblesim.so"


_lib = None
_lock = threading.Lock()


def _library():
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (no such file)")
            continue
        try:
            # RTLD_GLOBAL: a plugin linked without -lpebblesim still finds it
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        lib.ps_script_command.argtypes = [
            ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.c_char_p,
            ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_void_p)]
        lib.ps_script_command.restype = ctypes.c_int
        lib.ps_script_free.argtypes = [ctypes.c_void_p]
        lib.ps_script_free.restype = None
        lib.ps_script_version.argtypes = []
        lib.ps_script_version.restype = ctypes.c_char_p
        _lib = lib
        return lib
    raise PebblesimError("cannot load libpebblesim: tried " + "; ".join(tried)
                         + " (set PEBBLESIM_LIBRARY to its path)", EXIT_USAGE)


def library_version():
    """The version of the libpebblesim loaded ("0.1.0")."""
    return _library().ps_script_version().decode()


def _take(pointer):
    if not pointer:
        return ""
    text = ctypes.string_at(pointer).decode("utf-8", "replace")
    _library().ps_script_free(pointer)
    return text


def command(*args, input=None):
    """Runs `pebblesim ARGS...` in this process.

    Returns (status, output, diagnostics): the exit status (0 valid, 1 an
    invalid sequence or a bound contradicted, 2 bad usage or input) and
    what the command wrote on standard output and standard error. input
    (str or bytes) is what an operand "-" reads, in place of standard
    input. No shell is involved: each argument is one argument.
    """
    lib = _library()
    argv = ["pebblesim"] + [os.fspath(a) if isinstance(a, os.PathLike) else str(a)
                            for a in args]
    encoded = [a.encode() for a in argv]
    array = (ctypes.c_char_p * len(encoded))(*encoded)
    if isinstance(input, str):
        input = input.encode()
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    with _lock:
        status = lib.ps_script_command(len(encoded), array, input,
                                       len(input) if input is not None else 0,
                                       ctypes.byref(out), ctypes.byref(err))
    output, diagnostics = _take(out.value), _take(err.value)
    if status < 0:
        raise PebblesimError("out of memory running pebblesim", EXIT_USAGE,
                             diagnostics, argv)
    return status, output, diagnostics


def _options(options):
    """Keyword arguments as the command line's options."""
    args = []
    for key, value in options.items():
        if key == "json":
            raise TypeError("json: every function of this module returns the --json document")
        if value is None or value is False:
            continue
        name = key.replace("_", "-")
        flag = ("-" if len(name) == 1 else "--") + name
        if value is True:
            args.append(flag)
            continue
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        elif isinstance(value, os.PathLike):
            value = os.fspath(value)
        # one argument with its value: a value that starts with a dash
        # stays a value
        args.append(flag + str(value) if len(name) == 1 else "%s=%s" % (flag, value))
    return args


def _document(args, input=None):
    status, output, diagnostics = command(*args, input=input)
    if status == EXIT_USAGE or not output.strip():
        first = diagnostics.strip().splitlines()[0] if diagnostics.strip() else \
            "pebblesim %s failed with exit status %d" % (" ".join(args), status)
        if first.startswith("pebblesim: "):
            first = first[len("pebblesim: "):]
        raise PebblesimError(first, status, diagnostics, ["pebblesim"] + list(args))
    return json.loads(output)


def run(**options):
    """`pebblesim run ... --json`: one strategy's sequence validated in the
    engine, its counts beside its prediction and the bounds."""
    return _document(["run"] + _options(options) + ["--json"])


def compare(**options):
    """`pebblesim compare ... --json`: every strategy on the same DAG."""
    return _document(["compare"] + _options(options) + ["--json"])


def sweep(**options):
    """`pebblesim sweep ... --json`: n, d, g or M swept, e.g.
    sweep(n="64:1k:x2", d=4, g=2, M=512, predict=True)."""
    return _document(["sweep"] + _options(options) + ["--json"])


def list_strategies(**options):
    """`pebblesim list --json`: the strategies (plugin="x.so" adds a plugin's)."""
    return _document(["list"] + _options(options) + ["--json"])


def validate(path_or_lines, **options):
    """`pebblesim validate ... --json`: a trace replayed in the engine.

    path_or_lines: a file name (str or os.PathLike); a Trace; the trace's
    text (bytes); or its lines, each a str or a dict (one operation). Only
    a file name is read from disk.
    """
    args = ["validate"] + _options(options) + ["--json", "--"]
    if isinstance(path_or_lines, (str, os.PathLike)):
        return _document(args + [os.fspath(path_or_lines)])
    if isinstance(path_or_lines, Trace):
        text = path_or_lines.text()
    elif isinstance(path_or_lines, (bytes, bytearray)):
        text = bytes(path_or_lines)
    else:
        text = "".join((json.dumps(line, separators=(",", ":"))
                        if isinstance(line, dict) else str(line).rstrip("\n")) + "\n"
                       for line in path_or_lines)
    return _document(args + ["-"], input=text)


def _coordinate(value):
    """A coordinate as the trace format has it: an integer, a list, or a
    half-open range {"lo": L, "hi": H} (a Python range of step 1)."""
    if isinstance(value, range):
        if value.step == 1:
            return {"lo": value.start, "hi": max(value.stop, value.start)}
        return list(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    return value


class Trace:
    """A pebbling sequence built in Python (docs/TRACE_FORMAT.md).

    Trace(n=64, d=4, g=2, M=100) starts the sequence on the approximate-
    attention DAG (attention="exact": exact attention, no g). Then each
    operation is one line of the trace; coordinates are integers, lists,
    or ranges (range(0, 32) is the half-open {"lo":0,"hi":32}):

        t.load("Q", i=range(0, 32), a=range(0, 4))
        t.mac("N", i=5, m=range(15), b=range(5), fuse=True)
        t.compute("A", i=5, b=range(4))
        t.save("A", i=5, b=range(4))
        t.delete("N", i=5, b=range(5))

    t.validate() replays it in the engine, in this process and without a
    file, and returns the same document as `pebblesim validate --json`:
    its counts, or the first rule it breaks.
    """

    def __init__(self, n, d, M, g=None, normalize=True, attention="approx",
                 strategy="python", params=None):
        if attention not in ("approx", "exact"):
            raise ValueError("attention: 'approx' or 'exact'")
        dag = {"kind": attention + "-attention", "n": n, "d": d}
        if attention == "approx":
            if g is None:
                raise ValueError("g: the degree of the polynomial (approximate attention)")
            dag["g"] = g
        elif g is not None:
            raise ValueError("g does not apply to exact attention")
        dag["normalize"] = bool(normalize)
        self.header = {"format": "pebblesim-trace", "version": 1, "dag": dag,
                       "M": M, "strategy": strategy}
        if params:
            self.header["params"] = dict(params)
        self._ops = []

    def _add(self, op, kind_key, kind, fuse, coordinates):
        line = {"op": op, kind_key: kind}
        for name, value in coordinates.items():
            line[name] = _coordinate(value)
        if fuse:
            line["fuse"] = True
        self._ops.append(json.dumps(line, separators=(",", ":")))
        return self

    def load(self, kind, **coordinates):
        """load: every node of the set gets a red pebble from its blue one."""
        return self._add("load", "kind", kind, False, coordinates)

    def save(self, kind, **coordinates):
        """save: every node of the set gets a blue pebble."""
        return self._add("save", "kind", kind, False, coordinates)

    def delete(self, kind, **coordinates):
        """delete: every node of the set loses its red pebble."""
        return self._add("delete", "kind", kind, False, coordinates)

    def compute(self, kind, **coordinates):
        """compute: a plain node (U1, U2, A, E) from its red parents."""
        return self._add("compute", "kind", kind, False, coordinates)

    def mac(self, into, fuse=False, **coordinates):
        """mac: products added into the sums `into` (H or N; S or O), by the
        products' coordinates; fuse=True computes U1 (U2, E) around each
        use and deletes it after."""
        return self._add("mac", "into", into, fuse, coordinates)

    def __len__(self):
        return len(self._ops)

    def lines(self):
        """The trace's lines, header first, without newlines."""
        return [json.dumps(self.header, separators=(",", ":"))] + self._ops

    def text(self):
        return "".join(line + "\n" for line in self.lines())

    def write(self, path):
        """Writes the trace to path, for `pebblesim validate PATH`."""
        with open(path, "w") as f:
            f.write(self.text())

    def validate(self, **options):
        """The engine's verdict: `pebblesim validate --json` on this trace
        (options: M=... to validate under another fast memory, ...)."""
        return validate(self, **options)
