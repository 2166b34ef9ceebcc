"""Checks a result document, as read from JSON, against the schema's types: reports, plots
and comparisons must never meet a string where a number belongs, or a broken histogram."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import types
import typing
from typing import Any

from hpcio.results import hdr
from hpcio.results.schema import ResultDocument

#: The spec fields reports read, with their JSON types (the rest of `run` is shown as is).
_RUN_FIELDS: dict[str, type] = {
    "workload": str,
    "ranks": int,
}
#: The unit suffixes of `run.params` names and the JSON type they promise.
_PARAM_UNITS: dict[str, type] = {"_bytes": int, "_s": float}


class DocumentError(TypeError):
    """A field of a document is missing its documented type; the message names the field."""


def check_record(record: dict[str, Any]) -> None:
    """Check a document as read from JSON, before it becomes a ResultDocument: every typed
    field, the spec fields reports use, and the latency histograms.

    Raises:
        DocumentError: naming the first field that is wrong, e.g.
            "summary.write.bandwidth_mib_s.mean is 'fast', not a number".
    """
    _check(record, ResultDocument, "")
    run = record["run"]
    for name, kind in _RUN_FIELDS.items():
        if name not in run:
            raise DocumentError(f"run.{name} is missing")
        _check(run[name], kind, f"run.{name}")
    _check_params(run)
    target = run.get("target")
    if not isinstance(target, dict) or not isinstance(target.get("url"), str):
        raise DocumentError("run.target.url is missing or not a string")
    for index, phase in enumerate(record["phases"]):
        _check_histogram(phase["latency_hdr_b64"], f"phases[{index}].latency_hdr_b64")
        for name in ("ttfb_get_hdr_b64", "ttfb_put_hdr_b64"):
            if phase.get(name) is not None:
                _check_histogram(phase[name], f"phases[{index}].{name}")
        for side in ("read_side", "write_side"):
            encoded = (phase.get(side) or {}).get("latency_hdr_b64")
            if encoded is not None:
                _check_histogram(encoded, f"phases[{index}].{side}.latency_hdr_b64")


def _check_params(run: dict[str, Any]) -> None:
    """`run.params` by the schema's naming rule, the one thing every workload's params share
    (a document may come from a workload, or a newer hpcio, that this reader does not know):
    a size in bytes is a whole number, a time in seconds a number, or a list of them."""
    params = run.get("params")
    if not isinstance(params, dict):
        raise DocumentError(f"run.params is {_shown(params)}, not an object")
    for name, value in params.items():
        for suffix, hint in _PARAM_UNITS.items():
            if name.endswith(suffix) and value is not None:
                values = value if isinstance(value, list) else [value]
                for index, one in enumerate(values):
                    where = f"run.params.{name}" + (f"[{index}]" if value is values else "")
                    _check(one, hint, where)


def _check_histogram(encoded: str, where: str) -> None:
    try:
        hdr.decode(base64.b64decode(encoded, validate=True))
    except (binascii.Error, ValueError):
        raise DocumentError(f"{where} is not a base64 HdrHistogram") from None


def _check(value: Any, hint: Any, where: str) -> None:
    if hint is Any:
        return
    # A schema hint is a class, never an instance (is_dataclass would accept both).
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, dict):
            raise DocumentError(f"{where or 'document'} is {_shown(value)}, not an object")
        hints = _type_hints(hint)
        for field in dataclasses.fields(hint):
            name = f"{where}.{field.name}" if where else field.name
            if field.name in value:
                _check(value[field.name], hints[field.name], name)
            elif (
                field.default is dataclasses.MISSING
                and field.default_factory is dataclasses.MISSING
            ):
                # Fields added later carry a default, so older documents stay readable.
                raise DocumentError(f"{name} is missing")
        return
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if not any(_fits(value, arg) for arg in args):
            raise DocumentError(f"{where} is {_shown(value)}, not {_name(hint)}")
        return
    if origin is tuple:
        if not isinstance(value, list):
            raise DocumentError(f"{where} is {_shown(value)}, not a list")
        for index, item in enumerate(value):
            _check(item, args[0], f"{where}[{index}]")
        return
    if origin is dict:
        if not isinstance(value, dict):
            raise DocumentError(f"{where} is {_shown(value)}, not an object")
        for key, item in value.items():
            _check(item, args[1], f"{where}.{key}")
        return
    if not _fits(value, hint):
        raise DocumentError(f"{where} is {_shown(value)}, not {_name(hint)}")


@functools.cache
def _type_hints(dataclass: type) -> dict[str, Any]:
    # A schema class's hints never change; resolving them is most of a document's check.
    return typing.get_type_hints(dataclass)


def _fits(value: Any, hint: Any) -> bool:
    # JSON has no int/float distinction for whole floats, and bool is an int in Python.
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is type(None):
        return value is None
    if isinstance(hint, type) and not dataclasses.is_dataclass(hint):
        return isinstance(value, hint)
    try:
        _check(value, hint, "")
    except DocumentError:
        return False
    return True


def _name(hint: Any) -> str:
    names = {float: "a number", int: "a whole number", str: "a string", bool: "true or false"}
    return names.get(hint, str(hint).replace("typing.", ""))


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
