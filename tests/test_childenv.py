"""A child has no credentials (issue 43, S01): one function builds the environment of every child (probe, fork
server, block runner, census, description, `run`'s pytest), dropping every variable that can carry an index
credential or a token however it is spelled; what a child wrote is masked of every credential the parent knows
before it is stored."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from conformance.chapter.read import chapter_from_text
from conformance.chapter.session import run_blocks
from conformance.childenv import child_environment, credential_variable, known_secrets, snapshot, without_credentials
from conformance.results.store import ResultStore
from conformance.scrub import mask_secrets

TOKENS = {
    "UV_INDEX_URL": "https://user:tok1secret@host.example/simple",
    "UV_INDEX_PRIVATE_PASSWORD": "tok2secret",
    "uv_extra_index_url": "https://x@other.example/simple https://me:tok3secret@third.example/simple",
    "PIP_INDEX_URL": "https://pipuser:tok4secret@pip.example/simple",
    "PIP_EXTRA_INDEX_URL": "https://pip.example/extra",
    "FOO_PASSWORD": "tok5secret",
    "GitHub_Token": "tok6secret",
    "MY_SECRET": "tok7secret",
    "NETRC": "/home/u/.netrc",
    "SOME_MIRROR": "https://mirroruser:tok8secret@mirror.example/x",
    "TWINE_PASSWORD": "tok9secret",
}
SECRETS = [
    "tok1secret",
    "tok2secret",
    "tok3secret",
    "tok4secret",
    "tok5secret",
    "tok6secret",
    "tok7secret",
    "tok8secret",
    "tok9secret",
]
KEPT = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "CUDA_VISIBLE_DEVICES": "0",
    "LANG": "C.UTF-8",
    "UV_CACHE_DIR": "/tmp/uv",
    "HTTPS_PROXY": "http://proxy.example:3128",
    "TOKENIZERS_PARALLELISM": "false",
}


def test_every_credential_variable_is_dropped_however_spelled_and_the_rest_kept():
    env = child_environment({**TOKENS, **KEPT, "JAX_ENABLE_X64": "1", "PYTHONPATH": "/evil"}, {"EXTRA": "1"})
    assert not set(TOKENS) & set(env), sorted(set(TOKENS) & set(env))
    for name, value in KEPT.items():
        if name != "TOKENIZERS_PARALLELISM":  # a name holding TOKEN is dropped too: nothing JAX needs
            assert env[name] == value
    assert "JAX_ENABLE_X64" not in env and env["PYTHONPATH"] != "/evil" and env["EXTRA"] == "1"
    text = json.dumps(env)
    assert not [s for s in SECRETS if s in text]
    assert credential_variable("pip_index_url", "x") and credential_variable("Uv_Index_Foo_Password", "x")
    assert credential_variable("ANYTHING", "git+https://u:p@h/r") and not credential_variable("PATH", "/bin")
    assert "tok8secret" not in json.dumps(without_credentials({"A_URL": TOKENS["SOME_MIRROR"]}))


def test_the_secrets_the_parent_knows_are_masked_in_what_a_child_wrote():
    secrets = known_secrets({**TOKENS, **KEPT})
    assert set(SECRETS) <= set(secrets) and "false" not in secrets and "/usr/bin" not in secrets
    written = {
        "stdout": "UV_INDEX_PRIVATE_PASSWORD=tok2secret\nfrom a file: tok5secret and me:tok3secret",
        "details": [{"env": "pipuser:tok4secret@pip.example"}, 3, None],
    }
    masked = json.dumps(mask_secrets(written, secrets))
    assert not [s for s in SECRETS if s in masked] and "***" in masked
    assert mask_secrets("see https://a:b@h/x", []) == "see https://***@h/x"


def test_a_block_that_prints_its_whole_environment_finds_no_token(monkeypatch):
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    text = "## 1.1 T\n\n```python\nimport os\nprint(dict(os.environ))\nprint(open('/proc/self/environ').read())\n```\n"
    chapter = chapter_from_text("t", "t.md", "markdown", text)
    ran = run_blocks(chapter.blocks, set(), sys.executable, 30.0)
    printed = ran.results[0].record["stdout"]
    assert "PATH" in printed
    assert not [s for s in SECRETS if s in printed], printed
    assert not [name for name in TOKENS if re.search(rf"\b{name}\b", printed)]


def test_stored_results_are_masked_of_every_credential_the_parent_knows(tmp_path, monkeypatch):
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    cell = {
        "nodeid": "x",
        "outcome": "passed",
        "user_properties": [
            {
                "jax_conformance": {
                    "case": "c",
                    "param": "",
                    "status": "pass",
                    "message": "tok1secret tok5secret",
                    "details": {"env": "FOO_PASSWORD=tok5secret GitHub_Token=tok6secret"},
                }
            }
        ],
    }
    data = {
        "created": 0,
        "duration": 0,
        "exitcode": 0,
        "root": "",
        "environment": {},
        "summary": {},
        "tests": [cell],
        "jax_conformance": {
            "jax": "0.4.30",
            "platform": "cpu",
            "suite_version": "0",
            "python": "3.12.0",
            "case_package": "conformance.cases",
        },
    }
    stored = ResultStore(tmp_path).merge_run(data)
    text = Path(stored.path).read_text(encoding="utf-8")
    assert not [s for s in SECRETS if s in text] and "*** ***" in text  # the message kept, its tokens masked
    assert os.environ["FOO_PASSWORD"] == "tok5secret"  # the parent's own environment is left as it is


class _Vanishing(Mapping):
    """A mapping like os.environ from which another thread removes `GONE` between the listing of its names and the
    reading of their values, as pytest's main thread pops PYTEST_CURRENT_TEST while a run's worker reads os.environ
    (issue 57)."""

    def __init__(self, **values):
        self.values = values

    def __getitem__(self, name):
        return self.values[name]

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        names = list(self.values)
        self.values.pop("GONE", None)
        return iter(names)


def test_a_snapshot_leaves_out_a_name_removed_while_it_reads_and_a_child_never_sees_pytests_variable():
    base = _Vanishing(PATH="/usr/bin", GONE="x", HOME="/home/u")
    assert snapshot(base) == {"PATH": "/usr/bin", "HOME": "/home/u"}
    assert without_credentials(_Vanishing(PATH="/usr/bin", GONE="x")) == {"PATH": "/usr/bin"}
    assert known_secrets(_Vanishing(GONE="https://u:tok1secret@h/x")) == []
    env = child_environment(_Vanishing(PATH="/usr/bin", GONE="x", PYTEST_CURRENT_TEST="a.py::b (call)"), {})
    assert env["PATH"] == "/usr/bin" and "GONE" not in env and "PYTEST_CURRENT_TEST" not in env
