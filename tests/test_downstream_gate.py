"""The downstream tier in the one gate (`gate --from A --to B --downstream SUITE`), on stored synthetic cells (no
suite runs, no environment is built): a regressed test fails the one verdict and is named with its cause; a
`[[downstream]]` entry for its signature leaves it acknowledged and the gate passes; a flaky test never gates; a
candidate the lock cannot serve is unjudged and fails; an expired entry fails; the JSON validates against the gate
schema. And the tier's rules on judgements directly, and `downstream_request` of plain values."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conformance import cli
from conformance.decide.tiers import ACKNOWLEDGED, NOTED, REGRESSED, UNJUDGED, Verdict
from conformance.downstream import command
from conformance.downstream.cells import run_key, to_cell
from conformance.downstream.gating import downstream_tier
from conformance.downstream.judge import Ack, Judged, judge
from conformance.downstream.lock import Lock
from conformance.downstream.manifest import folder_digest, read_suite
from conformance.downstream.outcomes import UNINSTALLABLE_ID, NodeOutcome
from conformance.downstream.parser import downstream_request
from conformance.downstream.store import store_suite
from conformance.engine.matrix import host_platform
from conformance.errors import ConformanceError

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[1] / "conformance" / "report" / "schemas" / "gate.schema.json").read_text(
        encoding="utf-8"
    )
)
GONE = {
    "type": "AttributeError",
    "message": "module 'jax' has no attribute 'tree_map'",
    "frames": [["/env/team/test_core.py", 3, "test_tree"], ["/env/team/core.py", 7, "flatten"]],
}
NODES = ("test_core.py::test_tree", "test_core.py::test_add", "test_core.py::test_random")


@pytest.fixture
def suite(tmp_path, monkeypatch):
    """A team folder (a suite) whose lock and environments are fixed without the resolver; `suite.store(version,
    outcomes)` stores that release's cells under the key the run would compute, so storage answers both sides."""
    folder = tmp_path / "team"
    (folder / "team").mkdir(parents=True)
    (folder / "team" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "test_core.py").write_text("def test_add():\n    assert 1 + 1 == 2\n", encoding="utf-8")
    monkeypatch.setattr(command, "lock_for", lambda suite, baseline, builder: Lock("jax==0.8.0\n", baseline, "3.12"))
    monkeypatch.setattr(command, "suite_env_digest", lambda lock, version, builder: f"env-{version}")
    results = tmp_path / "results"

    class Suite:
        spec, path = str(folder), folder

        @staticmethod
        def store(version, outcomes):
            named = read_suite(str(folder))
            key = run_key(named.spec, named.manifest.text, folder_digest(folder), f"env-{version}", None)
            cells = [
                to_cell(named.ident, named.label, o, key, ["/env"], {named.label: ("team",)}, ("team",))
                for o in outcomes
            ]
            store_suite(results, version, host_platform(), named.ident, cells, "3.12.1", 1.0)

    Suite.results, Suite.label = results, read_suite(str(folder)).label
    return Suite


def passing(version="0.8.0"):
    return [NodeOutcome(node, "passed", 0.1) for node in NODES]


def gate(suite, tmp_path, *extra):
    # `-k` selects no cell and no workload: the downstream tier is the one judged (no JAX environment is built)
    return cli.main(
        [
            "gate",
            "--from",
            "0.8.0",
            "--to",
            "0.9.0",
            "-k",
            "no_such_cell_anywhere",
            "--downstream",
            suite.spec,
            "--results",
            str(suite.results),
            *extra,
        ]
    )


def expectations(tmp_path, body):
    path = tmp_path / "expect.toml"
    path.write_text(body, encoding="utf-8")
    return ["--expectations", str(path)]


