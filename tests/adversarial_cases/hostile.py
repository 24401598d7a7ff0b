"""Probes that hang, escape, flood, exit, interrupt, or return hostile data; run against a real jax environment."""

import os
import subprocess
import sys
import time

from conformance.core.case import Expect, Observation, Section

SECTION = Section("§X", "Hostile probes")


@SECTION.case(rows=["hostile.hang"], claim="Hangs after importing jax.", expect=Expect({}), timeout_s=5)
def hang():
    import jax  # noqa: F401

    time.sleep(608)


@SECTION.case(rows=["hostile.setsid"], claim="Leaves a grandchild in its own session.", expect=Expect({}), timeout_s=5)
def setsid_grandchild():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(608)"], start_new_session=True)
    time.sleep(608)


@SECTION.case(rows=["hostile.flood"], claim="Prints without end.", expect=Expect({}), timeout_s=4)
def flood():
    while True:
        print("<script>alert(1)</script>" * 40)


@SECTION.case(rows=["hostile.exit"], claim="Exits at once without an observation.", expect=Expect({}))
def hard_exit():
    os._exit(0)


@SECTION.case(rows=["hostile.interrupt"], claim="Raises KeyboardInterrupt.", expect=Expect({}))
def interrupt():
    raise KeyboardInterrupt


@SECTION.case(rows=["hostile.not_json"], claim="Returns a set.", expect=Expect({}))
def not_json():
    return Observation({"values": {1, 2}})


@SECTION.case(rows=["hostile.deep"], claim="Returns very deeply nested facts.", expect=Expect({"deep": []}))
def deep():
    nested: list = []
    for _ in range(100_000):
        nested = [nested]
    return Observation({"deep": nested})


@SECTION.case(
    rows=["hostile.surrogate"],
    claim="Returns a lone surrogate, control characters and markup.",
    expect=Expect({"text": "plain"}),
)
def surrogate():
    return Observation({"text": "\udcff\x00\x1b[31m<script>alert('x')</script>`rm -rf /`"}, {"huge": "y" * 30_000_000})
