import numpy as np
import pytest
from hpcio import _engine

SEED, WRITER, KEY, OFFSET = 3, 2, "hpcio-rank000002.dat", 12345


def filled(n=10_000, offset=OFFSET, seed=SEED, writer=WRITER, key=KEY):
    buf = np.zeros(n, np.uint8)
    _engine.payload_fill(buf, seed, writer, key, offset)
    return buf


def test_fill_then_check_passes():
    assert _engine.payload_check(filled(), SEED, WRITER, KEY, OFFSET) is None


def test_payload_is_not_trivial():
    buf = filled(4096, offset=0)
    assert len(np.unique(buf)) > 200
    assert not np.array_equal(buf, filled(4096, offset=4096))


def test_flipped_byte_is_reported_at_its_absolute_offset():
    buf = filled()
    original = int(buf[5000])
    buf[5000] ^= 0x40
    assert _engine.payload_check(buf, SEED, WRITER, KEY, OFFSET) == (
        OFFSET + 5000,
        original,
        original ^ 0x40,
    )


def test_first_of_two_flips_is_reported():
    buf = filled()
    buf[[7000, 300]] ^= 1
    at, expected, found = _engine.payload_check(buf, SEED, WRITER, KEY, OFFSET)
    assert at == OFFSET + 300
    assert found == expected ^ 1


@pytest.mark.parametrize("index", [0, 9_999])
def test_flips_at_the_edges_are_found(index):
    buf = filled()
    buf[index] ^= 0xFF
    assert _engine.payload_check(buf, SEED, WRITER, KEY, OFFSET)[0] == OFFSET + index


@pytest.mark.parametrize(
    ("seed", "writer", "key", "offset"),
    [
        (SEED, WRITER + 1, KEY, OFFSET),
        (SEED, WRITER, "hpcio-rank000003.dat", OFFSET),
        (SEED + 1, WRITER, KEY, OFFSET),
        (SEED, WRITER, KEY, OFFSET + 4096),
    ],
)
def test_other_writer_key_seed_or_offset_fails(seed, writer, key, offset):
    mismatch = _engine.payload_check(filled(), seed, writer, key, offset)
    assert mismatch is not None
    assert mismatch[0] >= offset


def test_fill_depends_only_on_position():
    whole = filled(3 * 4096 + 100, offset=10)
    part = filled(5000, offset=10 + 1234)
    assert np.array_equal(whole[1234 : 1234 + 5000], part)
    assert _engine.payload_check(whole[1234:6234].copy(), SEED, WRITER, KEY, 1244) is None


def test_non_contiguous_buffer_is_refused():
    with pytest.raises(ValueError):
        _engine.payload_check(filled()[::2], SEED, WRITER, KEY, OFFSET)


def test_engine_writes_the_same_bytes(engine_run, target_dir):
    from hpcio.workloads.contract import Phase
    from specs import plan_of, run_spec

    run = run_spec("sfmw", ranks=2, size_per_rank_bytes=64 << 10, transfer_bytes=16 << 10)
    for r in (0, 1):
        engine_run(plan_of(run, Phase.WRITE, r), seed=SEED)
    data = np.fromfile(target_dir / "hpcio-shared.dat", np.uint8)
    assert len(data) == 128 << 10
    assert _engine.payload_check(data[: 64 << 10].copy(), SEED, 0, "hpcio-shared.dat", 0) is None
    assert (
        _engine.payload_check(data[64 << 10 :].copy(), SEED, 1, "hpcio-shared.dat", 64 << 10)
        is None
    )
    assert (
        _engine.payload_check(data[64 << 10 :].copy(), SEED, 0, "hpcio-shared.dat", 64 << 10)
        is not None
    )


MIB = 1 << 20


@pytest.mark.parametrize(
    "transfers",
    [
        # 1 MiB at 1 MiB offsets: the pool bytes stay, only the stamps change
        [(0, "a", k * MIB, MIB) for k in range(4)],
        # another writer and another file at the same pool position
        [(0, "a", 0, MIB), (1, "a", MIB, MIB), (0, "b", 2 * MIB, MIB)],
        # shorter, off the grid, then back on it
        [(0, "a", 0, MIB), (0, "a", 4096, 5000), (0, "a", 777, MIB - 777), (0, "a", 3 * MIB, MIB)],
    ],
)
def test_payload_buffer_holds_what_a_fresh_fill_would(transfers):
    payload = _engine.PayloadBuffer(SEED, MIB)
    for writer, key, offset, length in transfers:
        payload.fill(writer, key, offset, length)
        data = payload.view[:length]
        assert np.array_equal(data, filled(length, offset=offset, writer=writer, key=key))
        assert _engine.payload_check(data, SEED, writer, key, offset) is None


def test_payload_buffer_is_read_only_outside_the_engine():
    payload = _engine.PayloadBuffer(SEED, 4096)
    with pytest.raises(ValueError):
        payload.view[0] = 1
    with pytest.raises(ValueError, match="do not fit"):
        payload.fill(WRITER, KEY, 0, 4097)
