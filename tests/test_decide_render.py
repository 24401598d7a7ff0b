"""`decide.render`: the exact text and Markdown of `diff`, `gate` and `bisect`, built from small synthetic inputs.

The rendered output is the interface a person (or a CI summary) reads, so whole outputs are compared with golden
strings: any change of a word, a count, an order or an escape shows here.
"""

from __future__ import annotations

import datetime
from types import SimpleNamespace

import pytest

from conformance.core.compare import Difference
from conformance.core.status import Status
from conformance.decide import render
from conformance.decide.bisect import BisectOutcome, Untestable
from conformance.decide.cellref import CellRef
from conformance.decide.commits import BuildCommits
from conformance.decide.diff import CellChange, SetDiff
from conformance.decide.expectations import Expectation, Lifecycle
from conformance.decide.gate import GateOutcome, Judged
from conformance.results.schema import CellResult


def _cell(
    case: str = "a.b",
    status: str = "conforms",
    observation=None,
    *,
    param: str = "",
    known: bool = False,
    reason: str = "",
    printed_diff=(),
    command: str = "",
) -> CellResult:
    return CellResult(
        case,
        param,
        [case],
        Status(status),
        known_issue=known,
        observation={"ok": True} if observation is None else observation,
        reason=reason,
        printed_diff=[dict(d) for d in printed_diff],
        command=command,
    )


def _bare(case: str = "a.b", status: str = "crash", reason: str = "", param: str = "") -> CellResult:
    """A cell that reached no observation."""
    return CellResult(case, param, [case], Status(status), observation=None, reason=reason)


def _change(
    baseline,
    candidate,
    differences=(),
    printed=(),
    platform="linux-x86_64",
    case="a.b",
    param="",
    before="0.7.2",
    after="0.8.3",
) -> CellChange:
    return CellChange(platform, case, param, baseline, candidate, before, after, tuple(differences), tuple(printed))


PRINTED = [{"path": "m", "expected": "x", "observed": "y"}]


# ---- the small pieces ---------------------------------------------------------------------------------------------


def test_terminal_safe_escapes_every_control_character_and_only_those():
    text = "a\x00b\x1fc d~\x7fe\x85f\x9fg\xa0h\u2028i\u2029j\u2027k\x1b[31m\nend\tz"
    assert render.terminal_safe(text) == (
        "a\\x00b\\x1fc d~\\x7fe\\x85f\\x9fg\xa0h\\u2028i\\u2029j\u2027k\\x1b[31m\\x0aend\\x09z"
    )


def test_short_is_the_repr_on_one_line_cut_with_an_ellipsis():
    assert render.short("a  \t b") == "'a \\t b'"  # the repr, its runs of spaces made one
    assert render.short("a    b") == "'a b'"
    assert render.short({"k": [1, 2]}) == "{'k': [1, 2]}"
    assert render.short("abc", 5) == "'abc'"  # exactly the limit: kept whole
    assert render.short("abcd", 5) == "'abc…"  # one over: cut to limit - 1 and the ellipsis
    assert render.short("x" * 118) == "'" + "x" * 118 + "'"  # the default limit is 120 characters
    assert render.short("x" * 119) == "'" + "x" * 118 + "…"


def test_one_line_joins_whitespace_and_cuts_with_an_ellipsis():
    assert render.one_line("  a\n\tb   c  ") == "a b c"
    assert render.one_line("abcd", 4) == "abcd"
    assert render.one_line("abcde", 4) == "abc…"
    assert render.one_line("y" * 120) == "y" * 120
    assert render.one_line("y" * 121) == "y" * 119 + "…"


def test_md_escapes_html_and_every_markdown_special():
    assert render.md("a <b> & `c` *d* _e_ [f](g) |h| ~i~ !j {k} \\l \"q\" 'r'\n  s") == (
        "a &lt;b&gt; &amp; \\`c\\` \\*d\\* \\_e\\_ \\[f\\](g) \\|h\\| \\~i\\~ \\!j \\{k\\} \\\\l \"q\" 'r' s"
    )
    assert render.md(3) == "3"


