"""`python -m hpcio` imports what the command it runs needs: a command line that names no
subcommand imports no command's module, `hpcio env` and `hpcio clean` do not import the
workloads `hpcio run` takes options for, and `hpcio run` imports the code of the workload it
runs and of no other (each `python -m hpcio` pays for what it imports)."""

import contextlib
import io
import json
import subprocess
import sys

import pytest
from hpcio.commands import parser

#: Each command line is run by hpcio.cli.main in one child, after every hpcio module is
#: forgotten: one interpreter's start for all of them, and none helped by one run before it.
_RUN_EACH = """
import contextlib, io, json, sys
said = {}
for line in json.loads(sys.argv[1]):
    for name in [n for n in sys.modules if n == "hpcio" or n.startswith("hpcio.")]:
        del sys.modules[name]
    from hpcio import cli
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            cli.main(line)
        except SystemExit:
            pass
    said[" ".join(line)] = sorted(n for n in sys.modules if n.startswith("hpcio."))
print(json.dumps(said))
"""
NO_SUBCOMMAND = ["--help", "--version", "", "bogus"]
#: A command line whose parser needs every workload's options: the check must see them.
_NEEDS_THE_WORKLOADS = "run --help"
#: A default run (of mfmw, on a file:// target; the directory comes after it).
_A_RUN = "run --pattern mfmw --size-per-rank 1MiB -q --target"
#: Workloads' code that neither line above may import (the registry imports it on first use).
_OTHER_WORKLOADS = (
    "hpcio.workloads.training.unet3d", "hpcio.workloads.training.cosmoflow",
    "hpcio.workloads.seismic.volume", "hpcio.workloads.seismic.imaging",
    "hpcio.workloads.replay.workload", "hpcio.workloads.mdtest.workload",
    "hpcio.workloads.netcdf_codes", "hpcio.workloads.inference.model_load",
    "hpcio.workloads.checkpoint", "hpcio.workloads.profiles.storage",
)  # fmt: skip


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> dict[str, list[str]]:
    """Each command line -> the hpcio modules imported once it ran."""
    lines = [line.split() for line in [*NO_SUBCOMMAND, "env --help", "clean --help"]]
    lines.append(_NEEDS_THE_WORKLOADS.split())
    lines.append([*_A_RUN.split(), "file://" + str(tmp_path_factory.mktemp("run"))])
    done = subprocess.run(
        [sys.executable, "-c", _RUN_EACH, json.dumps(lines)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("line", NO_SUBCOMMAND)
def test_a_line_naming_no_subcommand_imports_no_command(imported, line):
    commands = [n for n in imported[line] if n.startswith("hpcio.commands.")]
    assert commands == ["hpcio.commands.parser"], commands


@pytest.mark.parametrize("line", ["env --help", "clean --help"])
def test_env_and_clean_import_no_workload(imported, line):
    assert "hpcio.workloads.registry" not in imported[line]
    assert "hpcio.commands.run" not in imported[line]


def test_the_check_sees_the_workloads_run_imports(imported):
    assert "hpcio.workloads.registry" in imported[_NEEDS_THE_WORKLOADS]


@pytest.mark.parametrize("line", [_NEEDS_THE_WORKLOADS, _A_RUN])
def test_run_imports_no_other_workload(imported, line):
    (said,) = [modules for ran, modules in imported.items() if ran.startswith(line)]
    assert "hpcio.workloads.registry" in said
    assert [name for name in _OTHER_WORKLOADS if name in said] == []
    if line == _A_RUN:  # it did run its own, phases and all
        assert {"hpcio.workloads.patterns.mfmw", "hpcio.runner.phase"} <= set(said)
        assert "hpcio.workloads.patterns.sfsw" not in said


def test_run_help_imports_neither_numpy_nor_the_engine():
    check = (
        "import sys\n"
        "from hpcio import cli\n"
        "try:\n"
        "    cli.main(['run', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(n for n in ('numpy', 'hpcio._engine') if n in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def test_every_command_has_its_help_line():
    assert list(parser.HELP) == list(parser.COMMANDS)


def test_the_list_of_commands_is_the_same_without_their_modules():
    def help_of(**kwargs) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            parser.build_parser(**kwargs).parse_args(["--help"])
        return out.getvalue()

    assert help_of(arguments=False) == help_of()
