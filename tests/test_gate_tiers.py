"""The one gate through the command line on a fake sampler (no JAX, no environment): a workload that raises on the
candidate fails and is named, one made slower fails without `--perf`, `--markdown` and `--json` are written (the JSON
valid against its schema), an acknowledged change passes, and a workload's hostile error text reaches the terminal
escaped. `bisect --metric` writes `--json` and `--issue`. The tiers' verdict and a cell gate as a tier."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conformance import cli
from conformance.decide.tiers import ACKNOWLEDGED, NOTED, REGRESSED, UNJUDGED, Finding, Tier, Verdict, cell_tier
from conformance.decide.verdict_view import verdict_json, verdict_text
from conformance.perf import command
from conformance.perf.session import Side, run_perf

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "conformance" / "report" / "schemas" / "gate.schema.json").read_text(
        encoding="utf-8"
    )
)
FORGED = "bad\n::error file=ci.py,line=1::FORGED \x1b[2J\x1b]0;title\x07"


@pytest.fixture
def fake(monkeypatch):
    """Sides without environments; `fake.run_s[label]` and `fake.errors[label]` say what each side's child gives."""

    class Fake:
        run_s = {"0.8.0": 1.0, "0.9.0": 1.0, "0.8.5": 1.0}
        errors: dict = {}
        temp = {}

    def prepare(text, builder, results):
        return Side(text, "python", text, "linux-x86_64", f"env-{text}")

    def sampler(side, ids, round_no):
        if side.label in Fake.errors:
            return {wid: {"error": Fake.errors[side.label]} for wid in ids}
        jitter = 1 + 0.01 * round_no
        return {
            wid: {
                "metrics": {
                    "run_s": Fake.run_s[side.label] * jitter,
                    "compiles": 1,
                    "temp_bytes": Fake.temp.get(side.label, 64),
                }
            }
            for wid in ids
        }

    monkeypatch.setattr(command, "prepare_side", prepare)
    monkeypatch.setattr(command, "run_perf", lambda request, say: run_perf(request, sampler, say))
    monkeypatch.setattr(command, "matrix_versions", lambda name, index: ["0.8.0", "0.8.5", "0.9.0"])
    return Fake


def gate(tmp_path, *extra):
    return cli.main(["gate", "--from", "0.8.0", "--to", "0.9.0", "-k", "fft", "--results", str(tmp_path / "r"), *extra])


def test_a_workload_that_raises_on_the_candidate_fails_the_gate_and_is_named(fake, tmp_path, capsys):
    fake.errors = {"0.9.0": "AttributeError: jax.numpy.fft is gone"}
    assert gate(tmp_path, "--perf") == 1
    out = capsys.readouterr().out
    assert "REGRESSION: performance.fft: fails on 0.9.0: AttributeError: jax.numpy.fft is gone" in out
    assert "gate: FAIL: workloads failed (exit 1)" in out


def test_a_workload_made_slower_fails_without_perf_and_writes_markdown_and_valid_json(fake, tmp_path, capsys):
    fake.run_s = {"0.8.0": 1.0, "0.9.0": 3.0}
    md, out_json = tmp_path / "gate.md", tmp_path / "gate.json"
    assert gate(tmp_path, "--perf-rounds", "5", "--markdown", str(md), "--json", str(out_json)) == 1
    out = capsys.readouterr().out
    assert "REGRESSION: performance.fft run_s: regressed -- regressed: performance.fft run_s 0.8.0 -> 0.9.0" in out
    assert "not judged: cells: -k selects no cell" in out
    written = json.loads(out_json.read_text(encoding="utf-8"))
    jsonschema.validate(written, SCHEMA)
    assert written["exit_code"] == 1 and [t["name"] for t in written["tiers"]] == ["workloads"]
    assert written["tiers"][0]["counts"]["regressed"] == 1
    assert "**REGRESSION** performance.fft run\\_s" in md.read_text(
        encoding="utf-8"
    ) or "**REGRESSION** performance.fft run_s" in md.read_text(encoding="utf-8")


