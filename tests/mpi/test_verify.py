import pytest

pytestmark = pytest.mark.mpi

MiB = 1 << 20


def flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ 0x5A]))
    return byte


def run(hpcio, file_url, target_dir, pattern, *more):
    sizes = ["--size-per-rank", "1MiB", "--transfer", "256KiB"]
    if pattern == "sfsw":
        sizes += ["--gather-chunk", "256KiB"]
    return hpcio(
        "run", "-n", 4, "--pattern", pattern, "--target", file_url(target_dir), *sizes, "-q", *more
    )


def write_kept(hpcio, file_url, target_dir, pattern):
    done = run(hpcio, file_url, target_dir, pattern, "--phases", "write", "--keep")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("pattern", "key", "offset", "reader", "more"),
    [
        ("mfmw", "hpcio-rank000002.dat", 300_000, 2, ()),
        ("mfmw", "hpcio-rank000001.dat", 4096, 0, ("--reorder",)),
        ("sfmw", "hpcio-shared.dat", 3 * MiB + 12_345, 3, ()),
        ("sfmw", "hpcio-shared.dat", MiB + MiB // 2, 0, ("--reorder",)),
        ("sfsw", "hpcio-single.dat", 2 * MiB + 777, 2, ()),
    ],
)
def test_flipped_byte_is_named(
    hpcio, file_url, target_dir, error_line, pattern, key, offset, reader, more
):
    write_kept(hpcio, file_url, target_dir, pattern)
    original = flip(target_dir / key, offset)
    done = run(hpcio, file_url, target_dir, pattern, "--phases", "read", "--verify", *more)
    assert done.returncode == 1
    line = error_line(done)
    writer = offset // MiB if pattern != "mfmw" else int(key[10:16])
    assert line.startswith(
        f"hpcio: error: read phase of iteration 1 failed: rank {reader}: "
        f"verify failed: {key} offset {offset}: "
        f"expected 0x{original:02x}, found 0x{original ^ 0x5A:02x} "
        f"(data of rank {writer})"
    )
    assert "more errors" not in line


def test_sfmr_every_rank_finds_the_flip(hpcio, file_url, target_dir, error_line):
    write_kept(hpcio, file_url, target_dir, "sfmw")
    flip(target_dir / "hpcio-shared.dat", 5 * MiB // 2)
    done = run(hpcio, file_url, target_dir, "sfmr", "--phases", "read", "--verify")
    assert done.returncode == 1
    line = error_line(done)
    assert f"rank 0: verify failed: hpcio-shared.dat offset {5 * MiB // 2}:" in line
    assert line.endswith("(data of rank 2) (and 3 more errors)")


def test_untouched_files_verify(hpcio, file_url, target_dir):
    write_kept(hpcio, file_url, target_dir, "mfmw")
    kept = sorted(p.name for p in target_dir.iterdir())
    done = run(hpcio, file_url, target_dir, "mfmw", "--phases", "read", "--verify")
    assert (done.returncode, done.stderr) == (0, "")
    # A read-only run removes nothing: the data is the earlier run's.
    assert sorted(p.name for p in target_dir.iterdir()) == kept


@pytest.mark.parametrize("pattern", ["mfmw", "sfmw", "sfmr"])
def test_verify_failure_keeps_the_file_it_names(hpcio, file_url, target_dir, pattern):
    write_kept(hpcio, file_url, target_dir, "sfmw" if pattern == "sfmr" else pattern)
    kept = sorted(p.name for p in target_dir.iterdir())
    flip(target_dir / kept[0], 1000)
    done = run(hpcio, file_url, target_dir, pattern, "--phases", "read", "--verify")
    assert done.returncode == 1
    assert f"verify failed: {kept[0]} offset 1000" in done.stderr
    assert sorted(p.name for p in target_dir.iterdir()) == kept


def test_verify_without_verify_flag_does_not_check(hpcio, file_url, target_dir):
    write_kept(hpcio, file_url, target_dir, "sfmw")
    flip(target_dir / "hpcio-shared.dat", 100)
    done = run(hpcio, file_url, target_dir, "sfmw", "--phases", "read")
    assert (done.returncode, done.stderr) == (0, "")
