"""`hpcio completion bash|zsh`: the shell's completion script, made by shtab from the
parser itself, so every option declared (hpcio/options.py) completes."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

SHELLS = ("bash", "zsh")
#: Where each shell looks for it; said in --help.
_INSTALL = (
    "bash: hpcio completion bash > ~/.local/share/bash-completion/completions/hpcio; "
    "zsh: hpcio completion zsh > ~/.zfunc/_hpcio (with fpath+=~/.zfunc before compinit)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = f"Print a completion script for SHELL. {_INSTALL}"
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete for")


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    import shtab

    from hpcio.commands.parser import build_parser, walk

    parser = build_parser()
    for action in walk(parser):
        # Targets are directories (a plain path is a file:// target) and results are files.
        if action.dest == "target":
            action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]
        elif action.dest in ("output", "plots", "html") or not action.option_strings:
            action.complete = shtab.FILE  # type: ignore[attr-defined]
    print(shtab.complete(parser, shell=args.shell), end="")
    return 0
