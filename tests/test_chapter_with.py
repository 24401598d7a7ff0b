"""`chapter PAGE --with PACKAGE` (issue 58, item 6): what a page imports besides jax is installed in an environment
of its own beside each release's, never in the release's environment that the probes use; a block that misses a
module says the release's environment lacks it. No network: uv is a stand-in (`tests.test_faults.FakeUv`)."""

from __future__ import annotations

import pytest

from conformance.chapter.model import BlockStatus
from conformance.chapter.read import chapter_from_text
from conformance.chapter.session import RawResult
from conformance.chapter.statuses import block_outcomes, missing_module
from conformance.envs.builder import page_packages
from conformance.errors import ConformanceError
from tests.test_faults import FakeUv, builder, fake_uv_binary  # noqa: F401 (the fixture is used by name)


def test_the_packages_of_a_page_are_requirements_and_never_jax_itself():
    assert page_packages(["optax", "optax==0.2.4", "flax>=0.10", "optax"]) == ("optax", "optax==0.2.4", "flax>=0.10")
    assert page_packages([]) == ()
    for text, said in [
        ("jax", "change the release under test"),
        ("jaxlib==0.4.38", "change the release"),
        ("jax-cuda12-plugin", "change the release"),
        ("libtpu", "change the release"),
        ("optax @ https://example.org/optax.whl", "not a package requirement"),
        ("-e .", "not a package requirement"),
        ("--index-url=https://x", "not a package requirement"),
        ("optax;;", "not a package requirement"),
    ]:
        with pytest.raises(ConformanceError, match=said):
            page_packages([text])


def test_with_packages_the_release_gets_an_environment_of_its_own_with_jax_held(tmp_path):
    uv = FakeUv()
    made = builder(tmp_path, uv)
    plain = made.prepare("0.4.38")
    with_optax = made.prepare("0.4.38", ("optax",))
    assert with_optax.path != plain.path and with_optax.path.name.startswith(plain.path.name + "-with")
    assert with_optax.source["with"] == ["optax"] and "with" not in plain.source
    installs = [call for call in uv.calls if call[1:3] == ["pip", "install"]]
    extra = [call for call in installs if "optax" in call]
    assert len(extra) == 1 and str(with_optax.path) in " ".join(extra[0])
    assert "jax==0.4.38" in extra[0]  # the release stays the one under test
    assert all("optax" not in call for call in installs if str(plain.path) + ".building" in " ".join(call))
    assert made.prepare("0.4.38", ("optax",)).path == with_optax.path and uv.builds == 2  # reused


def test_a_missing_module_says_the_release_environment_lacks_it():
    assert missing_module("ModuleNotFoundError", "No module named 'optax.contrib'") == (
        "the release's environment lacks the module 'optax': the page imports a package that is not jax's; run the "
        "page with it installed beside the release (chapter FILE --with PACKAGE, the package that provides 'optax')"
    )
    assert missing_module("ImportError", "No module named 'optax'") == ""
    assert missing_module("ModuleNotFoundError", "something else") == ""
    assert missing_module("ModuleNotFoundError", "No module named 'jax.experimental.maps'") == ""  # JAX's own
    page = chapter_from_text("p", "p.md", "markdown", "# P\n\n```python\nimport optax\n```\n")
    record = {
        "outcome": "exception",
        "exception": "ModuleNotFoundError",
        "message": "No module named 'optax'",
        "mro": ["ModuleNotFoundError", "ImportError", "Exception"],
        "line": 1,
    }
    (found,) = block_outcomes(page.blocks, {0: RawResult(0, record)}, {}, 10.0).values()
    assert found.status is BlockStatus.RAISED
    assert found.detail.startswith(
        "line 1: ModuleNotFoundError: No module named 'optax'; the release's environment lacks the module 'optax'"
    )
