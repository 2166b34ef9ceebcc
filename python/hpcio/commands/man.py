"""`hpcio man`: hpcio(1), a man page in roff made from the parser itself, so every command and
every option declared (hpcio/options.py) is in it, with the IOR, fio and mdtest option it
stands for. Install it with `hpcio man > ~/.local/share/man/man1/hpcio.1`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    import hpcio
    from hpcio.commands.parser import build_parser

    print(man_page(build_parser(), hpcio.__version__), end="")
    return 0


def roff(text: str) -> str:
    """Text safe in a roff line: backslashes and hyphens escaped, no line opening with a
    control character."""
    escaped = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(
        f"\\&{line}" if line.startswith((".", "'")) else line for line in escaped.splitlines()
    )


def man_page(parser: argparse.ArgumentParser, version: str) -> str:
    lines = [
        f'.TH HPCIO 1 "" "hpcio {roff(version)}" "User Commands"',
        ".SH NAME",
        f"hpcio \\- {roff(parser.description or '')}",
        ".SH SYNOPSIS",
        ".B hpcio",
        "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]",
        ".SH DESCRIPTION",
        "Each command's options follow; an option's IOR, fio or mdtest equivalent is in "
        "brackets. A target is a URL (file:///scratch/run1, s3://bucket/prefix, az://, gs://, "
        "memory://, null://) or a plain absolute path, taken as file://.",
        ".SH COMMANDS",
    ]
    for name, command, help_text in _commands(parser, "hpcio"):
        lines += [f'.SS "{roff(name)}"', roff(help_text)]
        for action in command._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            if isinstance(action, argparse._SubParsersAction):
                continue
            lines += [".TP", _invocation(action), roff(action.help or "")]
    lines += [
        ".SH SEE ALSO",
        "\\fBior\\fR(1), \\fBfio\\fR(1), \\fBmdtest\\fR(1); docs/coming-from.md maps their "
        "options to hpcio's.",
    ]
    return "\n".join(lines) + "\n"


def _commands(
    parser: argparse.ArgumentParser, prefix: str
) -> list[tuple[str, argparse.ArgumentParser, str]]:
    """Every command and subcommand, depth first: (its words, its parser, its help)."""
    found = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, sub in action.choices.items():
            words = f"{prefix} {name}"
            found.append((words, sub, helps.get(name, "")))
            found.extend(_commands(sub, words))
    return found


def _invocation(action: argparse.Action) -> str:
    """`-n N, --ranks N` in bold and italics."""
    if not action.option_strings:
        name = action.metavar or action.dest
        assert isinstance(name, str)  # a tuple metavar is for nargs > 1: no positional has one
        return f"\\fI{roff(name)}\\fR"
    value = ""
    if action.nargs != 0:
        choices = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else None
        metavar = action.metavar or choices or action.dest.upper()
        value = f" \\fI{roff(str(metavar))}\\fR"
    return ", ".join(f"\\fB{roff(flag)}\\fR{value}" for flag in action.option_strings)
