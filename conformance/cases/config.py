"""§6 of the chapter: how JAX filters its own frames out of tracebacks, and how to read and check the configuration."""

import contextlib
import re

from conformance.core.case import Change, Expect, Observation, Param, Section, Unsupported
from conformance.cases.helpers import (
    CompileCounter,
    LogCapture,
    compiles_of,
    outcome_of,
    require,
    require_keyword,
    run_script,
)

SECTION = Section("§6", "Errors and configuration")

MODES = ["auto", "tracebackhide", "off", "remove_frames", "quiet_remove_frames"]
INTERNAL = "/jax/_src/"
HINT = "JAX has removed its internal frames"
INVALID_VALUE = 'Invalid value "bogus" for JAX flag jax_traceback_filtering'
RUNTIME_ERROR_NAMES = ("JaxRuntimeError", "XlaRuntimeError")
RESHAPE_ERROR = "TypeError: cannot reshape array of shape (4,) (size 4) into shape (3, 5) (size 15)"
HINT_LINES = [
    "--------------------",
    "For simplicity, JAX has removed its internal frames from the traceback of the following exception. "
    "Set JAX_TRACEBACK_FILTERING=off to include these.",
]


def _user_frames(frames):
    """The frames that are not third-party code, as the chapter picks them (no site-packages, no <frozen)."""
    return [f for f in frames if "site-packages" not in f.filename and "<frozen" not in f.filename]