def test_a_regressed_test_fails_the_one_gate_and_is_named_with_its_cause_and_the_json_validates(
    suite, tmp_path, capsys
):
    suite.store("0.8.0", passing())
    suite.store(
        "0.9.0",
        [
            NodeOutcome(NODES[0], "failed", 0.1, GONE),
            NodeOutcome(NODES[1], "passed", 0.1),
            NodeOutcome(NODES[2], "flaky", 0.1, {**GONE, "type": "ValueError"}),
        ],
    )
    out_json = tmp_path / "gate.json"
    assert gate(suite, tmp_path, "--json", str(out_json)) == 1
    out = capsys.readouterr().out
    assert (
        f"REGRESSION: {suite.label} {NODES[0]}: regressed: AttributeError: module 'jax' has no attribute "
        f"'tree_map' @ team/core.py:flatten" in out
    )
    assert "gate: FAIL: downstream failed (exit 1)" in out
    assert "not judged: cells: -k selects no cell" in out
    written = json.loads(out_json.read_text(encoding="utf-8"))
    jsonschema.validate(written, SCHEMA)
    (tier,) = written["tiers"]
    assert tier["name"] == "downstream" and tier["judged"] == 3 and not tier["passed"] and written["exit_code"] == 1
    assert tier["counts"] == {"regressed": 1, "acknowledged": 0, "unjudged": 0, "noted": 1}
    flaky = next(f for f in tier["findings"] if f["state"] == NOTED)
    assert flaky["subject"].endswith(NODES[2]) and "never gates" in flaky["reason"]


def test_an_entry_for_the_signature_acknowledges_it_and_the_gate_passes(suite, tmp_path, capsys):
    suite.store("0.8.0", passing())
    suite.store("0.9.0", [NodeOutcome(NODES[0], "failed", 0.1, GONE), *passing()[1:]])
    acked = expectations(
        tmp_path,
        '[[downstream]]\nsignature = "AttributeError: *tree_map* @ *"\n'
        'reason = "jax.tree_map was removed; moving to jax.tree.map"\n',
    )
    out_md = tmp_path / "gate.md"
    assert gate(suite, tmp_path, *acked, "--markdown", str(out_md)) == 0
    out = capsys.readouterr().out
    assert f"acknowledged: {suite.label} {NODES[0]}: jax.tree_map was removed; moving to jax.tree.map" in out
    assert "gate: PASS (downstream judged) (exit 0)" in out
    assert "1 acknowledged" in out_md.read_text(encoding="utf-8")
    other = expectations(tmp_path, '[[downstream]]\nsignature = "TypeError: *"\nreason = "another cause"\n')
    assert gate(suite, tmp_path, *other) == 1  # an entry for another cause acknowledges nothing here


def test_an_expired_entry_acknowledges_nothing_and_fails_the_gate(suite, tmp_path, capsys):
    suite.store("0.8.0", passing())
    suite.store("0.9.0", passing())
    old = expectations(tmp_path, '[[downstream]]\nnode = "*"\nreason = "old"\nexpires = 2020-01-01\n')
    assert gate(suite, tmp_path, *old) == 1
    assert "expired on 2020-01-01" in capsys.readouterr().out
    assert gate(suite, tmp_path) == 0  # the same suite without that entry passes


def test_a_flaky_test_never_gates(suite, tmp_path, capsys):
    suite.store("0.8.0", passing())
    suite.store("0.9.0", [*passing()[:2], NodeOutcome(NODES[2], "flaky", 0.1, GONE)])
    assert gate(suite, tmp_path) == 0
    assert f"noted: {suite.label} {NODES[2]}: flaky" in capsys.readouterr().out


def test_an_uninstallable_candidate_is_unjudged_and_fails(suite, tmp_path, capsys):
    suite.store("0.8.0", passing())
    suite.store("0.9.0", [NodeOutcome(UNINSTALLABLE_ID, "uninstallable", reason="uv pip check: team needs jax<0.9")])
    out_json = tmp_path / "gate.json"
    assert gate(suite, tmp_path, "--json", str(out_json)) == 1
    out = capsys.readouterr().out
    assert (
        f"NOT JUDGED: {suite.label}: cannot be installed with jax 0.9.0: uninstallable: uv pip check: team "
        f"needs jax<N -- 3 baseline tests not run" in out
    )
    written = json.loads(out_json.read_text(encoding="utf-8"))
    jsonschema.validate(written, SCHEMA)
    assert written["tiers"][0]["counts"]["unjudged"] == 1


