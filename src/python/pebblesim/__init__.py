"""pebblesim from Python: the red-blue pebble game on the DAG of attention.

A thin layer over libpebblesim.so (ctypes; NumPy and pandas only for the
tables, where installed). The commands run inside this process, and each
function returns the document that `pebblesim COMMAND ... --json` prints,
parsed (docs/pebblesim.schema.json):

    >>> import pebblesim
    >>> r = pebblesim.run(n=64, d=4, g=2, M=100, strategy="keylemma")
    >>> r["valid"], r["io"]
    (True, ...)

Each function takes its command's options as keyword parameters, with
type hints and a line of help each (help(pebblesim.sweep)): `M=8192` is
`-M 8192`, `no_normalize=True` is `--no-normalize`,
`strategies=["flash", "colpass"]` is `--strategies flash,colpass`; False
and None leave an option out. A value of the wrong type raises TypeError,
a NUL byte ValueError, each naming the option; an option of another
command is an unexpected keyword (TypeError).

A verdict is a result: an invalid sequence gives a document with
"valid": false. Bad usage or input raises PebblesimError, carrying the
library's message and the command's exit status (2).

records, to_numpy and to_pandas make tables of a sweep's rows, a compare
table or a trace's operations: a list of flat dicts, a NumPy structured
array, a pandas DataFrame.

Trace writes a pebbling sequence in Python, operation by operation as the
trace format has them (docs/TRACE_FORMAT.md), and validates it in the
engine without a file: this is how a strategy is written in Python
(docs/EXTENDING.md).

The library is found through the PEBBLESIM_LIBRARY environment variable
(a path to libpebblesim.so), then beside this file (pip install), then
where `make install` put it, then in the build tree beside these sources,
then where the dynamic loader looks.
"""

from ._commands import (VERSION as __version__, compare, frontier, list_strategies,
                        optimal, run, sweep, validate)
from ._core import EXIT_USAGE, PebblesimError, Trace, command, library_version
from ._tables import records, to_numpy, to_pandas

__all__ = [
    "EXIT_USAGE", "PebblesimError", "Trace", "command", "compare", "frontier",
    "library_version", "list_strategies", "optimal", "records", "run", "sweep",
    "to_numpy", "to_pandas", "validate",
]
