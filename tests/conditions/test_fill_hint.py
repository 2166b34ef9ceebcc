"""The hint a run that does not fill a link gets: the depth that would, from Little's law."""

import pytest
from hpcio import conditions
from hpcio.conditions_hint import FILLED, fill_hint, link_mib_s
from hpcio.errors import SpecError

MiB = 1 << 20


def test_a_run_that_fills_the_link_gets_no_hint():
    assert fill_hint(mib_s=FILLED * 100, cap_mib_s=100, ranks=1, in_flight=1,
                     transfer_bytes=16 * MiB, shared=False) is None  # fmt: skip


def test_one_request_at_a_time_is_told_the_depth_that_fills_the_link():
    hint = fill_hint(mib_s=25, cap_mib_s=100, ranks=1, in_flight=1, transfer_bytes=16 * MiB,
                     shared=False)  # fmt: skip
    # 25 MiB/s a request: 0.9 x 100 MiB/s needs 4 (3.6 rounded up).
    assert hint is not None and "--in-flight 4 " in f"{hint} "
    assert "0.25" in hint


def test_ranks_share_the_depth_and_small_parts_are_named():
    hint = fill_hint(mib_s=20, cap_mib_s=100, ranks=2, in_flight=1, transfer_bytes=MiB,
                     shared=True)  # fmt: skip
    # 10 MiB/s a request, 9 requests over 2 ranks: 5 each.
    assert hint is not None and "--in-flight 5" in hint
    assert "--part-size" in hint


def test_a_hint_always_asks_for_more_than_the_run_had():
    hint = fill_hint(mib_s=80, cap_mib_s=100, ranks=2, in_flight=8, transfer_bytes=16 * MiB,
                     shared=False)  # fmt: skip
    assert hint is not None and "--in-flight 9" in hint


def test_a_link_is_given_as_a_rate_or_a_condition():
    assert link_mib_s("1Gbit") == pytest.approx(1e9 / 8 / MiB)
    assert link_mib_s("400Mbit") == pytest.approx(400e6 / 8 / MiB)
    assert link_mib_s("119MiB") == 119
    assert link_mib_s("cross-region") == conditions.condition("cross-region").link_mib_s


@pytest.mark.parametrize("text", ["1Gbt", "fast", "0Gbit", "-1MiB", ""])
def test_a_link_that_is_no_rate_is_refused_in_one_line(text):
    with pytest.raises(SpecError, match="--link") as refused:
        link_mib_s(text)
    assert "\n" not in str(refused.value) and "1Gbit" in str(refused.value)


def test_a_shared_upload_whose_parts_filled_the_link_is_told_its_completion_is_the_stores():
    # 8 s of parts at 96 MiB/s, then 0.6 s completing: 89 MiB/s over the phase.
    hint = fill_hint(mib_s=96 * 8 / 8.6, cap_mib_s=100, ranks=1, in_flight=8,
                     transfer_bytes=16 * MiB, shared=True, phase_s=8.6, commit_s=0.6)  # fmt: skip
    assert hint is not None and "--in-flight" not in hint
    assert "the parts alone moved at 96 MiB/s (0.96)" in hint
    assert "completing the upload took 0.60 s of the phase's 8.60 s" in hint


def test_a_shared_upload_whose_parts_fell_short_is_told_the_depth():
    hint = fill_hint(mib_s=60 * 8 / 8.6, cap_mib_s=100, ranks=1, in_flight=8,
                     transfer_bytes=16 * MiB, shared=True, phase_s=8.6, commit_s=0.6)  # fmt: skip
    assert hint is not None and "--in-flight 13 would" in hint and "completing" not in hint
