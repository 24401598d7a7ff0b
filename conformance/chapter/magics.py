"""IPython magics in a block: which run as the magic does, which do not, and the code around them. Pure.

A notebook cell or an `ipython` fence may hold IPython's magics and shell escapes, which are not Python:

- run as the magic does (by the runner, `conformance.chapter.runmagic`): the line magics `%timeit STATEMENT` (the
  statement timed, as IPython times it, and its line printed) and `%time STATEMENT` (run once, its CPU and wall
  times printed), at the top level of the block; the cell magics `%%time`, `%%timeit [SETUP]` and `%%capture
  [--no-stdout] [--no-stderr] [NAME]` on a block's first line (the rest of the block run under them);
- not run: every other magic and shell escape (`%xmode minimal`, `%matplotlib inline`, `!pip install ...`), and a
  line magic inside indented code. Each makes the block say `magic not run: %xmode` on its outcome.

In the code as run each magic line is `pass` (the line count is kept, so tracebacks name the page's lines).
"""

from __future__ import annotations

import re

from conformance.chapter.stated import parse_quietly

_MAGIC = re.compile(r"^(\s*)(%%|%|!)([\w.-]*)(.*)$")
LINE_MAGICS = frozenset({"timeit", "time"})
CELL_MAGICS = frozenset({"time", "timeit", "capture"})


def find_magics(code: str) -> tuple[str, dict[int, str], str, tuple[str, ...]]:
    """The code as run (each magic line `pass`), the line magics run in place of a line (by 1-based line:
    `%timeit f(x)`), the cell magic of its first line (`%%time`, '' for none), and the magics not run (`%xmode`,
    each once). Code that parses as Python as written has no magic (a `%` line inside a string is text)."""
    if parse_quietly(code) is not None:
        return code, {}, "", ()
    lines = code.split("\n")
    runnable, line_magics, not_run = [], {}, []
    cell = ""
    first_code = next((k for k, line in enumerate(lines) if line.strip()), -1)
    for number, line in enumerate(lines, 1):
        found = _MAGIC.match(line)
        if not found:
            runnable.append(line)
            continue
        indent, kind, name = found.group(1), found.group(2), found.group(3)
        runnable.append(f"{indent}pass")
        if kind == "%%" and number - 1 == first_code and name in CELL_MAGICS:
            cell = line.strip()
        elif kind == "%" and not indent and name in LINE_MAGICS and found.group(4).strip():
            line_magics[number] = line.strip()
        else:
            not_run.append(f"{kind}{name}")
    return "\n".join(runnable), line_magics, cell, tuple(dict.fromkeys(not_run))