@pytest.mark.parametrize(
    "cell, jax, words",
    [
        (None, "0.8.3", "absent"),
        (_cell(), "0.8.3", "conforms"),
        (_cell(known=True), "0.8.3", "conforms (bug still present)"),
        (_cell(status="differs", known=True), "0.4.30", "differs (bug absent)"),
        (_cell(status="differs", known=True), "0.12.0.1", "differs (changed: maybe fixed)"),
        (_cell(status="unsupported"), "0.13.0", "unsupported (removed)"),
        (_cell(status="unsupported"), "0.4.30", "unsupported"),
    ],
)
def test_status_words(cell, jax, words):
    assert render.status_words(cell, jax) == words


def test_observation_line():
    assert render.observation_line(None) == "(not tested)"
    assert render.observation_line(_cell(observation={"v": "\x1b"}), "0.8.3") == "conforms: {'v': '\\x1b'}"
    assert render.observation_line(_cell(observation={"v": "w" * 500})) == "conforms: {'v': '" + "w" * 392 + "…"
    assert render.observation_line(_bare(reason="boom\nsecond line"), "0.8.3") == "crash: boom second line"
    assert render.observation_line(_bare(reason="r" * 300)) == "crash: " + "r" * 199 + "…"
    assert render.observation_line(_cell(known=True), "0.8.3") == "conforms (bug still present): {'ok': True}"


# ---- diff ---------------------------------------------------------------------------------------------------------


def _set_diff() -> SetDiff:
    changes = [
        _change(
            _cell(observation={"a": 1, "b": "x"}),
            _cell(status="differs", observation={"a": 2, "c": "z" * 200}, printed_diff=PRINTED),
            [
                Difference("a", 1, 2, "changed"),
                Difference("b", "x", None, "missing"),
                Difference("c", None, "z" * 200, "unexpected"),
            ],
            [
                Difference("m", "x", "y", "changed"),
                Difference("<warnings>", "W: w", None, "missing"),
                Difference("<warnings>", None, "W: v", "unexpected"),
            ],
            param="p",
        ),
        _change(
            _cell(case="a.printed", printed_diff=PRINTED),
            _cell(case="a.printed"),
            printed=[Difference("m", "y", "x", "changed")],
            case="a.printed",
        ),
        _change(
            _bare(case="a.gone", status="timeout"), _bare(case="a.gone", reason="killed\nby signal 9"), case="a.gone"
        ),
        _change(
            _cell(case="a.crash"),
            _cell(case="a.crash", status="error", observation={"ok": False}, reason="Traceback: \x1b[2J boom"),
            case="a.crash",
        ),
        _change(None, _cell(case="a.new", status="differs", known=True), case="a.new", platform="darwin-arm64"),
        _change(_cell(case="a.old"), None, case="a.old"),
    ]
    return SetDiff(None, None, changes, 5, ["windows-amd64"], ["linux-aarch64", "darwin-x86_64"])  # type: ignore


DIFF_TEXT = (
    """\
linux-x86_64 a.b[p]: conforms -> differs (jax 0.7.2 -> 0.8.3)
    a: 1 -> 2
    b: 'x' -> (absent)
    c: (absent) -> '"""
    + "z" * 118
    + """…
    printed m: 'x' -> 'y'
    printed <warnings>: 'W: w' -> (absent)
    printed <warnings>: (absent) -> 'W: v'
    printed output now differs from the chapter's
linux-x86_64 a.printed: conforms -> conforms (jax 0.7.2 -> 0.8.3) [printed output only]
    printed m: 'y' -> 'x'
    printed output now matches the chapter's again
linux-x86_64 a.gone: timeout -> crash (jax 0.7.2 -> 0.8.3)
    no observation in the baseline
    no observation in the candidate: killed by signal 9
linux-x86_64 a.crash: conforms -> error (jax 0.7.2 -> 0.8.3)
    reason: Traceback: \\x1b[2J boom
darwin-arm64 a.new: absent -> differs (bug absent) (jax 0.7.2 -> 0.8.3)
linux-x86_64 a.old: conforms -> absent (jax 0.7.2 -> 0.8.3)
windows-amd64 is only in the baseline (not compared)
linux-aarch64 is only in the candidate (not compared)
darwin-x86_64 is only in the candidate (not compared)
6 cell(s) differ (1 in printed output only), 5 unchanged"""
)


