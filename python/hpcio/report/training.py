"""The training study's tables from `hpcio train unet3d` documents: accelerator utilization
(AU) per target as the storage study (and MLPerf Storage) print it, with throughput in MiB/s
(DLIO prints MiB/s labelled "MB/s"), and whether the run kept to MLPerf's sizing rules."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import mean

from hpcio.report.grid import Grid, grid
from hpcio.report.plots import Plot, _legend, _new_figure, _style
from hpcio.results.schema import ResultDocument
from hpcio.units import format_bytes
from hpcio.workloads import shown
from hpcio.workloads.training.tables import sizing
from hpcio.workloads.training.utilization import PASS_AU_PERCENT

HEADER = ("Simulated GPU", "Samples", "Storage Type", "AU (%)", "MiB/s", "Result")
#: What the table compares with: DLIO's definitions, not DLIO (docs/training.md says why).
NOT_DLIO = (
    "AU, samples/s and throughput follow DLIO 2.0.0's definitions over hpcio's own step "
    "times; DLIO itself was not run beside it (it needs TensorFlow, PyTorch and DALI)"
)


def is_training(doc: ResultDocument) -> bool:
    """A training run's document (unet3d, cosmoflow, resnet50, bert): its family's, with a
    read phase (a datagen's writes only)."""
    reads = any(p.phase == "read" for p in doc.phases)
    return shown.family_of(doc.workload) == "training" and reads


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
    rows: list[tuple[str, ...]] = []
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
            _samples(params, measured),
            storage_type(doc),
            f"{au:.2f}",
            f"{mib:,.1f}",
            _result(_passed(measured, au), broken_sizing(doc)),
        ))  # fmt: skip
    return rows


def _samples(params: dict, measured: list[dict]) -> str:
    """The data set's samples and scale; with the files they are in where a file holds
    several (resnet50, bert: their --samples counts files). Documents before the count was
    kept show --samples."""
    scale = params.get("scale", "full")
    files = params.get("samples", "?")
    samples = next((m["data_set_samples"] for m in measured if m.get("data_set_samples")), None)
    if samples is None or samples == files:
        return f"{files} ({scale})"
    return f"{samples:,} in {files} files ({scale})"


def _result(passed: bool, broken: Sequence[str]) -> str:
    """MLPerf's verdict: pass at the workload's AU mark only for a run of a valid size."""
    if not passed:
        return "fail"
    return "invalid size" if broken else "pass"


def broken_sizing(doc: ResultDocument) -> list[str]:
    """MLPerf Storage's sizing rules the run breaks (none: a valid size, or not measured)."""
    measured = _metrics(doc)
    if not measured:
        return []
    samples = int(doc.params["samples"])
    mean_bytes = doc.cache.data_set_bytes / max(samples, 1)
    ram = doc.cache.node_ram_bytes * doc.nodes
    return sizing(samples, mean_bytes, int(measured[-1]["steps_per_epoch"]), ram)


def training_grids(docs: Sequence[ResultDocument]) -> list[Grid]:
    """The MLPerf Storage table of the training runs among `docs`, their sizing and I/O wait
    lines as its notes (none without training runs)."""
    rows = au_rows(docs)
    if not rows:
        return []
    title = "MLPerf Storage: accelerator utilization (AU) per training run"
    return [grid(title, HEADER, [list(r) for r in rows], *sizing_lines(docs))]


def _passed(measured: list[dict], au: float) -> bool:
    """The run's own pass mark (cosmoflow's is 70 %), else unet3d's 90 %."""
    marks = [m["au_passed"] for m in measured if "au_passed" in m]
    return all(marks) if marks else au >= PASS_AU_PERCENT


