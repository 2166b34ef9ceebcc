"""The fio study's and IOzone's tables in `hpcio report`: repeated runs pooled, different
configurations kept apart, from real `hpcio profile` runs."""

import json

import pytest

pytestmark = pytest.mark.mpi

MiB = 1 << 20


@pytest.fixture(scope="module")
def profiled(tmp_path_factory, hpcio, file_url):
    """streaming twice (2 iterations each) and once time-based on t1; IOzone's sweep of one
    point twice on t1 and once on t2."""
    root = tmp_path_factory.mktemp("profiled")
    for name in ("t1", "t2"):
        (root / name).mkdir()

    def profile(*args, target="t1", out="streaming.jsonl"):
        common = ["-n", "2", "-q", "--target", file_url(root / target), "-o", root / out]
        done = hpcio("profile", *args, *common)
        assert done.returncode == 0, done.stderr

    for more in (["-i", "2"], ["-i", "2"], ["--duration", "0.3"]):
        profile("streaming", "--size", "2MiB", *more)
    sweep = ["iozone", "--file-sizes", "64KiB", "--record-sizes", "64KiB"]
    for target in ("t1", "t1", "t2"):
        profile(*sweep, target=target, out="iozone.jsonl")
    return root


def table_values(text, title):
    """Header and {row label: [cells]} of the table under `title` in `text`."""
    block = text.split(title, 1)[1].strip().split("\n\n")[0]
    rows = [line.strip("|").split("|") for line in block.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0]]
    return header, {r[0].strip(): [c.strip() for c in r[1:]] for r in rows[2:]}


def iteration_mib_s(docs, phase):
    return [
        p["bandwidth_bytes_per_s"] / MiB for d in docs for p in d["phases"] if p["phase"] == phase
    ]


def test_profile_runs_repeated_share_a_column_and_others_get_their_own(
    profiled, hpcio, read_documents
):
    first, second, timed = read_documents(profiled / "streaming.jsonl")
    done = hpcio("report", profiled / "streaming.jsonl")
    assert done.returncode == 0, done.stderr
    header, bandwidth = table_values(done.stdout, "Bandwidth (MiB/s, mean over iterations)")
    assert header == ["MiB/s", "streaming (no duration) [2 runs]", "streaming (duration 0.3 s)"]
    for phase, label in (("write", "Writes:"), ("read", "Reads:")):
        pooled = iteration_mib_s([first, second], phase)
        assert len(pooled) == 4
        assert bandwidth[label][0] == f"{sum(pooled) / 4:.2f}"
        assert bandwidth[label][1] == f"{timed['summary'][phase]['bandwidth_mib_s']['mean']:.2f}"


def test_time_based_profile_bandwidth_in_the_studys_table(profiled, hpcio, read_documents):
    *_, timed = read_documents(profiled / "streaming.jsonl")
    done = hpcio("report", profiled / "streaming.jsonl", "--format", "json")
    tables = {t["title"]: t for t in json.loads(done.stdout)}
    for phase in ("write", "read"):
        table = tables[f"streaming {phase}: duration 0.3 s"]
        ((_, _, moved, latency, bandwidth),) = table["rows"]
        assert moved == timed["phases"][0 if phase == "write" else 1]["bytes_total"] / MiB
        assert bandwidth == pytest.approx(
            timed["summary"][phase]["bandwidth_mib_s"]["mean"], rel=1e-9
        )
        assert latency == timed["summary"][phase]["seconds"]["mean"]


def test_iozone_tables_per_target_with_repeats_pooled(profiled, hpcio, read_documents, file_url):
    docs = read_documents(profiled / "iozone.jsonl")
    assert len(docs) == 3 * 6
    assert {d["run"]["workload"] for d in docs} == {"iozone"}
    done = hpcio("report", profiled / "iozone.jsonl")
    assert done.returncode == 0, done.stderr
    text = done.stdout.split("KiB/s per file (IOzone's table", 1)[1]
    tables = ("KiB/s per file (IOzone's table" + text).strip().split("\n\n")
    assert [t.splitlines()[0].rsplit(": ", 1)[1] for t in tables] == [
        file_url(profiled / "t1"),
        file_url(profiled / "t2"),
    ]
    for table, chosen in ((tables[0], docs[:12]), (tables[1], docs[12:])):
        row = next(line for line in table.splitlines() if line.split()[:2] == ["64", "64"])
        cells = row.split()[2:]
        for index, test in enumerate(
            ("write", "rewrite", "read", "reread", "random read", "random write")
        ):
            runs = [d for d in chosen if d["run"]["params"]["test"] == test]
            (phase,) = runs[0]["run"]["phases"]
            rates = iteration_mib_s(runs, phase)
            assert cells[index] == f"{sum(rates) / len(rates) * 1024:.0f}"
    assert "Note: some tests ran up to 2 times" in tables[0]
    assert "Note:" not in tables[1]
