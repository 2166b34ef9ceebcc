"""Options the user typed, told apart from defaults: each may be given once (argparse would keep
the last silently), and one that does not apply to the run is refused, not ignored."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hpcio.errors import SpecError
from hpcio.spec.model import RunSpec
from hpcio.workloads import patterns
from hpcio.workloads.contract import Phase

_GIVEN = "_given_options"


def given(args: argparse.Namespace) -> set[str]:
    """The destinations of the options typed on the command line (defaults are not)."""
    return set(getattr(args, _GIVEN, ()))


def _mark(parser: argparse.ArgumentParser, namespace: argparse.Namespace, action: Any) -> None:
    typed = getattr(namespace, _GIVEN, None)
    if typed is None:
        typed = set()
        setattr(namespace, _GIVEN, typed)
    if action.dest in typed:
        parser.error(f"{'/'.join(action.option_strings)} is given twice; give it once")
    typed.add(action.dest)


class Once(argparse.Action):
    """Store the value; refuse the option a second time."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        _mark(parser, namespace, self)
        setattr(namespace, self.dest, values)


class OnceFlag(argparse.Action):
    """A store_true flag that may be given once."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=False, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        _mark(parser, namespace, self)
        setattr(namespace, self.dest, True)


def once_each(parser: argparse.ArgumentParser, *, keep: Iterable[str] = ()) -> None:
    """Make every optional of `parser` (but help, version and the repeatable `keep` dests)
    refuse a second occurrence, and record which were typed."""
    for action in parser._actions:
        if not action.option_strings or action.dest in (*keep, "help", "version"):
            continue
        if isinstance(action, argparse._StoreTrueAction):
            action.__class__ = OnceFlag
        elif isinstance(action, argparse._StoreAction):
            action.__class__ = Once


def _reads(run: RunSpec) -> bool:
    return Phase.READ.value in _phases(run)


def _timed_writes(run: RunSpec) -> bool:
    return Phase.WRITE.value in _phases(run)


def _phases(run: RunSpec) -> tuple[str, ...]:
    """The timed phases' names (checked against the documented orders later, by validate)."""
    if run.phases is not None:
        return run.phases
    return tuple(p.value for p in patterns.get(run.pattern).phases)


def _phases_named(run: RunSpec) -> str:
    return f"--phases {','.join(run.phases)}" if run.phases else f"{run.pattern}'s phases"


@dataclass(frozen=True, slots=True)
class Rule:
    """An option that only some runs use."""

    option: str
    dest: str  # in the parsed arguments
    field: str  # of RunSpec
    applies: Callable[[RunSpec], bool]
    needs: str  # "is for sfmr"
    this: Callable[[RunSpec], str]  # what the run is instead: "sfmw"


def _pattern(run: RunSpec) -> str:
    return run.pattern


def _scheme(run: RunSpec) -> str:
    return f"a {run.target.url.split(':', 1)[0]}:// target"


RULES = (
    Rule("--read-scope", "read_scope", "read_scope", lambda r: r.pattern == "sfmr",
         "is for sfmr", _pattern),
    Rule("--gather-chunk", "gather_chunk", "gather_chunk_bytes", lambda r: r.pattern == "sfsw",
         "is for sfsw", _pattern),
    Rule("--segments", "segments", "segments",
         lambda r: r.pattern in ("sfsw", "sfmw", "sfmr"),
         "is for the shared-file patterns sfsw, sfmw and sfmr",
         lambda r: f"{r.pattern} (a file per rank has no segments to interleave)"),
    Rule("--files-per-rank", "files_per_rank", "files_per_rank",
         lambda r: r.pattern in ("mfmw", "mfmr"), "is for mfmw and mfmr", _pattern),
    Rule("--random", "random", "random_offsets", lambda r: r.pattern in ("mfmw", "mfmr"),
         "is for mfmw and mfmr", _pattern),
    Rule("--duration", "duration", "duration_s", lambda r: r.pattern in ("mfmw", "mfmr"),
         "is for mfmw and mfmr", _pattern),
    Rule("--reorder", "reorder", "reorder", _reads, "needs a read phase", _phases_named),
    Rule("--verify", "verify", "verify", _reads, "needs a read phase", _phases_named),
    Rule("--drop-caches", "drop_caches", "drop_caches", _reads, "needs a read phase",
         _phases_named),
    Rule("--fsync", "fsync", "fsync", _timed_writes, "needs a timed write phase",
         lambda r: _phases_named(r) + (" (its layout is fsync'd, untimed)"
                                       if r.phases is None else "")),
    Rule("--store-option", "store_option", "target", lambda r: r.target.is_object_store,
         "is for object stores", _scheme),
    Rule("--no-space-check", "no_space_check", "space_check",
         lambda r: not r.target.is_object_store,
         "is for POSIX targets (object stores report no free space)",
         _scheme),
)  # fmt: skip


def _default(field: str) -> Any:
    for f in dataclasses.fields(RunSpec):
        if f.name == field:
            return f.default
    raise KeyError(field)


def refuse_inapplicable(run: RunSpec, typed: set[str]) -> None:
    """Refuse the first typed option that `run` would ignore.

    Raises:
        SpecError: "--read-scope is for sfmr, not sfmw".
    """
    for rule in RULES:
        if rule.dest in typed and not rule.applies(run):
            raise SpecError(f"{rule.option} {rule.needs}, not {rule.this(run)}")


def fit_to_each(runs: Sequence[RunSpec], typed: set[str]) -> list[RunSpec]:
    """A sweep's runs with each typed option kept where it applies and left at its default
    where it does not; an option that applies to none of them is refused.

    Raises:
        SpecError: "--read-scope is for sfmr, not sfmw or mfmw".
    """
    for rule in RULES:
        if rule.dest in typed and runs and not any(rule.applies(r) for r in runs):
            these = " or ".join(dict.fromkeys(rule.this(r) for r in runs))
            raise SpecError(f"{rule.option} {rule.needs}, not {these}")
    fitted = []
    for run in runs:
        for rule in RULES:
            if rule.dest in typed and not rule.applies(run) and rule.field != "target":
                run = dataclasses.replace(run, **{rule.field: _default(rule.field)})
        fitted.append(run)
    return fitted
