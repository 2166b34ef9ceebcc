"""The layers lint-imports cannot see: hpcio._engine is a native module (grimp reads Python
source only), so "imports no engine" is checked by importing with the engine blocked."""

import json
import subprocess
import sys

import pytest

#: Modules that must import without the native engine.
ENGINE_FREE = [
    "hpcio.options",
    "hpcio.units",
    "hpcio.errors",
    "hpcio.kinds",
    "hpcio.tomlfile",
    "hpcio.results.schema",
    "hpcio.results.io",
    "hpcio.results.check",
    "hpcio.results.stats",
    "hpcio.results.hdr",
    "hpcio.workloads.registry",
    "hpcio.workloads.shown",
    "hpcio.report.tables",
    "hpcio.report.rows",
    "hpcio.report.html",
    "hpcio.report.plots",
    "hpcio.report.cost",
    "hpcio.report.compare",
    "hpcio.commands.report",
    "hpcio.commands.compare",
]


#: Imported in one child, each after every hpcio module is forgotten, with the engine blocked:
#: one interpreter's start for all of them, and no module helped by one imported before it.
_IMPORT_EACH = """
import json, sys
said = {}
for module in sys.argv[1:]:
    for name in [n for n in sys.modules if n == "hpcio" or n.startswith("hpcio.")]:
        del sys.modules[name]
    sys.modules["hpcio._engine"] = None
    try:
        __import__(module)
    except BaseException as e:
        said[module] = f"{type(e).__name__}: {e}"
    else:
        said[module] = None
print(json.dumps(said))
"""
#: A module that needs the engine: the check must say it fails.
_NEEDS_THE_ENGINE = "hpcio.runner.run"


@pytest.fixture(scope="module")
def imported_without_engine() -> dict[str, str | None]:
    """Each module of ENGINE_FREE (and _NEEDS_THE_ENGINE) -> None, or why it did not import."""
    modules = [*ENGINE_FREE, _NEEDS_THE_ENGINE]
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, *modules], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("module", ENGINE_FREE)
def test_imports_without_the_engine(module, imported_without_engine):
    assert imported_without_engine[module] is None, imported_without_engine[module]


def test_a_blocked_engine_is_noticed(imported_without_engine):
    # The check can fail: a module that needs the engine does not import with it blocked.
    said = imported_without_engine[_NEEDS_THE_ENGINE]
    assert said is not None and "hpcio._engine" in said
