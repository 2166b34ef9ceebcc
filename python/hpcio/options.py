"""Options declared once, the ground floor (it imports only units and errors): each run setting
is a dataclass field whose metadata names its CLI flag, its suite key, its kind (how text or a
TOML value becomes the value), its unit and help. argparse, suites and result documents all
read the declaration (`declared`)."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from hpcio.errors import SpecError
from hpcio.units import parse_duration, parse_size

_KEY = "hpcio.option"


@dataclass(frozen=True, slots=True)
class Kind:
    """How an option's value is read: from the command line's text or a suite's TOML value."""

    name: str
    convert: Callable[[Any], Any]
    #: A flag that takes no value (store_true); `invert` for --no-x flags of a True default.
    flag: bool = False
    invert: bool = False
    choices: tuple[str, ...] = ()
    #: argparse's own type, where its message for a wrong value is the one people know.
    cli_type: Callable[[str], Any] | None = None
    #: The option may be given again and again; the values make a tuple.
    repeated: bool = False


@dataclass(frozen=True, slots=True)
class Option:
    """One setting: where it is typed and how it is read."""

    field: str
    flag: str | None  # "--transfer"; None: suite only
    aliases: tuple[str, ...]
    key: str | None  # suite key; None: command line only
    kind: Kind
    unit: str
    help: str
    metavar: str | None
    #: False for settings that do not change what is measured (a resumed sweep ignores them).
    measures: bool
    default: Any

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n in (self.flag, *self.aliases) if n)

    def read(self, value: Any) -> Any:
        """The value of a suite key or command-line text, checked.

        Raises:
            SpecError: "--transfer: '4X' is not a size; ..." (named by flag or key).
        """
        name = self.flag or self.key
        try:
            return self.kind.convert(value)
        except SpecError as e:
            raise SpecError(f"{name}: {e}") from None
        except (TypeError, ValueError) as e:
            raise SpecError(f"{name} {e}") from None


def option(
    flag: str | None,
    *,
    kind: Kind,
    default: Any = dataclasses.MISSING,
    help: str,
    key: str | None = "",
    aliases: tuple[str, ...] = (),
    unit: str = "",
    metavar: str | None = None,
    measures: bool = True,
) -> Any:
    """A dataclass field declaring an option. `key` defaults to the flag's name with
    underscores ("--in-flight" -> "in_flight"); None keeps it off suites."""
    if key == "":
        assert flag is not None
        key = flag.lstrip("-").replace("-", "_").removeprefix("no_")
    declared = dict(flag=flag, aliases=aliases, key=key, kind=kind, unit=unit, help=help,
                    metavar=metavar, measures=measures)  # fmt: skip
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata={_KEY: declared})
    return dataclasses.field(default=default, metadata={_KEY: declared})


def declared(cls: type) -> tuple[Option, ...]:
    """The options a dataclass declares, in field order."""
    found = []
    for f in dataclasses.fields(cls):
        meta = f.metadata.get(_KEY)
        if meta is None:
            continue
        default = None if f.default is dataclasses.MISSING else f.default
        found.append(Option(field=f.name, default=default, **meta))
    return tuple(found)


def add_arguments(
    parser: argparse.ArgumentParser,
    options: Iterable[Option],
    *,
    required: Iterable[str] = (),
    skip: Iterable[str] = (),
) -> None:
    """An argparse argument per option with a flag; values are converted after parsing
    (`values`), so a default stays a default and can be told from a typed value."""
    must, skipped = set(required), set(skip)
    for opt in options:
        if opt.flag is None or opt.field in skipped:
            continue
        extra: dict[str, Any] = {"dest": opt.field, "help": _help(opt)}
        if opt.kind.flag:
            extra["action"] = "store_true"
            extra["default"] = False
        elif opt.kind.repeated:
            extra["action"] = "append"
            extra["default"] = None
            if opt.metavar:
                extra["metavar"] = opt.metavar
        else:
            extra["default"] = None
            extra["required"] = opt.field in must
            if opt.kind.choices:
                extra["choices"] = opt.kind.choices
            if opt.kind.cli_type is not None:
                extra["type"] = opt.kind.cli_type
            metavar = opt.metavar or _METAVARS.get(opt.kind.name)
            if metavar:
                extra["metavar"] = metavar
        parser.add_argument(*opt.names, **extra)


#: What a value of each kind looks like in help ("--transfer SIZE", not TRANSFER_BYTES).
_METAVARS = {"size": "SIZE", "positive whole number": "N", "whole number": "N",
             "duration": "TIME", "size range": "A..B", "count range": "A..B"}  # fmt: skip


def _help(opt: Option) -> str:
    text = opt.help
    if opt.default not in (None, False, True) and not opt.kind.flag:
        shown = opt.default if not opt.unit or opt.unit != "bytes" else _size_text(opt.default)
        text += f" (default {shown})"
    return text


def _size_text(n: int) -> str:
    from hpcio.units import format_bytes

    return format_bytes(n).replace(" ", "")


def values(args: argparse.Namespace, options: Iterable[Option]) -> dict[str, Any]:
    """Field -> value of every option typed on the command line, converted and checked.

    Raises:
        SpecError: a value its kind refuses, named by its flag.
    """
    found = {}
    for opt in options:
        raw = getattr(args, opt.field, None)
        if opt.kind.flag:
            if raw:
                found[opt.field] = not opt.kind.invert
        elif raw is not None:
            found[opt.field] = opt.read(raw)
    return found


# --- kinds -------------------------------------------------------------------------------


def _size(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f'must be a size such as "4MiB", got {value!r}')
    size = parse_size(value)
    if size < 1:
        raise ValueError(f"must be at least 1 byte, got {value!r}")
    return size


