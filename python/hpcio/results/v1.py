"""Schema version 1 -> 2. Version 1 recorded a flat `run` (pattern, profile and every pattern
option side by side); version 2 records the workload's name and its own `params`. Version 1
is history and no longer changes, so its fields are listed here as they were written."""

from __future__ import annotations

from typing import Any

#: Version 1's settings common to every run (the rest of `run` were the pattern's options).
COMMON = (
    "target", "ranks", "iterations", "seed", "phases", "verify", "keep", "direct", "fsync",
    "drop_caches", "ranks_per_node",
)  # fmt: skip
_COMMON_DEFAULTS = {"drop_caches": False, "ranks_per_node": None}
_EVERY = ("size_per_rank_bytes", "transfer_bytes", "in_flight", "reorder")
_SHARED = (*_EVERY, "segments")
_PER_RANK = {
    "files_per_rank": 1,
    "random_offsets": False,
    "duration_s": None,
    "rwmix_read_pct": None,
}
#: Version 1 moved every byte through the engine (posix; --api came later).
_API = {"api": "posix", "collective": False, "hints": [], "chunk_bytes": None}
#: Version 1's pattern -> the options that meant something to it (with the defaults version
#: 1 left out of documents).
_PARAMS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "sfsw": ((*_SHARED, "gather_chunk_bytes"), {}),
    "sfmw": (_SHARED, {}),
    "sfmr": ((*_SHARED, "read_scope"), {}),
    "mfmw": (_EVERY, _PER_RANK),
    "mfmr": (_EVERY, _PER_RANK),
}
#: How version 1 marked an IOzone test's run (`profile`: "iozone:random read").
IOZONE_PREFIX = "iozone:"


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """A version 1 document as version 2 (a new dict; `record` is left as it is)."""
    out = dict(record)
    if isinstance(record.get("run"), dict):  # else results/check.py names what is wrong
        out["schema_version"] = 2
        out["run"] = upgrade_run(record["run"])
    return out


def upgrade_run(run: dict[str, Any]) -> dict[str, Any]:
    """A version 1 `run` record as version 2: workload, params and the common settings."""
    if "workload" in run:
        return run
    pattern = str(run.get("pattern"))
    names, defaults = _PARAMS.get(pattern, (tuple(k for k in run if k not in COMMON), {}))
    params = {**_API, **defaults, **{k: run[k] for k in (*names, *defaults) if k in run}}
    profile = run.get("profile")
    workload = pattern
    if isinstance(profile, str) and profile.startswith(IOZONE_PREFIX):
        workload = "iozone"
        params["test"] = profile.removeprefix(IOZONE_PREFIX)
    elif profile:
        workload = str(profile)
    common = {**_COMMON_DEFAULTS, **{k: run[k] for k in COMMON if k in run}}
    return {"workload": workload, "params": params, **common}