def test_an_acknowledged_slowdown_passes_and_an_expired_entry_fails(fake, tmp_path, capsys):
    fake.run_s = {"0.8.0": 1.0, "0.9.0": 3.0}
    expect = tmp_path / "expect.toml"
    expect.write_text('[[perf]]\nworkload = "performance.fft"\njax = ">=0.9"\nreason = "known"\n', encoding="utf-8")
    assert gate(tmp_path, "--perf", "--expectations", str(expect)) == 0
    assert "acknowledged: performance.fft run_s: known" in capsys.readouterr().out
    expect.write_text(
        '[[perf]]\nworkload = "performance.fft"\nreason = "known"\nexpires = 2026-01-01\n', encoding="utf-8"
    )
    assert gate(tmp_path, "--perf", "--expectations", str(expect), "--today", "2026-12-01") == 1
    assert "FAIL: expectation [[perf]] performance.fft (line 1) expired on 2026-01-01" in capsys.readouterr().out


def test_a_workloads_hostile_error_text_reaches_the_terminal_escaped(fake, tmp_path, capsys):
    fake.errors = {"0.9.0": FORGED}
    assert gate(tmp_path, "--perf") == 1
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):
        assert "\x1b" not in text and "\x07" not in text
        assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    assert (
        "bad\\n\\x3a:error file=ci.py,line=1::FORGED \\x1b[2J" in captured.out
        or "bad\\n::error file=ci.py,line=1::FORGED \\x1b[2J" in captured.out
    )