def test_diff_text_whole_output():
    assert render.diff_text(_set_diff()) == DIFF_TEXT


def test_diff_text_without_printed_changes_or_platforms():
    only = _set_diff().changes[0]
    text = render.diff_text(SetDiff(None, None, [only], 0, [], []))  # type: ignore[arg-type]
    assert text.splitlines()[-1] == "1 cell(s) differ, 0 unchanged"
    assert render.diff_text(SetDiff(None, None, [], 3, [], [])) == "0 cell(s) differ, 3 unchanged"  # type: ignore


def test_difference_lines_edge_cases():
    # One side without an observation and the other absent: the field-by-field lines, not the `no observation` ones.
    assert render.difference_lines(_change(None, _bare(reason="r"))) == ["reason: r"]
    assert render.difference_lines(_change(_bare(reason="r"), None)) == []
    # A broken candidate without a reason says nothing more; a non-broken one with a reason says nothing either.
    assert render.difference_lines(_change(_cell(), _cell(status="crash"))) == []
    assert render.difference_lines(_change(_cell(), _cell(status="differs", reason="why"))) == []
    # The same printed mark on both sides is no change of mark.
    assert render.difference_lines(_change(_cell(printed_diff=PRINTED), _cell(printed_diff=PRINTED))) == []
    # A long reason is cut at 200 characters, on one line.
    assert render.difference_lines(_change(_cell(), _cell(status="timeout", reason="t " * 150))) == [
        "reason: " + ("t " * 100)[:199] + "…"
    ]
    assert render.difference_lines(_change(_cell(), _bare(reason="u" * 250))) == [
        "no observation in the candidate: " + "u" * 199 + "…"
    ]


# ---- gate ---------------------------------------------------------------------------------------------------------


def _entry(line: int, case: str, **extra) -> Expectation:
    return Expectation(line, CellRef(case), frozenset({Status.DIFFERS}), **extra)


def _outcome(**overrides) -> GateOutcome:
    regression = Judged(
        _change(
            _cell(case="a.reg"),
            _cell(case="a.reg", status="differs", command="jc run -k a.reg"),
            [Difference("v", 1, 2, "changed")],
            case="a.reg",
        ),
        "regression",
        "stops conforming to the documented behaviour",
    )
    acked = [
        Judged(
            _change(_cell(case="a.ack"), _cell(case="a.ack", status="flaky"), case="a.ack"),
            "regression",
            "stops conforming",
            _entry(
                3, "a.ack", reason="upstream bug", bug="https://b/1", owner="alice", expires=datetime.date(2027, 1, 31)
            ),
            "intermittent",
        ),
        Judged(
            _change(_cell(case="a.ok"), _cell(case="a.ok", status="differs", command="jc run -k a.ok"), case="a.ok"),
            "regression",
            "stops conforming",
            _entry(9, "a.ok"),
            "differs",
        ),
    ]
    review = Judged(
        _change(
            _cell(case="a.rev", status="error", reason="e"),
            _cell(case="a.rev", status="crash", observation={"x": 1}, reason="c"),
            case="a.rev",
        ),
        "review",
        "status changed",
    )
    good = Judged(
        _change(_cell(case="a.good", status="differs"), _cell(case="a.good"), case="a.good"),
        "good news",
        "now conforms to the documented behaviour",
    )
    printed = Judged(
        _change(
            _cell(case="a.pr"),
            _cell(case="a.pr", printed_diff=PRINTED),
            printed=[Difference("m", "x", "y", "changed")],
            case="a.pr",
        ),
        "printed output",
        "printed output changed",
    )
    missing = Judged(_change(_cell(case="a.miss"), None, case="a.miss"), "missing", "the candidate does not have it")
    expired = _entry(12, "a.exp", owner="bob", expires=datetime.date(2026, 11, 30))
    soon = [
        _entry(15, "a.soon", bug="https://b/2", expires=datetime.date(2026, 12, 2)),
        _entry(18, "a.later", expires=datetime.date(2026, 12, 10)),
    ]
    fields = dict(
        regressions=[regression],
        acknowledged=acked,
        review=[review],
        good=[good],
        printed=[printed],
        missing=[missing],
        stale=[_entry(21, "a.stale"), _entry(24, "a.stale2")],
        unchanged=3,
        compared=8,
        only_in_baseline=["windows-amd64"],
        only_in_candidate=["linux-aarch64", "darwin-x86_64"],
        not_gated=["darwin-arm64"],
        dates=Lifecycle(datetime.date(2026, 12, 1), [expired], soon),
    )
    fields.update(overrides)
    return GateOutcome(**fields)