def test_downstream_needs_two_releases_in_one_line(suite, tmp_path, capsys):
    result = tmp_path / "r.json"
    result.write_text("{}", encoding="utf-8")
    code = cli.main(
        [
            "gate",
            "--baseline",
            str(result),
            "--candidate",
            str(result),
            "-k",
            "no_such_cell_anywhere",
            "--downstream",
            suite.spec,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--downstream judges two releases" in err and len(err.strip().splitlines()) == 1


# -- the tier's rules on judgements


def J(status, sig="", **kw):
    return Judged(status, sig, **kw)


def test_the_tier_files_each_class_in_its_state():
    base = {
        "r1": J("passed"),
        "r2": J("passed"),
        "a": J("passed"),
        "k": J("passed"),
        "t": J("passed"),
        "f": J("failed", "E0"),
        "w": J("passed", warnings=("DeprecationWarning: x @ lib/m.py",)),
    }
    cand = {
        "r1": J("failed", "E1", owner="lib"),
        "r2": J("error", "E1", owner="lib"),
        "a": J("failed", "E2"),
        "k": J("flaky", "E3"),
        "t": J("timeout"),
        "f": J("passed"),
        "w": J("passed", warnings=("DeprecationWarning: x @ lib/m.py", "DeprecationWarning: y @ lib/m.py")),
    }
    judged = judge("lib==1", base, cand, [Ack("*", signature="E2", reason="known")])
    tier = downstream_tier([("lib==1", "0.8.0", "0.9.0", judged)])
    states = {f.subject: (f.state, f.reason) for f in tier.findings if f.subject != "lib==1"}
    assert states["lib==1 r1"] == (REGRESSED, "regressed: E1 (in lib)")
    assert states["lib==1 r2"][0] == REGRESSED and states["lib==1 a"] == (ACKNOWLEDGED, "known")
    assert {states[f"lib==1 {n}"][0] for n in "ktf"} == {NOTED}
    assert next(f.detail for f in tier.findings if f.subject == "lib==1 r1").endswith("2 tests with this cause")
    assert [f.detail for f in tier.findings if f.subject == "lib==1"] == ["DeprecationWarning: y @ lib/m.py"]
    assert tier.judged == 7 and tier.failed and tier.count(REGRESSED) == 2
    acked = judge("lib==1", base, cand, [Ack("*", signature="E*", reason="all known")])
    assert not downstream_tier([("lib==1", "0.8.0", "0.9.0", acked)]).failed


def test_an_uninstallable_candidate_is_one_unjudged_finding_unless_acknowledged():
    base, cand = {"a": J("passed"), "b": J("passed")}, {UNINSTALLABLE_ID: J("uninstallable", "uninstallable: no")}
    tier = downstream_tier([("lib==1", "0.8.0", "0.9.0", judge("lib==1", base, cand))])
    assert [(f.subject, f.state, f.detail) for f in tier.findings] == [("lib==1", UNJUDGED, "2 baseline tests not run")]
    assert tier.failed and tier.judged == 2
    acked = judge("lib==1", base, cand, [Ack("*", signature="uninstallable: *", reason="lib drops 0.9")])
    tier = downstream_tier([("lib==1", "0.8.0", "0.9.0", acked)])
    assert [(f.state, f.reason) for f in tier.findings] == [(ACKNOWLEDGED, "lib drops 0.9")] and not tier.failed


def test_a_baseline_the_lock_cannot_serve_judges_nothing_and_is_a_problem():
    base = {UNINSTALLABLE_ID: J("uninstallable", "uninstallable: no")}
    for cand in (base, {"a": J("passed")}):
        tier = downstream_tier([("lib==1", "0.8.0", "0.9.0", judge("lib==1", base, cand))])
        assert tier.failed and tier.judged == 0 and "baseline jax 0.8.0" in tier.problems[0]
    assert Verdict("g", (downstream_tier([]),)).exit_code == 1  # nothing judged never passes


def test_an_expired_entry_is_a_problem_of_the_tier():
    judged = judge("lib==1", {"a": J("passed")}, {"a": J("passed")})
    assert not downstream_tier([("lib==1", "0.8.0", "0.9.0", judged)]).failed
    assert downstream_tier([("lib==1", "0.8.0", "0.9.0", judged)], ["entry 1 expired"]).failed


# -- the request, of plain values


class Index:
    pass


def test_the_downstream_request_is_made_of_plain_values(tmp_path, monkeypatch):
    made = downstream_request(
        None, suites=["chex==0.1.90"], results=tmp_path, from_version="0.8.0", to_version="0.10.0", budget=30.0
    )
    assert made.suites == ("chex==0.1.90",) and made.versions == ("0.8.0", "0.10.0") and made.budget_s == 30.0
    assert downstream_request(None, suites=["s"], results=tmp_path, jax=["0.5.3", "0.6.0"]).versions == (
        "0.5.3",
        "0.6.0",
    )
    with pytest.raises(ConformanceError, match="give both --from"):
        downstream_request(None, suites=["s"], results=tmp_path, to_version="0.9.0")
