import pytest
from hpcio.errors import SpecError
from hpcio.units import format_bytes, format_rate, parse_size, parse_size_range

KiB, MiB, GiB, TiB = 1 << 10, 1 << 20, 1 << 30, 1 << 40


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("512", 512),
        ("512B", 512),
        ("4KiB", 4 * KiB),
        ("4MiB", 4 * MiB),
        ("2GiB", 2 * GiB),
        ("1TiB", TiB),
        ("4k", 4 * KiB),
        ("4m", 4 * MiB),
        ("1g", GiB),
        ("1t", TiB),
        ("4MB", 4 * MiB),  # base 2, as in IOR and fio
        ("4mib", 4 * MiB),
        (" 8 MiB ", 8 * MiB),
        ("1.5KiB", 1536),
        ("0.5MiB", 512 * KiB),
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_parse_size_passes_int_through():
    assert parse_size(4096) == 4096


@pytest.mark.parametrize(
    "text", ["", "MiB", "4QiB", "-1MiB", "4 Mi B", "1e3", "four", "1.5B", "0.3KiB", "4MiB4"]
)
def test_parse_size_rejects(text):
    with pytest.raises(SpecError) as caught:
        parse_size(text)
    assert f"'{text}'" in str(caught.value)


def test_spec_error_is_a_value_error():
    with pytest.raises(ValueError):
        parse_size("lots")


def test_parse_size_range_doubles():
    assert parse_size_range("1MiB..8MiB") == [MiB, 2 * MiB, 4 * MiB, 8 * MiB]


def test_parse_size_range_refuses_an_upper_bound_doubling_misses():
    with pytest.raises(SpecError) as refused:
        parse_size_range("1MiB..3MiB")
    assert str(refused.value) == (
        "'1MiB..3MiB': doubling 1 MiB never reaches 3 MiB (it would run 1 MiB, 2 MiB); "
        "use 1MiB..2MiB or 1MiB..4MiB"
    )


def test_parse_size_range_of_one_size():
    assert parse_size_range("4KiB") == [4 * KiB]
    assert parse_size_range("4KiB..4KiB") == [4 * KiB]


@pytest.mark.parametrize("text", ["8MiB..1MiB", "0..4MiB", "..4MiB", "1MiB..", "1MiB..x"])
def test_parse_size_range_rejects(text):
    with pytest.raises(SpecError):
        parse_size_range(text)


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (64 * MiB, "64 MiB"),
        (3 * GiB, "3 GiB"),
        (5 * TiB, "5 TiB"),
        (2048 * TiB, "2048 TiB"),
        (MiB + 512 * KiB, "1.5 MiB"),
    ],
)
def test_format_bytes(n, expected):
    assert format_bytes(n) == expected


def test_format_bytes_round_trips_through_parse_size():
    for n in (1, 4 * KiB, 256 * MiB, 16 * GiB):
        assert parse_size(format_bytes(n).replace(" ", "")) == n


def test_format_rate_is_mib_per_second():
    assert format_rate(1.5 * MiB) == "1.50 MiB/s"
    assert format_rate(0) == "0.00 MiB/s"
