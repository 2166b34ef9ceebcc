"""A removal of the run's files that fails on some ranks fails every rank alike, with one line
for the run, never one error line per rank (a CI run printed two when a stalled store timed
out both ranks' DELETEs). Two ranks as threads of this process, a real file target whose keys
are made directories, so that their unlink fails."""

import threading

import pytest
from hpcio.errors import RunFailedError
from hpcio.runner import run as runner
from hpcio.runner.cleanup import written_keys
from hpcio.runner.run import open_target
from hpcio.spec.model import RunSpec
from hpcio.spec.target import TargetSpec

MiB = 1 << 20


class ThreadWorld:
    """Rank `rank` of a world whose ranks are threads sharing `board`: allgather alone, which
    is all a removal uses."""

    def __init__(self, rank: int, board: list, meeting: threading.Barrier) -> None:
        self.rank, self.size = rank, len(board)
        self._board, self._meeting = board, meeting

    def allgather(self, obj):
        self._board[self.rank] = obj
        self._meeting.wait()
        gathered = list(self._board)
        self._meeting.wait()
        return gathered


def remove_on_two_ranks(run: RunSpec) -> list[BaseException | None]:
    board, meeting = [None, None], threading.Barrier(2, timeout=30)
    outcomes: list[BaseException | None] = [None, None]

    def rank(number: int) -> None:
        try:
            runner._remove(ThreadWorld(number, board, meeting), open_target(run), run)
        except BaseException as e:  # what each rank raised, compared below
            outcomes[number] = e

    threads = [threading.Thread(target=rank, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.fixture
def run(target_dir) -> RunSpec:
    return RunSpec.build("mfmw", target=TargetSpec.from_url(f"file://{target_dir}"), ranks=2,
                         size_per_rank_bytes=MiB, transfer_bytes=MiB)  # fmt: skip


def make_unremovable(target_dir, key: str) -> None:
    (target_dir / key / "inside").mkdir(parents=True)


@pytest.mark.parametrize("failing", [[0, 1], [1]], ids=["both-ranks", "rank-1"])
def test_a_failed_removal_fails_every_rank_with_one_line(run, target_dir, failing):
    keys = written_keys([run])
    for rank in failing:
        make_unremovable(target_dir, keys[rank])
    for rank in set(range(2)) - set(failing):
        (target_dir / keys[rank]).write_bytes(b"x")

    outcomes = remove_on_two_ranks(run)

    assert all(isinstance(e, RunFailedError) and e.every_rank for e in outcomes), outcomes
    assert str(outcomes[0]) == str(outcomes[1])
    first = failing[0]
    said = str(outcomes[0])
    assert said.startswith(f"cannot remove the run's files: rank {first}: cannot remove from ")
    assert "Is a directory" in said and "\n" not in said
    assert said.endswith(" (and 1 more rank)") == (len(failing) == 2)
    # What could be removed was: the ranks did their shares before agreeing.
    assert sorted(p.name for p in target_dir.iterdir()) == sorted(keys[r] for r in failing)


def test_a_removal_that_works_removes_every_share(run, target_dir):
    keys = written_keys([run])
    for key in keys:
        (target_dir / key).write_bytes(b"x")

    assert remove_on_two_ranks(run) == [None, None]
    assert list(target_dir.iterdir()) == []
