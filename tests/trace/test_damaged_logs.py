"""A damaged Darshan log never crashes hpcio: cut short at any size, or with bytes zeroed, it is
one line and exit 2 from `darshan summary` and `replay`, and a log that lost its DXT section
says so instead of being read as a log of counters alone (issue 25)."""

from __future__ import annotations

import os

import darshan
import pytest

SAMPLES = os.path.dirname(darshan.__file__)
DXT_JAVA = os.path.join(SAMPLES, "examples", "example_logs", "dxt.darshan")
DXT_SIMPLE = os.path.join(SAMPLES, "tests", "input", "sample-dxt-simple.darshan")


def cut(tmp_path, log, size):
    damaged = tmp_path / f"cut-{size}.darshan"
    with open(log, "rb") as whole:
        damaged.write_bytes(whole.read(size))
    return damaged


def one_line(done) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("log", "size", "says"),
    [
        (DXT_JAVA, 10, "(no Darshan header)"),
        (DXT_JAVA, 100, "its header alone is"),
        (DXT_JAVA, 1024, "its file names end at byte"),
        (DXT_JAVA, 3 * 1024, "its file names end at byte"),
        (DXT_JAVA, 8 * 1024, "POSIX, STDIO, DXT_POSIX sections end at byte"),
        (DXT_JAVA, 20 * 1024, "DXT_POSIX section ends at byte"),
        (DXT_JAVA, 50 * 1024, "DXT_POSIX section ends at byte"),
        (DXT_SIMPLE, 2 * 1024, "its file names end at byte"),
        (DXT_SIMPLE, 6000, "DXT_POSIX"),
    ],
)
@pytest.mark.parametrize("command", ["darshan", "replay"])
def test_a_log_cut_short_is_one_line(hpcio, capfd, tmp_path, log, size, says, command):
    damaged = cut(tmp_path, log, size)
    capfd.readouterr()
    if command == "darshan":
        done = hpcio("darshan", "summary", damaged)
    else:
        done = hpcio("replay", damaged, "--target", f"file://{tmp_path}", "--dry-run")
    # In pytest's process (conftest.run_cli_fast): what darshan-util's C code would write past
    # Python's sys.stderr lands on the descriptors, which must stay silent too. The zeroed logs
    # and the whole log below keep real processes.
    assert capfd.readouterr() == ("", "")
    line = one_line(done)
    assert line.startswith(f"hpcio: error: {damaged}: "), line
    assert says in line, line
    if "DXT_POSIX section ends" in says:
        assert "its counters alone would be another workload" in line


@pytest.mark.parametrize("at", [3000, 6000, 20000])
def test_a_log_with_zeroed_bytes_is_one_line(hpcio_process, tmp_path, at):
    data = bytearray(open(DXT_JAVA, "rb").read())  # noqa: SIM115
    data[at : at + 200] = bytes(200)
    damaged = tmp_path / "zeroed.darshan"
    damaged.write_bytes(bytes(data))
    assert "damaged Darshan log" in one_line(hpcio_process("darshan", "summary", damaged))


def test_the_whole_log_still_reads(hpcio_process):
    done = hpcio_process("darshan", "summary", DXT_JAVA, "--json")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
