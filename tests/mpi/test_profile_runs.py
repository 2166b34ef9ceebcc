import re

import pytest
from hpcio.workloads.profiles import storage

pytestmark = pytest.mark.mpi

MiB = 1 << 20


def run_profile(hpcio, target, output, name, *more, ranks=2, size="2MiB", env=None):
    done = hpcio(
        "profile", name, "--target", target, "--size", size, "--verify",
        "-o", output, "-n", ranks, *more, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done


@pytest.mark.parametrize("name", list(storage.PROFILES))
def test_each_profile_runs_and_verifies(hpcio, file_url, read_documents, target_dir, name):
    output = target_dir.parent / "results.jsonl"
    run_profile(hpcio, file_url(target_dir), output, name)
    (doc,) = read_documents(output)
    profile = storage.PROFILES[name]
    params = doc["run"]["params"]
    assert doc["run"]["workload"] == name
    assert params["transfer_bytes"] == profile.transfer_bytes
    assert params["in_flight"] == profile.in_flight
    assert params["random_offsets"] == (profile.order == "random")
    assert tuple(doc["summary"]) == profile.phases
    for phase in doc["summary"].values():
        assert phase["bytes_total"] == 2 * MiB
        assert phase["errors"] == 0
        assert phase["latency"]["count"] == 2 * MiB // profile.transfer_bytes
    assert list(target_dir.iterdir()) == []  # removed afterwards


def test_reorder_reads_the_next_ranks_files(hpcio, file_url, read_documents, target_dir):
    output = target_dir.parent / "results.jsonl"
    run_profile(hpcio, file_url(target_dir), output, "random-throughput", "--reorder")
    (doc,) = read_documents(output)
    assert doc["run"]["params"]["reorder"] is True
    assert doc["cache"]["read_back_from"] == "data written by another rank on the same node"
    assert all(p["errors"] == 0 for p in doc["phases"])  # --verify checked the other's data


def table_values(text, title):
    """{row label: [cells]} of the table under `title` in `text`."""
    block = text.split(title, 1)[1].strip().split("\n\n")[0]
    rows = [line.strip("|").split("|") for line in block.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0]]
    return header, {r[0].strip(): [c.strip() for c in r[1:]] for r in rows[2:]}


def test_profile_all_prints_the_studys_tables_from_the_documents(
    hpcio, file_url, read_documents, target_dir
):
    output = target_dir.parent / "results.jsonl"
    done = run_profile(hpcio, file_url(target_dir), output, "all", "-q")
    docs = read_documents(output)
    names = list(storage.PROFILES)
    assert [d["run"]["workload"] for d in docs] == names
    header, bandwidth = table_values(done.stdout, "Bandwidth (MiB/s, bytes over mean phase time)")
    assert header == ["MiB/s", *names]
    _, latency = table_values(done.stdout, "Latency per operation (ms)")
    for doc, column in zip(docs, range(len(names)), strict=True):
        for phase, label in (("write", "Writes"), ("read", "Reads")):
            summary = doc["summary"].get(phase)
            cell = bandwidth[f"{label}:"][column]
            if summary is None:
                assert cell == "-"
                continue
            assert cell == f"{summary['bandwidth_mib_s']['mean']:.2f}"
            for key, statistic in (("mean_s", "Avg."), ("p50_s", "Median"), ("p99_s", "99%")):
                expected = f"{summary['latency'][key] * 1e3:.3f}"
                assert latency[f"{label} {statistic}:"][column] == expected

    report = hpcio("report", output)
    assert report.returncode == 0, report.stderr
    assert table_values(report.stdout, "Latency per operation (ms)")[1] == latency


def test_object_store_output_says_what_a_transfer_is(hpcio, tmp_path, read_documents):
    output = tmp_path / "r.jsonl"
    done = run_profile(hpcio, "memory://", output, "max-latency", ranks=1)
    assert re.search(r"note: on memory each transfer is an object .* one PUT .* GET", done.stdout)
    (doc,) = read_documents(output)
    objects = 2 * MiB // (4 << 10)
    assert doc["run"]["params"]["files_per_rank"] == objects
    write, read = doc["phases"]
    assert write["requests"]["put"] == objects
    assert "upload_part" not in write["requests"]
    assert read["requests"]["get"] == objects


def stored_objects(server, prefix):
    if hasattr(server, "client"):
        listed = server.client().list_objects_v2(Bucket="hpcio-test", Prefix=prefix)
        return [o["Key"] for o in listed.get("Contents", [])]
    return list(server.container_client().list_blob_names(name_starts_with=prefix))