def _default_flags():
    """The repr of every option after a plain `import jax` in a clean process (no JAX_* or XLA_FLAGS)."""
    import json

    done = run_script("config_defaults")
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines:
        raise RuntimeError(f"the defaults script printed no RESULT line; stderr: {done.stderr[-2000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def _nondefault_flags(defaults):
    """Options whose repr differs from `defaults`: {name: [default repr, current repr]}."""
    import jax

    return {
        name: [defaults.get(name), repr(value)]
        for name, value in jax.config.values.items()
        if defaults.get(name) != repr(value)
    }


def _mode_profile(mode):
    """How a traceback looks under filtering `mode`: frames, JAX-internal frames, cause, notes and hidden marks.

    The failing call is the chapter's: a jitted lambda calling inner_reshape, which reshapes 4 elements to (3, 5).
    The mode is set with config.update and put back to auto afterwards, as the chapter does.
    """
    import traceback

    import jax
    import jax.numpy as jnp

    def inner_reshape(x):
        return x.reshape(3, 5)

    outer = jax.jit(lambda x: inner_reshape(x) * 2)
    jax.config.update("jax_traceback_filtering", mode)
    try:
        outer(jnp.ones(4))
    except Exception as exc:  # noqa: BLE001 - the traceback is the observation
        frames = traceback.extract_tb(exc.__traceback__)
        marked = [
            frame.f_locals.get("__tracebackhide__", False) is True for frame, _ in traceback.walk_tb(exc.__traceback__)
        ]
        internal = [INTERNAL in f.filename for f in frames]
        return {
            "frames": len(frames),
            "internal_frames": sum(internal),
            "cause": type(exc.__cause__).__name__ if exc.__cause__ is not None else None,
            "notes": len(getattr(exc, "__notes__", [])),
            "keeps_user_frame": any(f.name == "inner_reshape" for f in _user_frames(frames)),
            "marked_frames": sum(marked),
            "only_internal_frames_marked": all(internal[i] for i, m in enumerate(marked) if m),
            "walk": [[f.name, INTERNAL in f.filename, m] for f, m in zip(frames, marked)],
        }
    finally:
        jax.config.update("jax_traceback_filtering", "auto")
    return {"raised": False}


_SHAPE = ("frames", "internal_frames", "cause", "notes", "marked_frames")


def _behaves_like(profiles, mode):
    """The first other mode whose traceback has the same shape (counts, cause, notes, hidden marks) as `mode`'s."""
    return next(
        (m for m in MODES if m != mode and all(profiles[mode].get(k) == profiles[m].get(k) for k in _SHAPE)), None
    )


@contextlib.contextmanager
def _inside_ipython(version):
    """Let JAX believe it runs in an IPython shell of `version` (a tuple), as a Jupyter kernel does.

    JAX asks two things (jax/_src/traceback_util.py, _running_under_ipython and _ipython_supports_tracebackhide):
    whether the name get_ipython resolves (IPython puts it into builtins) and IPython.version_info[:2] >= (7, 17).
    Both are provided for the duration of the block and removed afterwards.
    """
    import builtins
    import sys
    import types

    shell = types.ModuleType("IPython")
    shell.version_info = (*version, "")
    shell.__version__ = ".".join(map(str, version))
    saved_module, had_hook = sys.modules.get("IPython"), hasattr(builtins, "get_ipython")
    saved_hook = getattr(builtins, "get_ipython", None)
    sys.modules["IPython"] = shell
    builtins.get_ipython = lambda: shell
    try:
        yield
    finally:
        if saved_module is None:
            sys.modules.pop("IPython", None)
        else:
            sys.modules["IPython"] = saved_module
        if had_hook:
            builtins.get_ipython = saved_hook
        else:
            del builtins.get_ipython


@SECTION.case(
    subsection="6.1",
    rows=[
        "config.traceback_filtering.modes",
        "config.traceback_filtering.runtime_switch",
        "config.traceback_filtering.tracebackhide_marker",
    ],
    claim="jax_traceback_filtering, switched back and forth in one process that looks like IPython >= 7.17, "
    "decides the traceback: auto, tracebackhide and off keep the same number of frames, remove_frames "
    "keeps fewer and attaches an UnfilteredStackTrace cause, quiet_remove_frames attaches one note, the "
    "user's inner_reshape frame is kept in every mode, tracebackhide marks the internal frames hidden, "
    "and the setting reads auto again once restored.",
    expect=Expect(
        {
            "auto_tracebackhide_and_off_keep_the_same_frames": True,
            "remove_frames_keeps_fewer_frames_than_off": True,
            "remove_frames_cause": "UnfilteredStackTrace",
            "quiet_remove_frames_notes": 1,
            "inner_reshape_kept_in_every_mode": True,
            "tracebackhide_marks_only_internal_frames": True,
            "tracebackhide_marks_more_frames_than_off": True,
            "value_before": "auto",
            "value_after_restoring": "auto",
        },
        printed={
            "modes": {
                "auto": {"frames": 11, "internal_frames": 8, "cause": None, "notes": 0},
                "tracebackhide": {"frames": 11, "internal_frames": 8, "cause": None, "notes": 0},
                "off": {"frames": 11, "internal_frames": 8, "cause": None, "notes": 0},
                "remove_frames": {"frames": 6, "internal_frames": 3, "cause": "UnfilteredStackTrace", "notes": 0},
                "quiet_remove_frames": {"frames": 6, "internal_frames": 3, "cause": None, "notes": 1},
            }
        },
    ),
    notes="Asserted, as the chapter asserts them: frame counts equal for auto, tracebackhide and off; fewer "
    "for remove_frames than for off; remove_frames' __cause__ is UnfilteredStackTrace; quiet_remove_frames "
    "has one note; inner_reshape is among the user frames in every mode; the value reads auto after the "
    "restore. The chapter ran in Jupyter, where auto is tracebackhide; the probe gives JAX the two things "
    "it checks for that (get_ipython resolvable, IPython.version_info >= (7, 17)), so its auto line is the "
    "chapter's. Printed only: the per-mode table of absolute counts (11 frames with 8 in /jax/_src/ when "
    "kept, 6 with 3 when removed, measured equal with jax 0.12.0.1 on Python 3.12 and 3.13; they depend on "
    "how deep JAX's call path is). Frames are counted as the chapter counts them (traceback.extract_tb; the "
    "outermost frame is the function that calls the jitted one). The tracebackhide marker row is prose: "
    "under tracebackhide JAX marks its internal frames with __tracebackhide__. Asserted: some frames are "
    "marked and every marked frame is internal (in /jax/_src/), and tracebackhide marks more frames than "
    "off (JAX's own api-boundary and reshape frames carry the mark in every mode, so off is the "
    "contrast). Which internal frames stay unmarked (the innermost, measured) is CPython's doing, not "
    "JAX's, so it is not asserted; the per-frame walk is in the details.",
)
def traceback_filtering_modes():
    import jax

    if not hasattr(jax.config, "jax_traceback_filtering"):
        raise Unsupported("jax.config.jax_traceback_filtering")
    value_before = jax.config.jax_traceback_filtering
    with _inside_ipython((8, 0)):
        profiles = {mode: _mode_profile(mode) for mode in MODES}
    value_after = jax.config.values.get("jax_traceback_filtering")
    frames = {m: profiles[m].get("frames") for m in MODES}
    return Observation(
        {
            "auto_tracebackhide_and_off_keep_the_same_frames": frames["auto"] is not None
            and frames["auto"] == frames["tracebackhide"] == frames["off"],
            "remove_frames_keeps_fewer_frames_than_off": None not in (frames["remove_frames"], frames["off"])
            and frames["remove_frames"] < frames["off"],
            "remove_frames_cause": profiles["remove_frames"].get("cause"),
            "quiet_remove_frames_notes": profiles["quiet_remove_frames"].get("notes"),
            "inner_reshape_kept_in_every_mode": all(profiles[m].get("keeps_user_frame") for m in MODES),
            "tracebackhide_marks_only_internal_frames": bool(profiles["tracebackhide"].get("marked_frames"))
            and profiles["tracebackhide"].get("only_internal_frames_marked") is True,
            "tracebackhide_marks_more_frames_than_off": None
            not in (profiles["tracebackhide"].get("marked_frames"), profiles["off"].get("marked_frames"))
            and profiles["tracebackhide"]["marked_frames"] > profiles["off"]["marked_frames"],
            "value_before": value_before,
            "value_after_restoring": value_after,
            "modes": {
                m: {k: profiles[m].get(k) for k in ("frames", "internal_frames", "cause", "notes")} for m in MODES
            },
        },
        {"frames_as_name_internal_marked": {m: profiles[m].get("walk") for m in MODES}},
    )


@SECTION.case(
    subsection="6.1",
    rows=["quiz.q6.auto_mode"],
    claim="auto filters like tracebackhide inside IPython 7.17 or later and like quiet_remove_frames "
    "otherwise: in a plain process and under an older IPython.",
    expect=Expect(
        {
            "auto_behaves_like": {
                "IPython 8.0": "tracebackhide",
                "IPython 7.17": "tracebackhide",
                "IPython 7.16": "quiet_remove_frames",
                "no IPython": "quiet_remove_frames",
            }
        }
    ),
    notes="The quiz answer (A) restates the chapter's table row for auto. The probe measures, in one process, "
    "the traceback of every mode (frame counts, cause, notes and which frames carry __tracebackhide__) and "
    "names the mode auto matches, once without IPython and once under a stand-in for each IPython version "
    "(the get_ipython name and IPython.version_info, which is all JAX reads). tracebackhide and off keep "
    "the same frames and are told apart by the hidden marks. The plain-script form of the claim (hint "
    "at the end of stderr) is config.traceback_filtering.script_auto.",
)
def traceback_filtering_auto_under_ipython():
    import jax

    if not hasattr(jax.config, "jax_traceback_filtering"):
        raise Unsupported("jax.config.jax_traceback_filtering")
    settings = {"IPython 8.0": (8, 0), "IPython 7.17": (7, 17), "IPython 7.16": (7, 16), "no IPython": None}
    matches, shapes = {}, {}
    for name, version in settings.items():
        with _inside_ipython(version) if version else contextlib.nullcontext():
            profiles = {mode: _mode_profile(mode) for mode in MODES}
        matches[name] = _behaves_like(profiles, "auto")
        shapes[name] = {m: [profiles[m].get(k) for k in _SHAPE] for m in MODES}
    return Observation({"auto_behaves_like": matches}, {"shape_per_mode": shapes, "shape_fields": list(_SHAPE)})


def _stderr_profile(stderr, last):
    """What JAX decides in a printed traceback (frames, internal frames, hint, the `last` lines), not Python's
    layout."""
    lines = stderr.splitlines()
    files = [line for line in lines if line.startswith('  File "')]
    return {
        "frames": len(files),
        "jax_internal_frames": sum(INTERNAL in line for line in files),
        "has_hint": HINT in stderr,
        "last_lines": lines[-last:],
    }


@SECTION.case(
    subsection="6.1",
    rows=["config.traceback_filtering.script_auto", "config.traceback_filtering.env_off"],
    claim="A plain script that fails inside jit prints a traceback with JAX's hint that it removed its internal "
    "frames; with JAX_TRACEBACK_FILTERING=off the hint is gone and the printed traceback is longer.",
    expect=Expect(
        {
            "auto_has_hint": True,
            "off_mentions_removal": False,
            "off_longer_than_auto": True,
            "auto_keeps_fewer_internal_frames_than_off": True,
        },
        printed={
            "auto_last_lines": [RESHAPE_ERROR, *HINT_LINES],
            "stderr_lines": {"auto": 18, "off": 28},
        },
    ),
    notes="Asserted, as the chapter asserts them: auto's stderr contains 'JAX has removed its internal frames', "
    "off's does not contain 'JAX has removed', and off's stderr has more lines than auto's; that auto "
    "removes internal frames is the prose claim, compared as fewer /jax/_src/ frames than under off. "
    "Printed only: auto's last three lines (the error, the separator, the hint) and the line counts, 18 "
    "and 28 in the chapter (python -c, Python 3.14). With jax 0.12.0.1 the script gives 18/28 on Python "
    "3.13.0 and 17/30 on 3.12.1: the extra lines are Python's (3.12 draws a ^^^ line under every call, "
    "3.13 only where the call is part of a line). The frame counts (5 with 3 internal for auto, 10 with 8 "
    "for off on 0.12.0.1) are details.",
)
def traceback_filtering_in_a_script():
    auto = run_script("reshape_error").stderr
    off = run_script("reshape_error", env={"JAX_TRACEBACK_FILTERING": "off"}).stderr
    auto_profile, off_profile = _stderr_profile(auto, 3), _stderr_profile(off, 1)
    return Observation(
        {
            "auto_has_hint": HINT in auto,
            "off_mentions_removal": "JAX has removed" in off,
            "off_longer_than_auto": len(off.splitlines()) > len(auto.splitlines()),
            "auto_keeps_fewer_internal_frames_than_off": auto_profile["jax_internal_frames"]
            < off_profile["jax_internal_frames"],
            "auto_last_lines": auto_profile["last_lines"],
            "stderr_lines": {"auto": len(auto.splitlines()), "off": len(off.splitlines())},
        },
        {
            "frames": {
                "auto": [auto_profile["frames"], auto_profile["jax_internal_frames"]],
                "off": [off_profile["frames"], off_profile["jax_internal_frames"]],
            },
            "off_last_line": off_profile["last_lines"],
            "auto_stderr": auto,
            "off_stderr": off,
        },
    )


@SECTION.case(
    subsection="6.1",
    rows=["config.traceback_filtering.invalid_value"],
    claim="An invalid JAX_TRACEBACK_FILTERING value makes `import jax` itself fail with a ValueError that "
    "names the value and the flag.",
    env={"JAX_TRACEBACK_FILTERING": "bogus"},
    expect=Expect(
        {"import_raises": "ValueError", "message_names_value_and_flag": True},
        printed={"message": 'Invalid value "bogus" for JAX flag jax_traceback_filtering'},
    ),
    notes="Asserted: the class (the chapter's prose) and that the message contains 'Invalid value \"bogus\" "
    "for JAX flag jax_traceback_filtering' (the chapter's assert). Printed: the whole message, the last "
    "line of the chapter's stderr.",
)
def traceback_filtering_invalid_value():
    try:
        import jax  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        return Observation(
            {
                "import_raises": type(exc).__name__,
                "message_names_value_and_flag": INVALID_VALUE in str(exc),
                "message": str(exc),
            }
        )
    return Observation({"import_raises": None, "message_names_value_and_flag": False, "message": None})


@SECTION.case(
    subsection="6.1",
    rows=["config.traceback.user_frames_under_jit"],
    claim="When a jitted function fails while it is traced, the user's frames in the traceback are the call "
    "site, then the jitted function itself, then the helper it called, whose line is the faulty one.",
    expect=Expect(
        {
            "user_frames_before_the_jitted_function": 1,
            "user_frames_inside": ["<lambda>", "inner_reshape"],
            "innermost_line_is_the_reshape": True,
        }
    ),
    notes="The chapter's call site is its notebook cell (<module>); here it is the probe function, so the "
    "call site is counted rather than named. Frames are picked as the chapter picks them (not in "
    "site-packages, not <frozen>); the default mode is used, which keeps user frames either way.",
)
def traceback_user_frames_under_jit():
    import traceback

    import jax
    import jax.numpy as jnp

    def inner_reshape(x):
        return x.reshape(3, 5)

    outer = jax.jit(lambda x: inner_reshape(x) * 2)
    try:
        outer(jnp.ones(4))
    except Exception as exc:  # noqa: BLE001 - the traceback is the observation
        frames = _user_frames(traceback.extract_tb(exc.__traceback__))
    else:
        return Observation({"raised": False})
    names = [f.name for f in frames]
    first_inside = names.index("<lambda>") if "<lambda>" in names else len(names)
    return Observation(
        {
            "user_frames_before_the_jitted_function": first_inside,
            "user_frames_inside": names[first_inside:],
            "innermost_line_is_the_reshape": bool(frames) and "reshape(3, 5)" in (frames[-1].line or ""),
        },
        {"user_frames": [[f.name, (f.line or "").strip()] for f in frames]},
    )


@SECTION.case(
    subsection="6.1",
    rows=["config.traceback.runtime_error_call_site_only"],
    claim="An error raised while the compiled program runs is a JAX runtime error (JaxRuntimeError, formerly "
    "XlaRuntimeError) whose traceback shows the call site only, with no frame from inside the jitted "
    "function.",
    expect=Expect(
        {"is_a_runtime_error_the_chapter_names": True, "user_frames_inside": []}, printed={"raised": "JaxRuntimeError"}
    ),
    notes="Asserted: the exception's class, or one of its bases, is named JaxRuntimeError or XlaRuntimeError "
    "(the chapter names both; jax.errors.JaxRuntimeError is jaxlib's XlaRuntimeError up to 0.7 and its own "
    "class from 0.8, measured), and no user frame follows the call site. Printed: the class name, which "
    "is JaxRuntimeError from 0.8 and XlaRuntimeError before. The runtime error is made by a host callback "
    "that raises inside the compiled program (the chapter names no trigger; every CPU build has this one). "
    "Its message carries the callback's own Python traceback as text, a detail.",
)
def runtime_error_traceback():
    import traceback

    import jax
    import jax.numpy as jnp

    def failing_on_host(x):
        raise ValueError("raised on the host, inside the compiled program")

    def inner(x):
        return jax.pure_callback(failing_on_host, jax.ShapeDtypeStruct((), jnp.float32), x)

    compiled = jax.jit(lambda x: inner(x) * 2)
    with LogCapture("jax"):  # the callback machinery logs the host error too
        try:
            compiled(jnp.float32(1.0)).block_until_ready()
        except Exception as exc:  # noqa: BLE001 - the exception is the observation
            raised, frames = exc, _user_frames(traceback.extract_tb(exc.__traceback__))
        else:
            return Observation(
                {"is_a_runtime_error_the_chapter_names": False, "user_frames_inside": None, "raised": None}
            )
    lineage = [cls.__name__ for cls in type(raised).__mro__]
    return Observation(
        {
            "is_a_runtime_error_the_chapter_names": any(name in RUNTIME_ERROR_NAMES for name in lineage),
            "user_frames_inside": [f.name for f in frames[1:]],
            "raised": type(raised).__name__,
        },
        {
            "user_frames": [f.name for f in frames],
            "module": type(raised).__module__,
            "mro": lineage,
            "message_first_line": str(raised).splitlines()[0] if str(raised) else "",
        },
    )


@SECTION.case(
    subsection="6.2",
    claim="jax.config.values is a dict of every option, more than 100 of them; an option reads the same as a "
    "jax.config attribute and as .value of its context manager; jax.config.read raises AttributeError "
    "for options that have a context manager.",
    params=[
        Param(
            "values_count",
            rows=["config.values.count"],
            expect=Expect(
                {"values_type": "dict", "more_than_100": True},
                printed={"option_count": 144},
            ),
        ),
        Param(
            "attribute_and_value",
            rows=["config.read.attribute_and_value"],
            expect=Expect(
                {"both_forms_agree": True, "both_forms_follow_the_switch": True},
                printed={"attribute_and_value": [False, False]},
            ),
        ),
        Param(
            "read_raises",
            rows=["config.read.raises_attributeerror"],
            expect=Expect(
                {"read_raises_attribute_error": True},
                printed={
                    "read_error": "AttributeError: For flags with a corresponding contextmanager, read their "
                    "value via e.g. `config.jax_debug_nans` rather than "
                    "`config.FLAGS.jax_debug_nans`."
                },
            ),
        ),
        Param(
            "read_raises_enable_x64",
            rows=["config.read.raises_attributeerror"],
            expect=Expect(
                {"has_context_manager": True, "read_raises_attribute_error": True},
            ),
            label="the same claim for jax_enable_x64, whose context manager is jax.enable_x64",
            discrepancy="Measured on 0.8.3, 0.9.2, 0.10.2, 0.11.2 and 0.12.0.1 (every release of the default "
            "matrix with jax.enable_x64): jax.config.read('jax_enable_x64') returns the option's value "
            "(False) although jax.enable_x64 is its context manager, because config.py takes "
            "that one option out of the set that read refuses "
            "(`config._contextmanager_flags.remove('jax_enable_x64')`, jax/_src/config.py:1788 "
            "in 0.12.0.1; the same line is in every release since 0.4.38). jax.enable_x64 is "
            "public from 0.8; older releases are unsupported for this parameter.",
        ),
    ],
    notes="Each row has its own cell. values_count asserts what the chapter asserts (a dict with more than "
    "100 entries; its prose says 140+) and prints the count, 144 in 0.12.0.1 (after importing checkify, "
    "test_util and monitoring, which add none). attribute_and_value: the chapter prints False False; "
    "asserted is the prose claim that both forms read the same option, outside and inside a debug_nans "
    "block (the block is ours: it shows both follow the switch). read_raises asserts isinstance "
    "AttributeError, as the chapter does; the message is printed. read_raises_enable_x64 asks the "
    "same of jax_enable_x64, an option with a public context manager (jax.enable_x64, asserted to "
    "exist and be the option's context manager: its .value follows the option).",
    changes=[
        Change(
            since="0.5.3",
            params=("values_count",),
            why="jax.config.values first holds more than 100 options in 0.5.3 (99 in 0.5.2), the chapter's bound.",
            evidence="measured (all run, linux-x86_64): option_count 99 in 0.5.2, 102 in 0.5.3",
        ),
        Change(
            since="0.8.0",
            params=("read_raises_enable_x64",),
            why="jax.enable_x64, the option's context manager, first exists in 0.8.0, and jax.config.read returns "
            "jax_enable_x64's value rather than raising, because config.py takes the option out of its "
            "context-manager set.",
            evidence="CHANGELOG 0.8.0: the new non-experimental context manager jax.enable_x64; jax/_src/config.py: "
            "`_contextmanager_flags.remove('jax_enable_x64')`; measured (default matrix, linux-x86_64): "
            "0.7.2 unsupported, 0.8.3 to 0.12.0.1 differ",
        ),
    ],
)
def reading_the_configuration(view):
    import jax

    if view == "values_count":
        values = jax.config.values
        return Observation(
            {"values_type": type(values).__name__, "more_than_100": len(values) > 100, "option_count": len(values)}
        )
    if view == "attribute_and_value":
        debug_nans = require("jax.debug_nans")
        outside = [jax.config.jax_debug_nans, debug_nans.value]
        with debug_nans(True):
            inside = [jax.config.jax_debug_nans, debug_nans.value]
        return Observation(
            {
                "both_forms_agree": outside[0] == outside[1] and inside[0] == inside[1],
                "both_forms_follow_the_switch": inside == [True, True],
                "attribute_and_value": outside,
            },
            {"inside_the_block": inside},
        )
    if view == "read_raises_enable_x64":
        enable_x64 = require("jax.enable_x64")
        with enable_x64(True):
            follows = getattr(enable_x64, "value", None) is True and jax.config.jax_enable_x64 is True
        read = outcome_of(lambda: jax.config.read("jax_enable_x64"))
        return Observation(
            {"has_context_manager": follows, "read_raises_attribute_error": isinstance(read.exception, AttributeError)},
            {"read": f"{read.raised}: {read.exception}" if read.exception is not None else repr(read.value)},
        )
    read = outcome_of(lambda: jax.config.read("jax_debug_nans"))
    return Observation(
        {
            "read_raises_attribute_error": isinstance(read.exception, AttributeError),
            "read_error": f"{read.raised}: {read.exception}" if read.exception is not None else None,
        }
    )


@SECTION.case(
    subsection="6.2",
    rows=["config.values.nondefault_diff"],
    claim="Every option's repr survives a JSON round trip, so the defaults of a clean process can be handed "
    "over as JSON; comparing reprs against them lists exactly the options switched on inside "
    "`with jax.debug_nans(True), jax.log_compiles(True)`, and nothing after it.",
    expect=Expect(
        {
            "every_repr_round_trips_through_json": True,
            "changed_inside": ["jax_debug_nans", "jax_log_compiles"],
            "after": {},
        },
        printed={"inside": {"jax_debug_nans": ["False", "True"], "jax_log_compiles": ["False", "True"]}},
    ),
    notes="Asserted, as the chapter asserts them: the names changed inside the block, and an empty diff "
    "after it. The JSON claim is probed in this process: every option of jax.config.values gives a repr "
    "(none raises) and the name-to-repr mapping comes back equal from json.dumps and json.loads. Printed: "
    "the (default repr, current repr) pairs, lists in JSON. The defaults come from "
    "conformance/scripts/config_defaults.py, an `import jax` run without JAX_* or XLA_FLAGS that "
    "also imports jax.experimental.checkify, jax.test_util and jax.monitoring, as the chapter's "
    "process had by then (this probe imports them too, so an option one of them defines is on both "
    "sides); an option missing from them would show in the diff after the block.",
)
def nondefault_flags_diff():
    import importlib
    import json

    import jax

    from conformance.scripts.config_defaults import CHAPTER_IMPORTS

    for name in CHAPTER_IMPORTS:  # as in the chapter's process, and in the defaults script
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    defaults = _default_flags()
    reprs = {name: outcome_of(lambda value=value: repr(value)) for name, value in jax.config.values.items()}
    unrepresentable = sorted(name for name, shown in reprs.items() if shown.exception is not None)
    as_text = {name: shown.value for name, shown in reprs.items()}
    with jax.debug_nans(True), jax.log_compiles(True):
        inside = _nondefault_flags(defaults)
    return Observation(
        {
            "every_repr_round_trips_through_json": bool(as_text)
            and not unrepresentable
            and json.loads(json.dumps(as_text)) == as_text,
            "changed_inside": sorted(inside),
            "after": _nondefault_flags(defaults),
            "inside": inside,
        },
        {"default_count": len(defaults), "options_without_repr": unrepresentable},
    )


@SECTION.case(
    subsection="6.2",
    rows=["config.env_vars"],
    claim="JAX_* environment variables set before start-up (spelled 1, true and off) configure JAX like "
    "config.update; one set after `import jax` is not read.",
    env={"JAX_DEBUG_NANS": "1", "JAX_LOG_COMPILES": "true", "JAX_TRACEBACK_FILTERING": "off"},
    expect=Expect(
        {
            "printed": "True True off",
            "booleans_are_bool": True,
            "set_after_import": False,
        }
    ),
    notes="The variable set after the import (JAX_DEBUG_INFS=1) is ours: the chapter's table says the "
    "variables are read at process start-up.",
)
def environment_variables():
    import os

    import jax

    nans, compiles, filtering = (
        jax.config.jax_debug_nans,
        jax.config.jax_log_compiles,
        jax.config.jax_traceback_filtering,
    )
    os.environ["JAX_DEBUG_INFS"] = "1"
    return Observation(
        {
            "printed": f"{nans} {compiles} {filtering}",
            "booleans_are_bool": nans is True and compiles is True,
            "set_after_import": jax.config.jax_debug_infs,
        }
    )


def _platform_line(line):
    """The platform line with node, release and version elided; system and machine too off the chapter's platform."""
    import platform

    on_chapter_platform = (platform.system(), platform.machine()) == ("Darwin", "arm64")
    kept = {"system", "machine"} if on_chapter_platform else set()
    return re.sub(r"(\w+)='[^']*'", lambda m: m.group(0) if m.group(1) in kept else f"{m.group(1)}='…'", line)


@SECTION.case(
    subsection="6.3",
    rows=["config.print_environment_info"],
    claim="jax.print_environment_info(return_string=True) returns the report as text: the jax and jaxlib "
    "versions, the device info and process count, and a platform line with the host name in node='…', "
    "which a regex can redact.",
    expect=Expect(
        {
            "returns_text": True,
            "has_jax_version_line": True,
            "has_jaxlib_line": True,
            "has_device_info_line": True,
            "node_redacted": True,
        },
        printed={
            "device_info_line": 'device info: cpu-1, 1 local devices"',
            "process_count_line": "process_count: 1",
            "platform_line": "platform: uname_result(system='…', node='…', release='…', version='…', machine='…')",
        },
        platforms={
            "darwin-arm64": {
                "platform_line": "platform: uname_result(system='Darwin', node='…', release='…', version='…', "
                "machine='arm64')",
            }
        },
    ),
    notes="Asserted, as the chapter asserts them: the text contains f'jax:    {jax.__version__}', 'jaxlib:' and "
    "'device info:', and a regex can replace node='...'. Printed: the device-info, process-count and "
    "platform lines. The chapter ran on macOS arm64 (release 27.0.0); its platform line is compared on "
    "darwin-arm64 with node, release and version elided (the host name and the OS build are not "
    "JAX's). Elsewhere the platform-neutral part is compared: the line is a uname_result with these five "
    "fields. The stray quote after 'local devices' is in JAX's output. The numpy and python lines are details.",
)
def environment_info():
    import jax

    require_keyword(jax.print_environment_info, "return_string", "jax.print_environment_info")
    info = jax.print_environment_info(return_string=True)
    if not isinstance(info, str):
        return Observation({"returns_text": False})
    lines = info.splitlines()
    platform_line = next((line for line in lines if line.startswith("platform:")), "")
    redacted = re.sub(r"node='[^']*'", "node='<redacted>'", info)
    return Observation(
        {
            "returns_text": True,
            "has_jax_version_line": f"jax:    {jax.__version__}" in info,
            "has_jaxlib_line": "jaxlib:" in info,
            "has_device_info_line": "device info:" in info,
            "device_info_line": next((line for line in lines if line.startswith("device info:")), None),
            "process_count_line": next((line for line in lines if line.startswith("process_count:")), None),
            "node_redacted": "node='<redacted>'" in redacted and redacted != info,
            "platform_line": _platform_line(platform_line),
        },
        {"other_lines": [line for line in lines if not line.startswith("platform:")]},
    )


@SECTION.case(
    subsection="6.2",
    rows=["config.final_restore"],
    claim="Every debug switch the chapter turns on, through context managers or config.update, is back at its "
    "default afterwards: nothing differs from a clean process, debug_nans is False and traceback "
    "filtering is auto.",
    expect=Expect({"leftover": {}, "debug_nans_is_false": True, "traceback_filtering": "auto"}),
    notes="The chapter checks this at the end of its whole run; this probe replays, in one process, the "
    "switches it uses (debug_nans, debug_infs, log_compiles, checking_leaks, check_tracer_leaks, "
    "debug_key_reuse, explain_cache_misses, transfer_guard, disable_jit, and config.update of "
    "jax_check_tracer_leaks and jax_traceback_filtering), each restored the way the chapter restores "
    "it, with a small jitted computation inside, and then diffs the whole configuration against the "
    "defaults of a clean process.",
)
def final_restore():
    import jax
    import jax.numpy as jnp

    switches = [
        require(name)
        for name in (
            "jax.debug_nans",
            "jax.debug_infs",
            "jax.log_compiles",
            "jax.checking_leaks",
            "jax.check_tracer_leaks",
            "jax.debug_key_reuse",
            "jax.explain_cache_misses",
            "jax.transfer_guard",
            "jax.disable_jit",
        )
    ]
    (
        debug_nans,
        debug_infs,
        log_compiles,
        checking_leaks,
        check_tracer_leaks,
        debug_key_reuse,
        explain_cache_misses,
        transfer_guard,
        disable_jit,
    ) = switches
    defaults = _default_flags()
    x = jnp.arange(3.0)

    def run():
        return jax.jit(lambda v: jnp.sin(v) * 2)(x).block_until_ready()

    with LogCapture("jax"):
        for context in (
            debug_nans(True),
            debug_infs(True),
            log_compiles(True),
            checking_leaks(),
            check_tracer_leaks(True),
            debug_key_reuse(True),
            explain_cache_misses(),
            transfer_guard("disallow"),
            disable_jit(),
        ):
            with context:
                run()
        jax.config.update("jax_check_tracer_leaks", True)
        run()
        jax.config.update("jax_check_tracer_leaks", False)
        for mode in MODES:
            jax.config.update("jax_traceback_filtering", mode)
        jax.config.update("jax_traceback_filtering", "auto")
    return Observation(
        {
            "leftover": _nondefault_flags(defaults),
            "debug_nans_is_false": jax.config.jax_debug_nans is False,
            "traceback_filtering": jax.config.jax_traceback_filtering,
        }
    )


# The caches the debug_nans probe repeats a call against, in the order it measures them (the persistent cache first:
# it is set up before the process's first compilation).
CACHES = [
    "persistent_compilation_cache",
    "jit_tracing_cache",
    "jit_compilation_cache",
    "jit_cpp_dispatch",
    "eager_op_cache",
    "control_flow_tracing_cache",
    "closure_convert_cache",
]


def _persistent_cache_answers(flag):
    """Whether a jit compiled, dropped from memory by jax.clear_caches() and compiled again is read back from the
    persistent compilation cache (its `cache_hits` event), with debug_nans set to `flag`."""
    import tempfile

    import jax
    import jax.numpy as jnp

    register = require("jax.monitoring.register_event_listener")
    reset = require("jax.experimental.compilation_cache.compilation_cache.reset_cache")
    events = []
    register(lambda event, **_: events.append(event))
    with tempfile.TemporaryDirectory() as folder, jax.debug_nans(flag):
        reset()
        jax.config.update("jax_compilation_cache_dir", folder)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        try:
            scale = 3.0 if flag else 5.0  # a program of its own per flag: no hit from the other side's entry
            jax.jit(lambda v: jnp.tanh(v) * scale)(jnp.arange(3.0)).block_until_ready()
            jax.clear_caches()
            before = len(events)
            jax.jit(lambda v: jnp.tanh(v) * scale)(jnp.arange(3.0)).block_until_ready()
            return "/jax/compilation_cache/cache_hits" in events[before:]
        finally:
            jax.config.update("jax_compilation_cache_dir", None)
            reset()


def _repeats_answered(flag):
    """For each in-memory cache, whether repeating the same call was answered by it, with debug_nans set to `flag`.

    jit: one function called three times with the same argument types is traced once and compiled once (its
    _cache_size stays 1), and a fourth call never enters jit's Python path (jax/_src/pjit.py and the executor in
    interpreters/pxla.py): jit's C++ dispatch cache answered it. Eager: a repeated jnp.cos on the same shape compiles
    nothing. Control flow: an eager lax.scan repeated with the same body traces the body once. closure_convert: a
    second conversion of one function returns the first one's result (the cache the leak checker skips).
    """
    import sys

    import jax
    import jax.numpy as jnp
    from jax import lax

    x = jnp.arange(4.0)
    traces, body_traces, python_calls = [], [], []

    def step(v):
        traces.append(1)
        return jnp.sin(v) * 2 + 1

    def body(carry, item):
        body_traces.append(1)
        return carry + item, carry * item

    def double(v):
        return v * 2

    def count_python_path(frame, event, _arg):
        if event == "call" and frame.f_code.co_filename.replace("\\", "/").endswith(
            ("jax/_src/pjit.py", "jax/_src/interpreters/pxla.py")
        ):
            python_calls.append(frame.f_code.co_name)

    with jax.debug_nans(flag), CompileCounter() as counter:
        stepped = jax.jit(step)
        for _ in range(3):
            stepped(x).block_until_ready()
        jit_compiles = compiles_of(counter.names, "jit(step)")
        previous = sys.getprofile()
        sys.setprofile(count_python_path)
        try:
            stepped(x).block_until_ready()
        finally:
            sys.setprofile(previous)
        y = jnp.arange(5.0)
        jnp.cos(y).block_until_ready()
        before = counter.count
        for _ in range(3):
            jnp.cos(y).block_until_ready()
        eager_compiles = counter.count - before
        for _ in range(3):
            lax.scan(body, 0.0, jnp.arange(3.0))
        first, _ = jax.closure_convert(double, jnp.float32(1.0))
        second, _ = jax.closure_convert(double, jnp.float32(1.0))
        return {
            "jit_tracing_cache": len(traces) == 1,
            "jit_compilation_cache": jit_compiles == 1 and stepped._cache_size() == 1,
            "jit_cpp_dispatch": not python_calls,
            "eager_op_cache": eager_compiles == 0,
            "control_flow_tracing_cache": len(body_traces) == 1,
            "closure_convert_cache": first is second,
        }


@SECTION.case(
    subsection="6.2",
    rows=["config.debug_switches.debug_nans_disables_caching"],
    claim="jax_debug_nans disables some caching: with the switch on, some cache that answers a repeated call with "
    "it off is skipped, which is why a forgotten switch makes code slow.",
    expect=Expect({"some_cache_skipped_under_debug_nans": True}),
    timeout_s=240,
    notes="The chapter states this in prose (beside the same remark about jax_check_tracer_leaks, whose half is "
    "tracers.leak.checker_forms). The observable its words name is a cache that is bypassed while the switch "
    "is on: the probe repeats one call against each cache JAX keeps, first with debug_nans off (the "
    "positive control: every cache must answer the repeat, or the probe raises rather than judge) and then "
    "on, and asserts that at least one cache stops answering. The caches: the persistent compilation "
    "cache (a jit compiled, dropped by jax.clear_caches() and compiled again is read back: its cache_hits "
    "monitoring event), jit's tracing cache (a function called three times with the same argument types "
    "is traced once), its compilation cache (one backend compile, _cache_size() 1), its C++ dispatch cache "
    "(a fourth call runs no Python of jax/_src/pjit.py or interpreters/pxla.py), the eager per-operation "
    "cache (a repeated jnp.cos compiles nothing), the control-flow tracing cache (an eager lax.scan "
    "repeated with one body traces it once) and jax.closure_convert's cache (the one the leak checker "
    "skips: a second conversion returns the first's result). Each cache's answer with the switch off and "
    "on is in the details.",
    discrepancy="Measured on every release of the default matrix, 0.12.0.1 included: with jax_debug_nans on, each "
    "of the seven caches still answers the repeated call (one trace, one compile, no Python on the "
    "repeat, a persistent-cache hit), so no cache is skipped. The source agrees: in 0.12.0.1 the switch "
    "is read only to add the NaN check to every output (jax/_src/api.py: `_update_debug_special_global` "
    "installs `_nan_check_posthook` as jit's post-hook, which jaxlib's C++ jit calls after a cached "
    "call; interpreters/pxla.py checks outputs under `dispatch.needs_check_special()`), to turn off "
    "buffer donation (jax/_src/pjit.py: `if (ji.donate_argnums or ji.donate_argnames) and not "
    "config.debug_nans.value`), and to re-run a function de-optimized after a NaN is found; it is not "
    "part of any cache key and no cache tests it (jax_check_tracer_leaks, by contrast, makes "
    "jax.closure_convert skip its cache). What makes code slower under debug_nans is that per-output "
    "check, a copy of every output to the host, not a skipped cache.",
)
def debug_nans_disables_caching():
    off = {"persistent_compilation_cache": _persistent_cache_answers(False), **_repeats_answered(False)}
    on = {"persistent_compilation_cache": _persistent_cache_answers(True), **_repeats_answered(True)}
    unanswered = [name for name in CACHES if not off[name]]
    if unanswered:
        raise RuntimeError(
            f"with debug_nans off these caches did not answer a repeated call, so the probe cannot "
            f"tell whether debug_nans skips them: {', '.join(unanswered)}"
        )
    skipped = [name for name in CACHES if not on[name]]
    return Observation(
        {"some_cache_skipped_under_debug_nans": bool(skipped)},
        {
            "skipped_under_debug_nans": skipped,
            "answers_repeat": {name: {"debug_nans_off": off[name], "debug_nans_on": on[name]} for name in CACHES},
        },
    )
