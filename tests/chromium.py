"""Headless Chromium for the browser tests: where it is, and one way to start it.

Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs them). `require_chromium()` skips the calling
test module, naming what is missing and how to get it; in CI (CI set) their absence is a failure instead, since
`.ci/run` installs them and a skip there would hide a test.
"""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
MISSING = "chromium or chromedriver is not installed (apt-get install chromium chromium-driver)"

# The background-networking flags keep Chromium from calling out on a machine whose network is closed.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
# The browser tests' two devices: the desktop window as `start_chromium` opens it, and a 390x844 phone.
DEVICES = {"desktop": None, "phone": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": True}}}


# For one test in a module of others; in CI (CI set) the test runs and fails where Chromium is missing.
needs_chromium = pytest.mark.skipif(not (CHROMIUM and DRIVER) and not os.environ.get("CI"), reason=MISSING)


def require_chromium() -> None:
    """Skip the calling module where Chromium or its driver is missing; in CI, fail instead."""
    if CHROMIUM and DRIVER:
        return
    if os.environ.get("CI"):
        raise RuntimeError("chromium and chromedriver are needed in CI: apt-get install chromium chromium-driver")
    pytest.skip(MISSING, allow_module_level=True)


def start_chromium(width: int = 1400, height: int = 900, mobile: dict | None = None):
    """A headless Chromium through selenium at `width`x`height`, or emulating the phone `mobile` describes."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    if mobile:
        options.add_experimental_option("mobileEmulation", mobile)
    else:
        options.add_argument(f"--window-size={width},{height}")
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path=DRIVER), options=options)
