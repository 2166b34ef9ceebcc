"""Reports read documents only: `hpcio report` and `hpcio compare` give the same output, byte
for byte, in a process where the native engine cannot be imported."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import recorded

#: Makes `import hpcio._engine` fail in every process that starts with it on its path.
_NO_ENGINE = 'import sys\nsys.modules["hpcio._engine"] = None\n'
TIMEOUT_S = 120


def _hpcio(*args, no_engine: bool, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    if no_engine:
        blocker = cwd / "no-engine"
        blocker.mkdir(exist_ok=True)
        (blocker / "sitecustomize.py").write_text(_NO_ENGINE)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocker), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "hpcio", *map(str, args)],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip


def test_the_blocker_blocks(tmp_path):
    done = _hpcio("env", no_engine=True, cwd=tmp_path)
    assert done.returncode != 0
    assert "hpcio._engine" in done.stderr


COMMANDS = {
    "report": ("report", recorded.V1 / "file-2ranks.jsonl", recorded.V1 / "file-t2-2ranks.jsonl"),
    "report profiles": ("report", recorded.V1 / "profile-all.jsonl"),
    "report iozone": ("report", recorded.V1 / "profile-iozone.jsonl"),
    "report csv": ("report", recorded.V1 / "file-configs.jsonl", "--format", "csv"),
    "report json": ("report", recorded.V1 / "s3-2ranks.jsonl", "--format", "json"),
    "compare": (
        "compare", recorded.V1 / "file-2ranks.jsonl", recorded.V1 / "file-2ranks-again.jsonl"
    ),
    "compare json": (
        "compare", recorded.V1 / "file-1rank.jsonl", recorded.V1 / "file-1rank-again.jsonl",
        "--format", "json",
    ),
}  # fmt: skip


#: Runs each command of COMMANDS as `python -m hpcio` would (hpcio.cli.main, SystemExit made
#: a return code) in one process, and prints their exit codes and outputs as JSON.
_EACH_COMMAND = """
import contextlib, io, json, sys
from hpcio import cli
done = {}
for name, args in json.loads(sys.argv[1]).items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(args)
        except SystemExit as exit_:
            code = exit_.code
    done[name] = [code, out.getvalue(), err.getvalue()]
print(json.dumps(done))
"""


@pytest.fixture(scope="module")
def without_engine(tmp_path_factory):
    """Every command of COMMANDS, run in one process where the engine cannot be imported (the
    `python -m hpcio report` and the HTML page below keep a process each)."""
    cwd = tmp_path_factory.mktemp("without-engine")
    blocker = cwd / "no-engine"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(_NO_ENGINE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HPCIO_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocker), env.get("PYTHONPATH")]))
    commands = json.dumps({name: [str(arg) for arg in args] for name, args in COMMANDS.items()})
    done = subprocess.run(
        [sys.executable, "-c", _EACH_COMMAND, commands],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=TIMEOUT_S, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_same_output_without_the_engine(name, without_engine, hpcio_in_process):
    # With the engine, in pytest's process (tests/test_cli_errors.py holds that to a process's).
    with_engine = hpcio_in_process(*COMMANDS[name])
    assert with_engine.returncode == 0, with_engine.stderr
    assert with_engine.stdout.strip()
    assert without_engine[name] == [0, with_engine.stdout, with_engine.stderr]


def test_python_m_hpcio_reports_without_the_engine(tmp_path, hpcio_in_process):
    """`python -m hpcio report` itself, as a user starts it, without the engine."""
    with_engine = hpcio_in_process(*COMMANDS["report"])
    without = _hpcio(*COMMANDS["report"], no_engine=True, cwd=tmp_path)
    assert (without.returncode, without.stdout, without.stderr) == (
        0, with_engine.stdout, with_engine.stderr,
    )  # fmt: skip


def test_the_same_html_page_without_the_engine(tmp_path, hpcio_in_process):
    # With the engine in pytest's process, as above; without it in a process of its own.
    pages = []
    for no_engine in (False, True):
        page = tmp_path / f"page-{no_engine}.html"
        args = ("report", recorded.V1 / "file-single.jsonl", "--html", page)
        done = _hpcio(*args, no_engine=True, cwd=tmp_path) if no_engine else hpcio_in_process(*args)
        assert done.returncode == 0, done.stderr
        pages.append(page.read_bytes())
    assert pages[0] == pages[1]
    assert b"<svg" in pages[0] or b"data:image" in pages[0]


def test_cost_prices_a_document_from_its_footprint_without_the_engine(
    hpcio, hpcio_in_process, tmp_path
):
    """A document written now says what its run stored (its footprint): `hpcio cost` prices
    it from the document alone, the same as from its workload, in a process without the
    engine (and so without the workload registry, which imports it)."""
    from hpcio.commands.cost import run_facts
    from hpcio.report.cost import facts_of
    from hpcio.results import io as results_io
    from hpcio.spec.model import RunSpec

    out = tmp_path / "run.jsonl"
    made = hpcio("run", "--pattern", "sfmw", "--target", "memory://", "--size-per-rank", "16MiB",
                 "--transfer", "8MiB", "-i", "2", "-o", out, "-q")  # fmt: skip
    assert made.returncode == 0, made.stderr
    (doc,) = results_io.read(out)
    assert doc.footprint is not None
    assert facts_of(doc) == run_facts(RunSpec.from_dict(doc.run))
    args = ("cost", out, "--as", "s3", "--format", "json")
    without, alone = _hpcio(*args, no_engine=True, cwd=tmp_path), hpcio_in_process(*args)
    assert without.returncode == 0, without.stderr
    assert without.stdout == alone.stdout
