"""matplotlib is the plots extra: without it, --plots and --html are one line naming the extra
(exit 2) and nothing is drawn; everything else works. matplotlib is blocked from import here as
tests/test_layers.py blocks the engine."""

import subprocess
import sys

import pytest
import recorded

EXTRA_LINE = "pip install 'hpcio[plots]'"


def without_matplotlib(*args, code="from hpcio.cli import main; sys.exit(main(ARGS))"):
    blocked = "import sys; sys.modules['matplotlib'] = None; "
    program = blocked + code.replace("ARGS", repr([str(a) for a in args]))
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (("report", recorded.V1 / "file-single.jsonl", "--plots", "PLACE"), "--plots"),
        (("report", recorded.V1 / "file-single.jsonl", "--html", "PLACE/r.html"), "--html"),
        (
            ("compare", recorded.V1 / "file-single.jsonl", recorded.V1 / "file-single.jsonl",
             "--plots", "PLACE"),
            "--plots",
        ),
    ],
)  # fmt: skip
def test_drawing_without_matplotlib_is_one_line_naming_the_extra(
    tmp_path, monkeypatch, hpcio_in_process, command, option
):
    # Blocked as without_matplotlib blocks it, in pytest's process (the refusal comes before
    # anything is drawn); the tests below show the block in a process of its own.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    args = [str(a).replace("PLACE", str(tmp_path / "out")) for a in command]
    done = hpcio_in_process(*args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"hpcio: error: {option} draws with matplotlib, which is not installed: {EXTRA_LINE}"
    ]
    assert done.stdout == ""
    assert not (tmp_path / "out").exists()


def test_reports_without_matplotlib_still_print_their_tables():
    done = without_matplotlib("report", recorded.V1 / "file-single.jsonl")
    assert done.returncode == 0, done.stderr
    assert "mfmw" in done.stdout


def test_the_block_is_real():
    # The check can fail: with matplotlib blocked, importing it fails.
    done = without_matplotlib(code="import matplotlib")
    assert done.returncode != 0 and "matplotlib" in done.stderr


def test_with_matplotlib_the_guard_lets_it_by():
    from hpcio.report.plots import require_matplotlib

    require_matplotlib("--plots")
