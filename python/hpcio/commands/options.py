"""Options the user typed, told apart from defaults: each may be given once (argparse would keep
the last silently), and one that does not apply to the run is refused, not ignored."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from hpcio.errors import SpecError
from hpcio.options import Option
from hpcio.spec.model import RunSpec
from hpcio.workloads import registry
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
            _become(action, OnceFlag)
        elif isinstance(action, argparse._StoreAction):
            _become(action, Once)


def _become(action: argparse.Action, kind: type[argparse.Action]) -> None:
    # The parser built the action: it keeps its dest, help and default, and takes kind's call.
    action.__class__ = kind


def _reads(run: RunSpec) -> bool:
    return any(p in _phases(run) for p in (Phase.READ, Phase.MIXED))


def _timed_writes(run: RunSpec) -> bool:
    return any(p in _phases(run) for p in (Phase.WRITE, Phase.MIXED))


def _phases(run: RunSpec) -> tuple[Phase, ...]:
    """The timed phases (checked against the documented orders later, by validate)."""
    if run.phases is not None:
        return tuple(Phase(p) for p in run.phases if p in tuple(Phase))
    # The workload's own: a replay's are the ones its log has.
    return run.workload.phases(run)


def _phases_named(run: RunSpec) -> str:
    return f"--phases {','.join(run.phases)}" if run.phases else f"{run.workload.name}'s phases"


@dataclass(frozen=True, slots=True)
class Rule:
    """A common setting that only some runs use."""

    option: str
    dest: str  # in the parsed arguments
    applies: Callable[[RunSpec], bool]
    needs: str  # "needs a read phase"
    this: Callable[[RunSpec], str]  # what the run is instead: "--phases write"


def _scheme(run: RunSpec) -> str:
    return f"a {run.target.url.split(':', 1)[0]}:// target"


RULES = (
    Rule("--reorder", "reorder", _reads, "needs a read phase", _phases_named),
    Rule("--verify", "verify", _reads, "needs a read phase", _phases_named),
    Rule("--drop-caches", "drop_caches", _reads, "needs a read phase", _phases_named),
    Rule("--fsync", "fsync", _timed_writes, "needs a timed write phase",
         lambda r: _phases_named(r) + (" (its layout is fsync'd, untimed)"
                                       if r.phases is None else "")),
    Rule("--store-option", "store_option", lambda r: r.target.is_object_store,
         "is for object stores", _scheme),
    Rule("--no-space-check", "space_check", lambda r: not r.target.is_object_store,
         "is for POSIX targets (object stores report no free space)",
         _scheme),
)  # fmt: skip


def _takes(run: RunSpec, field: str) -> bool:
    return any(f.name == field for f in dataclasses.fields(run.params))


def _for_whom(option: Option, family: str) -> str:
    takers = registry.taking(option.field, family or None) or registry.taking(option.field)
    # Presets (storage profiles) take options from their own command, not from this one.
    alone = {w.name for w in registry.runnable()}
    names = [n for n in takers if n in alone] or takers
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{option.flag} is for {listed}"


def refuse_inapplicable(
    run: RunSpec, typed: set[str], params_options: Sequence[Option] = (), family: str = ""
) -> None:
    """Refuse the first typed option that `run` would ignore: one its workload's params do
    not declare, or a common setting it has no use for.

    Raises:
        SpecError: "--read-scope is for sfmr, not sfmw".
    """
    for option in params_options:
        if option.field in typed and not _takes(run, option.field):
            raise SpecError(f"{_for_whom(option, family)}, not {run.workload.name}")
    for rule in RULES:
        if rule.dest in typed and not rule.applies(run):
            raise SpecError(f"{rule.option} {rule.needs}, not {rule.this(run)}")


def fit_to_each(
    runs: Sequence[RunSpec], typed: set[str], params_options: Sequence[Option], family: str
) -> list[RunSpec]:
    """A sweep's runs with each typed option kept where it applies and left at its default
    where it does not (a run's params hold only what its workload declares); an option that
    applies to none of them is refused.

    Raises:
        SpecError: "--read-scope is for sfmr, not sfmw or mfmw".
    """
    for option in params_options:
        if option.field in typed and runs and not any(_takes(r, option.field) for r in runs):
            these = " or ".join(dict.fromkeys(r.workload.name for r in runs))
            raise SpecError(f"{_for_whom(option, family)}, not {these}")
    for rule in RULES:
        if rule.dest in typed and runs and not any(rule.applies(r) for r in runs):
            these = " or ".join(dict.fromkeys(rule.this(r) for r in runs))
            raise SpecError(f"{rule.option} {rule.needs}, not {these}")
    defaults: dict[str, Any] = {
        f.name: f.default
        for f in dataclasses.fields(RunSpec)
        if f.default is not dataclasses.MISSING
    }
    fitted = []
    for run in runs:
        for rule in RULES:
            if rule.dest in typed and not rule.applies(run) and rule.dest in defaults:
                run = dataclasses.replace(run, **{rule.dest: defaults[rule.dest]})
        fitted.append(run)
    return fitted
