"""Probes that conform, differ, raise, hang, crash, exit silently or print garbage, for the runner's tests."""

import os
import signal
import sys
import time

from conformance.core.case import Expect, Skip, Unsupported, case


@case(rows=["fixture.conforms"], section="§F Fixtures", claim="Returns what it documents.",
      expect=Expect({"answer": 42, "name": "<script>alert(1)</script>"}))
def conforming():
    print("noise on stdout that is not JSON {")
    print("more noise on stderr", file=sys.stderr)
    return {"answer": 42, "name": "<script>alert(1)</script>"}, {"raw": [1, 2, 3]}


@case(rows=["fixture.differs"], section="§F Fixtures", claim="Returns something else than documented.",
      expect=Expect({"answer": 42, "same": True}))
def differing():
    return {"answer": 41, "same": True}


@case(rows=["fixture.raises"], section="§F Fixtures", claim="Raises unexpectedly.", expect=Expect({}))
def raising():
    raise ValueError("probe blew up")


@case(rows=["fixture.hangs"], section="§F Fixtures", claim="Hangs, with a child of its own.",
      expect=Expect({}), timeout_s=2)
def hanging():
    import subprocess

    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    time.sleep(600)


@case(rows=["fixture.segfaults"], section="§F Fixtures", claim="Dies by SIGSEGV.", expect=Expect({}))
def segfaulting():
    os.kill(os.getpid(), signal.SIGSEGV)


@case(rows=["fixture.exits"], section="§F Fixtures", claim="Exits without an observation.", expect=Expect({}))
def exiting():
    os._exit(3)


@case(rows=["fixture.unsupported"], section="§F Fixtures", claim="Its API is missing.", expect=Expect({}))
def unsupported():
    raise Unsupported("jax.no_such_api does not exist")


@case(rows=["fixture.not_json"], section="§F Fixtures", claim="Returns something that is not JSON.",
      expect=Expect({}))
def not_json():
    return {"value": object()}


@case(rows={"a": ["fixture.param.a"], "b": ["fixture.param.b"]}, section="§F Fixtures",
      claim="Echoes its parameter; skipped on platforms named skip-*.",
      expect={"a": Expect({"param": "a"}), "b": Expect({"param": "b"}, platforms={"skip-*": Skip("not here")})},
      env={"FIXTURE_ENV": "set-by-case"})
def echo(param):
    return {"param": param}, {"env": os.environ.get("FIXTURE_ENV"), "jax_vars": sorted(
        k for k in os.environ if k.startswith("JAX_"))}
