"""Restoring the result files of the last published run, checked like any result file, so a run starts from them.

`restore_results(source, into)` reads `<source>/results/index.json` (written by `results.publish`) from the
published site (an http(s) URL), a `file://` URL or a local folder, and fetches each file it names into `into`:
a file is kept only when its name is a result file's (`<jax>-<platform>.json`, no folder), its size and sha256
are the index's, it reads as a result file (schema, sizes: `results.load.load_result_file`) and its header's
JAX version and platform are its name's. A file that fails is set aside (not written; named with the reason),
so its cells run again; a restore that fails as a whole (first run, site down, a bad index) restores nothing and
says so in one line, so every cell runs. `keep` also copies what was restored (and the site's `history.json`)
into a folder left untouched by the run: the previous run, as the report's history reads it. When the site holds a
history.json that could not be read (it did not answer, or too large; a 404 is no history), `keep` gets
`history.json.unread` with the reason, and the report job's script refuses to publish: a new history would replace
the site's. The outcome is a `Restored`; nothing here raises for bad input from the site.

The CI calls it through `.github/scripts/restore_results.py SOURCE --into DIR [--keep DIR] [--platform NAME ...]`
(that script parses the command line: `cli.py` is the package's one argparse user).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from conformance.atomic import write_bytes_atomically
from conformance.interrupts import interrupts_held
from conformance.readfile import TooLarge, read_regular_bytes
from conformance.results.history_file import MAX_HISTORY_BYTES
from conformance.results.load import MAX_RESULT_BYTES, RESULT_NAME, ResultsError, load_result_file
from conformance.scrub import scrub_credentials, scrub_url

INDEX_PATH = "results/index.json"
HISTORY_PATH = "history.json"
MAX_INDEX_BYTES = 4 * 1024 * 1024
TIMEOUT_S = 60  # each read of the site
FETCH_DEADLINE_S = 30  # the whole of one fetch: a site trickling a byte at a time is cut off, not waited for
# The whole restore, the index and the history included: every fetch ends by it, and past it the files not fetched
# yet are set aside (their cells run). Under the minute and a half a CI step gives it: a site sending a byte a second
# costs a line, never the job.
RESTORE_DEADLINE_S = 60
_SHA256 = re.compile(r"[0-9a-f]{64}")


class FetchError(Exception):
    """A file of the site could not be fetched; the message is one line. `missing`: the site says it has no such
    file (HTTP 404, or no such file under a file:// URL or folder), rather than failing to answer."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


@dataclass
class Restored:
    """What a restore did: the files restored (names), those set aside (name -> why), and why the restore as a
    whole failed ("" when it did not); `history` whether the site's history.json was kept too, `history_problem` why
    it could not be read although the site may hold one ("" when it was kept or the site has none)."""

    source: str
    restored: list[str] = field(default_factory=list)
    set_aside: dict[str, str] = field(default_factory=dict)
    failure: str = ""
    history: bool = False
    history_problem: str = ""

    def lines(self) -> list[str]:
        """One line per file set aside and one for the restore, for the job's log."""
        where = scrub_url(self.source)
        unread = [
            f"jax-conformance: restore: the site's {HISTORY_PATH} could not be read "
            f"({shown(self.history_problem)}); a publication now would replace it (the report job refuses)"
        ]
        unread = unread if self.history_problem else []
        if self.failure:
            failed = f"jax-conformance: restore: nothing restored from {where} ({self.failure}); every cell runs"
            return [failed] + unread
        aside = [
            f"jax-conformance: restore: set aside {shown(name)} ({shown(why)}); its cells run"
            for name, why in self.set_aside.items()
        ]
        return (
            aside
            + unread
            + [
                f"restored {len(self.restored)} result file(s) from {where}"
                + (f", set aside {len(self.set_aside)}" if self.set_aside else "")
            ]
        )


def shown(text: str) -> str:
    """`text` for one line of the log: control characters (a newline from the site's index would start a line of its
    own, even a workflow command) written as escapes."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def site_url(source: str, path: str) -> str:
    """The URL of `path` on the site at `source` (a URL, or a local folder given by its path)."""
    base = source if "://" in source else Path(source).absolute().as_uri()
    return base.rstrip("/") + "/" + path


def _read_within(response: Any, limit: int, deadline: float, allowed_s: float) -> bytes:
    """At most `limit + 1` bytes of `response`, read as they arrive; `FetchError` once `deadline` (monotonic) passes,
    however slowly the bytes come (each read waits `TIMEOUT_S` at most)."""
    chunks: list[bytes] = []
    size = 0
    read = getattr(response, "read1", None) or response.read
    while size <= limit:
        if time.monotonic() > deadline:
            raise FetchError(f"took longer than {allowed_s:.0f} s to fetch")
        chunk = read(min(1 << 16, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _fetch_local(url: str, limit: int) -> bytes:
    """A file of a site that is a folder (a `file://` URL): a regular file only (a FIFO there would block), bounded."""
    path = urllib.request.url2pathname(urllib.parse.urlsplit(url).path)
    try:
        return read_regular_bytes(path, limit)
    except TooLarge:
        raise FetchError(f"larger than {limit} bytes") from None
    except OSError as exc:
        raise FetchError(shown(str(exc.strerror or exc))[:200], isinstance(exc, FileNotFoundError)) from None


def _fetch_remote(url: str, limit: int, deadline: float, allowed_s: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=min(TIMEOUT_S, allowed_s)) as response:  # noqa: S310 - the site's
            return _read_within(response, limit, deadline, allowed_s)
    except (OSError, ValueError, urllib.error.URLError, http.client.HTTPException) as exc:
        said = " ".join(str(getattr(exc, "reason", None) or exc).split())
        missing = (
            (isinstance(exc, urllib.error.HTTPError) and exc.code == 404)
            or isinstance(exc, FileNotFoundError)
            or isinstance(getattr(exc, "reason", None), FileNotFoundError)
        )
        raise FetchError(shown(scrub_credentials(said, url))[:200], missing) from None


def fetch(url: str, limit: int, stop_at: float | None = None) -> bytes:
    """The bytes at `url`, at most `limit` of them, within `FETCH_DEADLINE_S` from the first byte asked for to the
    last (the connection and headers included: a site trickling its headers a byte at a time is cut off too), and
    by `stop_at` (monotonic: the whole restore's deadline) when given; `FetchError` (one line) otherwise."""
    if urllib.parse.urlsplit(url).scheme == "file":
        data = _fetch_local(url, limit)
    else:
        allowed = float(FETCH_DEADLINE_S) if stop_at is None else min(FETCH_DEADLINE_S, stop_at - time.monotonic())
        if allowed <= 0:
            raise FetchError(f"not fetched: the restore ran past its {RESTORE_DEADLINE_S:g} s")
        deadline = time.monotonic() + allowed
        done: dict[str, Any] = {}

        def worker() -> None:
            try:
                done["data"] = _fetch_remote(url, limit, deadline, allowed)
            except FetchError as exc:
                done["error"] = exc

        thread = threading.Thread(target=worker, name="jax-conformance-fetch", daemon=True)
        thread.start()
        thread.join(allowed)
        if thread.is_alive():  # left to its socket's own timeout; nothing waits for it
            raise FetchError(f"took longer than {allowed:.0f} s to fetch")
        if "error" in done:
            raise done["error"]
        data = done["data"]
    if len(data) > limit:
        raise FetchError(f"larger than {limit} bytes")
    return data


def index_entries(data: bytes) -> list[dict[str, Any]]:
    """The file entries of an index; `FetchError` naming what is wrong with it."""
    try:
        index = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise FetchError(f"{INDEX_PATH} is not JSON ({' '.join(str(exc).split())[:120]})") from None
    files = index.get("files") if isinstance(index, dict) else None
    if not isinstance(files, list) or not all(isinstance(entry, dict) for entry in files):
        raise FetchError(f"{INDEX_PATH} has no list of files")
    return files


def entry_problem(entry: dict[str, Any]) -> str | None:
    """Why an index entry cannot name a restorable file (None when it can)."""
    name, digest, size = entry.get("name"), entry.get("sha256"), entry.get("size")
    if (
        not isinstance(name, str)
        or "/" in name
        or "\\" in name
        or not (found := RESULT_NAME.fullmatch(name))
        or found["shard"]
    ):
        return "not the name of a merged result file"
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
        return "the index gives no sha256"
    if not isinstance(size, int) or isinstance(size, bool) or not 0 < size <= MAX_RESULT_BYTES:
        return f"the index gives no size up to {MAX_RESULT_BYTES} bytes"
    return None


def file_problem(path: Path, name: str, data: bytes, entry: dict[str, Any]) -> str | None:
    """Why the fetched bytes of `name` (written at `path`) are not the result file the index names (None: fine)."""
    if len(data) != entry["size"]:
        return f"{len(data)} bytes, not the {entry['size']} the index gives"
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        return "its sha256 is not the index's"
    try:
        header = load_result_file(path).header
    except ResultsError as exc:
        return str(exc).replace(str(path), "it", 1)
    found = RESULT_NAME.match(name)
    if (header.jax, header.platform) != (found["jax"], found["platform"]):
        return f"its header says jax {header.jax} on {header.platform}, not what its name says"
    return None


def restore_one(
    source: str, entry: dict[str, Any], into: Path, keep: Path | None, stop_at: float | None = None
) -> str | None:
    """Fetch, check and store one file of the index (by `stop_at`, the restore's deadline); why it was set aside, or
    None when restored."""
    name = entry["name"]
    try:
        data = fetch(site_url(source, "results/" + name), entry["size"], stop_at)  # no more than the index promised
    except FetchError as exc:
        return f"cannot be fetched: {exc}"
    problem: str | None = None
    temporary: Path | None = None
    try:  # from the first instruction: an interrupt as the file is made waits until `temporary` names it
        with interrupts_held():
            handle, temporary_name = tempfile.mkstemp(prefix=f".restoring-{name}.", dir=into)
            temporary = Path(temporary_name)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        problem = file_problem(temporary, name, data, entry)
        if problem is None:
            if keep is not None:
                shutil.copyfile(temporary, keep / name)
            os.replace(temporary, into / name)
        return problem
    except OSError as exc:  # a full disk, a quota: set aside (its cells run), the partial file removed
        if keep is not None and problem is None and temporary is not None:  # a partial copy of one not restored
            (keep / name).unlink(missing_ok=True)
        return f"cannot be written here ({shown(exc.strerror or str(exc))})"
    finally:
        if temporary is not None:
            temporary.unlink(missing_ok=True)


def restore_results(source: str, into: Path, keep: Path | None = None, platforms: Sequence[str] = ()) -> Restored:
    """Restore the published result files at `source` into `into` (and `keep`), only those of `platforms` when
    given; see the module's docstring. Never raises for what the site holds."""
    outcome = Restored(source)
    stop_at = time.monotonic() + RESTORE_DEADLINE_S
    try:
        entries = index_entries(fetch(site_url(source, INDEX_PATH), MAX_INDEX_BYTES, stop_at))
    except FetchError as exc:
        outcome.failure = f"{INDEX_PATH}: {exc}"
        entries = []  # the history is still asked for: a site that did not answer may hold one
    try:
        for folder in filter(None, (into, keep)):
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        outcome.failure = f"cannot make {folder} ({shown(exc.strerror or str(exc))})"
        return outcome
    contents: dict[str, set] = {}
    for entry in entries:
        contents.setdefault(str(entry.get("name"))[:120], set()).add((str(entry.get("sha256")), str(entry.get("size"))))
    for entry in entries:
        name = str(entry.get("name"))[:120]
        problem = entry_problem(entry)
        if problem is None and len(contents[name]) > 1:
            problem = "the index names it twice with different contents; neither is restored"
        if name in outcome.restored or name in outcome.set_aside:
            continue  # the index names it twice: one answer for it, never both
        if problem is None:
            if platforms and RESULT_NAME.match(name)["platform"] not in platforms:
                continue
            if (into / name).exists():
                problem = "a file of that name is already there; it was kept"
            elif time.monotonic() > stop_at:  # a slow site, or an index naming thousands of files
                problem = f"not fetched: the restore ran past its {RESTORE_DEADLINE_S} s"
            else:
                problem = restore_one(source, entry, into, keep, stop_at)
        if problem is None:
            outcome.restored.append(name)
        else:
            outcome.set_aside[name] = problem
    if keep is not None:
        outcome.history_problem = restore_history(source, keep, stop_at)
        outcome.history = (keep / HISTORY_PATH).is_file()
        if outcome.history_problem:  # the report job's script refuses to publish over a history it could not read
            try:
                (keep / UNREAD_HISTORY_MARK).write_text(outcome.history_problem + "\n", encoding="utf-8")
            except OSError as exc:
                outcome.history_problem += f"; and {UNREAD_HISTORY_MARK} could not be written ({exc.strerror})"
    return outcome


UNREAD_HISTORY_MARK = "history.json.unread"


def restore_history(source: str, keep: Path, stop_at: float | None = None) -> str:
    """Copy the site's `history.json` into `keep` when it is there and is JSON. Returns "" when it was copied or the
    site has none (HTTP 404: the first run with a history), else why it could not be read: the site may hold a history
    that a publication now would replace with a new one, so the caller must not publish."""
    try:
        data = fetch(site_url(source, HISTORY_PATH), MAX_HISTORY_BYTES, stop_at)
        json.loads(data.decode("utf-8"))
    except FetchError as exc:
        return "" if exc.missing else str(exc)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return ""  # not JSON: no history to keep (`history` would only set it aside)
    try:
        write_bytes_atomically(keep / HISTORY_PATH, data)
    except OSError as exc:  # kept nowhere: a publication now would replace the site's history, so say why
        return f"{HISTORY_PATH} could not be written here ({shown(exc.strerror or str(exc))})"
    return ""
