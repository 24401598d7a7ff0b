"""`api scan`: uses found through every import form (nothing imported), judged against synthetic censuses, and the
outputs (text, JSON, GitHub annotations, SARIF 2.1.0 validated against the published schema)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

from conformance import cli
from conformance.api.findings import FORMATS, LEVELS, github_lines, render, sarif_log
from conformance.api.judge import Censuses, Finding, checked_name, exit_status, judge
from conformance.api.scan import uses_in_files, uses_in_source
from conformance.api.session import python_files
from tests.api_censuses import census, config, fn, module, removed

SARIF_SCHEMA = Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json"
P, K = "positional_or_keyword", "keyword_only"
TREE_MAP_MSG = "jax.tree_map is deprecated: use jax.tree.map (jax v0.4.25 or newer)"
REMOVED_MSG = "jax.tree_map was removed in JAX v0.6.0: use jax.tree.map (jax v0.4.25 or newer)"

# The test repository: tree_map through three import forms in three files, a deprecated name, a name that is fine,
# a config flag set two ways, and (in its own file) a keyword argument and a flag that one release lacks.
REPOSITORY = {
    "train.py": """
        import os

        os.environ.setdefault("JAX_ENABLE_X64", "1")

        import jax
        import jax.numpy as jnp

        jax.config.update("jax_debug_nans", True)


        def step(params, grads):
            return jax.tree_map(lambda p, g: p - 0.1 * g, params, grads)


        def total(x):
            return jnp.sum(x)
        """,
    "model/layers.py": """
        from jax import tree_map
        from jax.scipy import special


        def scale(tree, k):
            return tree_map(lambda v: v * k, tree)


        def legendre(x):
            return special.lpmn(2, 2, x)
        """,
    "model/aliased.py": """
        import jax as jx

        tm = jx.tree_map


        def double(tree):
            return tm(lambda v: 2 * v, tree)
        """,
}


def write_repository(root: Path, files: dict[str, str] = REPOSITORY) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def synthetic_pair():
    """Two synthetic releases shaped like 0.5.3 (tree_map deprecated) and 0.6.2 (tree_map removed)."""
    common = {
        "jax.numpy": module(),
        "jax.numpy.sum": fn(("a", P, None), ("axis", P, "None")),
        "jax.numpy.reshape": fn(("a", P, None), ("shape", P, None), ("out_sharding", K, "None")),
        "jax.scipy": module(),
        "jax.scipy.special": module(),
        "jax.scipy.special.lpmn": fn(
            ("m", P, None),
            state="deprecated",
            message="jax.scipy.special.lpmn is deprecated; no replacement is planned.",
        ),
        "jax.config": {"kind": "constant", "state": "present"},
        **dict([config("jax_debug_nans"), config("jax_enable_x64")]),
    }
    old = census(
        "0.5.3",
        {
            **common,
            "jax.tree_map": fn(("f", P, None), state="deprecated", message=TREE_MAP_MSG, replacement="jax.tree.map"),
            "jax.numpy.reshape": fn(("a", P, None), ("shape", P, "None"), ("newshape", K, "None")),
        },
    )
    new = census(
        "0.6.2",
        {
            **common,
            "jax.tree_map": removed(REMOVED_MSG, "jax.tree.map"),
            "jax.shard_map": fn(("f", P, None), ("out_specs", K, None)),
        },
    )
    return old, new


def scan(root: Path, to, before=None, history=()):
    sources = [(str(p.relative_to(root)), p.read_bytes()) for p in python_files([root])]
    uses, skipped = uses_in_files(sources)
    assert skipped == []
    return judge(uses, Censuses(to, before, tuple(history) or (to,)))


def test_every_import_form_alias_and_chain_is_found():
    source = textwrap.dedent("""
        import jax
        import jax.numpy as jnp
        import jax.experimental.shard_map
        from jax import tree_map, numpy as np2
        from jax.experimental.shard_map import shard_map as smap
        from .local import jax as not_jax
        import os
        x = jax.tree_util.tree_map(f, t)
        y = jnp.linalg.norm(v)
        z = np2.sum(w, axis=0)
        t = tree_map
        smap(f, mesh=m)
        os.environ["JAX_PLATFORMS"] = "cpu"
        os.putenv("JAX_TRACEBACK_FILTERING", "off")
        os.environ.update({"JAX_LOG_COMPILES": "1"})
        jax.config.update("jax_enable_x64", True)
        not_jax.tree_map(1)
        """)
    found = {(u.line, u.name, u.what) for u in uses_in_source(source, "x.py")}
    assert {
        (3, "jax.numpy", "name"),
        (4, "jax.experimental.shard_map", "name"),
        (5, "jax.tree_map", "name"),
        (5, "jax.numpy", "name"),
        (6, "jax.experimental.shard_map", "name"),
        (6, "jax.experimental.shard_map.shard_map", "name"),
        (9, "jax.tree_util.tree_map", "name"),
        (10, "jax.numpy.linalg.norm", "name"),
        (11, "jax.numpy.sum", "name"),
        (11, "jax.numpy.sum", "call"),
        (12, "jax.tree_map", "name"),
        (13, "jax.experimental.shard_map.shard_map", "call"),
        (14, "jax.config.jax_platforms", "env"),
        (15, "jax.config.jax_traceback_filtering", "env"),
        (16, "jax.config.jax_log_compiles", "env"),
        (17, "jax.config.jax_enable_x64", "config"),
    } <= found
    assert not any(u[1].endswith("tree_map") and u[0] == 18 for u in found)  # a relative import is not jax
    calls = [u for u in uses_in_source(source, "x.py") if u.what == "call"]
    assert {u.keywords for u in calls} >= {("axis",), ("mesh",)}


def test_columns_are_one_based_and_nothing_scanned_is_imported(tmp_path):
    source = "import jax\nraise SystemExit('imported!')\nprint(jax.tree_map)\n"
    (use,) = [u for u in uses_in_source(source, "x.py") if u.name == "jax.tree_map"]
    assert (use.line, use.col) == (3, 7)


def test_a_file_that_does_not_parse_is_named_and_the_rest_scanned():
    uses, skipped = uses_in_files([("bad.py", b"def (:\n"), ("good.py", b"import jax\njax.tree_map\n")])
    assert [u.name for u in uses] == ["jax.tree_map"] and skipped[0].startswith("bad.py: not parsed (SyntaxError")


def test_the_test_repository_against_the_release_that_removed_tree_map(tmp_path):
    old, new = synthetic_pair()
    findings = scan(write_repository(tmp_path), new, old, (old, new))
    where = {(f.path, f.line, f.name, f.state) for f in findings}
    assert where == {
        ("train.py", 12, "jax.tree_map", "removed"),
        ("model/layers.py", 1, "jax.tree_map", "removed"),
        ("model/layers.py", 6, "jax.tree_map", "removed"),
        ("model/aliased.py", 3, "jax.tree_map", "removed"),
        ("model/aliased.py", 7, "jax.tree_map", "removed"),
        ("model/layers.py", 10, "jax.scipy.special.lpmn", "deprecated"),
    }
    removal = next(f for f in findings if f.state == "removed")
    assert removal.message == REMOVED_MSG and removal.replacement == "jax.tree.map" and removal.since == "0.6.2"
    assert exit_status(findings) == 1


def test_the_test_repository_against_the_release_that_deprecates_tree_map(tmp_path):
    old, _ = synthetic_pair()
    findings = scan(write_repository(tmp_path), old)
    assert {f.state for f in findings} == {"deprecated"}
    assert {(f.path, f.line) for f in findings if f.name == "jax.tree_map"} == {
        ("train.py", 12),
        ("model/layers.py", 1),
        ("model/layers.py", 6),
        ("model/aliased.py", 3),
        ("model/aliased.py", 7),
    }
    assert all(f.message == TREE_MAP_MSG for f in findings if f.name == "jax.tree_map")
    assert exit_status(findings) == 0


def test_keywords_flags_and_names_not_there_yet(tmp_path):
    old, new = synthetic_pair()
    write_repository(
        tmp_path,
        {
            "new.py": """
        import os
        import jax
        import jax.numpy as jnp
        os.environ["JAX_NO_SUCH_FLAG"] = "1"
        jax.config.update("jax_no_such_flag", True)
        jnp.reshape(x, newshape=(2, 3))
        jax.shard_map(f, out_specs=None)
        jnp.sum(x, axis=0, keepdims=True)
        """
        },
    )
    got = {(f.line, f.name, f.state) for f in scan(tmp_path, new, old, (old, new))}
    assert got == {
        (5, "jax.config.jax_no_such_flag", "missing"),
        (6, "jax.numpy.reshape(newshape=)", "removed"),
        (7, "jax.shard_map", "not_yet"),
        (8, "jax.numpy.sum(keepdims=)", "missing"),
    }
    # JAX_NO_SUCH_FLAG: no census knows such an option, so the variable may not be JAX's: not judged


def test_a_use_is_checked_as_far_as_its_modules_go():
    _, new = synthetic_pair()
    censuses = Censuses(new)
    assert checked_name("jax.numpy.sum.__doc__", censuses) == "jax.numpy.sum"
    assert checked_name("jax.config.update", censuses) == "jax.config"
    assert checked_name("jax.config.jax_enable_x64", censuses) == "jax.config.jax_enable_x64"
    failed = census("0.6.2", {}, failed=("jax.export",))
    assert checked_name("jax.export.export", Censuses(failed)) is None


def test_since_is_marked_when_it_already_held_on_the_oldest_census(tmp_path):
    old, new = synthetic_pair()
    write_repository(tmp_path, {"a.py": "import jax\njax.tree_map\nfrom jax.scipy.special import lpmn\n"})
    found = {f.name: f for f in scan(tmp_path, new, None, (old, new))}
    assert found["jax.tree_map"].since == "0.6.2" and found["jax.scipy.special.lpmn"].since == "≤0.5.3"


def _findings():
    old, new = synthetic_pair()
    return [
        Finding(
            "src/a b.py", 3, 5, "jax.tree_map", "removed", "0.6.0", "a message, with: 100% of it\nsplit", "jax.tree.map"
        ),
        Finding("src/b.py", 1, 1, "jax.scipy.special.lpmn", "deprecated", "≤0.5.3", "deprecated"),
        Finding("/abs/c.py", 2, 1, "jax.shard_map", "not_yet", "0.6.1", "not in jax 0.5.3"),
        Finding("d.py", 9, 4, "jax.nothing", "missing", "≤0.5.3", "jax 0.6.2 has no jax.nothing"),
    ]


def test_github_annotations_are_escaped_workflow_commands():
    lines = github_lines(_findings())
    assert lines[0].startswith("::error file=src/a b.py,line=3,col=5,title=jax%3A jax.tree_map removed::")
    assert "100%25 of it%0Asplit" in lines[0] and "\n" not in lines[0]
    assert [line.split(" ")[0] for line in lines] == ["::error", "::warning", "::notice", "::error"]


def test_sarif_validates_against_the_published_2_1_0_schema():
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    log = json.loads(render(_findings(), "sarif", "0.6.2", version="0.2.0"))
    jsonschema.Draft4Validator(schema).validate(log)
    results = log["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "warning", "note", "error"]
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 3, "startColumn": 5}
    assert results[2]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "file:///abs/c.py"}
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "src/a%20b.py",
        "uriBaseId": "%SRCROOT%",
    }


def test_the_sarif_check_can_fail():
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    log = sarif_log(_findings(), "0.2.0")
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(log)


def test_json_is_the_public_shape_and_text_ends_with_a_summary():
    data = json.loads(render(_findings(), "json", "0.6.2"))
    assert set(data) == {"format", "findings"} and data["format"] == 1
    keys = {"path", "line", "col", "name", "state", "since", "message", "replacement"}
    assert all(set(f) == keys for f in data["findings"])
    text = render(_findings(), "text", "0.6.2", "0.5.3", files=4).splitlines()
    assert text[0].startswith("src/a b.py:3:5: jax.tree_map removed (since 0.6.0): a message")
    assert text[-1] == (
        "4 finding(s) in 4 file(s) against jax 0.6.2 (from 0.5.3): 1 removed, 1 missing, 1 deprecated, 1 not yet"
    )
    assert set(FORMATS) == {"text", "json", "github", "sarif"}


def test_the_cli_scans_against_census_files_and_exits_by_what_it_found(tmp_path, capsys):
    old, new = synthetic_pair()
    files = {}
    for side in (old, new):
        files[side.jax] = tmp_path / f"census-{side.jax}.json"
        files[side.jax].write_text(json.dumps({**side.header, "names": side.names, "modules": side.modules}))
    repo = write_repository(tmp_path / "repo")
    results = tmp_path / "results"
    assert cli.main(["api", "scan", str(repo), "--to", str(files["0.6.2"]), "--results", str(results)]) == 1
    out = capsys.readouterr().out
    assert f"{repo / 'train.py'}:12:12: jax.tree_map removed" in out
    assert (
        cli.main(["api", "scan", str(repo), "--to", str(files["0.5.3"]), "--format", "json", "--results", str(results)])
        == 0
    )
    captured = capsys.readouterr()  # the deprecated spelling: its JSON still on stdout, one note on stderr
    data = json.loads(captured.out)
    assert {f["state"] for f in data["findings"]} == {"deprecated"}
    assert [line for line in captured.err.splitlines() if "--format json" in line and "--json -" in line]
    assert (
        cli.main(["api", "scan", str(repo), "--to", str(files["0.6.2"]), "--json", "-", "--results", str(results)]) == 1
    )
    captured = capsys.readouterr()  # the findings as JSON on stdout, the text on stderr
    assert json.loads(captured.out)["format"] == 1 and "jax.tree_map removed" in captured.err
    assert cli.main(["api", "scan", str(tmp_path / "nowhere"), "--to", str(files["0.5.3"])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere: no such file or folder to scan" in err[0]


def test_a_file_nested_past_what_the_parser_holds_is_left_out_with_a_line_and_the_rest_scanned():
    """Review: 3,000 `+` terms or a deep `not not …` gave a RecursionError or MemoryError traceback and ended the
    whole scan."""
    from conformance.api.scan import uses_in_files

    deep = ("x = " + " + ".join(["1"] * 200000) + "\n").encode()
    nested = ("x = " + "not " * 200000 + "1\n").encode()
    fine = b"import jax\njax.tree_map(f, t)\n"
    uses, skipped = uses_in_files([("deep.py", deep), ("nested.py", nested), ("fine.py", fine)])
    assert [u.name for u in uses] == ["jax.tree_map"]
    assert len(skipped) == 2 and all("not parsed" in line for line in skipped)


def test_the_last_binding_of_a_name_wins_whatever_it_binds():
    source = (
        "import jax.numpy as np\nimport numpy as np\nnp.fix(1)\n"
        "from jax import tree_map\ndef tree_map(f, t):\n    pass\ntree_map(f, t)\n"
    )
    assert [(u.line, u.name) for u in uses_in_source(source, "x.py")] == [(1, "jax.numpy"), (4, "jax.tree_map")]
    rebound = "import numpy as np\nimport jax.numpy as np\nnp.fix(1)\n"
    assert (3, "jax.numpy.fix") in [(u.line, u.name) for u in uses_in_source(rebound, "x.py")]


def test_config_and_environment_keyword_forms_and_an_annotated_alias_are_found():
    source = (
        "import os\nimport jax\njax.config.update(name='jax_debug_nans', val=True)\n"
        "os.environ.update(JAX_ENABLE_X64='1')\nos.environ.setdefault(key='JAX_PLATFORMS', value='cpu')\n"
        "tm: object = jax.tree_map\ntm(f)\n"
    )
    found = {(u.line, u.col, u.name, u.what) for u in uses_in_source(source, "x.py")}
    assert {
        (3, 24, "jax.config.jax_debug_nans", "config"),
        (4, 19, "jax.config.jax_enable_x64", "env"),
        (5, 27, "jax.config.jax_platforms", "env"),
        (7, 1, "jax.tree_map", "name"),
    } <= found


def test_columns_count_characters_not_utf8_bytes_in_every_format():
    source = 'import jax\nlabel = "ééé"; jax.tree_map(f)\n'
    for text in (
        source,
        source.encode("utf-8"),
        b"\xef\xbb\xbf" + source.encode("utf-8"),
        b"# -*- coding: latin-1 -*-\n" + source.encode("latin-1"),
    ):
        (use,) = [u for u in uses_in_source(text, "x.py") if u.name == "jax.tree_map"]
        assert use.col == 16
    finding = [Finding("x.py", 2, 16, "jax.tree_map", "removed", "0.6.0", "gone")]
    assert render(finding, "text", "0.6.2").startswith("x.py:2:16: ")
    assert github_lines(finding)[0].startswith("::error file=x.py,line=2,col=16,")
    log = sarif_log(finding, "0.2.0")
    assert log["runs"][0]["columnKind"] == "unicodeCodePoints"
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startColumn"] == 16


COPES = {
    "copes.py": """
    import jax
    import jax.numpy as jnp
    from jax._src import core
    from jax._src.lib import xla_client

    print(jax.__version__, jax.__file__)
    tracer = core.Tracer
    if hasattr(jax, "tree_map"):
        mapped = jax.tree_map(abs, [1])
    else:
        mapped = jax.tree.map(abs, [1])
    try:
        from jax import tree_map
    except (AttributeError, ImportError):
        tree_map = None
    try:
        flat = jax.tree_flatten([1])
    except AttributeError:
        flat = None
    if jax.__version_info__ < (0, 6, 0):
        leaves = jax.tree_leaves([1])
    from packaging import version
    if version.parse(jax.__version__) >= version.parse("0.6.0"):
        pass
    else:
        leaves = jax.tree_leaves([1])
    """
}


def _release(version: str, tree_state: str):
    tree = {"jax.tree": module(), "jax.tree.map": fn(("f", P, None))}
    if tree_state == "removed":
        tree.update(
            {
                "jax.tree_map": removed(REMOVED_MSG, "jax.tree.map"),
                "jax.tree_flatten": removed("jax.tree_flatten was removed", "jax.tree.flatten"),
                "jax.tree_leaves": removed("jax.tree_leaves was removed", "jax.tree.leaves"),
            }
        )
    else:
        tree.update(
            {
                "jax.tree_map": fn(("f", P, None)),
                "jax.tree_flatten": fn(("t", P, None)),
                "jax.tree_leaves": fn(("t", P, None)),
            }
        )
    return census(version, {"jax.numpy": module(), **tree})


def test_code_that_copes_exits_0_on_every_release(tmp_path):
    root = write_repository(tmp_path / "repo", COPES)
    for to in (_release("0.5.3", "present"), _release("0.6.0", "removed")):
        found = scan(root, to)
        assert exit_status(found) == 0, [f"{f.line}: {f.name} {f.state}" for f in found]
    states = {(f.line, f.name): f.state for f in scan(root, _release("0.6.0", "removed"))}
    assert states[(6, "jax.__version__")] == "not_judged" and states[(7, "jax._src.core.Tracer")] == "not_judged"
    assert states[(9, "jax.tree_map")] == "guarded" and states[(13, "jax.tree_map")] == "guarded"
    assert states[(17, "jax.tree_flatten")] == "guarded" and states[(21, "jax.tree_leaves")] == "guarded"
    assert states[(26, "jax.tree_leaves")] == "guarded"
    levels = {f.state: LEVELS[f.state] for f in scan(root, _release("0.6.0", "removed"))}
    assert levels == {"not_judged": "note", "guarded": "note"}


def test_a_use_under_a_skipped_module_is_not_judged_with_why():
    to = census("0.6.0", {"jax.numpy": module()}, failed=("jax.export",))
    (finding,) = judge(uses_in_source("import jax.export\njax.export.export(f)\n", "a.py")[1:], Censuses(to))
    assert finding.state == "not_judged" and "jax.export" in finding.message and "absl" in finding.message


def test_a_keyword_jax_removed_behind_its_sentinel_is_an_error_from_that_release():
    def release(version, handled):
        entry = fn(("callback", P, None), ("vectorized", K, "Deprecated"))
        entry["keywords"] = {"vectorized": handled}
        return census(version, {"jax.pure_callback": entry})

    old = release("0.5.3", {"state": "deprecated", "effect": "warns", "message": "vectorized is deprecated"})
    new = release(
        "0.6.0",
        {
            "state": "removed",
            "effect": "raises ValueError",
            "message": "The 'vectorized' argument of jax.pure_callback was removed in JAX v0.6.0.",
        },
    )
    uses = uses_in_source("import jax\njax.pure_callback(f, vectorized=True)\n", "a.py")
    (finding,) = judge(uses, Censuses(new, None, (old, new)))
    assert (finding.name, finding.state, finding.since) == ("jax.pure_callback(vectorized=)", "removed", "0.6.0")
    assert "raises ValueError" in finding.message and exit_status([finding]) == 1
    (warned,) = judge(uses, Censuses(old, None, (old,)))
    assert warned.state == "deprecated" and exit_status([warned]) == 0


def test_with_a_private_census_a_private_name_that_went_is_missing_labelled_private():
    to = census("0.12.0.1", {"jax.numpy": module()})
    private = census("0.12.0.1", {"jax._src": module(), "jax._src.core": module(), "jax._src.core.Tracer": fn()})
    uses = uses_in_source(
        "from jax._src import core\ncore.Tracer\ncore.gone_name\nimport jax\njax.__version__\n", "a.py"
    )
    found = judge(uses, Censuses(to, private=private))
    states = {(f.name, f.state) for f in found}
    assert ("jax._src.core.gone_name", "missing") in states and ("jax.__version__", "not_judged") in states
    assert not any(f.name == "jax._src.core.Tracer" for f in found)
    assert [f.message for f in found if f.state == "missing"][0].startswith("private: ")


# dm-haiku's own pattern (its dot.py, jaxpr_info.py and random_test.py at f4d858a): a name bound in a guard, one
# branch for the new home and one for the old, then used outside the guard. `api scan --to 0.12.0.1` called each
# later use of the alias "missing" and exited 1 on code that runs on 0.12.0.1.
FALLBACKS = {
    "fallbacks.py": """
    import jax
    from jax.extend import core as new_core

    if hasattr(new_core, "take_current_trace"):
        take = new_core.take_current_trace
    else:
        take = jax.core.take_current_trace
    try:
        Dropped = new_core.DropVar
    except AttributeError:
        Dropped = jax.core.DropVar

    def trace_of(x):
        with take() as current:
            return current, isinstance(x, Dropped)

    try:
        old = jax.tree_leaves
    except AttributeError:
        old = None
    print(jax.core.get_aval)
    """
}


def test_an_alias_bound_in_a_guard_carries_the_guard_to_its_uses_and_a_fallback_handler_is_guarded(tmp_path):
    root = write_repository(tmp_path / "repo", FALLBACKS)
    gone = census(
        "0.12.0.1",
        {
            "jax.extend": module(),
            "jax.extend.core": module(),
            "jax.extend.core.take_current_trace": fn(),
            "jax.extend.core.DropVar": fn(),
            "jax.core": module(),
        },
    )
    found = scan(root, gone)
    states = {(f.line, f.name): (f.state, f.message) for f in found}
    assert exit_status(found) == 1  # jax.core.get_aval, used outside any guard, is still an error
    assert [k for k, (state, _) in states.items() if state != "guarded"] == [(21, "jax.core.get_aval")]
    assert states[(7, "jax.core.take_current_trace")][0] == "guarded"  # the else branch of the hasattr
    assert states[(11, "jax.core.DropVar")][0] == "guarded"  # the except AttributeError fallback itself
    state, message = states[(14, "jax.core.take_current_trace")]
    assert state == "guarded" and "bound inside an hasattr(...) guard at line 7" in message, message
    state, message = states[(15, "jax.core.DropVar")]
    assert state == "guarded" and "bound inside an except AttributeError fallback at line 11" in message, message


def test_a_fallback_for_a_missing_jax_does_not_hide_the_uses_of_the_installed_one():
    """A library that imports JAX optionally (`except ImportError: jax = None`) uses JAX wherever it is installed:
    the fallback's binding did unbind `jax`, and every use in the file went unseen."""
    source = textwrap.dedent("""\
        try:
            import jax
            import jax.numpy as jnp
        except ImportError:
            jax = None
            import numpy as jnp

            def tree_map(f, x):
                return f(x)

        def f(x):
            return jax.tree_map(abs, x), jnp.fix(x)
        """)
    found = {(u.line, u.name): u.guarded for u in uses_in_source(source, "a.py")}
    assert found[(12, "jax.tree_map")] == "" and found[(12, "jax.numpy.fix")] == ""
    assert found[(3, "jax.numpy")] == "inside try/except ImportError"


