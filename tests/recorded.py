"""The schema_version 1 documents recorded in tests/data/v1 (README.md there says how each was
made): report, compare, cost and plot tests read them instead of running sweeps."""

from __future__ import annotations

import json
from pathlib import Path

V1 = Path(__file__).resolve().parent / "data" / "v1"
#: The file:// targets the recordings ran on (gone now; the documents name them).
T1 = Path("/tmp/hpcio-v1/t1")
T2 = Path("/tmp/hpcio-v1/t2")


def selected(source: Path, out: Path, **run_fields: object) -> Path:
    """Write to `out` the documents of `source` whose run matches every field (a tuple: any of
    its values), in their recorded order and unchanged; fails if none does."""

    def matches(run: dict) -> bool:
        return all(
            run.get(key) in (want if isinstance(want, tuple) else (want,))
            for key, want in run_fields.items()
        )

    lines = [line for line in source.read_text().splitlines() if matches(json.loads(line)["run"])]
    assert lines, f"no document in {source} matches {run_fields}"
    out.write_text("\n".join(lines) + "\n")
    return out
