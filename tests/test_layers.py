"""The layers lint-imports cannot see: hpcio._engine is a native module (grimp reads Python
source only), so "imports no engine" is checked by importing with the engine blocked."""

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


@pytest.mark.parametrize("module", ENGINE_FREE)
def test_imports_without_the_engine(module):
    code = f"import sys; sys.modules['hpcio._engine'] = None; import {module}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr.splitlines()[-1:]


def test_a_blocked_engine_is_noticed():
    # The check can fail: a module that needs the engine does not import with it blocked.
    code = "import sys; sys.modules['hpcio._engine'] = None; import hpcio.runner.run"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0 and "hpcio._engine" in done.stderr
