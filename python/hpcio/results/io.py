"""Result documents on disk: JSON Lines, one document per run; appending makes sweeps resumable."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from hpcio.errors import ResultsError
from hpcio.results import v1
from hpcio.results.check import DocumentError, check_record
from hpcio.results.schema import KIND, READABLE_VERSIONS, ResultDocument

#: -o - : documents go to stdout as JSON Lines.
STDOUT = "-"
#: With -o - under hpcio's own launch, rank 0 keeps the documents in this file (the user's
#: own, mode 0600) and the launching hpcio prints them once the job has ended: a rank's stdout
#: goes through mpiexec, which drops what is still on its way when the job is stopped.
SPOOL_VARIABLE = "HPCIO_STDOUT_SPOOL"


def destination(path: str | None) -> str | None:
    """Where this process writes the documents that -o `path` asks for."""
    if path == STDOUT and os.environ.get(SPOOL_VARIABLE):
        return os.environ[SPOOL_VARIABLE]
    return path


def print_spooled(spool: str) -> None:
    """Copy the documents rank 0 spooled to stdout (without the padding of in-place rewrites)."""
    try:
        text = Path(spool).read_text(encoding="utf-8")
    except OSError:
        return
    for line in text.splitlines():
        if line.strip():
            sys.stdout.write(line.rstrip() + "\n")
    sys.stdout.flush()


def append(path: str | os.PathLike[str], document: ResultDocument) -> None:
    """Append one document as one line, flushed and fsynced so a killed sweep loses nothing."""
    line = json.dumps(document.to_dict(), separators=(",", ":")) + "\n"
    if os.fspath(path) == STDOUT:
        # The real stdout: with -o -, everything hpcio says goes to stderr instead.
        stdout = sys.__stdout__
        assert stdout is not None  # None only in an embedded interpreter, never the CLI
        stdout.write(line)
        stdout.flush()
        return
    try:
        _drop_partial_last_line(path)
        with open(path, "a", encoding="utf-8") as out:
            out.write(line)
            out.flush()
            os.fsync(out.fileno())
    except OSError as e:
        raise ResultsError(f"cannot write results to {path}: {e.strerror or e}") from None


class RunLine:
    """The line of a results file that one run owns, rewritten in place (and fsynced) after
    each iteration with the document of the iterations so far (status "interrupted") and at
    the end with the complete one. A run stopped at any point, even by SIGKILL, leaves its
    finished iterations in the file; only the iteration running then is lost."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._start: int | None = None
        self._end: int | None = None
        #: -o -: the document so far, printed once (stdout cannot be rewritten in place).
        self._held: ResultDocument | None = None

    def write(self, document: ResultDocument) -> None:
        if self.path == STDOUT:
            self._held = document
            if document.status == "complete":
                self.release()
            return
        data = json.dumps(document.to_dict(), separators=(",", ":")).encode()
        if self._start is not None and self._end is not None:
            # Never shorter than the line it replaces (JSON ignores the spaces), so one pwrite
            # replaces it whole and no fragment of it stays behind.
            data = data.ljust(self._end - self._start - 1)
        data += b"\n"
        try:
            if self._start is None:
                _drop_partial_last_line(self.path)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o666)
            try:
                size = os.fstat(fd).st_size
                if self._start is None or size != self._end:
                    # The first write, or someone appended after our line: ours goes last.
                    self._start = size
                os.pwrite(fd, data, self._start)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            raise ResultsError(f"cannot write results to {self.path}: {e.strerror}") from None
        self._end = self._start + len(data)

    def kept(self) -> ResultDocument | None:
        """The interrupted document in the file now (read back: a signal may have come
        between the write and its bookkeeping)."""
        if self.path == STDOUT:
            return self._held
        return None if self._start is None else interrupted_since(self.path, self._start)

    def release(self) -> None:
        """-o -: print the document held so far, once."""
        if self._held is not None:
            append(STDOUT, self._held)
            self._held = None