GATE_TEXT = """\
gate: jax 0.7.2 -> 0.8.3

REGRESSIONS (1)
  linux-x86_64 a.reg: conforms -> differs (jax 0.7.2 -> 0.8.3)
      stops conforming to the documented behaviour
      v: 1 -> 2
      reproduce: jc run -k a.reg

MISSING FROM THE CANDIDATE (1)
  linux-x86_64 a.miss: conforms -> absent (jax 0.7.2 -> 0.8.3)
      the candidate does not have it

ACKNOWLEDGED REGRESSIONS (2)
  linux-x86_64 a.ack: conforms -> flaky (jax 0.7.2 -> 0.8.3)
      stops conforming
      a known intermittent result by expectation a.ack (line 3); upstream bug; https://b/1; owner alice; \
expires 2027-01-31
  linux-x86_64 a.ok: conforms -> differs (jax 0.7.2 -> 0.8.3)
      stops conforming
      expected by expectation a.ok (line 9)

CHANGES TO REVIEW (1)
  linux-x86_64 a.rev: error -> crash (jax 0.7.2 -> 0.8.3)
      status changed
      reason: c

PRINTED OUTPUT CHANGES (NOT FAILING) (1)
  linux-x86_64 a.pr: conforms -> conforms (jax 0.7.2 -> 0.8.3)
      printed output changed
      printed m: 'x' -> 'y'
      printed output now differs from the chapter's

GOOD NEWS (1)
  linux-x86_64 a.good: differs -> conforms (jax 0.7.2 -> 0.8.3)
      now conforms to the documented behaviour

STALE EXPECTATIONS (2)
  a.stale (line 21): matches no cell of the candidate
  a.stale2 (line 24): matches no cell of the candidate

FAIL: expectation a.exp (line 12) expired on 2026-11-30 (owner bob, no bug): renew its `expires` or remove the entry
warning: expectation a.soon (line 15) expires on 2026-12-02, in 1 day (no owner, bug https://b/2)
warning: expectation a.later (line 18) expires on 2026-12-10, in 9 days (no owner, no bug)

note: windows-amd64 is only in the baseline (not compared)

note: linux-aarch64 is only in the candidate (not compared)

note: darwin-x86_64 is only in the candidate (not compared)

note: darwin-arm64 is not gated: the baseline has no results for it

8 cell(s) compared, 3 unchanged, 1 missing from the candidate. FAIL: 1 regression(s) not acknowledged; 1 baseline \
cell(s) missing from the candidate and 3 platform(s) on one side only (accept them with --allow-missing); \
1 expectation(s) expired, 1 printed-output change(s) (exit 1)"""


def test_gate_text_whole_output():
    assert render.gate_text(_outcome(), "gate: jax 0.7.2 -> 0.8.3") == GATE_TEXT


