import csv
import dataclasses
import io
import json

import pytest
import recorded
from hpcio.results import io as results_io

MiB = 1 << 20


def compare(hpcio, *args, fmt="json"):
    done = hpcio("compare", *args, "--format", fmt)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return json.loads(done.stdout) if fmt == "json" else done.stdout


def by_point(docs, metric="bandwidth_mib_s"):
    """{(pattern, phase, size per rank, ranks): (stats, iterations)}; later documents win.
    Bandwidth's mean is the headline: bytes of an iteration over the mean phase time."""
    found = {}
    for doc in docs:
        for phase, summary in doc.summary.items():
            key = (doc.workload, phase, doc.params["size_per_rank_bytes"], doc.ranks)
            stats = getattr(summary, metric)
            if metric == "bandwidth_mib_s":
                moved = [p.bytes_total for p in doc.phases if p.phase == phase]
                headline = sum(moved) / len(moved) / MiB / summary.seconds.mean
                stats = dataclasses.replace(stats, mean=headline)
            found[key] = (stats, summary.iterations)
    return found


def key_of(point):
    spec = (point["a"] or point["b"])["spec"]
    return (point["workload"], point["phase"], spec["size_per_rank_bytes"], spec["ranks"])


def scaled(path, out, factor, phase):
    """A copy of real documents with `phase`'s bandwidth statistics (not its stddev) scaled
    by `factor`, and its phase times by 1 / `factor` (the headline is bytes over time)."""
    lines = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        stats = record["summary"][phase]["bandwidth_mib_s"]
        seconds = record["summary"][phase]["seconds"]
        for name in ("mean", "median", "min", "max"):
            stats[name] *= factor
            seconds[name] /= factor
        for figures in record["phases"]:
            if figures["phase"] == phase:
                figures["phase_time_s"] /= factor
        lines.append(json.dumps(record))
    out.write_text("\n".join(lines) + "\n")
    return out


def test_same_points_side_by_side_with_ratio_and_spread(results, hpcio):
    a, b = by_point(results_io.read(results.a)), by_point(results_io.read(results.again))
    out = compare(hpcio, results.a, results.again)
    assert out["metric"] == "bandwidth" and out["unit"] == "MiB/s"
    assert sorted(key_of(p) for p in out["points"]) == sorted(a) == sorted(b)
    for point in out["points"]:
        (sa, ia), (sb, ib) = a[key_of(point)], b[key_of(point)]
        assert (point["a"]["mean"], point["a"]["stddev"], point["a"]["iterations"]) == (
            sa.mean,
            sa.stddev,
            ia,
        )
        assert (point["b"]["mean"], point["b"]["stddev"], point["b"]["iterations"]) == (
            sb.mean,
            sb.stddev,
            ib,
        )
        assert point["ratio"] == sb.mean / sa.mean
        beyond = abs(sb.mean - sa.mean) > sa.stddev + sb.stddev
        assert point["difference"] == ("beyond spread" if beyond else "within spread")
    assert sum(out["counts"].values()) == len(out["points"]) == 8


def test_a_file_against_itself_is_within_spread(results, hpcio):
    out = compare(hpcio, results.a, results.a)
    assert {p["difference"] for p in out["points"]} == {"within spread"}
    assert {p["ratio"] for p in out["points"]} == {1.0}


def test_difference_beyond_spread_is_marked(results, hpcio, tmp_path):
    faster = scaled(results.a, tmp_path / "faster.jsonl", 10.0, "write")
    out = compare(hpcio, results.a, faster)
    for point in out["points"]:
        assert point["ratio"] == pytest.approx(10.0 if point["phase"] == "write" else 1.0)
        # 9 x mean > 2 x stddev holds for any two or three positive figures.
        expected = "beyond spread" if point["phase"] == "write" else "within spread"
        assert point["difference"] == expected
    text = compare(hpcio, results.a, faster, fmt="md")
    assert "- points: 4 beyond spread, 4 within spread" in text
    rows = [line for line in text.splitlines() if line.startswith("| file://")]
    assert len(rows) == 8
    assert sum(row.endswith("| beyond spread |") for row in rows) == 4


