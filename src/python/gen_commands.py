#!/usr/bin/python3
"""Writes src/python/pebblesim/_commands.py from the binary's command table.

    /usr/bin/python3 src/python/gen_commands.py build/pebblesim > src/python/pebblesim/_commands.py

`pebblesim __complete table` gives every command's options (src/cli/man.c);
each function of the module gets one keyword parameter an option, with a
type hint and the option's help in its docstring, so that help() and
inspect.signature show them. make check-python writes the file again and
compares it with the committed one: a new option reaches the module by
running this script.
"""

import json
import subprocess
import sys
import textwrap

# The commands the module wraps: the function's name, and the operand it
# takes (validate's trace) or None.
COMMANDS = [
    ("run", "run", None),
    ("compare", "compare", None),
    ("sweep", "sweep", None),
    ("frontier", "frontier", None),
    ("optimal", "optimal", None),
    ("list", "list_strategies", None),
    ("validate", "validate", "path_or_lines"),
]
# Options every function leaves out: its result is the --json document.
LEFT_OUT = {"json", "help"}
# Options with a letter only: their parameter's name.
LETTERS = {"j": "jobs", "o": "output"}
# The options that name strategies: one name or a list of them.
LISTS = {"strategies"}
# Flags that take the command's files: sweep(merge=[...]) is
# `sweep --merge FILE...`.
FILES = {("sweep", "merge")}


def parameter(option):
    if option["long"]:
        return option["long"].replace("-", "_")
    return LETTERS.get(option["short"], option["short"])


def flag(option):
    return "--" + option["long"] if option["long"] else "-" + option["short"]


def annotation(command, option):
    if (command, option["long"]) in FILES:
        return "Sequence[str | os.PathLike] | None"
    kind = option["kind"]
    if kind == "flag":
        return "bool"
    if kind == "count":
        return "int | str | None" if option["range"] else "int | None"
    if kind == "size":
        return "int | str | None"
    if kind == "real":
        return "float | None"
    if option["long"] in LISTS:
        return "str | Sequence[str] | None"
    if option["file"]:
        return "str | os.PathLike | None"
    return "str | None"


def kind(command, option):
    """The check _core.call applies to the value."""
    if (command, option["long"]) in FILES:
        return "files"
    if option["long"] in LISTS:
        return "list"
    if option["kind"] == "string" and option["file"]:
        return "file"
    if option["kind"] == "count" and option["range"]:
        return "size"
    return option["kind"]


def describe(command, option):
    help_text = " ".join(line.strip() for line in option["help"].splitlines())
    if (command, option["long"]) in FILES:
        help_text += " (the files, a list)"
    head = flag(option) + (" " + option["arg"] if option["arg"] else "")
    if option["values"]:
        help_text += " (one of: %s)" % ", ".join(option["values"])
    lines = textwrap.wrap("%s: %s: %s" % (parameter(option), head, help_text), 72,
                          subsequent_indent="    ")
    return "\n".join("    " + line for line in lines)


def main():
    table = json.loads(subprocess.run([sys.argv[1], "__complete", "table"], check=True,
                                      capture_output=True, text=True).stdout)
    commands = {c["name"]: c for c in table}
    version = subprocess.run([sys.argv[1], "--version"], check=True, capture_output=True,
                             text=True).stdout.split()[-1]
    out = [
        '"""The commands as functions, one keyword parameter an option.',
        "",
        "Written by src/python/gen_commands.py from `pebblesim __complete table`:",
        "do not edit (make check-python compares it with the table).",
        '"""',
        "",
        "import os",
        "from collections.abc import Sequence",
        "",
        "from ._core import Trace, call",
        "",
        "# the version of pebblesim these functions were written from",
        "VERSION = %r" % version,
        "",
        "# (parameter, option as the command line has it, check)",
        "OPTIONS = {",
    ]
    for name, function, _ in COMMANDS:
        out.append("    %r: (" % name)
        for o in commands[name]["options"]:
            if o["long"] in LEFT_OUT or o["short"] == "h":
                continue
            out.append("        (%r, %r, %r)," % (parameter(o), flag(o), kind(name, o)))
        out.append("    ),")
    out.append("}")
    for name, function, operand in COMMANDS:
        c = commands[name]
        options = [o for o in c["options"] if o["long"] not in LEFT_OUT and o["short"] != "h"]
        params = []
        if operand:
            params.append("%s: str | os.PathLike | bytes | Trace | Sequence[str | dict]" % operand)
        params.append("*")
        for o in options:
            params.append("%s: %s = %s" % (parameter(o), annotation(name, o),
                                           "False" if annotation(name, o) == "bool" else "None"))
        returns = "list" if name in ("compare", "list") else "dict"
        out += ["", ""]
        out.append("def %s(" % function)
        out += ["    %s," % p for p in params]
        out.append(") -> %s:" % returns)
        summary = c["summary"]
        doc = textwrap.wrap('"""`pebblesim %s ... --json`: %s.' % (name, summary), 76,
                            initial_indent="    ", subsequent_indent="    ") + [""]
        if operand:
            doc += [
                "    %s: the trace: a file name (str or os.PathLike), a Trace, its" % operand,
                "    text (bytes), or its lines, each a str or a dict (one operation).",
                "    Only a file name is read from disk.",
                "",
            ]
        doc += [
            "    Returns the document `pebblesim %s ... --json` prints, parsed" % name,
            "    (docs/pebblesim.schema.json). False and None leave an option out;",
            "    a value of the wrong type raises TypeError, a NUL byte ValueError,",
            "    each naming the option; the command's own refusal raises",
            "    PebblesimError.",
            "",
            "    Options:",
        ]
        doc += [describe(name, o) for o in options]
        doc.append('    """')
        out += doc
        if operand:
            out.append("    return call(%r, OPTIONS[%r], locals(), %s)" % (name, name, operand))
        else:
            out.append("    return call(%r, OPTIONS[%r], locals())" % (name, name))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
