"""The module's core: libpebblesim loaded through ctypes, a command run in
this process, the checks every function applies to its arguments, and
Trace. The functions of the commands are in _commands (written from the
binary's command table); the tables of results in _tables.
"""

import ctypes
import json
import numbers
import os
import threading

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
    # pip install: the library built with the package, beside this file
    yield os.path.join(here, "libpebblesim.so")
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
    argv = ["pebblesim"] + [os.fspath(a) if isinstance(a, os.PathLike) else str(a)
                            for a in args]
    for k, a in enumerate(argv[1:], 1):
        if "\0" in a:
            raise ValueError("argument %d (%r): a NUL byte would cut it" % (k, a))
    encoded = [a.encode() for a in argv]
    lib = _library()
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


def _text(name, value):
    """A value as one argument: str, or os.PathLike, without a NUL byte."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    if not isinstance(value, str):
        raise TypeError("%s: expected a str, not %s" % (name, type(value).__name__))
    if "\0" in value:
        raise ValueError("%s: a NUL byte in %r would cut the value" % (name, value))
    return value


def _integer(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s: expected an integer, not %s" % (name, type(value).__name__))
    return str(int(value))


def _argument(name, check, value):
    """The value of parameter name as the command line takes it, checked
    for its type: TypeError or ValueError naming the parameter."""
    if check == "count":
        return _integer(name, value)
    if check == "size":
        # an integer; a text as the command line takes it ("8k", "2^13", a
        # sweep's range "64:1k:x2")
        if isinstance(value, str):
            return _text(name, value)
        return _integer(name, value)
    if check == "real":
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError("%s: expected a number, not %s" % (name, type(value).__name__))
        return repr(float(value))
    if check == "list":
        if isinstance(value, (str, os.PathLike)):
            return _text(name, value)
        if not isinstance(value, (list, tuple)):
            raise TypeError("%s: expected a str or a list of str, not %s"
                            % (name, type(value).__name__))
        words = [_text(name, v) for v in value]
        for w in words:
            if "," in w:
                raise ValueError("%s: %r holds a comma, which separates the names" % (name, w))
        return ",".join(words)
    return _text(name, value)


def _arguments(command_name, options, values):
    """The command line of the keyword parameters values: each option the
    table (options) lists, in its order; False and None leave it out."""
    args, files = [], []
    for name, flag, check in options:
        value = values.get(name)
        if check == "flag":
            if not isinstance(value, bool):
                raise TypeError("%s: expected True or False, not %s"
                                % (name, type(value).__name__))
            if value:
                args.append(flag)
            continue
        if value is None or value is False:
            continue
        if check == "files":
            if isinstance(value, (str, bytes, os.PathLike)) or not hasattr(value, "__iter__"):
                raise TypeError("%s: expected a list of file names, not %s"
                                % (name, type(value).__name__))
            files = [_text(name, f) for f in value]
            if not files:
                raise ValueError("%s: no file to join" % name)
            args.append(flag)
            continue
        text = _argument(name, check, value)
        if name == "trace" and text == "-":
            raise ValueError("trace: '-' is standard output, where %s's document goes: "
                             "give a file name (or build the sequence with Trace)"
                             % command_name)
        # one argument with its value: a value that starts with a dash
        # stays a value
        args.append(flag + text if not flag.startswith("--") else "%s=%s" % (flag, text))
    return args, files


def _document(args, input=None):
    status, output, diagnostics = command(*args, input=input)
    if status == EXIT_USAGE or not output.strip():
        first = diagnostics.strip().splitlines()[0] if diagnostics.strip() else \
            "pebblesim %s failed with exit status %d" % (" ".join(args), status)
        if first.startswith("pebblesim: "):
            first = first[len("pebblesim: "):]
        raise PebblesimError(first, status, diagnostics, ["pebblesim"] + list(args))
    return json.loads(output)


def call(command_name, options, values, trace=None):
    """`pebblesim COMMAND ... --json` with the keyword parameters values
    (a function's locals()), its document parsed. trace: validate's
    operand (a file name, a Trace, bytes, or lines)."""
    args, files = _arguments(command_name, options, values)
    args = [command_name] + args + ["--json"]
    if command_name != "validate":
        return _document(args + (["--"] + files if files else []))
    args.append("--")
    if isinstance(trace, (str, os.PathLike)):
        return _document(args + [_text("path_or_lines", trace)])
    if isinstance(trace, Trace):
        text = trace.text()
    elif isinstance(trace, (bytes, bytearray)):
        text = bytes(trace)
    elif isinstance(trace, (list, tuple)):
        text = "".join((json.dumps(line, separators=(",", ":"))
                        if isinstance(line, dict) else _text("path_or_lines", line).rstrip("\n"))
                       + "\n" for line in trace)
    else:
        raise TypeError("path_or_lines: expected a file name, a Trace, bytes or a list of "
                        "lines, not %s" % type(trace).__name__)
    return _document(args + ["-"], input=text)


# Each kind's coordinates (docs/TRACE_FORMAT.md, docs/MODEL.md), and the
# sums a mac goes into with its products' coordinates.
KINDS = {
    "approx": {"Q": "ia", "K": "ja", "V": "jb", "U1": "im", "U2": "jm", "H": "mb",
               "N": "ib", "A": "ib", "P2": "jmb", "P1": "imb"},
    "exact": {"Q": "ia", "K": "ja", "V": "jb", "PS": "ija", "S": "ij", "E": "ij",
              "PO": "ijb", "O": "ib", "A": "ib"},
}
MAC_INTO = {
    "approx": {"H": "jmb", "N": "imb"},
    "exact": {"S": "ija", "O": "ijb"},
}


def _index(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s: expected an integer, a list of them or a range, not %s"
                        % (name, type(value).__name__))
    if value < 0:
        raise ValueError("%s: %d is negative" % (name, value))
    return int(value)


def _count(name, value):
    if int(_integer(name, value)) < 1:
        raise ValueError("%s: expected an integer >= 1, not %d" % (name, value))
    return int(value)


def _coordinate(name, value):
    """A coordinate as the trace format has it: an integer, a list, or a
    half-open range {"lo": L, "hi": H} (a Python range of step 1)."""
    if isinstance(value, range):
        if value.step == 1:
            return {"lo": _index(name, value.start),
                    "hi": max(_index(name, value.stop), value.start)}
        return [_index(name, v) for v in value]
    if isinstance(value, (list, tuple)):
        return [_index(name, v) for v in value]
    return _index(name, value)


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
            raise ValueError("attention: 'approx' or 'exact', not %r" % (attention,))
        dag = {"kind": attention + "-attention", "n": _count("n", n), "d": _count("d", d)}
        if attention == "approx":
            if g is None:
                raise ValueError("g: the degree of the polynomial (approximate attention)")
            dag["g"] = int(_integer("g", g))
        elif g is not None:
            raise ValueError("g does not apply to exact attention")
        if not isinstance(normalize, bool):
            raise TypeError("normalize: expected True or False, not %s" % type(normalize).__name__)
        dag["normalize"] = normalize
        M = _count("M", M)
        strategy = _text("strategy", strategy)
        self.attention = attention
        self.attention_name = "approximate" if attention == "approx" else "exact"
        self.header = {"format": "pebblesim-trace", "version": 1, "dag": dag,
                       "M": M, "strategy": strategy}
        if params:
            self.header["params"] = dict(params)
        self._ops = []

    def _add(self, op, kind_key, kind, fuse, coordinates):
        kinds = (MAC_INTO if op == "mac" else KINDS)[self.attention]
        if not isinstance(kind, str):
            raise TypeError("%s: expected a str, not %s" % (kind_key, type(kind).__name__))
        if kind not in kinds:
            raise ValueError("%s: %r is not %s of %s attention's DAG: %s"
                             % (kind_key, kind, "a sum a mac goes into" if op == "mac"
                                else "a kind", self.attention_name, ", ".join(kinds)))
        if not isinstance(fuse, bool):
            raise TypeError("fuse: expected True or False, not %s" % type(fuse).__name__)
        want = kinds[kind]
        for name in coordinates:
            if name not in want:
                raise ValueError("%s %s takes the coordinates %s, not %r"
                                 % (op, kind, ", ".join(want), name))
        missing = [c for c in want if c not in coordinates]
        if missing:
            raise ValueError("%s %s needs the coordinate%s %s"
                             % (op, kind, "s" if len(missing) > 1 else "", ", ".join(missing)))
        line = {"op": op, kind_key: kind}
        for name in want:
            line[name] = _coordinate(name, coordinates[name])
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
        from ._commands import validate
        return validate(self, **options)