@pytest.mark.parametrize("server_name", ["s3_server", "azure_server"])
@pytest.mark.parametrize("name", list(storage.PROFILES))
def test_each_profile_on_object_stores(hpcio, request, tmp_path, read_documents, server_name, name):
    """On S3 and Azure every transfer is an object: PUT whole, read by a ranged GET of all of
    it, checked byte for byte; afterwards the prefix is empty (bulk deletes)."""
    server = request.getfixturevalue(server_name)
    prefix = f"profile-{name}"
    output = tmp_path / "r.jsonl"
    profile = storage.PROFILES[name]
    size = max(512 << 10, 4 * profile.transfer_bytes)  # 64 objects of 4 KiB or 2 of 1 MiB each
    run_profile(hpcio, server.url(prefix), output, name, size=str(size), env=server.env)
    (doc,) = read_documents(output)
    objects_per_rank = size // 2 // profile.transfer_bytes
    assert doc["run"]["params"]["files_per_rank"] == objects_per_rank
    for phase in doc["phases"]:
        assert phase["errors"] == 0
        assert phase["ops_total"] == 2 * objects_per_rank
        kind = "get" if phase["phase"] == "read" else "put"
        assert phase["requests"][kind] == 2 * objects_per_rank
    assert stored_objects(server, prefix) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nope",), "unknown profile 'nope'"),
        (("streaming", "--size", "1KiB"), "less than one 1 MiB transfer per rank"),
        (("streaming", "--size", "lots"), "lots"),
        (("all", "-n", "0"), "-n must be at least 1"),
        (("streaming", "--in-flight", "0"), "--in-flight must be at least 1"),
    ],
)
def test_bad_input_is_one_line(hpcio, file_url, target_dir, error_line, args, message):
    done = hpcio("profile", *args, "--target", file_url(target_dir))
    assert done.returncode == 2
    assert message in error_line(done)


def test_duration_repeats_transfers_until_the_deadline(hpcio, file_url, read_documents, target_dir):
    output = target_dir.parent / "results.jsonl"
    done = run_profile(hpcio, file_url(target_dir), output, "max-latency", "--duration", "1")
    assert "each phase for 1 s" in done.stdout
    (doc,) = read_documents(output)
    assert doc["run"]["params"]["duration_s"] == 1.0
    for phase in doc["phases"]:
        assert phase["errors"] == 0
        # No rank stops before its deadline, 1 s after its post-barrier t0.
        assert all(rank["end_s"] >= 1.0 for rank in phase["per_rank"])
        assert phase["bytes_total"] >= 2 * MiB  # at least once through every file
        assert phase["bytes_total"] % (4 << 10) == 0
        # Per interval p99s come from merged counts: the phase's p99 lies within their range
        # (give or take one bucket, <1%), and their intervals cover the phase.
        series = phase["series"]
        assert series["interval_s"] * len(series["mib_s"]) >= phase["phase_time_s"] * 0.999
        p99s = [p for p in series["p99_s"] if p is not None]
        # An interval with no finished op has no p99 (a loaded node can stall a tenth of a
        # second): only that some have one is a property of the code, not of the machine.
        assert p99s
        overall = phase["latency"]["p99_s"]
        assert min(p99s) * 0.99 <= overall <= max(p99s) * 1.01
    assert list(target_dir.iterdir()) == []


def test_time_based_reads_on_an_object_store(hpcio, tmp_path, read_documents):
    output = tmp_path / "r.jsonl"
    run_profile(hpcio, "memory://", output, "small-wss", "--duration", "0.5", ranks=1)
    (doc,) = read_documents(output)
    assert doc["phases"][0]["per_rank"][0]["end_s"] >= 0.5
    assert doc["phases"][0]["bytes_total"] >= 2 * MiB


def test_time_based_writes_on_an_object_store_re_put_whole_objects(hpcio, tmp_path, read_documents):
    output = tmp_path / "r.jsonl"
    run_profile(hpcio, "memory://", output, "max-latency", "--duration", "0.3", ranks=1)
    (doc,) = read_documents(output)
    write = doc["phases"][0]
    assert write["per_rank"][0]["end_s"] >= 0.3
    assert write["requests"]["put"] == write["ops_total"] >= 2 * MiB // (4 << 10)


def test_time_based_writes_of_objects_in_parts_are_refused(hpcio, error_line):
    done = hpcio("run", "--target", "memory://", "--pattern", "mfmw", "--duration", "1",
                 "--size-per-rank", "2MiB", "--transfer", "1MiB")  # fmt: skip
    assert done.returncode == 2
    assert "memory object is written once" in error_line(done)
