"""A `>>>` transcript in a fence, run as a doctest: each example a step, its output compared. Pure.

```python
>>> import jax.numpy as jnp
>>> jnp.arange(3) + 1
Array([1, 2, 3], dtype=int32)
```

The transcript is read with the standard library's `doctest.DocTestParser`, as `python -m doctest` and pytest's
`--doctest-glob` read it: each `>>>` line with its `...` continuation lines is one example, the lines under it up
to a blank line or the next `>>>` its expected output. Each example runs as the interactive prompt runs it (mode
`single`: an expression's value is displayed), and its output is compared in the printed tier, `...` matching any
text as doctest's ELLIPSIS does; an expected `Traceback (most recent call last):` states the error it raises (its
last line, `ValueError: ...`; with `# doctest: +IGNORE_EXCEPTION_DETAIL`, as doctest compares it, its class only).
An example marked `# doctest: +SKIP` is not run.
"""

from __future__ import annotations

import doctest
import re

from conformance.chapter.model import Step
from conformance.chapter.stated import stated_in_comment

_PROMPT = re.compile(r"^\s*>>>(?:\s|$)")
_SKIP = re.compile(r"#\s*doctest:.*\+SKIP")


def is_transcript(code: str) -> bool:
    """Whether the code is a `>>>` transcript (its first non-blank line is a `>>>` prompt)."""
    first = next((line for line in code.split("\n") if line.strip()), "")
    return bool(_PROMPT.match(first))


def transcript_steps(code: str) -> tuple[str, tuple[Step, ...], tuple[str, ...]]:
    """The transcript as code (each example's source at its own lines, every other line blank, so a traceback names
    the page's line), its steps (one per example), and its notes (examples skipped)."""
    lines = code.split("\n")
    runnable = [""] * len(lines)
    steps: list[Step] = []
    notes: list[str] = []
    try:
        examples = doctest.DocTestParser().get_examples(code)
    except ValueError:  # an inconsistent indentation doctest refuses: run nothing of it, say so
        return (
            "\n".join("pass" if k == 0 else "" for k in range(len(lines))),
            (),
            ("not run: the transcript's indentation is inconsistent (doctest refuses it)",),
        )
    for example in examples:
        source = example.source.rstrip("\n").split("\n")
        first = example.lineno + 1
        if _SKIP.search(example.source):
            notes.append(f"line {first}: not run (doctest: +SKIP)")
            continue
        for offset, text in enumerate(source):
            if example.lineno + offset < len(runnable):
                runnable[example.lineno + offset] = text
        stated, message, shown = "", "", example.want
        if example.exc_msg is not None:
            first_line = example.exc_msg.strip().split("\n")[0]
            found = stated_in_comment("# " + first_line)
            named, _, said = first_line.partition(":")
            stated, message = found if found else (named.strip(), said.strip())
            if "\n" in example.exc_msg.strip():
                message = "\n".join([message] + example.exc_msg.strip().split("\n")[1:])
            if example.options.get(doctest.IGNORE_EXCEPTION_DETAIL):
                message = ""  # doctest compares the class only: the message the page shows is no statement
            shown = ""
        steps.append(
            Step(
                first,
                first + len(source) - 1,
                stated=stated,
                stated_message=message,
                stated_form="doctest" if stated else "",
                shown=shown.rstrip("\n"),
                mode="single",
            )
        )
    return "\n".join(runnable), tuple(steps), tuple(notes)
