"""The -o check under a launcher that starts every rank at once (srun, a user's mpiexec over
ssh): each rank checks the same results path at the same moment, and none may be refused or
leave a file behind."""

import multiprocessing

from hpcio.commands.spine import check_output

RANKS = 8


def _check(start, path, answers):
    start.wait()
    try:
        check_output(path)
        answers.put("ok")
    except BaseException as e:  # a refusal or a traceback alike fails the test
        answers.put(f"{type(e).__name__}: {e}")


def test_ranks_checking_one_new_results_file_at_once_all_pass(tmp_path):
    context = multiprocessing.get_context("fork")
    for trial in range(10):
        path = str(tmp_path / f"results-{trial}.jsonl")
        start, answers = context.Barrier(RANKS), context.Queue()
        ranks = [context.Process(target=_check, args=(start, path, answers)) for _ in range(RANKS)]
        for rank in ranks:
            rank.start()
        said = [answers.get(timeout=60) for _ in ranks]
        for rank in ranks:
            rank.join(timeout=60)
        assert said == ["ok"] * RANKS, said
    assert list(tmp_path.iterdir()) == []  # nothing left: no results file, no check's file
