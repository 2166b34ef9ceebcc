import pytest
from hpcio.workloads.profiles import iozone

pytestmark = pytest.mark.mpi

KiB = 1 << 10


def test_iozone_prints_its_table_from_the_documents(
    hpcio, file_url, read_documents, target_dir, tmp_path
):
    output, plots = tmp_path / "iozone.jsonl", tmp_path / "plots"
    done = hpcio(
        "profile", "iozone", "--target", file_url(target_dir), "--file-sizes", "64KiB..128KiB",
        "--record-sizes", "32KiB..64KiB", "--verify", "-q", "-o", output, "--plots", plots,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    docs = read_documents(output)
    assert len(docs) == 4 * 6
    assert all(p["errors"] == 0 for d in docs for p in d["phases"])
    lines = done.stdout.splitlines()
    # A line per point ([i/24], its test, file and record sizes, figures, ETA), then the table.
    counted = [line for line in lines if line.startswith("[")]
    assert len(counted) == 24
    assert counted[0].startswith("[1/24] iozone write: file 64 KiB, record 32 KiB: write ")
    assert not any(line.startswith(("  iter", "  phase", "  cache")) for line in lines)
    header = lines.index(next(line for line in lines if line.strip().startswith("kB")))
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in lines[header + 1 : header + 5]}
    assert set(rows) == {("64", "32"), ("64", "64"), ("128", "32"), ("128", "64")}
    for doc in docs:
        run = doc["run"]
        assert run["workload"] == "iozone"
        params = run["params"]
        test = iozone.TESTS.index(params["test"])
        row = rows[
            (str(params["size_per_rank_bytes"] // KiB), str(params["transfer_bytes"] // KiB))
        ]
        (phase,) = run["phases"]
        assert row[test] == f"{doc['summary'][phase]['bandwidth_mib_s']['mean'] * 1024:.0f}"
    assert (plots / "iozone.png").stat().st_size > 0
    assert str(plots / "iozone.svg") in done.stdout
    assert list(target_dir.iterdir()) == []  # the last test removes the files

    report = hpcio("report", output)
    assert report.returncode == 0, report.stderr
    assert "\n".join(lines[header : header + 5]) in report.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("streaming", "--file-sizes", "1MiB"), "--file-sizes is for 'hpcio profile iozone'"),
        (("iozone", "--size", "1MiB"), "--size is not for iozone"),
        (("iozone", "--file-sizes", "4KiB", "--record-sizes", "8KiB"), "no record size"),
        (("iozone", "--file-sizes", "8KiB..4KiB"), "is not a range"),
    ],
)
def test_bad_iozone_input_is_one_line(hpcio, file_url, target_dir, error_line, args, message):
    done = hpcio("profile", *args, "--target", file_url(target_dir))
    assert done.returncode == 2
    assert message in error_line(done)
