"""The API census: every public JAX name per release, and what changes from release to release (issue 38).

- `census.py` runs inside the target environment (standard library and jax only): it walks jax's public modules
  and the config options and writes one census file (`python -m conformance.api.census --out FILE`);
- `model.py` (pure): a census file read back, and each name's state on a release;
- `store.py`: census files under the results folder (`api/<jax>-<platform>.json`), reused by key, and running the
  census in a target's environment where storage does not answer;
- `diff.py` (pure): the changes between two releases (added, removed, deprecated, undeprecated, moved, signature),
  dated over the releases between them;
- `scan.py` (pure, `ast`, imports nothing it scans): the uses of JAX names in a team's code, judged against censuses;
- `findings.py` (pure): a scan's findings as text, JSON, GitHub annotations or SARIF 2.1.0;
- `table.py` (pure): censuses over many releases as per-release tables and BCD-shaped `api.*` compat entries;
- `session.py`: the `api` commands' work (census, diff, scan), returning typed outcomes for the CLI to print.

Nothing here is imported by the census child except `census.py` itself.
"""