GATE_MARKDOWN = """\
## gate: jax 0.7.2 -&gt; 0.8.3 \\*now\\*

**FAIL: 1 regression(s) not acknowledged; 1 baseline cell(s) missing from the candidate and 3 platform(s) \
on one side only (accept them with --allow-missing); 1 expectation(s) expired, 1 printed-output \
change(s) (exit 1)**

### Regressions (1)

- linux-x86\\_64 a.reg: conforms -&gt; differs (jax 0.7.2 -&gt; 0.8.3): stops conforming to the documented \
behaviour
  - v: 1 -&gt; 2

### Missing from the candidate (1)

- linux-x86\\_64 a.miss: conforms -&gt; absent (jax 0.7.2 -&gt; 0.8.3): the candidate does not have it

### Acknowledged regressions (2)

- linux-x86\\_64 a.ack: conforms -&gt; flaky (jax 0.7.2 -&gt; 0.8.3): stops conforming
  - a known intermittent result by expectation a.ack (line 3); upstream bug; https://b/1; owner alice; \
expires 2027-01-31
- linux-x86\\_64 a.ok: conforms -&gt; differs (jax 0.7.2 -&gt; 0.8.3): stops conforming
  - expected by expectation a.ok (line 9)

### Changes to review (1)

- linux-x86\\_64 a.rev: error -&gt; crash (jax 0.7.2 -&gt; 0.8.3): status changed
  - reason: c

### Printed output changes (not failing) (1)

- linux-x86\\_64 a.pr: conforms -&gt; conforms (jax 0.7.2 -&gt; 0.8.3): printed output changed
  - printed m: 'x' -&gt; 'y'
  - printed output now differs from the chapter's

### Good news (1)

- linux-x86\\_64 a.good: differs -&gt; conforms (jax 0.7.2 -&gt; 0.8.3): now conforms to the documented \
behaviour

### Stale expectations (2)

- a.stale (line 21): matches no cell of the candidate
- a.stale2 (line 24): matches no cell of the candidate

### Expectations expired or expiring

- FAIL: expectation a.exp (line 12) expired on 2026-11-30 (owner bob, no bug): renew its \\`expires\\` or \
remove the entry
- warning: expectation a.soon (line 15) expires on 2026-12-02, in 1 day (no owner, bug https://b/2)
- warning: expectation a.later (line 18) expires on 2026-12-10, in 9 days (no owner, no bug)

### Platforms on one side only

- windows-amd64 is only in the baseline (not compared)
- linux-aarch64 is only in the candidate (not compared)
- darwin-x86\\_64 is only in the candidate (not compared)
- darwin-arm64 is not gated: the baseline has no results for it

8 cell(s) compared, 3 unchanged, 1 missing from the candidate.
"""


def test_gate_markdown_whole_output():
    assert render.gate_markdown(_outcome(), "gate: jax 0.7.2 -> 0.8.3 *now*") == GATE_MARKDOWN


def test_gate_outputs_without_any_change():
    quiet = GateOutcome(unchanged=4, compared=4)
    assert (
        render.gate_text(quiet, "T") == "T\n\n4 cell(s) compared, 4 unchanged, 0 missing from the candidate. "
        "PASS: no regression (0 acknowledged) (exit 0)"
    )
    assert render.gate_markdown(quiet, "T") == (
        "## T\n\n**PASS: no regression (0 acknowledged) (exit 0)**\n\n"
        "4 cell(s) compared, 4 unchanged, 0 missing from the candidate.\n"
    )


def test_gate_markdown_lists_not_gated_platforms_alone():
    text = render.gate_markdown(GateOutcome(compared=1, not_gated=["darwin-arm64"]), "T")
    assert "### Platforms on one side only\n\n- darwin-arm64 is not gated: the baseline has no results for it\n" in text


def test_gate_text_escapes_result_data_but_keeps_its_own_blank_lines():
    judged = Judged(
        _change(
            _cell(case="a.x"),
            _cell(case="a.x", status="differs", command="run\n::error x"),
            case="a.x",
            platform="p\x1b[2J",
        ),
        "regression",
        "why\rnot",
    )
    text = render.gate_text(GateOutcome(regressions=[judged], compared=1), "T\nitle")
    assert text == (
        "T\\x0aitle\n\nREGRESSIONS (1)\n  p\\x1b[2J a.x: conforms -> differs (jax 0.7.2 -> 0.8.3)\n"
        "      why\\x0dnot\n      reproduce: run\\x0a::error x\n\n"
        "1 cell(s) compared, 0 unchanged, 0 missing from the candidate. "
        "FAIL: 1 regression(s) not acknowledged (exit 1)"
    )


def test_gate_text_reproduces_regressions_only_and_only_with_a_command():
    no_command = Judged(_change(_cell(), _cell(status="differs")), "regression", "w")
    assert "reproduce" not in render.gate_text(GateOutcome(regressions=[no_command], compared=1), "T")
    candidate_gone = Judged(_change(_cell(command="c"), None), "missing", "w")
    assert "reproduce" not in render.gate_text(GateOutcome(missing=[candidate_gone], compared=1), "T")
    reviewed = Judged(_change(_cell(), _cell(status="differs", command="c")), "review", "w")
    assert "reproduce" not in render.gate_text(GateOutcome(review=[reviewed], compared=1), "T")


