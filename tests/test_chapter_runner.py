"""The chapter runner (issue 37): blocks run in order in one process with notebook semantics, each under a time
limit; a block that hangs or kills its process costs only itself. Run with this interpreter: the runner is standard
library only, and these blocks need no JAX."""

from __future__ import annotations

import sys
import time

from conformance.chapter.model import BlockStatus
from conformance.chapter.read import chapter_from_text
from conformance.chapter.session import run_blocks
from conformance.chapter.statuses import block_outcomes


def markdown(*blocks: str, heading: str = "## 1.1 Test") -> str:
    """A chapter of these blocks: ```python fences, or a MyST `{code-cell}` for a block starting with `!cell `."""
    fences = [
        f"```{{code-cell}}\n{code[6:]}\n```\n" if code.startswith("!cell ") else f"```python\n{code}\n```\n"
        for code in blocks
    ]
    return heading + "\n\n" + "\n".join(fences)


def run(
    text: str,
    timeout_s: float = 20.0,
    grace_s: float | None = None,
    skip: dict | None = None,
    limits: dict | None = None,
):
    """Run the chapter's blocks with this interpreter; `limits` by block number (from 0), in seconds."""
    chapter = chapter_from_text("t", "t.md", "markdown", text)
    ran = run_blocks(
        chapter.blocks,
        {b.index for b in chapter.blocks if (skip or {}).get(b.id)},
        sys.executable,
        timeout_s,
        grace_s=grace_s,
        limits=limits,
    )
    own = {chapter.blocks[index].id: seconds for index, seconds in (limits or {}).items()}
    outcomes = block_outcomes(chapter.blocks, ran.results, skip or {}, timeout_s, own)
    return chapter, ran, [outcomes[b.id] for b in chapter.blocks]


def test_blocks_share_one_namespace_and_each_gets_its_status():
    chapter, ran, found = run(
        markdown(
            'x = 1\nprint("x is", x)\n# Prints: x is 1',
            'assert x == 2, "x should be 2"',
            "y = name_no_block_defines",
            'z = int("q")',
            "print(z)",
            "!cell x + 41\n# Prints: 42",
            'import os\nos.write(1, b"from the descriptor\\n")\nprint("from print")',
            "print(get_ipython() is not None)\n# Prints: True",
        )
    )
    assert [o.status for o in found] == [
        BlockStatus.RAN,
        BlockStatus.ASSERT_FAILED,
        BlockStatus.RAISED,
        BlockStatus.RAISED,
        BlockStatus.AFTER_FAILURE,
        BlockStatus.RAN,
        BlockStatus.RAN,
        BlockStatus.RAN,
    ]
    assert ran.processes == 1
    assert (found[1].assert_line, found[1].assert_text) == (1, 'assert x == 2, "x should be 2"')
    assert found[2].exception == "NameError"  # no earlier block binds the name: a plain raise
    assert found[3].exception == "ValueError" and "invalid literal" in found[3].message
    assert (found[4].name, found[4].because) == ("z", chapter.blocks[3].id)
    assert found[0].stdout == "x is 1\n" and not found[0].printed_differs
    assert found[5].stdout == "42\n" and not found[5].printed_differs  # the last expression's value, displayed
    assert found[6].stdout.splitlines() == ["from the descriptor", "from print"]
    assert not found[7].printed_differs


def test_a_printed_difference_marks_a_block_without_changing_its_status():
    _, _, (found,) = run(markdown('print("seen", 1.0)\n# Prints: shown 2.0'))
    assert found.status is BlockStatus.RAN and found.printed_differs
    assert found.printed_diff == ("-shown 2.0", "+seen 1.0")


def test_a_block_past_its_limit_times_out_and_the_next_block_keeps_the_names_in_the_same_process():
    started = time.monotonic()
    _, ran, found = run(
        markdown("x = 3", "while True:\n    pass", "import time\ntime.sleep(3)\nprint(x)\n# Prints: 3"),
        timeout_s=30.0,
        limits={1: 2.0},
    )
    assert [o.status for o in found] == [BlockStatus.RAN, BlockStatus.TIMEOUT, BlockStatus.RAN]
    assert found[1].message == "ran past its time limit of 2s"  # its own limit; the others have 30 s
    assert ran.processes == 1 and not found[2].replayed
    assert time.monotonic() - started < 60  # the limit held (a hung block would run for minutes)


def test_a_block_that_ignores_its_limit_is_killed_and_the_rest_run_after_the_earlier_blocks_are_replayed():
    blocks = [
        "x = 5\nprint('first run')",
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nhung = True\nwhile True:\n    pass",
        "print(x)\n# Prints: 5",
        "print(hung)",
    ]
    _, ran, found = run(markdown(*blocks), timeout_s=1.0, grace_s=1.0)
    assert [o.status for o in found] == [
        BlockStatus.RAN,
        BlockStatus.TIMEOUT,
        BlockStatus.RAN,
        BlockStatus.AFTER_FAILURE,
    ]
    assert "did not stop at the limit" in found[1].message
    assert ran.processes == 2 and found[2].replayed and found[2].stdout == "5\n"  # the replay printed nothing here
    assert any("replayed" in note for note in ran.notes)


