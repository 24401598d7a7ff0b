"""`upgrade --from 0.5.3 --to 0.6.2` on real releases, through the CLI: a few cells run on both, the two censuses
taken, a small repository that uses `jax.tree_map` scanned; the summary, the Markdown and the JSON (checked against
its schema) say the same counts. Slow, marked `e2e` (the environments are built by the project's builder); the
performance tier is left out (`--perf-rounds 0`) to stay small: its rules are `tests/test_upgrade.py`'s."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conformance import cli
from tests.test_upgrade import SCHEMA

pytestmark = pytest.mark.e2e


def test_upgrade_between_two_real_releases_says_the_same_three_ways(tmp_path, capsys):
    code = tmp_path / "repo"
    code.mkdir()
    (code / "model.py").write_text(
        "import jax\n\n\ndef step(p, g):\n    return jax.tree_map(lambda a, b: a - b, p, g)\n", encoding="utf-8"
    )
    out_json, out_md = tmp_path / "upgrade.json", tmp_path / "upgrade.md"
    status = cli.main(
        [
            "upgrade",
            "--from",
            "0.5.3",
            "--to",
            "0.6.2",
            "--results",
            str(tmp_path / "results"),
            "-k",
            "debug_nans",
            "--scan",
            str(code),
            "--perf-rounds",
            "0",
            "--json",
            str(out_json),
            "--markdown",
            str(out_md),
        ]
    )
    printed = capsys.readouterr().out
    assert status == 0
    data = json.loads(out_json.read_text(encoding="utf-8"))
    jsonschema.validate(data, json.loads(Path(SCHEMA).read_text(encoding="utf-8")))
    tiers = {t["key"]: t for t in data["tiers"]}
    names = tiers["names"]
    assert names["judged"] and any(
        i["name"] == "jax.tree_map" and i["where"] == [f"{code / 'model.py'}:5"] for i in names["items"]
    )
    assert tiers["behaviours"]["judged"] and tiers["behaviours"]["checked"] > 0
    assert not tiers["performance"]["judged"] and not tiers["cases"]["judged"]
    markdown = out_md.read_text(encoding="utf-8")
    for tier in data["tiers"]:
        if tier["judged"]:
            heading = f"{tier['title']}: {tier['count']} of {tier['checked']} change"
            assert heading in printed and heading in markdown
