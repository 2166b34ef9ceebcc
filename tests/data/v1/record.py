"""Record the schema_version 1 result documents in this directory with the hpcio of the tree
this script sits in (run once, at commit 424e0f7; README.md lists what each file holds).

    PYTHONPATH=python .venv/bin/python tests/data/v1/record.py

Targets live under /tmp/hpcio-v1 (stable URLs in the documents) and the S3 run goes to a local
versitygw (tests/servers.py) on 127.0.0.1. Rerunning it with a later hpcio writes that
version's documents, not v1: these files are kept as recorded.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for servers.py
import servers  # noqa: E402

ROOT = Path("/tmp/hpcio-v1")
T1, T2 = ROOT / "t1", ROOT / "t2"
SMALL = ["--transfer", "256KiB", "-q"]
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}


def hpcio(*args: object, env: dict[str, str] | None = None) -> None:
    command = ["hpcio", *map(str, args)]
    print("$", shlex.join(command), flush=True)
    subprocess.run(
        [sys.executable, "-m", "hpcio", *command[1:]],
        env=CLEAN if env is None else env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def out(name: str) -> Path:
    path = HERE / name
    path.unlink(missing_ok=True)
    return path


def url(path: Path) -> str:
    return f"file://{path}"


def interrupted(name: str) -> None:
    """A run stopped by SIGINT (Ctrl-C) after its first iterations: status "interrupted"."""
    path = out(name)
    args = ["run", "--pattern", "mfmw", "-n", "2", "--target", url(T1), "--size-per-rank",
            "16MiB", "--transfer", "1MiB", "--fsync", "-i", "1000", "-q", "-o", path]  # fmt: skip
    print("$", shlex.join(map(str, ["hpcio", *args])), "# then Ctrl-C after 2 iterations")
    job = subprocess.Popen(
        [sys.executable, "-m", "hpcio", *map(str, args)],
        env=CLEAN,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if text.endswith("\n") and '"iterations":2,' in text.split('"summary"', 1)[-1]:
            break
        time.sleep(0.02)
    os.killpg(job.pid, signal.SIGINT)
    job.wait(timeout=60)


def main() -> None:
    shutil.rmtree(ROOT, ignore_errors=True)
    for target in (T1, T2):
        target.mkdir(parents=True)
    two = ["-n", "2", "-i", "2"]

    # Patterns: all five on a file system and in memory; repeats; other ranks, targets.
    hpcio("sweep", "--pattern", "sfsw,sfmw,mfmw,sfmr,mfmr", "--sizes", "1MiB..2MiB",
          "--target", url(T1), *two, *SMALL, "-o", out("file-2ranks.jsonl"))  # fmt: skip
    hpcio("sweep", "--pattern", "sfmw,mfmw", "--sizes", "1MiB..2MiB", "--target", url(T1),
          "-n", "2", "-i", "3", *SMALL, "-o", out("file-2ranks-again.jsonl"))  # fmt: skip
    hpcio("sweep", "--pattern", "sfmw,mfmw", "--sizes", "1MiB..2MiB", "--target", url(T1),
          "-n", "1", "-i", "2", *SMALL, "-o", out("file-1rank.jsonl"))  # fmt: skip
    hpcio("run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "--target", url(T1),
          "-n", "1", "-i", "2", *SMALL, "-o", out("file-1rank-again.jsonl"))  # fmt: skip
    hpcio("sweep", "--pattern", "sfmw", "--sizes", "1MiB..2MiB", "--target", url(T2),
          *two, *SMALL, "-o", out("file-t2-2ranks.jsonl"))  # fmt: skip
    hpcio("run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "--target", url(T2),
          "-n", "1", "-i", "2", *SMALL, "-o", out("file-t2-1rank.jsonl"))  # fmt: skip
    hpcio("run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "--target", url(T1),
          "-n", "2", "-i", "1", *SMALL, "-o", out("file-single.jsonl"))  # fmt: skip
    hpcio("sweep", "--pattern", "sfsw,sfmw,mfmw,sfmr,mfmr", "--sizes", "1MiB..2MiB",
          "--target", "memory://v1", "-n", "1", "-i", "2", *SMALL,
          "-o", out("memory-1rank.jsonl"))  # fmt: skip

    # One point at three configurations; special runs.
    configs = out("file-configs.jsonl")
    for more in (
        ["--transfer", "256KiB"],
        ["--transfer", "4KiB"],
        ["--transfer", "4KiB", "--direct", "--fsync"],
    ):
        hpcio("run", "--pattern", "sfmw", "-n", "2", "--size-per-rank", "1MiB", "-i", "2",
              "-q", "--target", url(T1), *more, "-o", configs)  # fmt: skip
    hpcio("sweep", "--pattern", "mfmw", "--sizes", "1MiB..2MiB", "--target", url(T1),
          "-n", "2", "-i", "1", "--duration", "0.2", *SMALL,
          "-o", out("file-timed.jsonl"))  # fmt: skip
    hpcio("run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "--transfer", "1MiB",
          "--target", url(T1), "-n", "1", "-i", "3", "-q",
          "-o", out("file-whole.jsonl"))  # fmt: skip
    hpcio("run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "--files-per-rank", "4",
          "--target", url(T1), "-n", "2", *SMALL,
          "-o", out("file-files-per-rank.jsonl"))  # fmt: skip
    hpcio("run", "--pattern", "sfmr", "--read-scope", "own", "--size-per-rank", "1MiB",
          "--target", url(T1), *two, *SMALL, "-o", out("file-sfmr-own.jsonl"))  # fmt: skip
    hpcio("run", "--pattern", "sfmw", "--size-per-rank", "16MiB", "--transfer", "8MiB",
          "--target", "memory://cost", "-n", "1", "-i", "2", "-q",
          "-o", out("memory-parts.jsonl"))  # fmt: skip
    interrupted("file-interrupted.jsonl")

    # Profiles: the fio study (all five, and streaming repeated), IOzone's sweep.
    hpcio("profile", "all", "--size", "4MiB", "-n", "2", "--target", url(T1), "-q",
          "-o", out("profile-all.jsonl"))  # fmt: skip
    streaming = out("profile-streaming.jsonl")
    for more in (["-i", "2"], ["-i", "2"], ["--duration", "0.3"]):
        hpcio("profile", "streaming", "--size", "2MiB", *more, "-n", "2", "-q",
              "--target", url(T1), "-o", streaming)  # fmt: skip
    iozone = out("profile-iozone.jsonl")
    for target in (T1, T1, T2):
        hpcio("profile", "iozone", "--file-sizes", "64KiB", "--record-sizes",
              "64KiB", "-n", "2", "-q", "--target", url(target), "-o", iozone)  # fmt: skip

    # A suite whose points ask for 1 and 2 ranks per node.
    suite = ROOT / "nodes.toml"
    suite.write_text(SUITE)
    print(f"$ cat {suite}\n{SUITE}", end="")
    hpcio("suite", "run", suite, "--target", url(T1), "-o", out("suite-ranks-per-node.jsonl"))

    # S3 through versitygw on 127.0.0.1; object_store reads the endpoint and keys from env.
    with servers.running(servers.S3Server, ROOT / "s3") as s3:
        env = s3.environ(CLEAN)
        print("# with the AWS_* variables of tests/servers.py's S3Server in the environment")
        s3_out = out("s3-2ranks.jsonl")
        hpcio("sweep", "--pattern", "sfmw,mfmw", "--sizes", "5MiB..10MiB", "--part-size",
              "5MiB", "--target", s3.url("v1"), "-n", "2", "-i", "2", "-q", "-o", s3_out,
              env=env)  # fmt: skip
    shutil.rmtree(ROOT, ignore_errors=True)


SUITE = """\
[suite]
name = "nodes-v1"
description = "2 ranks at 1 and 2 per node"

[grid]
patterns = ["sfmr", "mfmw"]
sizes = "1MiB"
ranks = 2
ranks_per_node = [1, 2]
iterations = 1
transfer = "256KiB"
"""


if __name__ == "__main__":
    main()
