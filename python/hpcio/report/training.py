"""The training study's tables from `hpcio train unet3d` documents: accelerator utilization
(AU) per target as the storage study (and MLPerf Storage) print it, with throughput in MiB/s
(DLIO prints MiB/s labelled "MB/s"), and whether the run kept to MLPerf's sizing rules."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import mean

from hpcio.results.schema import ResultDocument
from hpcio.units import format_bytes
from hpcio.workloads import registry
from hpcio.workloads.training.unet3d import Unet3d, sizing
from hpcio.workloads.training.utilization import PASS_AU_PERCENT

HEADER = ("Simulated GPU", "Samples", "Storage Type", "AU (%)", "MiB/s", "Result")


def is_training(doc: ResultDocument) -> bool:
    return doc.workload == Unet3d.name and registry.family_of(doc.workload) == "training"


def _metrics(doc: ResultDocument) -> list[dict]:
    return [p.metrics for p in doc.phases if p.phase == "read" and p.metrics]


def au_percent(doc: ResultDocument) -> float | None:
    """The run's AU: the mean over its iterations (each DLIO's mean over epochs)."""
    found = [m["au_percent"] for m in _metrics(doc) if "au_percent" in m]
    return mean(found) if found else None


def storage_type(doc: ResultDocument) -> str:
    """The target as the study names it: its kind and, on POSIX, its file system."""
    url = str(doc.run["target"]["url"]) if isinstance(doc.run.get("target"), dict) else ""
    kind = url.split("://", 1)[0] if "://" in url else "file"
    fs = (doc.storage or {}).get("file_system")
    return f"{kind} ({fs}) {url}" if fs else f"{kind} {url}"


def au_rows(docs: Sequence[ResultDocument]) -> list[tuple[str, ...]]:
    rows = []
    for doc in docs:
        if not is_training(doc):
            continue
        measured = _metrics(doc)
        au = au_percent(doc)
        if au is None:
            continue
        params = doc.params
        mib = mean(m["throughput_mib_per_s"] for m in measured)
        rows.append((
            f"{doc.ranks} x {params.get('accelerator', '?')}",
            f"{params.get('samples', '?')} ({params.get('scale', 'full')})",
            storage_type(doc),
            f"{au:.2f}",
            f"{mib:,.1f}",
            "pass" if au >= PASS_AU_PERCENT else "fail",
        ))  # fmt: skip
    return rows


def au_table(docs: Sequence[ResultDocument]) -> str:
    """One row per training run, in Markdown: the storage study's table and pass or fail at
    AU >= 90 %."""
    rows = au_rows(docs)
    if not rows:
        return ""
    widths = [max(len(r[i]) for r in (HEADER, *rows)) for i in range(len(HEADER))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in (HEADER, *rows)
    ]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(lines)


def io_wait_line(doc: ResultDocument) -> str:
    """The per-step I/O wait of the last iteration, in ms percentiles."""
    waits = [m["io_wait"] for m in _metrics(doc) if m.get("io_wait", {}).get("steps")]
    if not waits:
        return ""
    w = waits[-1]
    return (
        f"I/O wait per step ({w['steps']} steps, first of each epoch left out): "
        f"p50 {w['p50_s'] * 1e3:.2f} ms, p90 {w['p90_s'] * 1e3:.2f} ms, "
        f"p99 {w['p99_s'] * 1e3:.2f} ms, max {w['max_s'] * 1e3:.2f} ms"
    )


def sizing_lines(docs: Sequence[ResultDocument]) -> list[str]:
    """For each training run: its I/O wait, and MLPerf's sizing rules it breaks (a run that
    breaks them is not a valid MLPerf Storage result), and a data set the page cache holds."""
    lines = []
    for doc in docs:
        if not is_training(doc):
            continue
        measured = _metrics(doc)
        wait = io_wait_line(doc)
        if wait:
            lines.append(wait)
        if not measured:
            continue
        samples = int(doc.params["samples"])
        mean_bytes = doc.cache.data_set_bytes / max(samples, 1)
        ram = doc.cache.node_ram_bytes * doc.nodes
        broken = sizing(samples, mean_bytes, int(measured[-1]["steps_per_epoch"]), ram)
        if broken:
            lines.append("not a valid MLPerf Storage size: " + "; ".join(broken))
        if doc.cache.reads_may_hit_page_cache:
            lines.append(
                f"the data set ({format_bytes(doc.cache.data_set_bytes)}) fits in the page "
                "cache: epochs may read RAM, not the storage"
            )
    return lines
