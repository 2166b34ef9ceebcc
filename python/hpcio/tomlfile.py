"""TOML files that can say where a key is: parsed data plus the line of every key, for one-line
errors such as "suites/x.toml:12: unknown key 'transfersize'; did you mean 'transfer'?"."""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hpcio.errors import HpcioError, SpecError

#: A key's place in the document: table names, keys and array indexes from the root.
KeyPath = tuple[str | int, ...]

_BARE_OR_QUOTED = r'(?:[A-Za-z0-9_-]+|"[^"]*"|\'[^\']*\')'
_DOTTED = rf"{_BARE_OR_QUOTED}(?:\s*\.\s*{_BARE_OR_QUOTED})*"
_TABLE = re.compile(rf"^\s*\[\s*({_DOTTED})\s*\]\s*$")
_ARRAY_TABLE = re.compile(rf"^\s*\[\[\s*({_DOTTED})\s*\]\]\s*$")
_KEY = re.compile(rf"^\s*({_DOTTED})\s*=")
_INLINE_KEY = re.compile(rf"[{{,]\s*({_DOTTED})\s*=")


@dataclass(frozen=True, slots=True)
class TomlFile:
    """A parsed TOML file and the line (from 1) where each key or array element starts."""

    path: str
    data: dict[str, Any]
    lines: Mapping[KeyPath, int] = field(repr=False)

    def line_of(self, key_path: KeyPath) -> int | None:
        """The line of `key_path`, or of its nearest enclosing key that has one."""
        for end in range(len(key_path), 0, -1):
            line = self.lines.get(key_path[:end])
            if line is not None:
                return line
        return None

    def where(self, key_path: KeyPath) -> str:
        """'path:line' for error messages ('path' alone when the line is unknown)."""
        line = self.line_of(key_path)
        return f"{self.path}:{line}" if line else self.path

    def error(
        self, key_path: KeyPath, message: str, kind: type[HpcioError] = SpecError
    ) -> HpcioError:
        """An error whose one line starts with where `key_path` is."""
        return kind(f"{self.where(key_path)}: {message}")

    def check_keys(
        self,
        table: Mapping[str, Any],
        key_path: KeyPath,
        allowed: Iterable[str],
        kind: type[HpcioError] = SpecError,
    ) -> None:
        """Refuse any key of `table` (found at `key_path`) that is not in `allowed`.

        Raises:
            HpcioError (`kind`): "file:line: unknown key 'x'; did you mean 'y'?".
        """
        names = list(allowed)
        for key in table:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else f"; known: {', '.join(names)}"
                raise self.error((*key_path, key), f"unknown key '{key}'{hint}", kind)


def load(path: str | os.PathLike[str], kind: type[HpcioError] = SpecError) -> TomlFile:
    """Read and parse a TOML file, remembering where its keys are.

    Raises:
        HpcioError (`kind`): the file cannot be read or is not valid TOML, as "path:line: why".
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise kind(f"{name}: cannot read ({e.strerror})") from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        raise kind(f"{name}: not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as e:
        # tomllib says "Invalid value (at line 3, column 9)": lead with the place instead.
        message = str(e)
        found = re.search(r"\s*\(at line (\d+), column \d+\)$", message)
        if found:
            raise kind(f"{name}:{found.group(1)}: {message[: found.start()]}") from None
        raise kind(f"{name}: {message}") from None
    return TomlFile(name, data, key_lines(text))


def key_lines(text: str) -> dict[KeyPath, int]:
    """Where each table header, key and array-of-tables element starts, by line from 1.

    A light scanner, not a second parser: it follows [table] and [[array]] headers, keys
    (dotted or quoted), inline tables, and arrays that span lines (each element's line).
    Anything it cannot place is left out, and errors then point at the enclosing key.
    """
    lines: dict[KeyPath, int] = {}
    array_counts: dict[KeyPath, int] = {}
    table: KeyPath = ()
    value: _OpenArray | None = None  # the multi-line array we are inside, if any
    for number, raw_line in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw_line)
        if value is not None:
            value.scan(line, number, lines)
            if value.level <= 0:
                value = None
            continue
        if match := _ARRAY_TABLE.match(line):
            name = _resolve(_split_dotted(match.group(1)), array_counts)
            index = array_counts.get(name, -1) + 1
            array_counts[name] = index
            table = (*name, index)
            lines.setdefault(name, number)
            lines[table] = number
        elif match := _TABLE.match(line):
            table = _resolve(_split_dotted(match.group(1)), array_counts)
            lines.setdefault(table, number)
        elif match := _KEY.match(line):
            key = (*table, *_split_dotted(match.group(1)))
            lines.setdefault(key, number)
            rest = line[match.end() :]
            if rest.strip().startswith("["):
                opened = _OpenArray(key)
                opened.scan(rest, number, lines)
                value = opened if opened.level > 0 else None
            else:
                _inline_keys(rest, key, number, lines)
    return lines


class _OpenArray:
    """An array value being scanned, possibly over several lines: numbers its elements and
    records the line each starts on (and the keys of those that are inline tables)."""

    def __init__(self, key: KeyPath) -> None:
        self.key = key
        self.level = 0  # brackets open, counting the array's own
        self.elements = 0
        self.expecting = False  # the next value at the array's own level starts an element

    def scan(self, line: str, number: int, lines: dict[KeyPath, int]) -> None:
        plain = _unquoted(line)
        for offset, char in enumerate(plain):
            if char in "[{":
                if self.level == 1 and self.expecting:
                    self._element(plain[offset:], number, lines)
                self.level += 1
                if self.level == 1:
                    self.expecting = True
            elif char in "]}":
                self.level -= 1
                if self.level <= 0:
                    return
            elif char == ",":
                if self.level == 1:
                    self.expecting = True
            elif not char.isspace() and self.level == 1 and self.expecting:
                self._element("", number, lines)

    def _element(self, rest: str, number: int, lines: dict[KeyPath, int]) -> None:
        where = (*self.key, self.elements)
        lines.setdefault(where, number)
        if rest.startswith("{"):
            _inline_keys(rest[: rest.find("}") + 1 or None], where, number, lines)
        self.elements += 1
        self.expecting = False


def _resolve(name: tuple[str, ...], array_counts: Mapping[KeyPath, int]) -> KeyPath:
    """A header's key path: in [case.requests] after [[case]], 'case' means its latest
    element, so the path is ('case', index, 'requests')."""
    resolved: list[str | int] = []
    for position, part in enumerate(name):
        resolved.append(part)
        index = array_counts.get(tuple(resolved))
        if index is not None and position < len(name) - 1:
            resolved.append(index)
    return tuple(resolved)


def _split_dotted(text: str) -> tuple[str, ...]:
    parts = re.findall(_BARE_OR_QUOTED, text)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def _strip_comment(line: str) -> str:
    """The line without its # comment (a # inside a string stays)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[:i]
    return line


def _unquoted(line: str) -> str:
    """The line with the contents of its strings blanked (same length), so brackets and
    commas inside strings do not count."""
    return re.sub(
        r'"(?:[^"\\]|\\.)*"|\'[^\']*\'', lambda m: '"' + " " * (len(m.group()) - 2) + '"', line
    )


def _inline_keys(text: str, owner: KeyPath, number: int, lines: dict[KeyPath, int]) -> None:
    """Keys of an inline table on this line, under `owner` (one level deep is enough here)."""
    if "{" not in text:
        return
    for match in _INLINE_KEY.finditer(_unquoted(text)):
        lines.setdefault((*owner, *_split_dotted(match.group(1))), number)