def test_a_block_that_kills_its_process_is_a_crash_and_the_blocks_before_and_after_keep_their_results():
    _, ran, found = run(markdown("x = 5", "import os\nw = 1\nos._exit(7)", "print(x + 1)\n# Prints: 6", "print(w)"))
    assert [o.status for o in found] == [BlockStatus.RAN, BlockStatus.CRASH, BlockStatus.RAN, BlockStatus.AFTER_FAILURE]
    assert "exited with status 7" in found[1].message
    assert found[2].stdout == "6\n" and found[2].replayed


def test_the_namespace_is_main_and_tracebacks_count_each_blocks_own_lines():
    _, _, found = run(
        markdown(
            "leaked = []\nimport sys\nprint(sys.modules['__main__'].leaked is leaked)\n# Prints: True",
            "import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
            "    frame = traceback.extract_tb(e.__traceback__)[-1]\n    print(frame.lineno, "
            "frame.line)\n# Prints: 3 1 / 0",
            "def check(v):\n    assert v > 0, 'positive'",
            "check(-1)",
        )
    )
    assert [o.printed_differs for o in found[:2]] == [False, False]
    assert found[3].status is BlockStatus.ASSERT_FAILED
    assert found[3].assert_line == 2 and found[3].assert_text.endswith("assert v > 0, 'positive'")
    assert found[3].assert_text.startswith("in block s1_1_")


def test_what_the_document_says_a_block_raises_is_running_as_written_and_skips_are_not_run():
    chapter, ran, found = run(
        markdown("1 / 0  # ==> raises ZeroDivisionError", "x = 1  # ==> raises KeyError", "raise SystemExit('never')"),
        skip=None,
    )
    assert [o.status for o in found] == [
        BlockStatus.RAISED_AS_DOCUMENTED,
        BlockStatus.DID_NOT_RAISE,
        BlockStatus.RAISED,
    ]
    assert found[0].detail == "raised as the page states: line 1: ZeroDivisionError"
    assert found[1].detail == "line 1: raised nothing; the page states KeyError"
    chapter = chapter_from_text("t", "t.md", "markdown", markdown("a = 1", "raise SystemExit('never')"))
    skip = {chapter.blocks[1].id: "needs an interactive terminal"}
    ran = run_blocks(chapter.blocks, {1}, sys.executable, 20.0)
    outcomes = block_outcomes(chapter.blocks, ran.results, skip, 20.0)
    assert [o.status for o in outcomes.values()] == [BlockStatus.RAN, BlockStatus.SKIPPED]
    assert outcomes[chapter.blocks[1].id].detail == "needs an interactive terminal" and 1 not in ran.results


def test_the_runner_imports_nothing_the_target_environment_lacks():
    """It runs inside a release's environment (jax, jaxlib, numpy and what they need): the standard library and the
    suite's standard-library-only `portable`, `chapter.runsteps` and `chapter.runmagic` modules, nothing else
    (docs/layout.md); and those import only the standard library."""
    import ast
    from pathlib import Path

    import conformance.chapter.runner as runner

    allowed = {"conformance.portable", "conformance.chapter.runsteps", "conformance.chapter.runmagic"}
    folder = Path(runner.__file__).parent
    for path in (Path(runner.__file__), folder / "runsteps.py", folder / "runmagic.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
        }
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        suite = {name for name in imported if name.startswith("conformance")}
        assert suite <= (allowed if path.name == "runner.py" else set()), (path.name, suite)
        others = {name.split(".")[0] for name in imported - suite} - {"__future__", "IPython"}
        assert others <= set(sys.stdlib_module_names), others - set(sys.stdlib_module_names)
    assert (folder / "__init__.py").read_text(encoding="utf-8").count("import") == 0


def test_each_stated_error_is_checked_where_it_is_raised_and_the_statements_after_it_still_run():
    chapter, ran, found = run(
        markdown(
            "class PageError(Exception):\n    pass\nclass DeepError(PageError):\n    pass\n"
            'def boom():\n    raise DeepError("deep " * 80)\nboom()\n# PageError: deep deep <...>\n'
            'print("after")\n# Prints: after\n{}["k"]\n"""\nKeyError:\n\'k\'\n"""\nprint("end")',
            'int("seven")\n# TypeError: invalid literal\nprint("still runs")',
            "x = 1\n# ValueError",
            'int("q")  # ==> raises ValueError',
        )
    )
    assert [o.status for o in found] == [
        BlockStatus.RAISED_AS_DOCUMENTED,
        BlockStatus.RAISED_OTHERWISE,
        BlockStatus.DID_NOT_RAISE,
        BlockStatus.RAISED_AS_DOCUMENTED,
    ]
    assert ran.processes == 1
    # a subclass of the stated class (looked up in the block's namespace) is raised as documented
    assert found[0].detail == "raised as the page states: line 7: DeepError, line 11: KeyError"
    assert found[0].stdout == "after\nend\n" and not found[0].printed_differs
    assert found[1].detail == (
        "line 1: raised ValueError: invalid literal for int() with base 10: 'seven'; the page "
        "states TypeError: invalid literal"
    )
    assert found[1].stdout == "still runs\n"
    assert found[2].detail == "line 1: raised nothing; the page states ValueError"


