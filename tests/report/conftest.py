"""Real result files for the plot, HTML and comparison tests, and headless Chromium."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

#: Debian's package; scripts/test installs it when run as root.
CHROMIUM = "/usr/bin/chromium"
#: Only stops a hung browser; a page of this size renders in about a second.
CHROMIUM_TIMEOUT_S = 120


class Results:
    """Paths of JSON Lines files written by real sweeps, all under one temporary root.

    - a:       sfmw, mfmw x 1 MiB, 2 MiB per rank on target t1, 2 ranks, 2 iterations
    - again:   the same points as `a` once more (3 iterations)
    - one:     the same patterns and sizes on t1 with 1 rank
    - t2:      sfmw x 1 MiB, 2 MiB on target t2, 2 ranks, 2 iterations
    - single:  mfmw 1 MiB on t1, 2 ranks, 1 iteration
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.t1, self.t2 = root / "t1", root / "t2"
        self.a = root / "a.jsonl"
        self.again = root / "again.jsonl"
        self.one = root / "one.jsonl"
        self.t2_file = root / "t2.jsonl"
        self.single = root / "single.jsonl"

    def combined(self, name: str, *parts: Path) -> Path:
        """One file holding the documents of `parts`, in order."""
        path = self.root / name
        path.write_text("".join(p.read_text() for p in parts))
        return path


@pytest.fixture(scope="session")
def results(tmp_path_factory, hpcio, file_url) -> Results:
    r = Results(tmp_path_factory.mktemp("results"))
    r.t1.mkdir()
    r.t2.mkdir()

    def sweep(out, target, *more, patterns="sfmw,mfmw", sizes="1MiB..2MiB"):
        done = hpcio(
            "sweep",
            "--pattern",
            patterns,
            "--sizes",
            sizes,
            "--target",
            file_url(target),
            "--transfer",
            "256KiB",
            "-q",
            "-o",
            out,
            *more,
        )
        assert done.returncode == 0, done.stderr

    sweep(r.a, r.t1, "-n", "2", "-i", "2")
    sweep(r.again, r.t1, "-n", "2", "-i", "3")
    sweep(r.one, r.t1, "-n", "1", "-i", "2")
    sweep(r.t2_file, r.t2, "-n", "2", "-i", "2", patterns="sfmw")
    sweep(r.single, r.t1, "-n", "2", "-i", "1", patterns="mfmw", sizes="1MiB")
    return r


@pytest.fixture(scope="session")
def chromium(tmp_path_factory):
    """chromium(*args, url) -> CompletedProcess of headless Chromium on `url` with a fresh
    profile and no network services; skips when Debian's chromium is not installed."""
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip(f"headless Chromium not installed ({CHROMIUM}); scripts/test installs it")
    binary = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")

    def run(*args: str, url: str) -> subprocess.CompletedProcess[str]:
        profile = tmp_path_factory.mktemp("chromium-profile")
        command = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
            url,
        ]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    return run
