"""Probes that conform, differ, raise, hang, crash, exit silently or print garbage, for the runner's tests."""

import os
import signal
import sys
import time

from conformance.core.case import Expect, Observation, Param, Section, Skip, Unsupported

SECTION = Section("§F", "Fixtures")


@SECTION.case(rows=["fixture.conforms"], claim="Returns what it documents.",
      expect=Expect({"answer": 42, "name": "<script>alert(1)</script>"}))
def conforming():
    print("noise on stdout that is not JSON {")
    print("more noise on stderr", file=sys.stderr)
    return Observation({"answer": 42, "name": "<script>alert(1)</script>"}, {"raw": [1, 2, 3]})


@SECTION.case(rows=["fixture.differs"], claim="Returns something else than documented.",
      expect=Expect({"answer": 42, "same": True}))
def differing():
    return Observation({"answer": 41, "same": True})


@SECTION.case(rows=["fixture.raises"], claim="Raises unexpectedly.", expect=Expect({}))
def raising():
    raise ValueError("probe blew up")


@SECTION.case(rows=["fixture.hangs"], claim="Hangs, with a child of its own.",
      expect=Expect({}), timeout_s=2)
def hanging():
    import subprocess

    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    time.sleep(600)


@SECTION.case(rows=["fixture.segfaults"], claim="Dies by SIGSEGV.", expect=Expect({}))
def segfaulting():
    os.kill(os.getpid(), signal.SIGSEGV)


@SECTION.case(rows=["fixture.exits"], claim="Exits without an observation.", expect=Expect({}))
def exiting():
    os._exit(3)


@SECTION.case(rows=["fixture.unsupported"], claim="Its API is missing.", expect=Expect({}))
def unsupported():
    raise Unsupported("jax.no_such_api does not exist")


@SECTION.case(rows=["fixture.not_json"], claim="Returns something that is not JSON.",
      expect=Expect({}))
def not_json():
    return Observation({"value": object()})


@SECTION.case(claim="Echoes its parameter; skipped on platforms named skip-*.",
              params=[Param("a", rows=["fixture.param.a"], expect=Expect({"param": "a"})),
                      Param("b", rows=["fixture.param.b"],
                            expect=Expect({"param": "b"}, platforms={"skip-*": Skip("not here")}))],
              env={"FIXTURE_ENV": "set-by-case"})
def echo(param):
    return Observation({"param": param}, {"env": os.environ.get("FIXTURE_ENV"), "jax_vars": sorted(
        k for k in os.environ if k.startswith("JAX_"))})


@SECTION.case(rows=["fixture.bare_dict"], claim="Returns a bare dict instead of an Observation.",
              expect=Expect({"answer": 42}))
def bare_dict():
    return {"answer": 42}


@SECTION.case(rows=["fixture.prints"], claim="Prints without end until its time limit.", expect=Expect({}),
              timeout_s=4)
def printing_forever():
    line = "x" * 1000 + "\n"
    while True:
        sys.stdout.write(line)


@SECTION.case(rows=["fixture.escapes"], claim="Leaves a grandchild in a session of its own, holding its output.",
              expect=Expect({}), timeout_s=3)
def escaping_grandchild():
    import subprocess

    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(607)"], start_new_session=True)
    time.sleep(607)


@SECTION.case(rows=["fixture.pid"], claim="Reports facts about its own process.", expect=Expect({"ok": True}))
def own_process():
    return Observation({"ok": True}, {"session_leader": os.getsid(0) == os.getpid(),
                                      "jax_imported": "jax" in sys.modules})


@SECTION.case(rows=["fixture.sleeps"], claim="Sleeps long, with a child of its own.", expect=Expect({}),
              timeout_s=300)
def sleeping():
    import subprocess

    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(606)"])
    time.sleep(606)