def test_a_message_is_cut_at_a_word_and_an_unstated_raise_names_its_line():
    _, _, (found,) = run(markdown('x = 1\nraise RuntimeError("word " * 100)'))
    assert found.status is BlockStatus.RAISED and found.line == 2
    assert found.message.endswith("word …") and len(found.message) <= 302


def test_a_transcript_runs_as_a_doctest_and_its_output_is_compared():
    _, _, (found,) = run(
        markdown(
            '>>> 1 + 1\n2\n>>> print("hi")\nhi\n>>> [3]\n[4]\n>>> int("q")\n'
            "Traceback (most recent call last):\nValueError: invalid literal for int() ..."
        )
    )
    assert found.status is BlockStatus.RAISED_AS_DOCUMENTED
    assert found.stdout == "2\nhi\n[3]\n" and found.printed_diff == ("-[4]", "+[3]")


def test_timeit_and_time_run_as_the_magics_do_and_other_magics_say_they_were_not_run():
    _, _, found = run(
        markdown(
            "import math\n%xmode minimal\n%timeit -n 3 -r 2 math.sqrt(2)\n%time y = math.sqrt(4)\nprint(y)",
            "%%capture captured\nprint('kept from the page')",
            "print(captured.stdout.strip())\n# Prints: kept from the page",
            "%%time\nz = 3",
        )
    )
    assert [o.status for o in found] == [BlockStatus.RAN] * 4
    lines = found[0].stdout.splitlines()
    assert " per loop (mean ± std. dev. of 2 runs, 3 loops each)" in lines[0]
    assert lines[1].startswith("CPU times: user ") and lines[2].startswith("Wall time: ") and lines[3] == "2.0"
    assert found[0].detail == "magic not run: %xmode"
    assert found[1].stdout == "" and not found[2].printed_differs
    assert found[3].stdout.startswith("CPU times: ")


def test_a_failure_names_the_environment_variable_an_earlier_block_left_set():
    chapter, _, found = run(
        markdown(
            'import os\nos.environ["PAGE_SCALE"] = "2"',
            'print(1 + os.environ["PAGE_SCALE"])',
            'os.environ.pop("PAGE_SCALE")\nprint(1 + os.environ.get("PAGE_SCALE", 1))',
        )
    )
    assert found[1].status is BlockStatus.RAISED
    assert found[1].settings == (f"PAGE_SCALE='2' (set by block {chapter.blocks[0].id})",)
    assert found[1].detail.endswith(f"; PAGE_SCALE='2' (set by block {chapter.blocks[0].id})")
    assert found[2].status is BlockStatus.RAN


def test_the_skip_lists_setup_runs_first_in_every_process_and_a_block_sees_its_names():
    # a page of transcripts that relies on the names its doctest harness provides (`m` here); a block that kills
    # its process makes a new one, where the setup runs again before the replay
    chapter = chapter_from_text(
        "t", "t.md", "markdown", markdown(">>> m.floor(2.5)\n2", "import os\nos._exit(3)", ">>> m.sqrt(4.0)\n2.0")
    )
    ran = run_blocks(chapter.blocks, set(), sys.executable, 20.0, setup="import math as m")
    found = block_outcomes(chapter.blocks, ran.results, {}, 20.0)
    assert [o.status for o in found.values()] == [BlockStatus.RAN, BlockStatus.CRASH, BlockStatus.RAN]
    assert ran.processes == 2 and not any(o.printed_differs for o in found.values())


def test_a_setup_that_raises_is_said_as_the_harnesss_and_the_blocks_still_run_once():
    chapter = chapter_from_text("t", "t.md", "markdown", markdown("x = 1", "print(x)\n# Prints: 1"))
    ran = run_blocks(chapter.blocks, set(), sys.executable, 20.0, setup="1 / 0")
    found = block_outcomes(chapter.blocks, ran.results, {}, 20.0)
    assert ran.processes == 1
    assert ran.notes == ["harness: the runner failed: the [setup] raised ZeroDivisionError: division by zero"]
    assert [o.status for o in found.values()] == [BlockStatus.RAN, BlockStatus.RAN]
