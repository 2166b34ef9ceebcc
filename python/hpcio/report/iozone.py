"""IOzone's table (KiB/s per file size, record size and test) from `hpcio profile iozone` runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hpcio.report.grid import Grid, grid
from hpcio.report.plots import Plot
from hpcio.report.points import describe, point_key, spec_fields, varying_fields
from hpcio.report.pooled import headline_bandwidth_mib_s
from hpcio.results.schema import ResultDocument
from hpcio.workloads import shown

_WIDTH = 14
#: Fields an IOzone sweep varies itself: its rows (file and record size) and its tests.
_SWEPT = ("size_per_rank_bytes", "transfer_bytes", "test", "phases", "random_offsets", "verify")


def is_iozone(doc: ResultDocument) -> bool:
    return shown.family_of(doc.workload) == "iozone"


def _test_and_phase(doc: ResultDocument) -> tuple[str, str]:
    (phase,) = doc.run["phases"]
    return str(doc.params["test"]), str(phase)


def iozone_rates(docs: Sequence[ResultDocument]) -> dict[tuple[int, int], dict[str, float]]:
    """(file bytes, record bytes) -> test -> KiB/s, the headline (bytes over the mean phase
    time, over all iterations of every document where a test of a point ran more than once)."""
    runs: dict[tuple[int, int], dict[str, list[ResultDocument]]] = {}
    for doc in docs:
        if not is_iozone(doc):
            continue
        test, phase = _test_and_phase(doc)
        if phase not in doc.summary:
            continue
        point = (int(doc.params["size_per_rank_bytes"]), int(doc.params["transfer_bytes"]))
        runs.setdefault(point, {}).setdefault(test, []).append(doc)
    return {
        point: {
            test: headline_bandwidth_mib_s(chosen, _test_and_phase(chosen[0])[1]) * 1024
            for test, chosen in by_test.items()
        }
        for point, by_test in runs.items()
    }


def iozone_grids(docs: Sequence[ResultDocument]) -> list[Grid]:
    """IOzone's tables of the iozone runs among `docs`, one per configuration."""
    configs: dict[object, list[ResultDocument]] = {}
    for doc in docs:
        if is_iozone(doc):
            configs.setdefault(point_key(doc.run, without=_SWEPT), []).append(doc)
    every = [doc.run for chosen in configs.values() for doc in chosen]
    varying = [name for name in varying_fields(every) if name not in _SWEPT]
    tables = []
    for chosen in configs.values():
        title = "KiB/s per file (IOzone's table; files per rank, ranks add up)"
        if varying:
            title += ": " + describe(spec_fields(chosen[0].run), varying)
        tables.append(_one_grid(title, chosen))
    return tables


def iozone_table(docs: Sequence[ResultDocument]) -> str:
    """IOzone's layout: one line per (file size, record size) in kB, one column per test; one
    table per configuration (target, ranks, --direct...), titled by what differs."""
    return "\n\n".join(_one_table(found) for found in iozone_grids(docs))


def _one_table(found: Grid) -> str:
    """A grid in IOzone's own fixed-width layout."""
    widths = (12, 8, *(_WIDTH for _ in shown.IOZONE_TESTS))
    lines = [found.title]
    for cells in (found.columns, *found.rows):
        lines.append("".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True)))
    lines.extend(f"Note: {note}" for note in found.notes)
    return "\n".join(lines)


def _one_grid(title: str, docs: Sequence[ResultDocument]) -> Grid:
    rows = []
    for (file_bytes, record_bytes), by_test in sorted(iozone_rates(docs).items()):
        rates = [f"{by_test[t]:.0f}" if t in by_test else "-" for t in shown.IOZONE_TESTS]
        rows.append([str(file_bytes >> 10), str(record_bytes >> 10), *rates])
    note = ""
    counts = Counter(
        (doc.params["size_per_rank_bytes"], doc.params["transfer_bytes"], doc.params["test"])
        for doc in docs
    )
    most = max(counts.values(), default=1)
    if most > 1:
        note = (
            f"some tests ran up to {most} times (documents of the same point): their "
            "KiB/s is the mean over all their iterations"
        )
    return grid(title, ("kB", "reclen", *shown.IOZONE_TESTS), rows, note)


def iozone_heatmap(docs: Sequence[ResultDocument]) -> Plot:
    """IOzone's surface as six heat maps (one per test): file size against record size, the
    colour the rate in KiB/s on a log scale shared by all six."""
    import numpy as np
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    rates = iozone_rates(docs)
    files = sorted({f for f, _ in rates})
    records = sorted({r for _, r in rates})
    values = [v for by_test in rates.values() for v in by_test.values() if v > 0]
    norm = LogNorm(vmin=min(values), vmax=max(values)) if values else None
    figure = Figure(figsize=(13, 7.5), layout="constrained")
    axes_grid = figure.subplots(2, 3, sharex=True, sharey=True)
    image = None
    for axes, test in zip(axes_grid.ravel(), shown.IOZONE_TESTS, strict=True):
        grid = np.full((len(files), len(records)), np.nan)
        for (f, r), by_test in rates.items():
            if test in by_test and by_test[test] > 0:
                grid[files.index(f), records.index(r)] = by_test[test]
        image = axes.imshow(grid, origin="lower", aspect="auto", norm=norm, cmap="viridis")
        axes.set_title(test)
        axes.set_xticks(range(len(records)), [_kib(r) for r in records], rotation=90)
        axes.set_yticks(range(len(files)), [_kib(f) for f in files])
    for axes in axes_grid[-1]:
        axes.set_xlabel("record size")
    for axes in axes_grid[:, 0]:
        axes.set_ylabel("file size")
    if image is not None:
        figure.colorbar(image, ax=axes_grid, label="KiB/s")
    return Plot("iozone", "IOzone: KiB/s per file size and record size", figure)


def _kib(size: int) -> str:
    from hpcio.units import format_bytes

    return format_bytes(size).replace(" ", "")
