"""runner/heap.py: glibc's malloc thresholds fixed at their steady state, unless the user
tuned malloc, whose setting wins."""

import platform

import pytest
from hpcio.runner import heap


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_settles_on_glibc(monkeypatch):
    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"):
        monkeypatch.delenv(name, raising=False)
    assert heap.settle() is True


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MALLOC_MMAP_THRESHOLD_", "1048576"),
        ("MALLOC_TRIM_THRESHOLD_", "1048576"),
        ("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=1048576"),
    ],
)
def test_the_user_s_malloc_tuning_wins(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    assert heap.settle() is False


def test_other_tunables_do_not_count_as_malloc_tuning(monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    assert heap.settle() is (platform.libc_ver()[0] == "glibc")
