"""The IOR, fio and mdtest options each hpcio option stands for: one table (options.PEER_OPTIONS)
that --help, the man page and docs/coming-from.md all show; and shell completion."""

import re
from pathlib import Path

import pytest
from hpcio import options
from hpcio.commands import man
from hpcio.commands.parser import build_parser, walk

DOCS = Path(__file__).resolve().parents[1] / "docs" / "coming-from.md"
#: The issue's list (issue 29): every one must be mapped.
IOR = ("-a", "-b", "-t", "-s", "-F", "-e", "-C", "-w", "-r", "-k", "-D")
FIO = ("rw", "bs", "size", "iodepth", "numjobs", "direct", "fsync", "time_based", "runtime",
       "nrfiles")  # fmt: skip
MDTEST = ("-n", "-I", "-z", "-b", "-u")


def every_flag():
    return {flag for action in walk(build_parser()) for flag in action.option_strings}


def test_every_peer_names_an_option_hpcio_has():
    assert set(options.PEER_OPTIONS) <= every_flag()


def test_the_table_maps_every_option_the_issue_names():
    peers = " ".join(options.PEER_OPTIONS.values())
    for flag in IOR:
        assert re.search(rf"IOR [^;\]]*{re.escape(flag)}\b", peers), flag
    for name in FIO:
        assert re.search(rf"fio [^;]*{name}\b", peers), name  # end_fsync stands for fsync


def test_help_names_the_peer_option_once():
    run = build_parser(only="run")
    helps = {a.option_strings[0]: a.help for a in walk(run) if a.option_strings}
    assert helps["--transfer"].endswith("[IOR -t; fio bs]")
    assert helps["--fsync"].endswith("[IOR -e; fio end_fsync=1]")
    # Already said in its own help ("(IOR -s)"): not said twice.
    assert helps["--segments"].count("IOR -s") == 1
    assert "[" not in helps["--seed"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("bytes per call", "bytes per call [IOR -t; fio bs]"),
        ("bytes per call (IOR's -t)", "bytes per call (IOR's -t) [fio bs]"),
        ("bytes (IOR -t, fio bs)", "bytes (IOR -t, fio bs)"),
        (None, None),
    ],
)
def test_peer_help(text, expected):
    assert options.peer_help(["--part-size", "--transfer"], text) == expected


def test_the_docs_page_maps_every_option_of_the_issue():
    page = DOCS.read_text()
    tables = {
        tool: page.split(f"## {tool}")[1].split("\n## ")[0] for tool in ("IOR", "fio", "mdtest")
    }
    for flag in IOR:
        assert re.search(rf"^\| `{re.escape(flag)}[ `]", tables["IOR"], re.M), flag
    for name in FIO:
        assert re.search(rf"^\| `[^|]*\b{name}\b", tables["fio"], re.M), name
    for flag in MDTEST:
        assert re.search(rf"^\| `{re.escape(flag)}`", tables["mdtest"], re.M), flag
    for flag in options.PEER_OPTIONS:
        assert f"`{flag}" in page, flag


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_knows_every_command_and_option(hpcio, shell):
    done = hpcio("completion", shell)
    assert done.returncode == 0, done.stderr
    for word in ("sweep", "--transfer", "--size-per-rank", "--files-per-rank", "completion"):
        assert word in done.stdout, word


def test_completion_of_an_unknown_shell_is_refused(hpcio):
    done = hpcio("completion", "fish")
    assert done.returncode == 2
    assert done.stderr.startswith("hpcio: error: argument shell: invalid choice: 'fish'")


def test_the_man_page_has_every_command_and_the_peer_options():
    page = man.man_page(build_parser(), "0.0")
    assert page.startswith('.TH HPCIO 1 "" "hpcio 0.0" "User Commands"\n')
    for command in ("run", "sweep", "suite run", "report", "completion", "man"):
        assert f'.SS "hpcio {command}"' in page, command
    assert "\\fB\\-\\-transfer\\fR \\fISIZE\\fR" in page
    assert "[IOR \\-t; fio bs]" in page
    assert not re.search(r"^[.'](?!TH|SH|SS|TP|B )", page, re.M)  # no stray roff requests


def test_roff_escapes():
    assert man.roff("a-b\\c\n.x\n'y") == "a\\-b\\ec\n\\&.x\n\\&'y"
