"""The fio study's and IOzone's tables in `hpcio report`: repeated runs pooled, different
configurations kept apart, from recorded `hpcio profile` runs."""

import dataclasses
import html
import json

import pytest
from hpcio.results.v1 import upgrade_run
from recorded import T1, T2, V1

MiB = 1 << 20


@pytest.fixture(scope="module")
def profiled():
    """Recorded documents (tests/data/v1): streaming twice (2 iterations each) and once
    time-based on t1; IOzone's sweep of one point twice on t1 and once on t2."""
    return {"streaming": V1 / "profile-streaming.jsonl", "iozone": V1 / "profile-iozone.jsonl"}


def table_values(text, title):
    """Header and {row label: [cells]} of the table under `title` in `text`."""
    block = text.split(title, 1)[1].strip().split("\n\n")[0]
    rows = [line.strip("|").split("|") for line in block.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0]]
    return header, {r[0].strip(): [c.strip() for c in r[1:]] for r in rows[2:]}


def headline_mib_s(docs, phase):
    """Bytes one iteration moved over the mean phase time, every iteration of `docs` pooled."""
    phases = [p for d in docs for p in d["phases"] if p["phase"] == phase]
    moved = sum(p["bytes_total"] for p in phases) / len(phases)
    return moved / MiB / (sum(p["phase_time_s"] for p in phases) / len(phases))


def iteration_mib_s(docs, phase):
    return [
        p["bandwidth_bytes_per_s"] / MiB for d in docs for p in d["phases"] if p["phase"] == phase
    ]


def test_profile_runs_repeated_share_a_column_and_others_get_their_own(
    profiled, hpcio, read_documents
):
    first, second, timed = read_documents(profiled["streaming"])
    done = hpcio("report", profiled["streaming"])
    assert done.returncode == 0, done.stderr
    header, bandwidth = table_values(done.stdout, "Bandwidth (MiB/s, bytes over mean phase time)")
    assert header == ["MiB/s", "streaming (no duration) [2 runs]", "streaming (duration 0.3 s)"]
    for phase, label in (("write", "Writes:"), ("read", "Reads:")):
        assert len(iteration_mib_s([first, second], phase)) == 4
        assert bandwidth[label][0] == f"{headline_mib_s([first, second], phase):.2f}"
        assert bandwidth[label][1] == f"{headline_mib_s([timed], phase):.2f}"


def test_time_based_profile_bandwidth_in_the_studys_table(profiled, hpcio, read_documents):
    *_, timed = read_documents(profiled["streaming"])
    done = hpcio("report", profiled["streaming"], "--format", "json")
    tables = {t["title"]: t for t in json.loads(done.stdout)}
    for phase in ("write", "read"):
        url = timed["run"]["target"]["url"]
        table = tables[f"streaming {phase} on {url}: duration 0.3 s"]
        ((_, _, moved, latency, bandwidth),) = table["rows"]
        assert moved == timed["phases"][0 if phase == "write" else 1]["bytes_total"] / MiB
        assert bandwidth == pytest.approx(
            timed["summary"][phase]["bandwidth_mib_s"]["mean"], rel=1e-9
        )
        assert latency == timed["summary"][phase]["seconds"]["mean"]


def test_iozone_tables_per_target_with_repeats_pooled(profiled, hpcio, read_documents):
    docs = read_documents(profiled["iozone"])
    assert len(docs) == 3 * 6
    done = hpcio("report", profiled["iozone"])
    assert done.returncode == 0, done.stderr
    text = done.stdout.split("KiB/s per file (IOzone's table", 1)[1]
    tables = ("KiB/s per file (IOzone's table" + text).strip().split("\n\n")
    assert [t.splitlines()[0].rsplit(": ", 1)[1] for t in tables] == [
        T1.as_uri(),
        T2.as_uri(),
    ]
    for table, chosen in ((tables[0], docs[:12]), (tables[1], docs[12:])):
        row = next(line for line in table.splitlines() if line.split()[:2] == ["64", "64"])
        cells = row.split()[2:]
        for index, test in enumerate(
            ("write", "rewrite", "read", "reread", "random read", "random write")
        ):
            runs = [d for d in chosen if upgrade_run(d["run"])["params"]["test"] == test]
            (phase,) = runs[0]["run"]["phases"]
            assert cells[index] == f"{headline_mib_s(runs, phase) * 1024:.0f}"
    assert "Note: some tests ran up to 2 times" in tables[0]
    assert "Note:" not in tables[1]


def test_family_tables_are_in_every_output(hpcio, page_of):
    """The fio study's matrices and IOzone's table, which markdown prints in their own layout,
    are in the JSON, the CSV and the HTML page too, with the same cells."""
    files = (V1 / "profile-all.jsonl", V1 / "profile-iozone.jsonl")
    markdown = hpcio("report", *files).stdout
    tables = {t["title"]: t for t in json.loads(hpcio("report", *files, "--format", "json").stdout)}
    title = "Bandwidth (MiB/s, bytes over mean phase time)"
    (bandwidth,) = [t for t in tables if t.startswith(title)]
    header, by_row = table_values(markdown, title)
    assert tables[bandwidth]["columns"] == header
    assert {row[0]: row[1:] for row in tables[bandwidth]["rows"]} == by_row
    iozone = [t for t in tables if t.startswith("KiB/s per file (IOzone's table")]
    assert len(iozone) == 2  # one per target
    csv_text = hpcio("report", *files, "--format", "csv").stdout
    assert all(f'"{title}",' in csv_text or f"{title}," in csv_text for title in iozone)
    # Less its 23 figures, which would be most of this test's time (test_html draws them).
    text = page_of(*files)
    for title in (bandwidth, *iozone):
        assert f"<h3>{html.escape(title)}</h3>" in text


def test_a_profile_on_two_targets_is_named_by_its_targets_side_by_side(tmp_path):
    """A store takes the profile's settings its own way (no page cache to bypass, an object
    per transfer): the columns name each profile's target only, a profile's targets adjacent."""
    from hpcio.report.profiles import profile_columns
    from hpcio.results import io as results_io

    directory = results_io.read(V1 / "profile-all.jsonl")
    on_store = []
    for doc in directory:
        run = {**doc.run, "target": {"url": "s3://hpcio-test/p", "kind": "s3", "options": []}}
        run["direct"] = False
        on_store.append(dataclasses.replace(doc, run=run))
    names = list(dict.fromkeys(doc.workload for doc in directory))
    labels = [label for label, _ in profile_columns([*directory, *on_store])]
    url = directory[0].run["target"]["url"]
    assert labels == [f"{n} ({where})" for n in names for where in (url, "s3://hpcio-test/p")]