def test_a_datetime_expiry_and_a_fifo_expectations_file_are_refused_in_one_line(fake, tmp_path, capsys):
    import os

    expect = tmp_path / "expect.toml"
    expect.write_text('[[perf]]\nworkload = "x"\nreason = "r"\nexpires = 2027-01-01T00:00:00\n', encoding="utf-8")
    assert gate(tmp_path, "--perf", "--expectations", str(expect)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[[perf]] entry 1: `expires` is datetime.datetime(2027, 1, 1, 0, 0)" in err
    os.mkfifo(tmp_path / "fifo.toml")
    assert gate(tmp_path, "--perf", "--expectations", str(tmp_path / "fifo.toml")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a FIFO" in err


def test_bisect_metric_writes_its_json_and_issue(fake, tmp_path, capsys):
    fake.run_s = {"0.8.0": 3.0, "0.8.5": 1.0, "0.9.0": 1.0}  # an improvement, in at 0.8.5
    out_json, issue = tmp_path / "b.json", tmp_path / "b.md"
    status = cli.main(
        [
            "bisect",
            "performance.fft",
            "--metric",
            "run_s",
            "--good",
            "0.8.0",
            "--bad",
            "0.9.0",
            "--results",
            str(tmp_path / "r"),
            "--json",
            str(out_json),
            "--issue",
            str(issue),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0 and "first release where run_s of performance.fft crossed: 0.8.5 (last before it: 0.8.0)" in out
    written = json.loads(out_json.read_text(encoding="utf-8"))
    assert (written["first"], written["last_good"], written["refused"]) == ("0.8.5", "0.8.0", None)
    assert written["steps"][0]["release"] == "0.8.5" and written["steps"][0]["side"] == "bad"
    assert "**0.8.5**" in issue.read_text(encoding="utf-8")


def test_a_bisect_that_blames_nothing_writes_its_json_and_no_issue(fake, tmp_path, capsys):
    fake.run_s = {"0.8.0": 1.0, "0.8.5": 1.0, "0.9.0": 1.0}
    out_json, issue = tmp_path / "b.json", tmp_path / "b.md"
    status = cli.main(
        [
            "bisect",
            "performance.fft",
            "--metric",
            "run_s",
            "--good",
            "0.8.0",
            "--bad",
            "0.9.0",
            "--results",
            str(tmp_path / "r"),
            "--json",
            str(out_json),
            "--issue",
            str(issue),
        ]
    )
    assert status == 1 and json.loads(out_json.read_text(encoding="utf-8"))["refused"] and not issue.exists()
    assert f"no bug report written to {issue}" in capsys.readouterr().out


# The verdict over tiers, pure


def tier(name, *states, judged=1, problems=()):
    return Tier(name, "t", judged, tuple(Finding(f"{name}.{i}", s, "why") for i, s in enumerate(states)), problems)


@pytest.mark.parametrize(
    "tiers, expired, code",
    [
        ((tier("cells", NOTED, ACKNOWLEDGED), tier("workloads", NOTED)), (), 0),
        ((tier("cells", NOTED), tier("workloads", REGRESSED)), (), 1),
        ((tier("cells"), tier("names", UNJUDGED)), (), 1),
        ((tier("cells", problems=("no cell was compared",)),), (), 1),
        ((tier("cells", judged=0), tier("workloads", judged=0)), (), 1),  # nothing judged never passes
        ((tier("cells"),), ("expectation [[perf]] x expired",), 1),
    ],
)
def test_one_verdict_over_every_tier(tiers, expired, code):
    verdict = Verdict("gate", tiers, expired=expired)
    assert verdict.exit_code == code
    jsonschema.validate(verdict_json(verdict), SCHEMA)
    assert verdict_text(verdict).splitlines()[-1].startswith("gate: PASS" if code == 0 else "gate: FAIL")


def test_a_cell_gate_becomes_a_tier_that_fails_exactly_when_the_cell_gate_does():
    from conformance.decide.gate import GateOutcome

    assert cell_tier(GateOutcome(compared=3), "t").failed is False
    assert cell_tier(GateOutcome(compared=0), "t").problems == ("no cell was compared",)
    assert cell_tier(GateOutcome(compared=3, only_in_baseline=["mac"]), "t").failed
    assert not cell_tier(GateOutcome(compared=3, only_in_baseline=["mac"], allow_missing=True), "t").failed


def test_a_cell_only_gate_prints_as_the_cell_gate_always_did():
    verdict = Verdict("gate", (Tier("cells", "t", 3, lines=("gate (x)", "", "3 cell(s) compared. PASS")),))
    assert verdict_text(verdict) == "gate (x)\n\n3 cell(s) compared. PASS"


def test_perf_prints_a_workloads_claimless_error_and_a_perf_reason_escaped(fake, tmp_path, capsys):
    fake.errors = {"0.9.0": FORGED}
    assert (
        cli.main(
            [
                "perf",
                "--jax",
                "0.8.0",
                "--jax",
                "0.9.0",
                "-k",
                "fft",
                "--results",
                str(tmp_path / "r"),
                "--rounds",
                "1",
                "--max-rounds",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "\x1b" not in out and not any(line.lstrip().startswith("::") for line in out.splitlines())
    fake.errors, fake.run_s = {}, {"0.8.0": 1.0, "0.9.0": 3.0}
    expect = tmp_path / "expect.toml"
    expect.write_text(
        '[[perf]]\nworkload = "performance.fft"\nreason = "ok\\u001b[31m\\n::warning::x"\n', encoding="utf-8"
    )
    assert gate(tmp_path, "--perf", "--expectations", str(expect)) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and not any(line.lstrip().startswith("::") for line in out.splitlines())
    assert "acknowledged: performance.fft run_s: ok\\x1b[31m\\n::warning::x" in out


def test_the_names_tier_fails_on_a_removed_name_unless_a_name_entry_acknowledges_it():
    from conformance.api.judge import Finding as Use
    from conformance.decide.expectations import parse_expectations_file
    from conformance.decide.tiers import name_findings

    uses = [
        Use("a.py", 3, 0, "jax.tree_map", "removed", "0.6.0", "removed in 0.6.0", "jax.tree.map"),
        Use("a.py", 4, 0, "jax.numpy.round_", "deprecated", "0.5.0", "deprecated"),
        Use("b.py", 1, 0, "jax.foo", "not_judged", "", "no census"),
    ]
    found = name_findings(uses, [], "0.12.0.1")
    assert found == [
        Finding("jax.tree_map", REGRESSED, "removed in jax 0.12.0.1", "a.py:3: removed in 0.6.0"),
        Finding("jax.numpy.round_", NOTED, "deprecated", "a.py:4: deprecated"),
        Finding("jax.foo", UNJUDGED, "no census can judge it", "b.py:1: no census"),
    ]
    names = parse_expectations_file('[[name]]\nname = "jax.tree_map"\njax = ">=0.12"\nreason = "moving"\n').names
    assert name_findings(uses[:1], names, "0.12.0.1") == [
        Finding("jax.tree_map", ACKNOWLEDGED, "moving", "a.py:3: removed in 0.6.0")
    ]
    assert name_findings(uses[:1], names, "0.11.0")[0].state == REGRESSED  # the specifier reads the candidate


def test_scan_adds_the_names_tier_to_the_one_verdict(fake, tmp_path, capsys, monkeypatch):
    from conformance.api.judge import Finding as Use
    from conformance.api.session import ScanOutcome
    from conformance.decide import onegate

    asked = []

    def scan(request, builder, say):
        asked.append(request)
        return ScanOutcome([Use("team/a.py", 3, 0, "jax.tree_map", "removed", "0.6.0", "removed")], "", 1, 1, [])

    monkeypatch.setattr(onegate, "run_scan", scan)
    (tmp_path / "team").mkdir()
    out_json = tmp_path / "g.json"
    assert gate(tmp_path, "--perf-rounds", "5", "--scan", str(tmp_path / "team"), "--json", str(out_json)) == 1
    assert asked[0].to == "0.9.0" and asked[0].before == "0.8.0"
    out = capsys.readouterr().out
    assert "names (1 file(s) scanned against jax 0.9.0): 1 judged, 1 regressed" in out
    assert "REGRESSION: jax.tree_map: removed in jax 0.9.0 -- team/a.py:3: removed" in out
    written = json.loads(out_json.read_text(encoding="utf-8"))
    jsonschema.validate(written, SCHEMA)
    assert [(t["name"], t["passed"]) for t in written["tiers"]] == [("workloads", True), ("names", False)]


def test_gate_and_diff_of_result_sets_write_json_valid_against_the_schema(tmp_path, capsys):
    from tests.synthetic_results import cell, write

    before = write(tmp_path / "a", "0.7.2", "linux-x86_64", [cell("a.x", status="conforms"), cell("a.gone")])
    after = write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.x", status="differs")])
    gate_json, diff_json = tmp_path / "g.json", tmp_path / "d.json"
    assert cli.main(["gate", "--baseline", str(before), "--candidate", str(after), "--json", str(gate_json)]) == 1
    written = json.loads(gate_json.read_text(encoding="utf-8"))
    jsonschema.validate(written, SCHEMA)
    (cells,) = written["tiers"]
    assert cells["name"] == "cells" and cells["counts"]["regressed"] == 1 and cells["counts"]["unjudged"] == 1
    assert {f["subject"]: f["state"] for f in cells["findings"]} == {
        "linux-x86_64 a.x": "regressed",
        "linux-x86_64 a.gone": "unjudged",
    }
    assert cli.main(["diff", str(before), str(after), "--json", str(diff_json)]) == 0
    written = json.loads(diff_json.read_text(encoding="utf-8"))
    jsonschema.validate(written, SCHEMA)
    assert {c["cell"]: (c["baseline"], c["candidate"]) for c in written["changes"]} == {
        "a.x": ("conforms", "differs"),
        "a.gone": ("conforms", None),
    }
    assert f"json: {diff_json}" in capsys.readouterr().out
    assert cli.main(["diff", str(before), str(after), "--json", str(before)]) == 2  # never over an input


def test_a_further_tier_plugs_into_the_one_verdict(tmp_path, capsys, monkeypatch):
    """The downstream test-suite tier's plug: one more `TierJudge` in `OneGateRequest.more`."""
    from tests.synthetic_results import cell, write

    from conformance.decide import onegate
    from conformance.decide.sides import GateRequest
    from conformance.engine.matrix import RunSettings

    before = write(tmp_path / "a", "0.7.2", "linux-x86_64", [cell("a.x")])
    after = write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.x")])
    downstream = lambda request, expectations, builder, say: Tier(  # noqa: E731
        "downstream", "team suite", 3, (Finding("tests/test_a.py::test_b", REGRESSED, "passed -> failed"),)
    )
    cells = GateRequest(RunSettings(results=tmp_path / "r"), (before,), (after,))
    done = onegate.run_one_gate(
        onegate.OneGateRequest(cells=cells, more=(downstream,)), lambda: None, lambda event: None, lambda line: None
    )
    assert [t.name for t in done.verdict.tiers] == ["cells", "downstream"] and done.exit_code == 1
    assert done.verdict.failing_tiers() == ["downstream"]
    assert "gate: FAIL: downstream failed (exit 1)" in verdict_text(done.verdict)


def test_a_cell_gate_becomes_findings_one_per_judged_cell_in_its_state():
    from conformance.decide.diff import diff_sets, result_set
    from conformance.decide.expectations import parse_expectations
    from conformance.decide.gate import gate as cell_gate
    from tests.synthetic_results import cell, files

    before = files(
        "0.7.2",
        "linux-x86_64",
        [
            cell("a.reg"),
            cell("a.ack"),
            cell("a.gone"),
            cell("a.good", status="differs"),
            cell("a.rev", status="differs", observation={"n": 1}),
        ],
    )
    after = files(
        "0.8.3",
        "linux-x86_64",
        [
            cell("a.reg", status="differs"),
            cell("a.ack", status="differs"),
            cell("a.good"),
            cell("a.rev", status="differs", observation={"n": 2}),
        ],
    )
    sets = diff_sets(result_set([before], "baseline"), result_set([after], "candidate"))
    entries = parse_expectations('[[expect]]\ncell = "a.ack"\nstatus = ["differs"]\nreason = "known"\n')
    found = cell_tier(cell_gate(sets, entries), "t", ["the lines"])
    assert sorted((f.subject, f.state, f.reason) for f in found.findings) == [
        ("linux-x86_64 a.ack", ACKNOWLEDGED, "known"),
        ("linux-x86_64 a.gone", UNJUDGED, "the candidate does not have this cell (it was not run)"),
        ("linux-x86_64 a.good", NOTED, "good news"),
        ("linux-x86_64 a.reg", REGRESSED, "stops conforming to the documented behaviour"),
        ("linux-x86_64 a.rev", NOTED, "review"),
    ]
    details = {f.subject: f.detail for f in found.findings}
    assert details["linux-x86_64 a.ack"] == "stops conforming to the documented behaviour"
    assert (details["linux-x86_64 a.good"], details["linux-x86_64 a.rev"]) == (
        "now conforms to the documented behaviour",
        "same status, different observation",
    )
    assert found.lines == ("the lines",) and found.failed and found.judged == 4  # a.gone is not compared
    unnamed = parse_expectations('[[expect]]\ncell = "a.ack"\nstatus = ["differs"]\n')
    acknowledged = [f for f in cell_tier(cell_gate(sets, unnamed), "t").findings if f.state == ACKNOWLEDGED]
    assert [f.reason for f in acknowledged] == ["accepted as expected"]
    accepted = cell_tier(cell_gate(sets, entries, allow_missing=True), "t")
    assert {f.subject: f.state for f in accepted.findings}["linux-x86_64 a.gone"] == NOTED


def test_one_platform_on_either_side_only_is_a_problem_of_the_cell_tier():
    from conformance.decide.gate import GateOutcome

    assert cell_tier(GateOutcome(compared=3, only_in_candidate=["win"]), "t").problems == (
        "a platform was run on one side only",
    )
    clean = cell_tier(GateOutcome(compared=3), "t")
    assert clean.findings == () and clean.problems == () and not clean.failed
