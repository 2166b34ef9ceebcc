"""Comm.reduce and Comm.allreduce on real ranks: every rank's object merged exactly once,
rank 0 alone gets reduce's result, every rank gets allreduce's."""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.mpi

# Each rank writes its own file: ranks printing at once can share a line of mpiexec's
# forwarded stdout (CI once read "[0, ...][1, ...]").
SCRIPT = """
import json, pathlib, sys
from hpcio.runner.world import MpiComm
world = MpiComm()
merge = lambda a, b: sorted(a + b)
reduced = world.reduce([world.rank], merge)
everyone = world.allreduce([world.rank * 10], merge)
out = pathlib.Path(sys.argv[1]) / f"rank{world.rank}.json"
out.write_text(json.dumps([world.rank, reduced, everyone]))
"""


def test_reduce_and_allreduce_merge_every_rank_once(mpiexec, tmp_path):
    script = tmp_path / "reduce.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [*mpiexec(5), sys.executable, str(script), str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = sorted(json.loads(path.read_text()) for path in tmp_path.glob("rank*.json"))
    assert [r[0] for r in results] == [0, 1, 2, 3, 4]
    assert results[0][1] == [0, 1, 2, 3, 4]
    assert all(r[1] is None for r in results[1:])
    assert all(r[2] == [0, 10, 20, 30, 40] for r in results)
