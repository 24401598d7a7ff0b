"""Probes that conform, differ, raise, hang, crash, exit silently or print garbage, for the runner's tests."""

import os
import signal
import sys
import time

from conformance.core.case import Expect, Observation, Param, Section, Skip, Unsupported

SECTION = Section("§F", "Fixtures")

# What this module saw when it was imported: a forked child inherits its server's import.
IMPORTED_WITH = os.environ.get("FIXTURE_ENV")
if os.environ.get("FIXTURE_BREAK_IMPORT"):
    raise RuntimeError("this module cannot be imported with FIXTURE_BREAK_IMPORT set")
time.sleep(float(os.environ.get("FIXTURE_SLOW_IMPORT", "0")))  # an import that hangs, for a server's limits


@SECTION.case(
    rows=["fixture.conforms"],
    claim="Returns what it documents.",
    expect=Expect({"answer": 42, "name": "<script>alert(1)</script>"}),
)
def conforming():
    print("noise on stdout that is not JSON {")
    print("more noise on stderr", file=sys.stderr)
    return Observation({"answer": 42, "name": "<script>alert(1)</script>"}, {"raw": [1, 2, 3]})


@SECTION.case(
    rows=["fixture.differs"],
    claim="Returns something else than documented.",
    expect=Expect({"answer": 42, "same": True}),
)
def differing():
    return Observation({"answer": 41, "same": True})


@SECTION.case(rows=["fixture.raises"], claim="Raises unexpectedly.", expect=Expect({}))
def raising():
    raise ValueError("probe blew up")


@SECTION.case(rows=["fixture.hangs"], claim="Hangs, with a child of its own.", expect=Expect({}), timeout_s=2)
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


@SECTION.case(rows=["fixture.not_json"], claim="Returns something that is not JSON.", expect=Expect({}))
def not_json():
    return Observation({"value": object()})


@SECTION.case(
    claim="Observes NaN and infinities, as a miscompile would.",
    params=[
        Param(
            "same",
            rows=["fixture.nonfinite.same"],
            expect=Expect({"error": float("nan"), "bounds": [float("-inf"), float("inf")]}),
        ),
        Param("finite", rows=["fixture.nonfinite.finite"], expect=Expect({"error": 0.5})),
    ],
)
def nonfinite(param):
    return Observation(
        {"error": float("nan"), "bounds": (float("-inf"), float("inf"))},
        {"jit_error": float("nan"), "per_row": [1.0, float("inf")]},
    )


@SECTION.case(
    claim="Echoes its parameter; skipped on platforms named skip-*.",
    params=[
        Param("a", rows=["fixture.param.a"], expect=Expect({"param": "a"})),
        Param("b", rows=["fixture.param.b"], expect=Expect({"param": "b"}, platforms={"skip-*": Skip("not here")})),
    ],
    env={"FIXTURE_ENV": "set-by-case"},
)
def echo(param):
    return Observation(
        {"param": param},
        {"env": os.environ.get("FIXTURE_ENV"), "jax_vars": sorted(k for k in os.environ if k.startswith("JAX_"))},
    )


@SECTION.case(
    rows=["fixture.bare_dict"], claim="Returns a bare dict instead of an Observation.", expect=Expect({"answer": 42})
)
def bare_dict():
    return {"answer": 42}


@SECTION.case(rows=["fixture.prints"], claim="Prints without end until its time limit.", expect=Expect({}), timeout_s=4)
def printing_forever():
    line = "x" * 1000 + "\n"
    while True:
        sys.stdout.write(line)


@SECTION.case(
    rows=["fixture.escapes"],
    claim="Leaves a grandchild in a session of its own, holding its output.",
    expect=Expect({}),
    timeout_s=3,
)
def escaping_grandchild():
    import subprocess

    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(607)"], start_new_session=True)
    time.sleep(607)


@SECTION.case(rows=["fixture.pid"], claim="Reports facts about its own process.", expect=Expect({"ok": True}))
def own_process():
    return Observation(
        {"ok": True}, {"session_leader": os.getsid(0) == os.getpid(), "jax_imported": "jax" in sys.modules}
    )


@SECTION.case(rows=["fixture.sleeps"], claim="Sleeps long, with a child of its own.", expect=Expect({}), timeout_s=300)
def sleeping():
    import subprocess

    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(606)"])
    time.sleep(606)


@SECTION.case(
    claim="Reports the variable its module saw at import; both parameters share the case's variables.",
    params=[
        Param("x", rows=["fixture.import_env.x"], expect=Expect({"at_import": "shared"})),
        Param("y", rows=["fixture.import_env.y"], expect=Expect({"at_import": "shared"})),
    ],
    env={"FIXTURE_ENV": "shared"},
)
def import_time_env(param):
    return Observation({"at_import": IMPORTED_WITH}, {"now": os.environ.get("FIXTURE_ENV"), "pid": os.getpid()})


@SECTION.case(
    rows=["fixture.stdin"],
    claim="Reads its stdin as it was given, line ends and non-ASCII letters.",
    expect=Expect({"text": "first\r\nsecond \u00fc\n"}),
    stdin="first\r\nsecond \u00fc\n",
)
def reading_stdin():
    return Observation({"text": sys.stdin.read()}, {"encoding": sys.stdin.encoding})


@SECTION.case(
    claim="Its module cannot be imported under the case's variables.",
    params=[
        Param("x", rows=["fixture.unimportable.x"], expect=Expect({})),
        Param("y", rows=["fixture.unimportable.y"], expect=Expect({})),
    ],
    env={"FIXTURE_BREAK_IMPORT": "1"},
)
def unimportable_under_env(param):
    return Observation({})


@SECTION.case(
    claim="Its module takes a minute to import under the case's variables.",
    params=[
        Param("x", rows=["fixture.slow_import.x"], expect=Expect({})),
        Param("y", rows=["fixture.slow_import.y"], expect=Expect({})),
    ],
    env={"FIXTURE_SLOW_IMPORT": "60"},
    timeout_s=90,
)
def slow_import(param):
    return Observation({})