@pytest.mark.parametrize(
    "overrides, verdict",
    [
        (dict(compared=0), "FAIL: no cell was compared (the two sides share no platform or no cell) (exit 1)"),
        (
            dict(compared=0, regressions=[1]),
            "FAIL: no cell was compared (the two sides share no platform or no cell) (exit 1)",
        ),
        (
            dict(compared=2, acknowledged=[1, 2], printed=[1, 2, 3]),
            "PASS: no regression (2 acknowledged, 3 printed-output change(s)) (exit 0)",
        ),
        (
            dict(compared=2, missing=[1, 2], only_in_baseline=["a", "b"], only_in_candidate=["c"], allow_missing=True),
            "PASS: no regression (0 acknowledged) (exit 0)",
        ),
        (
            dict(compared=2, missing=[1, 2]),
            "FAIL: 2 baseline cell(s) missing from the candidate and 0 platform(s) on one "
            "side only (accept them with --allow-missing) (exit 1)",
        ),
        (
            dict(compared=2, only_in_baseline=["a", "b"]),
            "FAIL: 0 baseline cell(s) missing from the candidate and 2 "
            "platform(s) on one side only (accept them with --allow-missing) "
            "(exit 1)",
        ),
        (
            dict(compared=2, regressions=[1, 2], printed=[1]),
            "FAIL: 2 regression(s) not acknowledged, 1 printed-output change(s) (exit 1)",
        ),
    ],
)
def test_verdict(overrides, verdict):
    assert render._verdict(GateOutcome(**overrides)) == verdict


def test_verdict_for_expired_entries_alone():
    dates = Lifecycle(datetime.date(2026, 12, 1), [_entry(1, "a.x"), _entry(2, "a.y")], [])
    assert render._verdict(GateOutcome(compared=1, dates=dates)) == "FAIL: 2 expectation(s) expired (exit 1)"


@pytest.mark.parametrize(
    "overrides, accepted",
    [
        (dict(missing=[1]), True),
        (dict(only_in_baseline=["a"]), True),
        (dict(only_in_candidate=["a"]), True),
        (dict(), False),
    ],
)
def test_compared_line_says_when_gaps_were_accepted(overrides, accepted):
    suffix = " (accepted with --allow-missing)" if accepted else ""
    missing = len(overrides.get("missing", []))
    expected = f"5 cell(s) compared, 2 unchanged, {missing} missing from the candidate{suffix}."
    assert render._compared_line(GateOutcome(compared=5, unchanged=2, allow_missing=True, **overrides)) == expected
    assert (
        render._compared_line(GateOutcome(compared=5, unchanged=2, **overrides))
        == f"5 cell(s) compared, 2 unchanged, {missing} missing from the candidate."
    )


def test_dated_lines_put_the_lead_on_the_first_line_only():
    dates = Lifecycle(
        datetime.date(2026, 12, 1),
        [],
        [_entry(1, "a.x", expires=datetime.date(2026, 12, 3)), _entry(2, "a.y", expires=datetime.date(2026, 12, 4))],
    )
    assert render._dated_lines(GateOutcome(dates=dates), ">") == [
        ">warning: expectation a.x (line 1) expires on 2026-12-03, in 2 days (no owner, no bug)",
        "warning: expectation a.y (line 2) expires on 2026-12-04, in 3 days (no owner, no bug)",
    ]
    assert render._dated_lines(GateOutcome(), ">") == []


# ---- bisect -------------------------------------------------------------------------------------------------------

RELEASES = ["0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.4.35", "0.4.36"]