def au_table(docs: Sequence[ResultDocument]) -> str:
    """One row per training run, in Markdown: the storage study's table and pass or fail at
    AU >= 90 % ("invalid size" for a run above it that breaks MLPerf's sizing rules)."""
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
        broken = broken_sizing(doc)
        if broken:
            lines.append("not a valid MLPerf Storage size: " + "; ".join(broken))
        if doc.cache.reads_may_hit_page_cache:
            lines.append(
                f"the data set ({format_bytes(doc.cache.data_set_bytes)}) fits in the page "
                "cache: epochs may read RAM, not the storage"
            )
    if any(au_percent(doc) is not None for doc in docs if is_training(doc)):
        lines.append(NOT_DLIO)
    return lines


def training_plots(docs: Sequence[ResultDocument]) -> list[Plot]:
    """AU and the per-step I/O wait (p50, p90, p99) against ranks when the runs differ in
    ranks, else against their targets; the pass mark drawn across."""
    runs = [d for d in docs if is_training(d) and au_percent(d) is not None]
    if not runs:
        return []
    by_ranks = len({d.ranks for d in runs}) > 1
    labels = sorted({_x_label(d, by_ranks) for d in runs}, key=lambda x: _x_order(x, by_ranks))
    series: dict[str, list[ResultDocument]] = {}
    for doc in runs:
        series.setdefault(_series_label(doc, by_ranks), []).append(doc)
    xlabel = "ranks (simulated accelerators)" if by_ranks else "target"
    return [
        Plot("training-au", f"accelerator utilization vs {xlabel}",
             _au_figure(series, labels, by_ranks, xlabel)),
        Plot("training-io-wait", f"per-step I/O wait vs {xlabel}",
             _wait_figure(series, labels, by_ranks, xlabel)),
    ]  # fmt: skip


def _x_label(doc: ResultDocument, by_ranks: bool) -> str:
    return str(doc.ranks) if by_ranks else storage_type(doc)


def _x_order(label: str, by_ranks: bool) -> tuple[int, str]:
    return (int(label), "") if by_ranks else (0, label)


def _series_label(doc: ResultDocument, by_ranks: bool) -> str:
    p = doc.params
    where = f", {storage_type(doc)}" if by_ranks else ""
    return f"{p.get('accelerator', '?')}, {p.get('samples', '?')} samples{where}"


def _au_figure(series, labels, by_ranks, xlabel):
    figure, axes = _new_figure()
    for index, (label, chosen) in enumerate(series.items()):
        points = sorted((labels.index(_x_label(d, by_ranks)), au_percent(d)) for d in chosen)
        axes.plot([x for x, _ in points], [y for _, y in points], label=label,
                  **_style(index, "-"))  # fmt: skip
    axes.axhline(PASS_AU_PERCENT, color="grey", linestyle=":", label="pass (90 %)")
    axes.set_ylim(0, 105)
    axes.set_ylabel("AU (%)")
    _categorical(axes, labels, xlabel)
    return figure


def _wait_figure(series, labels, by_ranks, xlabel):
    figure, axes = _new_figure()
    for index, (label, chosen) in enumerate(series.items()):
        for quantile, linestyle in (("p50", "-"), ("p90", "--"), ("p99", ":")):
            points = sorted(
                (labels.index(_x_label(d, by_ranks)), _wait_ms(d, quantile)) for d in chosen
            )
            axes.plot([x for x, _ in points], [y for _, y in points],
                      label=f"{label} {quantile}", **_style(index, linestyle))  # fmt: skip
    axes.set_ylabel("I/O wait per step (ms)")
    _categorical(axes, labels, xlabel)
    return figure


def _wait_ms(doc: ResultDocument, quantile: str) -> float:
    waits = [m["io_wait"] for m in _metrics(doc) if m.get("io_wait", {}).get("steps")]
    return mean(w[f"{quantile}_s"] for w in waits) * 1e3 if waits else 0.0


def _categorical(axes, labels, xlabel) -> None:
    axes.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize="small")
    axes.set_xlabel(xlabel)
    axes.grid(True, which="major", alpha=0.3)
    _legend(axes)