def test_an_hasattr_in_an_and_chain_or_a_conditional_expression_guards_what_follows_it():
    """chex's own pattern (asserts.py at b4942e3): `hasattr(jax, "pxla") and isinstance(x, jax.pxla.X)` in a return.
    `api scan` called `jax.pxla` missing on every release since 0.6.0, so chex's CI step would stay red."""
    source = textwrap.dedent("""\
        import jax

        def sharded(x):
            return hasattr(jax, "pxla") and isinstance(x, jax.pxla.ShardedDeviceArray)

        def mapper():
            return jax.tree_map if hasattr(jax, "tree_map") else jax.tree.map

        def unguarded(x):
            return isinstance(x, jax.pxla.ShardedDeviceArray) and hasattr(jax, "pxla")
        """)
    found = {(u.line, u.name): u.guarded for u in uses_in_source(source, "a.py")}
    assert found[(4, "jax.pxla.ShardedDeviceArray")] == "inside an hasattr(...) guard"
    assert found[(7, "jax.tree_map")] == "inside an hasattr(...) guard"
    assert found[(7, "jax.tree.map")] == "inside an hasattr(...) guard"
    assert found[(10, "jax.pxla.ShardedDeviceArray")] == ""  # used before the test that would guard it


def _census_files(tmp_path):
    files = {}
    for side in synthetic_pair():
        files[side.jax] = tmp_path / f"census-{side.jax}.json"
        files[side.jax].write_text(json.dumps({**side.header, "names": side.names, "modules": side.modules}))
    return files


