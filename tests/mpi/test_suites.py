import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hpcio.spec.suite import load_suite
from hpcio.spec.sweep import point_key
from hpcio.workloads.patterns.common import file_bytes

pytestmark = pytest.mark.mpi

SUITES = Path(__file__).resolve().parents[2] / "suites"
MiB = 1 << 20
PHASES = {"sfmw": 2, "mfmw": 2, "sfsw": 2, "sfmr": 1, "mfmr": 1}


def run_suite(hpcio, suite, target, output, *more):
    return hpcio("suite", "run", suite, "--target", target, "-o", output, *more)


def assert_procs_per_node_by_nodes(hpcio, output, docs):
    """Study 001's Nodes table from the suite's documents in one command: per pattern and
    phase one table, a row per layout asked (Procs/Node, Nodes)."""
    done = hpcio("report", output, "--format", "json")
    assert done.returncode == 0, done.stderr
    tables = json.loads(done.stdout)
    expected = {(d["run"]["workload"], p) for d in docs for p in d["summary"]}
    assert len(tables) == len(expected)
    layouts = sorted({(d["run"]["ranks_per_node"], d["ranks"] // d["run"]["ranks_per_node"])
                      for d in docs})  # fmt: skip
    for table in tables:
        assert table["columns"][:2] == ["Procs/Node", "Nodes"]
        assert [tuple(row[:2]) for row in table["rows"]] == layouts


@pytest.mark.parametrize("name", ["output", "input", "nodes"])
def test_shipped_suite_runs_small_and_resumes(
    hpcio, file_url, read_documents, target_dir, tmp_path, name
):
    suite_file = SUITES / f"{name}.toml"
    output = tmp_path / "results.jsonl"
    points = load_suite(suite_file, scale="small", targets=[file_url(target_dir)]).points

    done = run_suite(hpcio, suite_file, file_url(target_dir), output, "--scale", "small")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    docs = read_documents(output)
    assert len(docs) == len(points)
    for doc, point in zip(docs, points, strict=True):
        assert point_key(doc["run"]) == point_key(point.to_dict())
        assert doc["ranks"] == point.ranks == 4
        assert doc["run"]["ranks_per_node"] == point.ranks_per_node
        assert len(doc["phases"]) == PHASES[point.workload.name] * point.iterations
        for phase in doc["phases"]:
            moved = file_bytes(point) * (point.ranks if point.workload.name == "sfmr" else 1)
            assert phase["bytes_total"] == moved
    # stdout is a pipe here: one plain line per point, numbered, with what is left.
    lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert len(lines) == len(points)
    assert lines[0].startswith(f"[1/{len(points)}] ")
    assert lines[-1].startswith(f"[{len(points)}/{len(points)}] ")
    assert f"; {len(points) - 1} left, eta " in lines[0]
    assert list(target_dir.iterdir()) == []  # every iteration removed its files
    if name == "nodes":
        assert_procs_per_node_by_nodes(hpcio, output, docs)

    before = output.read_bytes()
    again = run_suite(hpcio, suite_file, file_url(target_dir), output, "--scale", "small")
    assert again.returncode == 0, again.stderr
    assert f"{len(points)} already in {output}, 0 to run" in again.stdout
    assert output.read_bytes() == before


def test_interrupted_suite_runs_only_what_is_missing(
    hpcio, file_url, read_documents, target_dir, tmp_path
):
    output = tmp_path / "results.jsonl"
    suite_file = SUITES / "output.toml"
    args = (suite_file, file_url(target_dir), output, "--scale", "small")
    assert run_suite(hpcio, *args).returncode == 0
    lines = output.read_text().splitlines(keepends=True)
    # As if killed while appending the fourth document: three whole lines and half a line.
    output.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])

    done = run_suite(hpcio, *args)
    assert done.returncode == 0, done.stderr
    assert f"8 points, 3 already in {output}, 5 to run" in done.stdout
    docs = read_documents(output)
    assert len(docs) == 8
    assert [json.dumps(d) for d in docs[:3]] == [json.dumps(json.loads(x)) for x in lines[:3]]
    assert len({point_key(d["run"]) for d in docs}) == 8


def test_interrupted_points_run_again(hpcio, file_url, read_documents, target_dir, tmp_path):
    output = tmp_path / "results.jsonl"
    suite_file = write(tmp_path, TWO_GROUPS.replace("ranks = [1, 2]", "ranks = 2"))
    assert run_suite(hpcio, suite_file, file_url(target_dir), output).returncode == 0
    first, second = read_documents(output)
    # As a killed launch leaves it: the second point's finished iterations, marked so.
    second["status"] = "interrupted"
    output.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")

    done = run_suite(hpcio, suite_file, file_url(target_dir), output)
    assert done.returncode == 0, done.stderr
    assert "2 points, 1 already in" in done.stdout
    docs = read_documents(output)
    assert [d.get("status", "complete") for d in docs] == ["complete", "interrupted", "complete"]
    assert point_key(docs[2]["run"]) == point_key(second["run"])


