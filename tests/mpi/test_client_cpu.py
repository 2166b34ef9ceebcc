"""The client's CPU on real runs: a memory:// run does nothing but work on the CPU, so it is
client-bound; an O_DIRECT run on a disk waits for the device, so it is not. Neither depends on
how fast this machine is: memory:// never waits for storage, and one 8 MiB O_DIRECT transfer at
a time leaves each rank blocked in the kernel for most of its window."""

import json


def test_a_memory_run_is_client_bound(hpcio, tmp_path):
    out = tmp_path / "memory.jsonl"
    done = hpcio("run", "-n", 1, "--pattern", "mfmw", "--target", "memory://",
                 "--size-per-rank", "256MiB", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    write, read = doc["phases"]
    # The write generates and copies 256 MiB of payload (a CPU's work of tenths of a second);
    # the read of memory:// objects is a copy lasting milliseconds, too short to judge.
    cpu = write["cpu"]
    assert cpu["client_bound"], cpu
    assert cpu["demand_fraction_mean"] > 0.9
    assert cpu["user_s"] + cpu["system_s"] > 0
    assert cpu["seconds_per_gib"] > 0
    assert write["per_rank"][0]["cpu_window_s"] > 0
    assert read["cpu"]["seconds_per_gib"] > 0
    assert doc["summary"]["write"]["client_bound_iterations"] == 1
    assert any(w.startswith("client-bound: write") for w in doc["warnings"])
    assert "warning: client-bound: write" in done.stdout
    assert "client-bound)" in done.stdout  # the client CPU line


def test_an_o_direct_disk_run_is_not_client_bound(hpcio, target_dir, tmp_path):
    out = tmp_path / "direct.jsonl"
    done = hpcio("run", "-n", 2, "--pattern", "mfmw", "--target", f"file://{target_dir}",
                 "--direct", "--size-per-rank", "64MiB", "--transfer", "8MiB", "--in-flight", 1,
                 "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    for phase in doc["phases"]:
        cpu = phase["cpu"]
        assert not cpu["client_bound"], cpu
        assert cpu["seconds_per_gib"] > 0
        assert len([r for r in phase["per_rank"] if r["cpu_window_s"]]) == 2
    assert not any(w.startswith("client-bound") for w in doc["warnings"])
    assert "client-bound" not in done.stdout
    assert "client CPU: write:" in done.stdout