def test_markdown_rows(results, hpcio):
    a, b = by_point(results_io.read(results.a)), by_point(results_io.read(results.again))
    text = compare(hpcio, results.a, results.again, fmt="md")
    lines = text.splitlines()
    assert lines[:4] == [
        f"- A: {results.a}",
        f"- B: {results.again}",
        "- metric: bandwidth (MiB/s); B/A > 1 means B faster",
        "- beyond spread: |B mean - A mean| > A stddev + B stddev (population stddev over "
        "iterations); a run of one iteration has no spread",
    ]
    header = (
        "| Target | Ranks | Size Per Proc | Transfer | A mean (MiB/s) | "
        "B mean (MiB/s) | B/A | A stddev (MiB/s) | B stddev (MiB/s) | Difference |"
    )
    titles = [line[4:] for line in lines if line.startswith("### ")]
    assert titles == ["sfmw write", "sfmw read", "mfmw write", "mfmw read"]
    assert lines.count(header) == 4
    url = results.t1.as_uri()
    for (pattern, phase, size, ranks), (sa, _) in a.items():
        sb, _ = b[(pattern, phase, size, ranks)]
        beyond = abs(sb.mean - sa.mean) > sa.stddev + sb.stddev
        row = (
            f"| {url} | {ranks} | {size // MiB} MiB | 256 KiB | {sa.mean:.3f} | {sb.mean:.3f} | "
            f"{sb.mean / sa.mean:.3f} | {sa.stddev:.3f} | {sb.stddev:.3f} | "
            f"{'beyond spread' if beyond else 'within spread'} |"
        )
        table = lines.index(f"### {pattern} {phase}")
        assert row in lines[table : table + 6]


def test_csv(results, hpcio):
    rows = list(csv.reader(io.StringIO(compare(hpcio, results.a, results.again, fmt="csv"))))
    assert rows[0][:3] == ["table", "Target", "Ranks"]
    assert rows[0][-1] == "Difference"
    assert len(rows) == 1 + 8
    assert {r[0] for r in rows[1:]} == {"sfmw write", "sfmw read", "mfmw write", "mfmw read"}


def test_latency_metric_is_the_mean_phase_time(results, hpcio):
    a = by_point(results_io.read(results.a), "seconds")
    out = compare(hpcio, results.a, results.again, "--metric", "latency")
    assert out["unit"] == "s"
    for point in out["points"]:
        assert point["a"]["mean"] == a[key_of(point)][0].mean
    text = compare(hpcio, results.a, results.again, "--metric", "latency", fmt="md")
    assert "- metric: latency (s); B/A > 1 means B slower" in text


def test_points_in_one_file_only(results, hpcio):
    out = compare(hpcio, results.a, results.single)
    only_a = [p for p in out["points"] if p["difference"] == "only in A"]
    both = [p for p in out["points"] if p["a"] and p["b"]]
    assert len(only_a) == 6 and all(p["b"] is None and p["ratio"] is None for p in only_a)
    assert [(p["workload"], key_of(p)[2]) for p in both] == [("mfmw", MiB)] * 2
    # B ran one iteration: no spread to judge a difference by.
    assert {p["difference"] for p in both} == {"no spread (1 iteration)"}
    swapped = compare(hpcio, results.single, results.a)
    assert swapped["counts"]["only in B"] == 6


def test_different_targets_match_only_when_ignored(results, hpcio):
    out = compare(hpcio, results.a, results.t2_file)
    assert out["counts"]["only in A"] == 8 and out["counts"]["only in B"] == 4
    assert "no point is in both files" in compare(hpcio, results.a, results.t2_file, fmt="md")
    out = compare(hpcio, results.a, results.t2_file, "--ignore", "target")
    assert out["ignored"] == ["target"]
    assert out["counts"]["only in A"] == 4  # mfmw ran on t1 only
    assert len([p for p in out["points"] if p["a"] and p["b"]]) == 4
    text = compare(hpcio, results.a, results.t2_file, "--ignore", "target", fmt="md")
    assert f"| {results.t1.as_uri()} vs {results.t2.as_uri()} | 2 | 1 MiB |" in text


def test_unknown_ignored_field_is_refused(results, hpcio, error_line):
    done = hpcio("compare", results.a, results.again, "--ignore", "tragets")
    assert done.returncode == 2
    assert error_line(done).startswith("hpcio: error: --ignore tragets: not a spec field; choose")


def test_html_and_plots(results, hpcio, tmp_path, chromium, parse_page):
    faster = scaled(results.a, tmp_path / "faster.jsonl", 10.0, "write")
    page_path = tmp_path / "compare.html"
    done = hpcio("compare", results.a, faster, "--html", page_path, "--plots", tmp_path / "p")
    assert done.returncode == 0, done.stderr
    names = [f"compare-bandwidth-vs-size-{phase}" for phase in ("write", "read")]
    assert done.stdout.splitlines() == [
        *(str(tmp_path / "p" / f"{n}.{ext}") for n in names for ext in ("png", "svg")),
        str(page_path),
    ]
    page = parse_page(chromium("--dump-dom", url=page_path.as_uri()).stdout)
    assert set(page.images) == {f"plot-{n}" for n in names}
    out = compare(hpcio, results.a, faster)
    for title in ("sfmw write", "sfmw read", "mfmw write", "mfmw read"):
        _, rows = page.rows(f"compare-{title.replace(' ', '-')}")
        points = [p for p in out["points"] if f"{p['workload']} {p['phase']}" == title]
        assert [r["A mean (MiB/s)"][0] for r in rows] == [f"{p['a']['mean']:.3f}" for p in points]
        assert [r["Difference"][0] for r in rows] == [p["difference"] for p in points]