def test_bisect_text_when_the_ends_agree():
    outcome = BisectOutcome(
        RELEASES,
        "0.4.30",
        "0.4.36",
        _cell(status="differs", known=True),
        _cell(status="differs", known=True, observation={"w": "\n"}),
        ends_agree=True,
        tested=["0.4.30", "0.4.36"],
        skipped=[Untestable("0.4.33", "needs\nPython 3.9 " + "x" * 300)],
    )
    assert render.bisect_text(outcome, "a.b[p]") == (
        "jax 0.4.30 and jax 0.4.36 agree on a.b[p], so there is nothing to bisect:\n"
        "  jax 0.4.30: differs (bug absent): {'ok': True}\n"
        "  jax 0.4.36: differs (bug absent): {'w': '\\n'}\n"
        "skipped jax 0.4.33: needs Python 3.9 " + "x" * 282 + "…\n"
        "tested 2 of 6 releases (0.4.30 .. 0.4.36)"
    )


def _found() -> BisectOutcome:
    return BisectOutcome(
        RELEASES,
        "0.4.30",
        "0.4.36",
        _cell(known=True),
        _cell(status="differs", known=True),
        last_good="0.4.31",
        first_bad="0.4.35",
        last_good_result=_cell(observation={"v": 1}, known=True),
        first_bad_result=_cell(status="differs", observation={"v": 2}, known=True),
        skipped=[Untestable("0.4.33", "no interpreter"), Untestable("0.4.34", "build\x1b failed")],
        tested=["0.4.30", "0.4.36", "0.4.31", "0.4.35"],
        untested_between=["0.4.33", "0.4.34"],
    )


def test_bisect_text_names_the_last_good_and_first_bad_releases():
    assert render.bisect_text(_found(), "a.b") == (
        "last good: jax 0.4.31   conforms (bug still present): {'v': 1}\n"
        "first bad: jax 0.4.35   differs (bug absent): {'v': 2}\n"
        "  v: 1 -> 2\n"
        "the change happened in one of these untested releases or at jax 0.4.35: 0.4.33, 0.4.34\n"
        "skipped jax 0.4.33: no interpreter\n"
        "skipped jax 0.4.34: build\\x1b failed\n"
        "tested 4 of 6 releases (0.4.30 .. 0.4.36)"
    )


def test_bisect_text_for_a_fix_uses_the_bug_words():
    outcome = _found()
    outcome.untested_between, outcome.skipped = [], []
    outcome.first_bad_result = outcome.last_good_result
    assert render.bisect_text(outcome, "a.b", find_fix=True) == (
        "last release with the bug: jax 0.4.31   conforms (bug still present): {'v': 1}\n"
        "first release without it: jax 0.4.35   conforms (bug still present): {'v': 1}\n"
        "tested 4 of 6 releases (0.4.30 .. 0.4.36)"
    )


def test_commit_lines():
    good = BuildCommits("0.8.0", "0.8.0", "a" * 40, "a" * 40)
    bad = BuildCommits("0.8.1", "0.8.1", "b" * 40, "c" * 40)
    attribution = SimpleNamespace(verdict="the jax side", details=["jax alone flips it", "jaxlib alone does not"])
    report = SimpleNamespace(good_build=good, bad_build=bad, attribution=attribution)
    assert render.commit_lines(report) + render.attribution_lines(report) == [
        f"  last good build: jax 0.8.0 (commit {'a' * 12}) with jaxlib 0.8.0 (same commit)",
        f"  first bad build: jax 0.8.1 (commit {'b' * 12}) with jaxlib 0.8.1 (commit {'c' * 12})",
        f"  jax commits between them: https://github.com/jax-ml/jax/compare/{'a' * 40}...{'b' * 40}",
        f"  jaxlib commits between them: https://github.com/jax-ml/jax/compare/{'a' * 40}...{'c' * 40}",
        "attribution: the jax side",
        "  jax alone flips it",
        "  jaxlib alone does not",
    ]
    same = SimpleNamespace(
        good_build=good, bad_build=BuildCommits("0.8.1", "0.8.1", "b" * 40, "b" * 40), attribution=None
    )
    assert render.commit_lines(same) == [
        f"  last good build: jax 0.8.0 (commit {'a' * 12}) with jaxlib 0.8.0 (same commit)",
        f"  first bad build: jax 0.8.1 (commit {'b' * 12}) with jaxlib 0.8.1 (same commit)",
        f"  jax commits between them: https://github.com/jax-ml/jax/compare/{'a' * 40}...{'b' * 40}",
    ]
    assert render.commit_lines(SimpleNamespace(good_build=None, bad_build=bad, attribution=attribution)) == []
    assert render.commit_lines(SimpleNamespace(good_build=good, bad_build=None, attribution=attribution)) == []


