import csv
import io
import json
import shutil

import pytest
import recorded
from recorded import V1

MiB = 1 << 20
PHASES = ("write", "read")
#: How a table's title names its targets.
ON_T1 = f"on {recorded.T1.as_uri()}"
ON_BOTH = f"on {recorded.T1.as_uri()}, {recorded.T2.as_uri()}"
COLUMNS = ["File Size (MiB)", "File Size Per Proc (MiB)", "Latency (s)", "Bandwidth (MiB/s)"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Recorded documents (tests/data/v1), mfmw with 1 rank unless said: target t1 at 1 MiB and
    2 MiB per rank (one file), target t2 at 1 MiB, t1 at 1 MiB once more, and a 2-rank sfmw
    run."""
    root = tmp_path_factory.mktemp("report")
    recorded.selected(V1 / "file-1rank.jsonl", root / "one.jsonl", pattern="mfmw")
    shutil.copy(V1 / "file-t2-1rank.jsonl", root / "b.jsonl")
    shutil.copy(V1 / "file-1rank-again.jsonl", root / "again.jsonl")
    recorded.selected(
        V1 / "file-2ranks.jsonl", root / "ranks.jsonl", pattern="sfmw", size_per_rank_bytes=MiB
    )
    (root / "two.jsonl").write_text(
        (root / "one.jsonl").read_text() + (root / "b.jsonl").read_text()
    )
    return root


def report(hpcio, fmt, *paths):
    done = hpcio("report", *paths, "--format", fmt)
    assert (done.returncode, done.stderr) == (0, "")
    return done.stdout


def seconds(doc, phase):
    return doc["summary"][phase]["seconds"]["mean"]


def test_json_one_row_per_size(runs, hpcio, read_documents):
    one, two = read_documents(runs / "one.jsonl")
    tables = json.loads(report(hpcio, "json", runs / "one.jsonl"))
    assert [t["title"] for t in tables] == [f"mfmw write {ON_T1}", f"mfmw read {ON_T1}"]
    for table, phase in zip(tables, PHASES, strict=True):
        assert table["columns"] == COLUMNS
        (s1, p1, lat1, bw1), (s2, p2, lat2, bw2) = table["rows"]
        assert (s1, p1, s2, p2) == (1.0, 1.0, 2.0, 2.0)
        assert (lat1, lat2) == (seconds(one, phase), seconds(two, phase))
        assert bw1 == pytest.approx(1.0 / lat1, rel=1e-12)
        assert bw2 == pytest.approx(2.0 / lat2, rel=1e-12)


def test_csv_cells(runs, hpcio, read_documents):
    docs = read_documents(runs / "one.jsonl")
    rows = list(csv.reader(io.StringIO(report(hpcio, "csv", runs / "one.jsonl"))))
    expected = []
    for phase in PHASES:
        expected.append(["table", *COLUMNS])
        for size, doc in zip(("1", "2"), docs, strict=True):
            latency = seconds(doc, phase)
            expected.append(
                [
                    f"mfmw {phase} {ON_T1}",
                    size,
                    size,
                    f"{latency:.5f}",
                    f"{int(size) / latency:.3f}",
                ]
            )
    assert rows == expected


def markdown_tables(text):
    tables, title = {}, None
    for line in text.splitlines():
        if line.startswith("### "):
            title = line[4:]
            tables[title] = []
        elif line.startswith("|") and "---" not in line:
            tables[title].append([c.strip() for c in line.strip("|").split("|")])
    return tables


def test_markdown_is_the_default(runs, hpcio, read_documents):
    docs = read_documents(runs / "one.jsonl")
    text = report(hpcio, "md", runs / "one.jsonl")
    assert hpcio("report", runs / "one.jsonl").stdout == text
    tables = markdown_tables(text)
    assert list(tables) == [f"mfmw write {ON_T1}", f"mfmw read {ON_T1}"]
    for phase in PHASES:
        header, *rows = tables[f"mfmw {phase} {ON_T1}"]
        assert header == COLUMNS
        assert rows == [
            [size, size, f"{seconds(doc, phase):.5f}", f"{int(size) / seconds(doc, phase):.3f}"]
            for size, doc in zip(("1", "2"), docs, strict=True)
        ]


def test_two_targets_give_two_column_pairs(runs, hpcio, read_documents):
    a1, a2, b1 = read_documents(runs / "two.jsonl")
    ua, ub = recorded.T1.as_uri(), recorded.T2.as_uri()
    tables = json.loads(report(hpcio, "json", runs / "two.jsonl"))
    assert len(tables) == 2
    for table, phase in zip(tables, PHASES, strict=True):
        assert table["columns"] == [
            *COLUMNS[:2],
            f"{ua} Latency (s)",
            f"{ua} Bandwidth (MiB/s)",
            f"{ub} Latency (s)",
            f"{ub} Bandwidth (MiB/s)",
        ]
        row1, row2 = table["rows"]
        assert row1[:3] == [1.0, 1.0, seconds(a1, phase)]
        assert row1[4] == seconds(b1, phase)
        assert row1[5] == pytest.approx(1.0 / seconds(b1, phase), rel=1e-12)
        assert row2[:3] == [2.0, 2.0, seconds(a2, phase)]
        assert row2[4:] == [None, None]


def test_missing_cell_is_na(runs, hpcio):
    tables = markdown_tables(report(hpcio, "md", runs / "one.jsonl", runs / "b.jsonl"))
    _, _, row2 = tables[f"mfmw write {ON_BOTH}"]
    assert row2[4:] == ["N/A", "N/A"]
    assert row2[2] != "N/A"


def iteration_times(doc, phase):
    return [p["phase_time_s"] for p in doc["phases"] if p["phase"] == phase]


def test_a_repeated_point_shows_the_mean_over_its_runs_and_their_count(runs, hpcio, read_documents):
    first, _ = read_documents(runs / "one.jsonl")
    (newer,) = read_documents(runs / "again.jsonl")
    (table, _) = json.loads(report(hpcio, "json", runs / "one.jsonl", runs / "again.jsonl"))
    assert table["columns"] == [*COLUMNS, "Runs"]
    (size, per_proc, latency, bandwidth, count), row2 = table["rows"]
    times = iteration_times(first, "write") + iteration_times(newer, "write")
    assert len(times) == 4
    assert (size, per_proc, count) == (1.0, 1.0, 2)
    assert latency == pytest.approx(sum(times) / 4, rel=1e-12)
    assert bandwidth == pytest.approx(1.0 / latency, rel=1e-12)
    assert row2[4] == 1
    assert any(n.startswith("Runs: documents measuring the same point") for n in table["notes"])


def test_file_size_counts_every_rank(runs, hpcio, read_documents):
    (doc,) = read_documents(runs / "ranks.jsonl")
    tables = json.loads(report(hpcio, "json", runs / "ranks.jsonl"))
    assert [t["title"] for t in tables] == [f"sfmw write {ON_T1}", f"sfmw read {ON_T1}"]
    (row,) = tables[0]["rows"]
    assert row[:3] == [2.0, 1.0, seconds(doc, "write")]
    assert row[3] == pytest.approx(2.0 / seconds(doc, "write"), rel=1e-12)


def test_cell_format_does_not_depend_on_target_names(runs, hpcio, tmp_path):
    # Report columns carry the target URL; a URL that happens to contain "Latency" or "Size"
    # must not change how that column's numbers are printed.
    lines = []
    for name, url in (
        ("one.jsonl", "file:///scratch/Latency-study"),
        ("b.jsonl", "file:///scratch/Size-study"),
    ):
        for line in (runs / name).read_text().splitlines():
            record = json.loads(line)
            record["run"]["target"]["url"] = url
            lines.append(json.dumps(record))
    path = tmp_path / "named.jsonl"
    path.write_text("\n".join(lines) + "\n")
    on = "on file:///scratch/Latency-study, file:///scratch/Size-study"
    header, row1, _ = markdown_tables(report(hpcio, "md", path))[f"mfmw write {on}"]
    for column, cell in zip(header, row1, strict=True):
        if column.endswith("Latency (s)"):
            assert len(cell.split(".")[1]) == 5, (column, cell)
        elif column.endswith("Bandwidth (MiB/s)"):
            assert len(cell.split(".")[1]) == 3, (column, cell)


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    """Recorded documents of one sfmw point (2 ranks, 1 MiB each) at three configurations
    (256 KiB transfers; 4 KiB; 4 KiB with --direct --fsync), and a time-based mfmw run."""
    root = tmp_path_factory.mktemp("configs")
    shutil.copy(V1 / "file-configs.jsonl", root / "configs.jsonl")
    recorded.selected(V1 / "file-timed.jsonl", root / "timed.jsonl", size_per_rank_bytes=MiB)
    return root


def test_runs_that_differ_get_tables_of_their_own(configs, hpcio, read_documents):
    docs = read_documents(configs / "configs.jsonl")
    tables = json.loads(report(hpcio, "json", configs / "configs.jsonl"))
    configurations = (
        "no direct, no fsync, transfer 256 KiB",
        "no direct, no fsync, transfer 4 KiB",
        "direct, fsync, transfer 4 KiB",
    )
    assert [t["title"] for t in tables] == [
        f"sfmw {phase} {ON_T1}: {configuration}"
        for configuration in configurations
        for phase in PHASES
    ]
    for index, doc in enumerate(docs):
        for phase, table in zip(PHASES, tables[2 * index : 2 * index + 2], strict=True):
            assert table["columns"] == COLUMNS
            (row,) = table["rows"]
            assert row[:3] == [2.0, 1.0, seconds(doc, phase)]


def test_time_based_runs_divide_the_bytes_they_moved(configs, hpcio, read_documents):
    (doc,) = read_documents(configs / "timed.jsonl")
    tables = json.loads(report(hpcio, "json", configs / "timed.jsonl"))
    assert [t["title"] for t in tables] == [f"mfmw write {ON_T1}", f"mfmw read {ON_T1}"]
    for table, phase in zip(tables, PHASES, strict=True):
        assert table["columns"] == [*COLUMNS[:2], "Moved Per Iteration (MiB)", *COLUMNS[2:]]
        ((size, per_proc, moved, latency, bandwidth),) = table["rows"]
        moved_bytes = [p["bytes_total"] for p in doc["phases"] if p["phase"] == phase]
        assert (size, per_proc) == (2.0, 1.0)
        assert moved == pytest.approx(sum(moved_bytes) / len(moved_bytes) / MiB, rel=1e-12)
        # Several passes over the 2 MiB data set: dividing 2 MiB would be wrong by their number.
        assert moved > 2 * size
        assert latency == seconds(doc, phase)
        assert bandwidth == pytest.approx(moved / latency, rel=1e-12)
        assert table["notes"][0].startswith("time-based: each phase repeated its transfers for")


def test_a_crowded_node_is_noted(configs, hpcio, tmp_path):
    lines = (configs / "configs.jsonl").read_text().splitlines()
    crowded = []
    for line, cores in zip(lines, (1, 2, None), strict=True):
        record = json.loads(line)
        record["cores_per_node"] = cores
        crowded.append(json.dumps(record))
    path = tmp_path / "crowded.jsonl"
    path.write_text("\n".join(crowded) + "\n")
    tables = json.loads(report(hpcio, "json", path))
    warned = "ranks outnumber cores: 2 ranks per node on 1 cores"
    assert [any(n.startswith(warned) for n in t["notes"]) for t in tables] == [True] * 2 + [
        False
    ] * 4
    assert warned in report(hpcio, "md", path)


def test_the_compared_axis_in_the_columns(configs, hpcio, read_documents):
    """--across transfer_bytes: the two buffered configurations (256 KiB and 4 KiB transfers)
    side by side in one table, each column pair the figures of its own run."""
    docs = read_documents(configs / "configs.jsonl")
    done = hpcio("report", configs / "configs.jsonl", "--across", "transfer_bytes",
                 "--format", "json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    tables = {t["title"]: t for t in json.loads(done.stdout)}
    buffered = tables[f"sfmw write {ON_T1}, by transfer_bytes: no direct, no fsync"]
    assert buffered["columns"] == [
        *COLUMNS[:2],
        "transfer 256 KiB Latency (s)", "transfer 256 KiB Bandwidth (MiB/s)",
        "transfer 4 KiB Latency (s)", "transfer 4 KiB Bandwidth (MiB/s)",
    ]  # fmt: skip
    ((_, _, latency_256k, _, latency_4k, _),) = buffered["rows"]
    assert (latency_256k, latency_4k) == (seconds(docs[0], "write"), seconds(docs[1], "write"))
    assert f"sfmw write {ON_T1}, by transfer_bytes: direct, fsync" in tables


def test_n1_and_nn_in_one_table(hpcio, read_documents, tmp_path):
    """--across workload: sfmw (N-1) and mfmw (N-N) at the same sizes in one table (study
    002's Table 1), though each takes params the other does not."""
    path = recorded.selected(V1 / "file-2ranks.jsonl", tmp_path / "nn.jsonl",
                             pattern=("sfmw", "mfmw"))  # fmt: skip
    docs = read_documents(path)
    tables = json.loads(report(hpcio, "json", path, "--across", "workload"))
    assert [t["title"] for t in tables] == [
        f"sfmw vs mfmw {phase} {ON_T1}, by workload" for phase in PHASES
    ]
    write = tables[0]
    assert write["columns"][2:] == [
        "sfmw Latency (s)", "sfmw Bandwidth (MiB/s)", "mfmw Latency (s)", "mfmw Bandwidth (MiB/s)",
    ]  # fmt: skip
    by_size = {row[1]: row for row in write["rows"]}
    for doc in docs:  # recorded v1 documents: the pattern and size are top-level run fields
        per_proc = doc["run"]["size_per_rank_bytes"] / MiB
        column = 2 if doc["run"]["pattern"] == "sfmw" else 4
        assert by_size[per_proc][column] == seconds(doc, "write")


def test_an_unknown_axis_is_refused(configs, hpcio, error_line):
    done = hpcio("report", configs / "configs.jsonl", "--across", "stripes")
    assert done.returncode == 2
    assert error_line(done).startswith("hpcio: error: --across stripes: not a spec field")


def test_ranks_per_node_are_rows_of_one_table(hpcio, read_documents):
    """A suite's layouts (run.ranks_per_node) as study 001's Procs/Node x Nodes table: one table
    per pattern and phase, a row per layout, each with its own run's figures."""
    path = V1 / "suite-ranks-per-node.jsonl"
    docs = read_documents(path)
    tables = json.loads(report(hpcio, "json", path))
    expected = list(dict.fromkeys(f"{d['run']['pattern']} {p}" for d in docs for p in d["summary"]))
    assert [t["title"] for t in tables] == [f"{name} {ON_T1}" for name in expected]
    for table in tables:
        assert table["columns"] == ["Procs/Node", "Nodes", *COLUMNS]
        pattern, phase = table["title"].split()[:2]
        mine = [d for d in docs if d["run"]["pattern"] == pattern and phase in d["summary"]]
        assert [tuple(row[:2]) for row in table["rows"]] == sorted(
            (d["run"]["ranks_per_node"], d["ranks"] // d["run"]["ranks_per_node"]) for d in mine
        )
        by_layout = {row[0]: row[4] for row in table["rows"]}
        for doc in mine:
            assert by_layout[doc["run"]["ranks_per_node"]] == seconds(doc, phase)
        assert any(
            note.startswith("Procs/Node and Nodes are the layout") for note in table["notes"]
        )


def test_a_transfer_and_fsync_set_per_target_do_not_split_the_table(tmp_path, hpcio):
    """A suite's object stores take another transfer ([object_store]) and count as fsync'd:
    their rows stay beside the POSIX ones, and a note says each target's settings."""
    s3 = json.loads((V1 / "s3-2ranks.jsonl").read_text().splitlines()[0])
    posix = json.loads(json.dumps(s3))
    posix["run"]["target"] = {"url": recorded.T1.as_uri(), "kind": "posix", "options": []}
    posix["run"].update(transfer_bytes=MiB, fsync=False)
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(posix) + "\n" + json.dumps(s3) + "\n")
    tables = json.loads(report(hpcio, "json", path))
    on_both = f"on {recorded.T1.as_uri()}, s3://hpcio-test/v1"
    assert [t["title"] for t in tables] == [f"sfmw write {on_both}", f"sfmw read {on_both}"]
    assert len(tables[0]["rows"]) == 1
    notes = tables[0]["notes"]
    assert f"transfer 1 MiB on {recorded.T1.as_uri()}; transfer 5 MiB on s3://hpcio-test/v1" in (
        " ".join(notes)
    )
    fsync = f"no fsync on {recorded.T1.as_uri()}; fsync on s3://hpcio-test/v1 (an object store"
    assert any(note.startswith(fsync) for note in notes)


def test_two_transfers_on_one_target_still_split(tmp_path, hpcio):
    s3 = json.loads((V1 / "s3-2ranks.jsonl").read_text().splitlines()[0])
    other = json.loads(json.dumps(s3))
    other["run"]["transfer_bytes"] = 10 * MiB
    other["run"]["size_per_rank_bytes"] = s3["run"]["size_per_rank_bytes"]
    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps(s3) + "\n" + json.dumps(other) + "\n")
    titles = [t["title"] for t in json.loads(report(hpcio, "json", path))]
    assert "sfmw write on s3://hpcio-test/v1: transfer 5 MiB" in titles
    assert "sfmw write on s3://hpcio-test/v1: transfer 10 MiB" in titles


def test_each_targets_own_depth_does_not_split_the_table(tmp_path, hpcio):
    """An object store runs more requests in flight by default than a directory: the suite's
    file:// and s3:// rows stay one table, a note says each target's depth."""
    s3 = json.loads((V1 / "s3-2ranks.jsonl").read_text().splitlines()[0])
    s3["run"]["in_flight"] = 8
    posix = json.loads(json.dumps(s3))
    posix["run"]["target"] = {"url": recorded.T1.as_uri(), "kind": "posix", "options": []}
    posix["run"].update(in_flight=1)
    path = tmp_path / "depths.jsonl"
    path.write_text(json.dumps(posix) + "\n" + json.dumps(s3) + "\n")
    tables = json.loads(report(hpcio, "json", path))
    on_both = f"on {recorded.T1.as_uri()}, s3://hpcio-test/v1"
    assert [t["title"] for t in tables] == [f"sfmw write {on_both}", f"sfmw read {on_both}"]
    notes = " ".join(tables[0]["notes"])
    assert f"in flight 1 on {recorded.T1.as_uri()}; in flight 8 on s3://hpcio-test/v1" in notes


def test_an_axis_across_two_targets_names_each_target_once(tmp_path, hpcio):
    """--across api over a directory and a bucket: a table per target, its title naming the
    target once ("on URL, by api"), never again as what sets it apart."""
    s3 = json.loads((V1 / "s3-2ranks.jsonl").read_text().splitlines()[0])
    posix = json.loads(json.dumps(s3))
    posix["run"]["target"] = {"url": recorded.T1.as_uri(), "kind": "posix", "options": []}
    path = tmp_path / "apis.jsonl"
    path.write_text(json.dumps(posix) + "\n" + json.dumps(s3) + "\n")
    titles = [t["title"] for t in json.loads(report(hpcio, "json", path, "--across", "api"))]
    assert titles == [
        f"sfmw {phase} on {url}, by api"
        for url in (recorded.T1.as_uri(), "s3://hpcio-test/v1")
        for phase in ("write", "read")
    ]


def test_a_setting_per_target_is_judged_within_each_workloads_runs(tmp_path, hpcio):
    """A checkpoint's saves fsync and its loads do not: on a directory beside a store each
    still gets one table, though the directory's runs have both values between them."""
    s3 = json.loads((V1 / "s3-2ranks.jsonl").read_text().splitlines()[0])
    docs = []
    for pattern, fsync in (("sfmw", False), ("mfmw", True)):
        store = json.loads(json.dumps(s3))
        store["run"]["pattern"] = pattern
        posix = json.loads(json.dumps(store))
        posix["run"]["target"] = {"url": recorded.T1.as_uri(), "kind": "posix", "options": []}
        posix["run"]["fsync"] = fsync
        docs += [posix, store]
    path = tmp_path / "both.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    titles = [t["title"] for t in json.loads(report(hpcio, "json", path))]
    on_both = f"on {recorded.T1.as_uri()}, s3://hpcio-test/v1"
    assert titles == [
        f"{p} {phase} {on_both}" for p in ("sfmw", "mfmw") for phase in ("write", "read")
    ]
