"""The conditions a platform column ran under that decide whether the chapter's headline miscompile can show there.

The closure-constant miscompile (`program.closure_constant_miscompile`) reproduces, as far as it has been measured,
only where XLA's CPU backend puts a YNNPACK fusion in the closure's program and the CPU has SME (qemu's
linux-aarch64 emulation: gone with `sme=off` or with the fusion turned off). So a "not reproduced" on a CPU
without SME says nothing about a fix. The case records those facts in its details; this module turns them into
one line for the column's header and the cell's panel. Pure logic.
"""

from __future__ import annotations

from typing import Any, Mapping

MISCOMPILE_CASE = "program.closure_constant_miscompile"


def _known(flag: Any) -> str:
    return "unknown" if flag is None else "yes" if flag else "no"


def cpu_conditions(details: Mapping[str, Any] | None) -> str:
    """One line from the miscompile case's details: the CPU's matrix features, the YNNPACK fusions of the closure's
    compiled program, and the error with that fusion turned off; '' when the details hold none of them."""
    if not isinstance(details, Mapping):
        return ""
    parts = []
    features = details.get("cpu_matrix_features")
    if isinstance(features, Mapping):
        parts.append(f"CPU SME {_known(features.get('sme'))}, SVE {_known(features.get('sve'))}")
    fusions = details.get("closure_hlo_ynn_fusions", "absent")
    if fusions != "absent":
        parts.append(f"YNNPACK fusions in the closure's program: {'unknown' if fusions is None else fusions}")
    without = details.get("without_ynn_fusion")
    if isinstance(without, Mapping):
        if "jit_error" in without:
            error = without["jit_error"]
            shown = error.get("$float", error) if isinstance(error, Mapping) else error
            parts.append(
                f"error with that fusion off: {shown:.3g}"
                if isinstance(shown, float)
                else f"error with that fusion off: {shown}"
            )
        elif without.get("failed"):
            parts.append("fusion flag refused by this XLA")
    return "; ".join(parts)
