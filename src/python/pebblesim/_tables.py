"""Results as tables: a sweep's rows, a compare table, a trace's operations
as records (one dict a row, nested keys joined by "."), NumPy structured
arrays, and pandas DataFrames where pandas is installed.
"""

import json
import math
import numbers
import os

from ._core import Trace

# The coordinates of a trace's operations, in the columns' order.
COORDINATES = ("i", "j", "a", "b", "m")


def _flat(row, prefix="", into=None):
    """A row's nested objects as columns: {"by_array": {"Q": {"loads": 3}}}
    is {"by_array.Q.loads": 3}."""
    into = {} if into is None else into
    for key, value in row.items():
        if isinstance(value, dict):
            _flat(value, prefix + key + ".", into)
        else:
            into[prefix + key] = value
    return into


def _size(value):
    """How many indices a coordinate names."""
    if isinstance(value, dict):
        return max(value["hi"] - value["lo"], 0)
    if isinstance(value, list):
        return len(value)
    return 1


def _trace_lines(source):
    if isinstance(source, Trace):
        return source.lines()
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as f:
            return f.read().splitlines()
    if isinstance(source, (bytes, bytearray)):
        return bytes(source).decode("utf-8").splitlines()
    return [line if isinstance(line, str) else json.dumps(line) for line in source]


def _trace_records(source):
    """A trace's operations, one row each: its line in the file, op, kind
    (or the sums a mac goes into), fuse, each coordinate as the trace has
    it, nodes (the nodes or products it names) and io (nodes for a load or
    a save, else 0). The header and the end line are not rows."""
    rows = []
    for number, text in enumerate(_trace_lines(source), 1):
        if not text.strip():
            continue
        line = json.loads(text)
        if "format" in line or line.get("op") == "end":
            continue
        op = line.get("op")
        row = {"line": number, "op": op,
               "kind": line.get("kind", line.get("into")),
               "fuse": bool(line.get("fuse", False))}
        nodes = 1
        for c in COORDINATES:
            row[c] = line.get(c)
            if c in line:
                nodes *= _size(line[c])
        if "node" in line:  # an explicit DAG's move: one vertex
            row["node"] = line["node"]
        row["nodes"] = nodes
        row["io"] = nodes if op in ("load", "save") else 0
        rows.append(row)
    return rows


def records(result):
    """The rows of a result as a list of flat dicts.

    result: a sweep's or frontier's document (its "rows"), a compare or
    list table (a list of rows), or a trace (a Trace, a file name, its text
    as bytes, or its lines) whose operations become rows (_trace_records).
    Nested objects become columns named with dots ("by_array.Q.loads",
    "dag.kind"); lists stay values.
    """
    if isinstance(result, dict):
        if "rows" not in result:
            raise ValueError("result: a document without rows (a sweep's or frontier's has them)")
        rows = result["rows"]
    elif isinstance(result, list) and all(isinstance(r, dict) for r in result) and \
            not any("op" in r or "format" in r for r in result):
        rows = result
    elif isinstance(result, (Trace, str, os.PathLike, bytes, bytearray, list, tuple)):
        return _trace_records(result)
    else:
        raise TypeError("result: expected a document, a table or a trace, not %s"
                        % type(result).__name__)
    return [_flat(r) for r in rows]


def _columns(rows):
    columns = []
    seen = set()
    for r in rows:
        for key in r:
            if key not in seen:
                seen.add(key)
                columns.append(key)
    return columns


def _dtype(values):
    """The NumPy type of a column: bool, int64, float64 (None as NaN), or
    object (text, lists, mixed)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present) and len(present) == len(values):
        return "?"
    if present and all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                       for v in present):
        return "i8" if len(present) == len(values) else "f8"
    if present and all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                       for v in present):
        return "f8"
    return "O"


def to_numpy(result):
    """The rows of result (see records) as a NumPy structured array, a
    field a column: integers as int64, numbers with gaps (null) as float64
    with NaN, flags as bool, the rest as objects.

        rows = pebblesim.to_numpy(pebblesim.sweep(n="64:1k:x2", d=4, g=2, M=512,
                                                  predict=True))
        colpass = rows[rows["strategy"] == "colpass"]
        colpass["value"], colpass["io"]
    """
    import numpy

    rows = records(result)
    columns = _columns(rows)
    types = []
    for c in columns:
        types.append((c, _dtype([r.get(c) for r in rows])))
    array = numpy.empty(len(rows), dtype=types)
    for c, t in types:
        values = [r.get(c) for r in rows]
        if t == "f8":
            values = [math.nan if v is None else v for v in values]
        array[c] = values if t != "O" else numpy.array(values + [None], dtype=object)[:-1]
    return array


def to_pandas(result):
    """The rows of result (see records) as a pandas DataFrame, a column a
    field (ImportError where pandas is not installed: to_numpy and records
    need only NumPy and the standard library)."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("to_pandas needs pandas (Debian: python3-pandas); "
                          "to_numpy and records do without it") from e
    rows = records(result)
    return pandas.DataFrame.from_records(rows, columns=_columns(rows))