def write(tmp_path, text, name="s.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


TWO_GROUPS = """\
[[target]]
url = "file:///nowhere"

[grid]
patterns = "mfmw"
sizes = ["64KiB", "128KiB"]
ranks = [1, 2]
transfer = "64KiB"
"""


def test_one_rank_runs_without_mpi_and_groups_run_in_order(
    hpcio, file_url, read_documents, target_dir, tmp_path
):
    output = tmp_path / "r.jsonl"
    done = run_suite(hpcio, write(tmp_path, TWO_GROUPS), file_url(target_dir), output)
    assert done.returncode == 0, done.stderr
    assert "hpcio suite: 1 rank(s): 2 point(s)" in done.stdout
    assert "hpcio suite: 2 rank(s): 2 point(s)" in done.stdout
    assert [d["ranks"] for d in read_documents(output)] == [1, 1, 2, 2]
    # No layout was asked for, so none is recorded (schema 2 records None) and no note printed.
    assert all(d["run"]["ranks_per_node"] is None for d in read_documents(output))
    assert "not enforced" not in done.stdout


def test_launched_by_hand_runs_the_points_of_its_size(
    hpcio, mpiexec, file_url, read_documents, target_dir, tmp_path
):
    output = tmp_path / "r.jsonl"
    suite_file = write(tmp_path, TWO_GROUPS)
    done = hpcio(
        "suite",
        "run",
        suite_file,
        "--target",
        file_url(target_dir),
        "-o",
        output,
        launcher=mpiexec(2),
    )
    assert done.returncode == 0, done.stderr
    assert "2 point(s) need another number of ranks than this job's 2" in done.stdout
    assert [d["ranks"] for d in read_documents(output)] == [2, 2]


def test_launcher_template_gets_each_groups_layout(file_url, target_dir, tmp_path, mpiexec):
    log = tmp_path / "launches.log"
    launcher = tmp_path / "launcher"
    real = " ".join(mpiexec(1)[:-2])  # the user's mpiexec and its flags, without -n 1
    launcher.write_text(
        f'#!/bin/sh\necho "$1 $2" >> {log}\nshift 2\nexec {real} "$@"\n', encoding="utf-8"
    )
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    suite_file = write(
        tmp_path,
        TWO_GROUPS.replace("ranks = [1, 2]", "ranks = 4\nranks_per_node = [1, 2]"),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    env["HPCIO_MPIEXEC"] = f"{launcher} --ppn={{ppn}} --nodes={{nodes}}"
    output = tmp_path / "r.jsonl"
    target_args = ["--target", file_url(target_dir), "-o", str(output)]
    done = subprocess.run(
        [sys.executable, "-m", "hpcio", "suite", "run", str(suite_file), *target_args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == ["--ppn=1 --nodes=4", "--ppn=2 --nodes=2"]
    assert "not enforced" not in done.stdout
    docs = [json.loads(line) for line in output.read_text().splitlines()]
    assert [d["run"]["ranks_per_node"] for d in docs] == [1, 1, 2, 2]


def test_bar_display_draws_and_still_prints_each_point(
    hpcio, file_url, read_documents, target_dir, tmp_path
):
    output = tmp_path / "r.jsonl"
    suite_file = write(tmp_path, TWO_GROUPS.replace("ranks = [1, 2]", "ranks = 2"))
    done = run_suite(hpcio, suite_file, file_url(target_dir), output, "--display", "bar")
    assert done.returncode == 0, done.stderr
    assert "\x1b[2K" in done.stdout  # a live display: lines erased and drawn again
    assert "2/2 done, 0 left" in done.stdout
    assert "[1/2] mfmw 2 ranks 64 KiB/rank x1" in done.stdout
    assert len(read_documents(output)) == 2


def test_bad_suite_and_missing_target_are_one_line(
    hpcio, error_line, file_url, target_dir, tmp_path
):
    suite_file = write(tmp_path, TWO_GROUPS.replace('transfer = "64KiB"', 'transfersize = "1MiB"'))
    output = tmp_path / "r.jsonl"
    done = run_suite(hpcio, suite_file, file_url(target_dir), output)
    assert done.returncode == 2
    assert error_line(done) == (
        f"hpcio: error: {suite_file}:8: unknown key 'transfersize'; did you mean 'transfer'?"
    )
    done = run_suite(hpcio, write(tmp_path, TWO_GROUPS), file_url(target_dir / "no"), output)
    assert done.returncode == 2
    assert error_line(done) == (
        f"hpcio: error: target {file_url(target_dir / 'no')} does not exist; "
        f"create it with: mkdir -p {target_dir / 'no'}"
    )
    assert not output.exists()  # a refused run leaves no empty results file

    output.write_text('{"tool": "ior"}\n')
    done = run_suite(hpcio, write(tmp_path, TWO_GROUPS), file_url(target_dir), output)
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: {output}:1: not an hpcio result document"
    assert list(target_dir.iterdir()) == []

    done = hpcio("suite", "run", suite_file)
    assert done.returncode == 2
    assert error_line(done) == "hpcio: error: the following arguments are required: -o/--output"


def test_netcdf_suite_runs_its_small_scales_and_reports_both_figures(
    hpcio, file_url, read_documents, target_dir, tmp_path
):
    """suites/netcdf.toml on a plain directory: figure 1 (`small`) and figure 2 without lfs
    (`small-stripes`) into one file; the report plots bandwidth against the global size with
    the four codes by name and each stripe count as a series of its own."""
    from hpcio.report import plots
    from hpcio.report.tables import study_tables
    from hpcio.results import io as results_io

    suite_file = SUITES / "netcdf.toml"
    url = file_url(target_dir)
    output = tmp_path / "netcdf.jsonl"
    points = [
        point
        for scale in ("small", "small-stripes")
        for point in load_suite(suite_file, scale=scale, targets=[url]).points
    ]
    for scale in ("small", "small-stripes"):
        done = run_suite(hpcio, suite_file, url, output, "--scale", scale)
        assert done.returncode == 0, done.stderr
    docs = read_documents(output)
    assert [point_key(d["run"]) for d in docs] == [point_key(p.to_dict()) for p in points]
    for doc, point in zip(docs, points, strict=True):
        assert doc["ranks"] == 8
        for phase in doc["phases"]:
            assert (phase["bytes_total"], phase["errors"]) == (file_bytes(point), 0)
    reads = [d for d in docs if d["run"]["workload"] in ("read_distribute", "allread")]
    assert all(d["cache"]["reads_may_hit_page_cache"] for d in reads)
    assert list(target_dir.iterdir()) == []

    results = results_io.read(output)
    made = {p.name: p for p in plots.report_plots(results).plots}
    for phase, codes in (("write", ("collect_and_write", "allwrite")),
                         ("read", ("read_distribute", "allread"))):  # fmt: skip
        figure = made[f"bandwidth-vs-global-size-{phase}"].figure
        labels = [c.get_label() for c in figure.axes[0].containers]
        # One target: the legend names each workload and what differs between its own
        # lines (collect_and_write ran one way, allwrite four).
        assert labels == [
            codes[0],
            f"{codes[1]} default stripes default stripe size",
            *(f"{codes[1]} {n} stripe size 1 MiB" for n in ("1 stripe", "2 stripes",
                                                            "4 stripes")),
        ]  # fmt: skip
        first = figure.axes[0].containers[0].lines[0]
        assert list(first.get_xdata()) == [8 * (MiB << k) for k in range(1, 6)]
    titles = [t.title for t in study_tables(results)]
    assert titles[:4] == [
        f"collect_and_write write on {url}",
        f"allwrite write on {url}: default stripes, default stripe size",
        f"read_distribute read on {url}",
        f"allread read on {url}: default stripes, default stripe size",
    ]
    assert f"allread read on {url}: 4 stripes, stripe size 1 MiB" in titles
    # A comparison pairs the points though the codes have no transfer size.
    compared = hpcio("compare", output, output)
    assert compared.returncode == 0, compared.stderr
    assert "### allwrite write" in compared.stdout
    assert f"| {url} | 8 | 32 MiB | N/A |" in compared.stdout


def test_nodes_small_scale_has_each_target_s_pair_in_every_table(
    hpcio, file_url, read_documents, target_dir, tmp_path, s3_server, azure_server
):
    """suites/nodes.toml at --scale small on a directory, S3 (versitygw) and Azure (Azurite)
    in one command: no point is left out on S3 (8 MiB per rank: the N-1 object's parts are
    ones S3 accepts), and each pattern's Procs/Node x Nodes table has a Latency/Bandwidth pair
    per target in every row."""
    output = tmp_path / "nodes.jsonl"
    urls = [file_url(target_dir), s3_server.url("nodes"), azure_server.url("nodes")]
    targets = [arg for url in urls for arg in ("--target", url)]
    done = hpcio("suite", "run", "nodes", "--scale", "small", "-o", output, *targets,
                 env={**s3_server.env, **azure_server.env})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "left out" not in done.stdout + done.stderr
    docs = read_documents(output)
    assert len(docs) == 3 * 3 * len(urls)  # patterns x layouts x targets
    assert all(d["status"] == "complete" for d in docs)

    report = hpcio("report", output, "--format", "json")
    assert report.returncode == 0, report.stderr
    tables = json.loads(report.stdout)
    assert {t["title"].split(" on ")[0] for t in tables} == {
        "sfmr read", "sfmw write", "sfmw read", "mfmw write", "mfmw read"
    }  # fmt: skip
    for table in tables:
        assert table["columns"][:2] == ["Procs/Node", "Nodes"]
        pairs = [f"{u} {m}" for u in urls for m in ("Latency (s)", "Bandwidth (MiB/s)")]
        assert table["columns"][-len(pairs) :] == pairs
        assert len(table["rows"]) == 3
        assert all(value is not None for row in table["rows"] for value in row)
