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
    # On a node busy with other work a rank can also sleep in the kernel (reclaiming memory
    # for its payload, waking a thread), so the verdict is checked against the figure it
    # comes from rather than taken for granted; the figure itself must show a rank that
    # spent most of its window on a core or waiting for one.
    cpu = write["cpu"]
    assert cpu["demand_fraction_mean"] > 0.5, cpu
    assert cpu["client_bound"] == (cpu["demand_fraction_mean"] > 0.9), cpu
    assert cpu["user_s"] + cpu["system_s"] > 0
    assert cpu["seconds_per_gib"] > 0
    assert write["per_rank"][0]["cpu_window_s"] > 0
    assert read["cpu"]["seconds_per_gib"] > 0
    flagged = int(cpu["client_bound"])
    assert doc["summary"]["write"]["client_bound_iterations"] == flagged
    assert any(w.startswith("client-bound: write") for w in doc["warnings"]) == bool(flagged)
    assert ("warning: client-bound: write" in done.stdout) == bool(flagged)
    assert ("client-bound)" in done.stdout) == bool(flagged)  # the client CPU line


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
