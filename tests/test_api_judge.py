"""`api scan`'s judgement (`conformance.api.judge`) on the cases the repository tests leave out: a name the target
release never had, and a removal no deprecation table reports. Synthetic censuses, no JAX."""

from __future__ import annotations

import json
import textwrap

from conformance import cli
from conformance.api.judge import Censuses, exit_status, judge
from conformance.api.scan import uses_in_source
from tests.api_censuses import census, fn, module

P = "positional_or_keyword"


def judged(source: str, to, before=None, history=()):
    uses = uses_in_source(textwrap.dedent(source), "a.py")
    return judge(uses, Censuses(to, before, tuple(history) or (to,)))


def test_a_name_the_target_release_never_had_is_missing_and_fails_the_scan():
    """Issue 48: an exit status that ignored `missing` (a typo, a name of a newer JAX) survived every test."""
    to = census("0.6.2", {"jax.numpy": module(), "jax.numpy.sum": fn(("a", P, None))})
    findings = judged("import jax\nimport jax.numpy as jnp\njnp.summ(x)\njax.shard_map\n", to)
    assert [(f.line, f.name, f.state, f.message) for f in findings] == [
        (3, "jax.numpy.summ", "missing", "jax 0.6.2 has no jax.numpy.summ"),
        (4, "jax.shard_map", "missing", "jax 0.6.2 has no jax.shard_map")]
    assert exit_status(findings) == 1
    assert exit_status([]) == 0


def test_the_cli_exits_1_on_a_typo_alone(tmp_path, capsys):
    to = census("0.6.2", {"jax.numpy": module(), "jax.numpy.sum": fn(("a", P, None))})
    path = tmp_path / "census-0.6.2.json"
    path.write_text(json.dumps({**to.header, "names": to.names, "modules": to.modules}), encoding="utf-8")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.py").write_text("import jax.numpy as jnp\njnp.summ(1)\njnp.sum(1)\n", encoding="utf-8")
    assert cli.main(["api", "scan", str(tmp_path / "repo"), "--to", str(path), "--results", str(tmp_path)]) == 1
    assert "jax.numpy.summ missing" in capsys.readouterr().out
    (tmp_path / "repo" / "a.py").write_text("import jax.numpy as jnp\njnp.sum(1)\n", encoding="utf-8")
    assert cli.main(["api", "scan", str(tmp_path / "repo"), "--to", str(path), "--results", str(tmp_path)]) == 0


def test_a_name_absent_on_the_target_but_usable_on_an_earlier_release_reads_as_a_removal():
    """Issue 48: no deprecation table on the target says so; the earlier census where it was usable makes it a
    removal ("last seen on"), never "missing"."""
    old = census("0.5.3", {"jax.experimental": module(), "jax.experimental.maps": module(),
                           "jax.experimental.maps.xmap": fn(("f", P, None))})
    middle = census("0.6.0", {"jax.experimental": module(), "jax.experimental.maps": module()})
    new = census("0.6.2", {"jax.experimental": module(), "jax.experimental.maps": module()})
    (finding,) = judged("from jax.experimental.maps import xmap\n", new, None, (old, middle, new))
    assert (finding.state, finding.since) == ("removed", "0.6.0")
    assert finding.message == "not in jax 0.6.2 (last seen on 0.5.3)"
    assert exit_status([finding]) == 1
    # the release it runs today (--from) is a census at hand too
    (finding,) = judged("from jax.experimental.maps import xmap\n", new, old, (new,))
    assert finding.state == "removed" and finding.message == "not in jax 0.6.2 (last seen on 0.5.3)"
