"""The native engine, loaded when a workload first uses it. Importing the registry must not
need the native build: reports read each workload's declared facts (workloads/shown.py) in a
process that may have no engine."""

from __future__ import annotations

import importlib
import types
from typing import TYPE_CHECKING, Any


class _LoadedOnFirstUse(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        value = getattr(importlib.import_module("hpcio._engine"), name)
        # Kept as this module's own attribute: later uses are plain attribute reads.
        setattr(self, name, value)
        return value


if TYPE_CHECKING:
    from hpcio import _engine as _engine
else:
    _engine = _LoadedOnFirstUse("hpcio._engine")