def _size_or_none(value: Any) -> int:
    """A size that may be 0 (mdtest's -w 0: files created empty)."""
    if value == 0 or value == "0":
        return 0
    return _size(value)


def _whole(value: Any) -> int:
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise ValueError(f"must be a whole number, got '{value}'") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"must be a whole number, got {value!r}")
    return value


def _positive(value: Any) -> int:
    number = _whole(value)
    if number < 1:
        raise ValueError(f"must be at least 1, got {number}")
    return number


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"must be true or false, got {value!r}")
    return value


def _duration(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(f'must be a duration such as "30s", "5m" or 90, got {value!r}')
    seconds = parse_duration(value)
    if not seconds > 0:
        raise ValueError(f"must be more than 0 seconds, got {value!r}")
    return seconds


def _phases(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(","))
    if isinstance(value, list) and all(isinstance(p, str) for p in value):
        return tuple(value)
    raise TypeError(f'must be "write", "read" or a list of them, got {value!r}')


def _pairs(value: Any) -> tuple[str, ...]:
    """KEY=VALUE strings (a suite may give a list of them, or a table)."""
    if isinstance(value, dict):
        value = [f"{k}={v}" for k, v in value.items()]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not all(isinstance(p, str) for p in value):
        raise TypeError(f"must be KEY=VALUE strings, got {value!r}")
    for pair in value:
        key, sep, _ = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"must be KEY=VALUE, got {pair!r}")
    return tuple(value)


def _size_range(value: Any) -> tuple[int, ...]:
    """ "1MiB..64MiB" -> every size doubling from the first to the last."""
    from hpcio.units import parse_size_range

    if not isinstance(value, str):
        raise TypeError(f'must be a doubling range of sizes such as "1MiB..64MiB", got {value!r}')
    return tuple(parse_size_range(value))


def _count_range(value: Any) -> tuple[int, ...]:
    """ "1..64" -> 1, 2, 4, ..., 64; a number alone is itself."""
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise TypeError(f'must be a doubling range such as "1..64", got {value!r}')
    low_text, _, high_text = str(value).partition("..")
    low, high = _positive(low_text), _positive(high_text or low_text)
    counts = [low]
    while counts[-1] < high:
        counts.append(counts[-1] * 2)
    if counts[-1] != high:
        raise ValueError(f"doubling {low} never reaches {high}: use {low}..{counts[-2]}")
    return tuple(counts)


def choice(*names: str) -> Kind:
    def convert(value: Any) -> str:
        if value not in names:
            raise ValueError(f"must be one of {', '.join(names)}, got {value!r}")
        return str(value)

    return Kind("choice", convert, choices=names)


SIZE = Kind("size", _size)
#: A size, or 0 for none.
SIZE_OR_ZERO = Kind("size or 0", _size_or_none)
WHOLE = Kind("whole number", _whole, cli_type=int)
POSITIVE = Kind("positive whole number", _positive, cli_type=int)
FLAG = Kind("flag", _bool, flag=True)
#: A --no-x flag: typing it sets the field False.
NO_FLAG = Kind("flag", _bool, flag=True, invert=True)
DURATION = Kind("duration", _duration)
#: Doubling ranges, as `hpcio tune` sweeps them: "1MiB..64MiB", "1..64".
SIZE_RANGE = Kind("size range", _size_range)
COUNT_RANGE = Kind("count range", _count_range)
PHASES = Kind("phases", _phases)
#: Repeated KEY=VALUE pairs (MPI-IO hints).
PAIRS = Kind("KEY=VALUE pairs", _pairs, repeated=True)


#: The option of IOR, fio and mdtest each hpcio option stands for: --help names them, and
#: docs/coming-from.md maps them (tests/test_options.py checks both against this table).
PEER_OPTIONS: dict[str, str] = {
    "--target": "IOR -o; fio directory; mdtest -d",
    "--api": "IOR -a",
    "--size-per-rank": "IOR -b x -s; fio size",
    "--transfer": "IOR -t; fio bs",
    "--segments": "IOR -s",
    "--pattern": "IOR -F is mfmw, without it sfmw",
    "--fsync": "IOR -e; fio end_fsync=1",
    "--reorder": "IOR -C",
    "--phases": "IOR -w -r; fio rw=write, read",
    "--keep": "IOR -k",
    "--duration": "IOR -D; fio time_based, runtime",
    "--random": "fio rw=randwrite, randread",
    "--in-flight": "fio iodepth",
    "--ranks": "fio numjobs; mpiexec -n",
    "--direct": "fio direct=1; IOR --posix.odirect",
    "--files-per-rank": "fio nrfiles",
    "--rwmix-read": "fio rwmixread; elbencho --rwmixpct; warp mixed",
    "--items": "mdtest -n",
    "--items-per-dir": "mdtest -I",
    "--depth": "mdtest -z",
    "--branch": "mdtest -b",
    "--dir-per-rank": "mdtest -u",
    "--write-bytes": "mdtest -w",
    "--read-bytes": "mdtest -e",
    "--stonewall": "mdtest -W",
}


def peer_help(flags: Iterable[str], text: str | None) -> str | None:
    """`text` with the peer tools' option for the first of `flags` that has one appended:
    "bytes per I/O call ... [IOR -t; fio bs]"."""
    if text is None or text == argparse.SUPPRESS:
        return text
    said = text.replace("'s ", " ")  # "(IOR's -s)" already names IOR -s
    for flag in flags:
        peer = PEER_OPTIONS.get(flag)
        if peer is not None:
            new = [part for part in peer.split("; ") if part not in said]
            return f"{text} [{'; '.join(new)}]" if new else text
    return text