@pytest.mark.parametrize("side", ["A", "B"])
def test_a_file_that_is_not_hpcios(results, hpcio, error_line, tmp_path, side):
    other = tmp_path / "other.jsonl"
    other.write_text('{"kind": "hpcio.result", "schema_version": 1, "bandwidth": 1}\n')
    args = (other, results.a) if side == "A" else (results.a, other)
    done = hpcio("compare", *args)
    assert done.returncode == 2
    assert error_line(done) == (
        f"hpcio: error: {other}:1: not a valid hpcio result document: hpcio_version is missing"
    )


def test_repeated_runs_in_one_file_are_pooled(results, hpcio):
    both = results.combined("a-again.jsonl", results.a, results.again)
    docs = results_io.read(both)
    out = compare(hpcio, both, results.single)
    (point,) = [
        p
        for p in out["points"]
        if p["a"] and p["b"] and (p["workload"], p["phase"]) == ("mfmw", "write")
    ]
    chosen = [d for d in docs if d.workload == "mfmw" and d.params["size_per_rank_bytes"] == MiB]
    rates = [p.bandwidth_bytes_per_s / MiB for d in chosen for p in d.phases if p.phase == "write"]
    assert (point["a"]["runs"], point["a"]["iterations"], point["b"]["runs"]) == (2, 5, 1)
    moved = [p.bytes_total for d in chosen for p in d.phases if p.phase == "write"]
    times = [p.phase_time_s for d in chosen for p in d.phases if p.phase == "write"]
    assert point["a"]["mean"] == pytest.approx(sum(moved) / MiB / sum(times), rel=1e-12)
    assert point["a"]["mean_of_iterations"] == pytest.approx(sum(rates) / 5, rel=1e-12)
    assert (point["a"]["min"], point["a"]["max"]) == (min(rates), max(rates))
    assert "repeated runs:" in compare(hpcio, both, results.single, fmt="md")


def test_ignoring_a_field_that_splits_one_file_is_refused(results, hpcio, error_line):
    both = results.combined("a-t2.jsonl", results.a, results.t2_file)
    done = hpcio("compare", both, results.a, "--ignore", "target")
    assert done.returncode == 2
    assert error_line(done) == (
        f"hpcio: error: --ignore target: {both} holds runs of one point that differ in target; "
        "compare them separately, or do not ignore target"
    )


def test_two_workloads_match_when_the_workload_is_ignored(hpcio, tmp_path):
    """sfmw against mfmw at the same sizes: each pattern's params (segments, files per rank)
    are not the other's, and ignoring the workload leaves them out of the match too."""
    a = recorded.selected(recorded.V1 / "file-2ranks.jsonl", tmp_path / "a.jsonl", pattern="sfmw")
    b = recorded.selected(recorded.V1 / "file-2ranks.jsonl", tmp_path / "b.jsonl", pattern="mfmw")
    assert len([p for p in compare(hpcio, a, b)["points"] if p["a"] and p["b"]]) == 0
    out = compare(hpcio, a, b, "--ignore", "workload")
    matched = [p for p in out["points"] if p["a"] and p["b"]]
    assert len(matched) == 4  # write and read at 1 and 2 MiB per rank
    assert out["ignored"][0] == "workload"
    assert out["counts"]["only in A"] == 0 and out["counts"]["only in B"] == 0


def test_a_table_of_two_workloads_is_titled_by_both(hpcio, tmp_path):
    """With --ignore workload, A's sfmw against B's mfmw: each table's title names both (not
    A's alone), in every format that has titles."""
    a = recorded.selected(recorded.V1 / "file-2ranks.jsonl", tmp_path / "a.jsonl", pattern="sfmw")
    b = recorded.selected(recorded.V1 / "file-2ranks.jsonl", tmp_path / "b.jsonl", pattern="mfmw")
    text = compare(hpcio, a, b, "--ignore", "workload", fmt="md")
    titles = [line for line in text.splitlines() if line.startswith("### ")]
    assert titles == ["### sfmw vs mfmw write", "### sfmw vs mfmw read"]
    rows = compare(hpcio, a, b, "--ignore", "workload", fmt="csv").splitlines()[1:]
    assert {row.split(",")[0] for row in rows} == {"sfmw vs mfmw write", "sfmw vs mfmw read"}
    same = compare(hpcio, a, a, fmt="md")
    assert [line for line in same.splitlines() if line.startswith("### ")] == [
        "### sfmw write", "### sfmw read"
    ]  # fmt: skip