def partial_path(path: str | os.PathLike[str]) -> Path:
    """Where hpcio 0.1 before this file format kept a run's finished iterations aside."""
    return Path(f"{os.fspath(path)}.partial")


def recover_partial(path: str | os.PathLike[str]) -> bool:
    """Append the finished iterations (status "interrupted") that an earlier hpcio left in
    `FILE.partial`; hpcio now keeps them in FILE itself.

    Returns:
        True if there was such a file.
    """
    partial = partial_path(path)
    try:
        record = json.loads(partial.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    append(path, ResultDocument.from_dict(record))
    partial.unlink(missing_ok=True)
    return True


def interrupted_since(path: str | os.PathLike[str], offset: int) -> ResultDocument | None:
    """The last document after byte `offset` of `path` if it is an interrupted run's."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue  # a line cut short by a kill
        if not isinstance(record, dict) or record.get("status") != "interrupted":
            return None
        try:
            return ResultDocument.from_dict(record)
        except (KeyError, TypeError, ValueError):
            return None
    return None


def _drop_partial_last_line(path: str | os.PathLike[str]) -> None:
    """A run killed mid-append leaves a last line without its newline; appending after it
    would glue two documents together, so cut it off (it was never a whole document)."""
    try:
        with open(path, "rb+") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            tail = min(size, 1 << 20)
            while True:
                f.seek(size - tail)
                cut = f.read(tail).rfind(b"\n")
                if cut >= 0:
                    f.truncate(size - tail + cut + 1)
                    return
                if tail == size:
                    f.truncate(0)
                    return
                tail = min(size, tail * 2)
    except FileNotFoundError:
        return


def read_records(path: str | os.PathLike[str]) -> Iterator[dict]:
    """Every document in a JSON Lines file, as plain dicts of the current schema (older
    ones upgraded).

    Raises:
        ResultsError: the file is missing, or a line is not an hpcio result document.
    """
    for _, record in _numbered_records(path):
        yield v1.upgrade(record) if record["schema_version"] == 1 else record


def _numbered_records(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ResultsError(f"cannot read results {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise ResultsError(f"{path}: not a text file of hpcio results") from None
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            # A sweep killed mid-write leaves at most a partial last line: the start of a
            # document, with no newline after it. Skip only that.
            if number == len(lines) and line.startswith("{") and not text.endswith("\n"):
                continue
            raise ResultsError(
                f"{path}:{number}: not an hpcio result document (not JSON: {e.msg})"
            ) from None
        if not isinstance(record, dict) or record.get("kind") != KIND:
            raise ResultsError(f"{path}:{number}: not an hpcio result document")
        if record.get("schema_version") not in READABLE_VERSIONS:
            raise ResultsError(
                f"{path}:{number}: schema version {record.get('schema_version')} "
                f"(this hpcio reads {', '.join(map(str, READABLE_VERSIONS))})"
            )
        yield number, record


def done_runs(path: str | os.PathLike[str]) -> list[dict]:
    """The `run` records of the complete documents in `path` (for resuming a sweep)."""
    if os.fspath(path) == STDOUT or not Path(path).exists() or Path(path).stat().st_size == 0:
        return []
    return [r["run"] for r in read_records(path) if r.get("status", "complete") == "complete"]


def read(path: str | os.PathLike[str]) -> list[ResultDocument]:
    """Every document in a JSON Lines file, checked against the schema.

    Raises:
        ResultsError: the file is missing, or a line is not a whole, well-typed hpcio result
            document (one line naming the file, the line and the field).
    """
    documents = []
    for number, record in _numbered_records(path):
        if record["schema_version"] == 1:
            record = v1.upgrade(record)
        try:
            check_record(record)
        except DocumentError as e:
            raise ResultsError(f"{path}:{number}: not a valid hpcio result document: {e}") from None
        documents.append(ResultDocument.from_dict(record))
    return documents
