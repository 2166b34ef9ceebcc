import json

import pytest
import recorded
from hpcio.errors import ResultsError
from hpcio.results import io as results_io
from hpcio.results import v1
from recorded import V1


@pytest.fixture(scope="module")
def lines(tmp_path_factory):
    """Two recorded sfmw documents (1 MiB and 2 MiB per rank, tests/data/v1), as JSON lines of
    the schema hpcio writes now (version 2, as results/v1.py upgrades them)."""
    path = tmp_path_factory.mktemp("check") / "results.jsonl"
    found = recorded.selected(V1 / "file-1rank.jsonl", path, pattern="sfmw")
    found = [json.dumps(v1.upgrade(json.loads(line))) for line in found.read_text().splitlines()]
    assert len(found) == 2
    return found


def broken(lines, tmp_path, change):
    """The real file with its second document changed by change(record)."""
    record = json.loads(lines[1])
    change(record)
    path = tmp_path / "broken.jsonl"
    path.write_text(lines[0] + "\n" + json.dumps(record) + "\n")
    return path


def set_field(*keys, value):
    def change(record):
        for key in keys[:-1]:
            record = record[key]
        record[keys[-1]] = value

    return change


def drop_field(*keys):
    def change(record):
        for key in keys[:-1]:
            record = record[key]
        del record[keys[-1]]

    return change


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (drop_field("hpcio_version"), "hpcio_version is missing"),
        (drop_field("summary", "write", "seconds"), "summary.write.seconds is missing"),
        (
            set_field("summary", "read", "bandwidth_mib_s", "mean", value="fast"),
            "summary.read.bandwidth_mib_s.mean is 'fast', not a number",
        ),
        (
            set_field("summary", "write", "bandwidth_mib_s", value=12.5),
            "summary.write.bandwidth_mib_s is 12.5, not an object",
        ),
        (set_field("phases", value={}), "phases is {}, not a list"),
        (
            set_field("phases", 1, "per_rank", 0, "bytes", value=True),
            "phases[1].per_rank[0].bytes is True, not a whole number",
        ),
        (set_field("hosts", value=["vm", 7]), "hosts[1] is 7, not a string"),
        (
            set_field("run", "ranks", value="2"),
            "run.ranks is '2', not a whole number",
        ),
        (
            set_field("run", "params", "size_per_rank_bytes", value="1MiB"),
            "run.params.size_per_rank_bytes is '1MiB', not a whole number",
        ),
        (drop_field("run", "workload"), "run.workload is missing"),
        (set_field("run", "params", value=[]), "run.params is [], not an object"),
        (
            set_field("run", "target", value="file:///tmp"),
            "run.target.url is missing or not a string",
        ),
        (
            set_field("phases", 0, "latency_hdr_b64", value="bm90IGEgaGlzdG9ncmFt"),
            "phases[0].latency_hdr_b64 is not a base64 HdrHistogram",
        ),
        (
            set_field("phases", 0, "latency_hdr_b64", value="%%%"),
            "phases[0].latency_hdr_b64 is not a base64 HdrHistogram",
        ),
    ],
)
def test_a_broken_field_is_named_with_file_and_line(lines, tmp_path, change, problem):
    path = broken(lines, tmp_path, change)
    with pytest.raises(ResultsError) as caught:
        results_io.read(path)
    assert str(caught.value) == f"{path}:2: not a valid hpcio result document: {problem}"


def test_whole_numbers_are_numbers(lines, tmp_path):
    # JSON writers may drop ".0": a whole float must still be read as a number.
    path = broken(lines, tmp_path, set_field("summary", "write", "seconds", "min", value=1))
    assert results_io.read(path)[1].summary["write"].seconds.min == 1


def test_report_prints_one_line_and_exits_2(lines, tmp_path, hpcio, error_line):
    path = broken(lines, tmp_path, set_field("summary", "read", "seconds", "mean", value=None))
    for command in (("report", path), ("report", path, "--html", tmp_path / "p.html")):
        done = hpcio(*command)
        assert done.returncode == 2
        assert error_line(done) == (
            f"hpcio: error: {path}:2: not a valid hpcio result document: "
            "summary.read.seconds.mean is None, not a number"
        )
    assert not (tmp_path / "p.html").exists()


def test_cores_per_node_is_optional_and_typed(lines, tmp_path):
    old = results_io.read(broken(lines, tmp_path, drop_field("cores_per_node")))[1]
    assert old.cores_per_node is None
    read = results_io.read(broken(lines, tmp_path, set_field("cores_per_node", value=3)))[1]
    assert read.cores_per_node == 3
    assert results_io.read(broken(lines, tmp_path, set_field("cores_per_node", value=None)))
    path = broken(lines, tmp_path, set_field("cores_per_node", value="2"))
    with pytest.raises(ResultsError) as caught:
        results_io.read(path)
    assert str(caught.value).endswith("cores_per_node is '2', not int | None")


def test_a_mixed_phase_s_side_histograms_are_checked(tmp_path):
    mixed = recorded.V1.parent / "mixed" / "file-2ranks.jsonl"
    record = json.loads(mixed.read_text().splitlines()[0])
    record["phases"][1]["write_side"]["latency_hdr_b64"] = "bm90IGEgaGlzdG9ncmFt"
    record["phases"][0]["read_side"]["ops_total"] = "many"
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(ResultsError, match=r"phases\[0\]\.read_side is "):
        results_io.read(path)
    record["phases"][0]["read_side"]["ops_total"] = 1
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(
        ResultsError, match=r"phases\[1\]\.write_side\.latency_hdr_b64 is not a base64"
    ):
        results_io.read(path)