def test_sarif_is_written_for_a_file_whose_name_is_not_utf8(tmp_path, capsys, monkeypatch):
    """issue 57: a file name that is not UTF-8 gave UnicodeEncodeError and 0 bytes of SARIF; its URI is now the
    name's own bytes, percent-encoded, and the log validates."""
    import os

    files = _census_files(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / os.fsdecode(b"caf\xe9.py")).write_bytes(b"import jax\njax.tree_map(f, t)\n")
    monkeypatch.chdir(repo)  # a relative path, as a CI step scans `.`
    assert (
        cli.main(
            [
                "api",
                "scan",
                ".",
                "--to",
                str(files["0.6.2"]),
                "--format",
                "sarif",
                "--results",
                str(tmp_path / "results"),
            ]
        )
        == 1
    )
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "caf%E9.py",
        "uriBaseId": "%SRCROOT%",
    }
    from conformance.api.findings import artifact

    assert artifact(os.fsdecode(b"/abs/caf\xe9.py")) == {"uri": "file:///abs/caf%E9.py"}
    assert artifact(os.fsdecode(b"C:\\w\\caf\xe9.py")) == {"uri": "file:///C:/w/caf%E9.py"}


def test_a_file_over_the_size_bound_is_a_note_and_the_scan_goes_on(tmp_path, capsys):
    """issue 57: one .py file over 16 MB ended the whole scan."""
    from conformance.api.session import MAX_SOURCE_BYTES

    files = _census_files(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a_big.py").write_bytes(b"#" * (MAX_SOURCE_BYTES + 1))
    (repo / "b_fine.py").write_bytes(b"import jax\njax.tree_map(f, t)\n")
    assert cli.main(["api", "scan", str(repo), "--to", str(files["0.6.2"]), "--results", str(tmp_path / "r")]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"jax-conformance: note: {repo / 'a_big.py'}: not scanned (larger than 16 MB)\n"
    assert f"{repo / 'b_fine.py'}:2:1: jax.tree_map removed" in captured.out
    assert captured.out.rstrip().endswith("1 finding(s) in 1 file(s) against jax 0.6.2: 1 removed")
