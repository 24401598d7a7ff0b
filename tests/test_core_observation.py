"""`observation`: the records a child writes (every key and its bounds), read back by `parse_record`."""

from __future__ import annotations

import json

from conformance.core.observation import (MESSAGE_CHARS, OBSERVATION_SCHEMA, TRACEBACK_CHARS, error_record,
                                          observed_record, parse_record, unsupported_record)


def test_each_record_has_exactly_its_keys():
    assert observed_record("m.c", "p", {"x": 1}, {"raw": 2}) == {
        "schema": OBSERVATION_SCHEMA, "case": "m.c", "param": "p", "outcome": "observed", "facts": {"x": 1},
        "details": {"raw": 2}}
    assert unsupported_record("m.c", "", "jax.debug.log") == {
        "schema": OBSERVATION_SCHEMA, "case": "m.c", "param": "", "outcome": "unsupported", "reason": "jax.debug.log"}
    assert error_record("m.c", "p", "ValueError", "boom", "Traceback ...") == {
        "schema": OBSERVATION_SCHEMA, "case": "m.c", "param": "p", "outcome": "error",
        "error": {"type": "ValueError", "message": "boom", "traceback": "Traceback ..."}}
    assert error_record("m.c", "", "E", "m")["error"]["traceback"] == ""


def test_an_error_keeps_the_start_of_its_message_and_the_end_of_its_traceback():
    message = "m" * MESSAGE_CHARS + "LOST"
    traceback = "LOST" + "t" * (TRACEBACK_CHARS - 4) + "LAST"
    error = error_record("m.c", "", "E", message, traceback)["error"]
    assert error["message"] == "m" * MESSAGE_CHARS
    assert len(error["traceback"]) == TRACEBACK_CHARS and error["traceback"].endswith("LAST")
    assert not error["traceback"].startswith("LOST")


def test_records_read_back_as_written():
    for record in (observed_record("m.c", "", {"x": [1]}, None), unsupported_record("m.c", "", "api"),
                   error_record("m.c", "", "E", "m", "t")):
        assert parse_record(json.dumps(record)) == (record, "")
