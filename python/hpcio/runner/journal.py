"""Uploads a dead or interrupted run left behind, found in the engine's upload journal and
aborted by whoever outlives the run: the launching hpcio, or `hpcio clean`."""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hpcio import _engine
from hpcio.runner.processes import alive

#: How long requests a dead rank already sent may take to reach the store.
_IN_FLIGHT_GRACE_S = 2.0


def journal_dir() -> Path:
    """$HPCIO_JOURNAL_DIR, else ~/.cache/hpcio/uploads (local to the node that ran rank 0)."""
    configured = os.environ.get("HPCIO_JOURNAL_DIR")
    if configured:
        return Path(configured)
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return cache / "hpcio" / "uploads"


def set_up() -> str:
    """Turn the journal on for this process and every rank it starts (the environment carries
    it from the launcher to the ranks), under this job's id; returns the job id."""
    os.environ.setdefault("HPCIO_JOURNAL_DIR", str(journal_dir()))
    return os.environ.setdefault("HPCIO_JOB", uuid.uuid4().hex)


def engine_options() -> tuple[Path | None, str]:
    """(journal_dir, job) for this process's engine Targets: what set_up() handed down, or
    no journal (None) in a process that no launcher set up."""
    configured = os.environ.get("HPCIO_JOURNAL_DIR")
    return (Path(configured) if configured else None), os.environ.get("HPCIO_JOB", "")


@dataclass(frozen=True, slots=True)
class Entry:
    path: Path
    url: str
    key: str
    upload_id: str
    job: str
    pid: int


def entries(url: str) -> list[Entry]:
    """Journal entries for uploads to `url` still open, oldest first."""
    found = []
    directory = journal_dir()
    if not directory.is_dir():
        return []
    for path in sorted(directory.glob("upload-*.json"), key=lambda p: p.stat().st_mtime):
        try:
            record = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if record.get("url") == url:
            found.append(Entry(path, url, record["key"], record["id"], record.get("job", ""),
                               int(record.get("pid", 0))))  # fmt: skip
    return found


def abort_abandoned(url: str, options: Mapping[str, str], job: str | None = None) -> list[str]:
    """Abort the uploads to `url` that runs left open: those of `job`, or with no job given
    those whose process is gone. Returns the keys aborted."""
    targets = [e for e in entries(url) if (e.job == job if job else not alive(e.pid))]
    if not targets:
        return []
    target = _engine.Target(url, options=dict(options))
    aborted = []
    for entry in targets:
        try:
            target.abort_upload(entry.key, entry.upload_id)
        except OSError:
            continue  # still listed: a later `hpcio clean` tries again
        aborted.append(entry)
    if aborted:
        # A part or block a dead rank had already sent can reach the store after the abort
        # (on Azure it even stages a new uncommitted block list), so abort once more after
        # the in-flight requests have landed, as AWS advises for AbortMultipartUpload.
        time.sleep(_IN_FLIGHT_GRACE_S)
        for entry in aborted:
            with contextlib.suppress(OSError):  # S3: NoSuchUpload, it is gone already
                target.abort_upload(entry.key, entry.upload_id)
            entry.path.unlink(missing_ok=True)
    return [entry.key for entry in aborted]
