"""`api scan` against a getattr check of its own: every JAX name a repository uses, read in a fresh process of the
release's environment, compared with the scan's findings.

    python benchmarks/api_scan_getattr.py REPO --to VERSION --results DIR --python ENV_PYTHON [--json OUT]

The scan's uses (`conformance.api.scan`) are cut where the judge checks them (`checked_name`, or the whole name for
a use the judge does not cover); each distinct name is resolved in one fresh process of ENV_PYTHON: the longest
importable module prefix imported, the rest read with `getattr`, warnings recorded. Then per finding level:
- an error (removed, missing) or a `guarded` note is right when the name does not resolve;
- a `deprecated` warning is right when it resolves with a DeprecationWarning (or resolves at all: `warned` says);
- a `not_judged` note is counted by whether the name resolves (a dunder, a `jax._src` name that resolves);
- a name that does not resolve with no error or guarded finding is a miss of the scan.
Prints one JSON object: counts by level, agreements, disagreements (each named).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.api.findings import LEVELS  # noqa: E402
from conformance.api.judge import Censuses, checked_name, judge, not_covered  # noqa: E402
from conformance.api.model import load_census  # noqa: E402
from conformance.api.scan import uses_in_files  # noqa: E402
from conformance.api.session import history_for, python_files  # noqa: E402
from conformance.api.store import census_path  # noqa: E402

CHILD = r"""
import importlib, json, sys, warnings
out = {}
for name in json.load(sys.stdin):
    parts = name.split(".")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        obj, error = None, ""
        if name.startswith("jax.config.") and len(parts) == 3:  # an option: what jax.config.update accepts
            import jax
            holders = getattr(jax.config, "_value_holders", None) or getattr(jax.config, "values", {})
            out[name] = {"ok": parts[2] in holders or hasattr(jax.config, parts[2]), "error": "", "warned": []}
            continue
        for end in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:end]))
                break
            except Exception:
                continue
        try:
            for part in parts[end:]:
                obj = getattr(obj, part)
        except Exception as exc:
            error = type(exc).__name__ + ": " + str(exc)[:200]
    warned = [str(w.message)[:200] for w in caught if issubclass(w.category, (DeprecationWarning, FutureWarning))]
    out[name] = {"ok": not error, "error": error, "warned": warned[:1]}
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    """Print the comparison (see the module docstring)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("--to", required=True)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    from conformance.engine.matrix import host_platform

    to = load_census(census_path(args.results, args.to, host_platform()))
    censuses = Censuses(to, None, tuple(history_for(to, None, args.results)))
    files = python_files([args.repo])
    uses, _ = uses_in_files([(str(p), p.read_bytes()) for p in files])
    findings = judge(uses, censuses)
    checked = {}
    for use in uses:
        name = use.name if not_covered(use.name, censuses) else checked_name(use.name, censuses)
        if name and name != "jax":
            checked[(use.path, use.line, use.col, use.name)] = name
    names = sorted(set(checked.values()) | {f.name.split("(")[0] for f in findings})
    done = subprocess.run(
        [args.python, "-c", CHILD],
        input=json.dumps(names),
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"},
    )
    resolved = json.loads(done.stdout)
    levels = Counter(f"{LEVELS[f.state]}:{f.state}" for f in findings)
    agree, disagree = Counter(), []
    flagged = set()
    for f in findings:
        base = f.name.split("(")[0]
        got = resolved.get(base, {"ok": None})
        if f.state in ("removed", "missing", "guarded"):
            flagged.add((f.path, f.line, base))
            right = got["ok"] is False or "(" in f.name  # a keyword: the name resolves, passing it raises
        elif f.state == "deprecated":
            right = bool(got["ok"])
        elif f.state == "not_judged":
            agree[f"not_judged resolves={got['ok']}"] += 1
            continue
        else:
            right = bool(got["ok"])
        agree[f"{f.state} {'right' if right else 'wrong'}"] += 1
        if not right:
            disagree.append(f"{f.path}:{f.line} {f.name} {f.state}: getattr {got}")
    missed = sorted(
        {
            f"{k[0]}:{k[1]} {name}"
            for k, name in checked.items()
            if resolved.get(name, {}).get("ok") is False
            and (k[0], k[1], name) not in flagged
            and not not_covered(k[3], censuses)
        }
    )
    report = {
        "repo": str(args.repo),
        "to": args.to,
        "files": len(files),
        "uses": len(uses),
        "names_checked": len(names),
        "findings_by_level": dict(levels),
        "agreement": dict(agree),
        "disagreements": disagree,
        "missed_by_scan": missed,
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