def _session(**overrides) -> SimpleNamespace:
    fields = dict(
        outcome=_found(),
        cell_id="a.b",
        find_fix=False,
        good_build=None,
        bad_build=None,
        attribution=None,
        results="results/",
        from_storage=["0.4.30", "0.4.36"],
        ran=["0.4.31", "0.4.35"],
        wall_s=12.345,
        releases=RELEASES,
        no_fix="",
    )
    fields.update(overrides)
    return SimpleNamespace(**fields)


def test_bisect_session_text():
    assert render.bisect_session_text(_session()) == "\n" + render.bisect_text(_found(), "a.b") + (
        "\nanswered from stored results in results/: 0.4.30, 0.4.36; ran: 0.4.31, 0.4.35\nwall time: 12.3s"
    )
    source = SimpleNamespace(lines=lambda: ["source: built at abc", "  second"])
    good = BuildCommits("0.8.0", "0.8.0")
    text = render.bisect_session_text(
        _session(from_storage=[], ran=[], wall_s=0.06, find_fix=True, source=source, good_build=good, bad_build=good)
    )
    assert text == "\n" + render.bisect_text(_found(), "a.b", True) + (
        "\n  last good build: jax 0.8.0 (no commit recorded; tag jax-v0.8.0) with jaxlib 0.8.0 (no commit recorded; "
        "tag jaxlib-v0.8.0)"
        "\n  first bad build: jax 0.8.0 (no commit recorded; tag jax-v0.8.0) with jaxlib 0.8.0 (no commit recorded; "
        "tag jaxlib-v0.8.0)"
        "\n  jax commits between them: https://github.com/jax-ml/jax/compare/jax-v0.8.0...jax-v0.8.0"
        "\nsource: built at abc\n  second"
        "\nanswered from stored results in results/: none; ran: nothing\nwall time: 0.1s"
    )


def test_bisect_session_text_without_a_fix_to_find():
    report = _session(outcome=None, no_fix="does not reproduce")
    assert render.bisect_session_text(report) == (
        "the known issue does not reproduce on both jax 0.4.30 and jax 0.4.36: no fix to find"
    )


def test_bisect_session_text_names_the_cell_when_the_ends_agree():
    outcome = BisectOutcome(RELEASES, "0.4.30", "0.4.36", _cell(), _cell(), ends_agree=True, tested=["0.4.30"])
    assert render.bisect_session_text(_session(outcome=outcome, cell_id="a.b[p]")).splitlines()[1] == (
        "jax 0.4.30 and jax 0.4.36 agree on a.b[p], so there is nothing to bisect:"
    )


def test_change_headline_reads_each_side_at_its_own_version():
    change = _change(
        _cell(status="differs", known=True), _cell(status="differs", known=True), before="0.4.30", after="0.12.0.1"
    )
    assert render.change_headline(change) == (
        "linux-x86_64 a.b: differs (bug absent) -> differs (changed: maybe fixed) (jax 0.4.30 -> 0.12.0.1)"
    )


def test_gate_outputs_show_a_section_after_empty_ones():
    good = Judged(_change(_cell(status="differs"), _cell()), "good news", "now conforms")
    outcome = GateOutcome(good=[good], compared=1)
    assert render.gate_text(outcome, "Xgate") == (
        "Xgate\n\nGOOD NEWS (1)\n  linux-x86_64 a.b: differs -> conforms (jax 0.7.2 -> 0.8.3)\n      now conforms\n\n"
        "1 cell(s) compared, 0 unchanged, 0 missing from the candidate. PASS: no regression (0 acknowledged) (exit 0)"
    )
    assert render.gate_markdown(outcome, "T") == (
        "## T\n\n**PASS: no regression (0 acknowledged) (exit 0)**\n\n### Good news (1)\n\n"
        "- linux-x86\\_64 a.b: differs -&gt; conforms (jax 0.7.2 -&gt; 0.8.3): now conforms\n\n"
        "1 cell(s) compared, 0 unchanged, 0 missing from the candidate.\n"
    )
