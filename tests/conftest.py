"""Shared fixtures: the fixture case package and a way to run its cells for real. The suite's check of itself (no
test may leave a thread running, or a signal blocked, ignored or handled otherwise) is `tests.suite_checks`."""

from __future__ import annotations

import sys

import pytest

from conformance.core.case import find_case, forget_package
from conformance.engine.launch import SpawnLauncher
from conformance.engine.runner import Target, run_cell
from tests import synthetic_report
from tests.chromium import DEVICES, start_chromium

pytest_plugins = ["pytester", "tests.suite_checks"]

FIXTURE_PACKAGE = "tests.fixture_cases"


@pytest.fixture
def run_fixture_cell():
    """Run one cell of the fixture package in a real child of the current interpreter."""

    def run(name: str, param: str = "", platform: str = "linux-x86_64", jax_version: str = "0.4.38", **kwargs):
        found = find_case(f"machinery.{name}", FIXTURE_PACKAGE)
        target = Target(sys.executable, platform, jax_version, FIXTURE_PACKAGE)
        spawn = SpawnLauncher()
        return run_cell(found, param, target, lambda command, fresh: spawn(command), **kwargs)

    return run


@pytest.fixture
def forget(monkeypatch):
    """Names of scratch case packages a test imports; their cases and modules are forgotten afterwards."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    names: list[str] = []
    yield names
    for name in names:
        forget_package(name)


# The browser tests' page and browser (tests/test_browser_questions.py, tests/test_browser_navigation.py); a module
# that needs others defines its own. Each module gets its own (module scope); those modules skip without Chromium.
@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    """The small synthetic report (`tests.synthetic_report.write`), as a file URL."""
    return synthetic_report.write(tmp_path_factory.mktemp("questions") / "index.html").as_uri()


@pytest.fixture(scope="module", params=list(DEVICES))
def browser(request):
    """Headless Chromium as each of `DEVICES`, its name in `driver.device`."""
    driver = start_chromium(1400, 900, mobile=DEVICES[request.param])
    driver.device = request.param
    yield driver
    driver.quit()
