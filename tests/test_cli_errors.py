from pathlib import Path

import pytest

MiB = 1 << 20

V1_DOCUMENTS = Path(__file__).parent / "data" / "v1" / "file-1rank.jsonl"


SOME_DIRECTORY = "file:///tmp"
RUN_1MiB = ("run", "--size-per-rank", "1MiB", "--target", SOME_DIRECTORY)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("report", V1_DOCUMENTS), id="report"),
        pytest.param(("report", "--format", "csv", V1_DOCUMENTS), id="report-csv"),
        pytest.param(("report", "/nonexistent/results.jsonl"), id="report-missing"),
        pytest.param(("compare", V1_DOCUMENTS), id="compare-usage"),
        pytest.param(("cost", "--unknown-option"), id="cost-usage"),
        pytest.param(
            ("run", "--pattern", "mfmw", "--size-per-rank", "1QiB", "--target", SOME_DIRECTORY),
            id="run-bad-size",
        ),
        pytest.param(
            (*RUN_1MiB, "--pattern", "sfmr", "--phases", "write"),
            id="run-bad-phases",
        ),
        pytest.param(
            ("sweep", "--pattern", "mfmw", "--sizes", "1MiB:2MiB", "--target", SOME_DIRECTORY),
            id="sweep-without-output",
        ),
        pytest.param(("run", "-n", "two", *RUN_1MiB[1:]), id="run-argparse"),
        pytest.param(("template", "lsf", "--nodes", "1"), id="template-kind"),
        pytest.param(
            ("train", "unet3d", "--target", SOME_DIRECTORY, "--accelerator", "tpu"),
            id="train-bad-choice",
        ),
        pytest.param(
            ("checkpoint", "llama3-8b", "--target", SOME_DIRECTORY, "--transfer", "-16MiB"),
            id="checkpoint-bad-size",
        ),
        pytest.param(("completion", "fish"), id="completion"),
        pytest.param(("man", "extra"), id="man"),
    ],
)
def test_in_process_cli_gives_what_a_process_gives(hpcio_in_process, hpcio_process, args):
    # The in-process shortcut of the unit tests (conftest.run_cli_fast: every case below this
    # one) is only worth having if it cannot hide a change: this sample keeps real processes.
    in_process = hpcio_in_process(*args, stop_at_launch=True)  # none of them gets that far
    assert in_process == hpcio_process(*args)
    assert "Traceback" not in in_process.stderr


def test_in_process_cli_stops_where_a_run_would_start(hpcio_in_process, target_dir, file_url):
    # A command that passes its checks must be left to a real process (conftest.run_cli_fast).
    args = ("run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "--target", file_url(target_dir))
    assert hpcio_in_process(*args, stop_at_launch=True) is None
    assert list(target_dir.iterdir()) == []


@pytest.fixture
def run_args(target_dir, file_url):
    def args(*more, pattern="mfmw", size="1MiB", target=None, transfer="256KiB"):
        target = target or file_url(target_dir)
        return (
            "run",
            "--pattern",
            pattern,
            "--target",
            target,
            "--size-per-rank",
            size,
            "--transfer",
            transfer,
            *more,
        )

    return args


def refused(done, error_line):
    assert done.returncode == 2, (done.returncode, done.stderr)
    return error_line(done)


@pytest.mark.parametrize(
    ("more", "kwargs", "message"),
    [
        (
            (),
            {"pattern": "nfnw"},
            "unknown pattern 'nfnw'; choose one of sfsw, sfmw, mfmw, sfmr, mfmr",
        ),
        ((), {"pattern": "mfnw"}, "unknown pattern 'mfnw'; did you mean 'mfmw'?"),
        (
            (),
            {"size": "1QiB"},
            "--size-per-rank: '1QiB' is not a size; use a number with B, KiB, MiB, GiB or TiB",
        ),
        ((), {"size": "1.3MiB"}, "--size-per-rank: '1.3MiB' is not a whole number of bytes"),
        (
            (),
            {"transfer": "4X"},
            "--transfer: '4X' is not a size; use a number with B, KiB, MiB, GiB or TiB",
        ),
        (
            (),
            {"transfer": "384KiB"},
            "size per rank (1 MiB) is not a multiple of the transfer (384 KiB)",
        ),
        (
            ("--segments", "3"),
            {"pattern": "sfmw"},
            "--size-per-rank 1 MiB does not split into 3 equal segments",
        ),
        (("-n", "0"), {}, "-n must be at least 1, got 0"),
        (("--lister", "rank0"), {}, "--lister is for listing, not mfmw"),
        (("-n", "-2"), {}, "-n must be at least 1, got -2"),
        (("-i", "0"), {}, "-i must be at least 1, got 0"),
        (("--frobnicate",), {}, "unrecognized arguments: --frobnicate"),
        (("-n", "two"), {}, "argument -n/--ranks: invalid int value: 'two'"),
        (
            ("--phases", "write"),
            {"pattern": "sfmr"},
            "sfmr only reads; use --phases read",
        ),
        (
            ("--direct",),
            {"size": "2000B", "transfer": "1000B"},
            "--direct needs a transfer that is a multiple of 4 KiB, got 1000 B",
        ),
        (
            (),
            {"target": "file://scratch/run1"},
            "target 'file://scratch/run1': use an absolute path, e.g. file:///scratch/hpcio",
        ),
        (
            (),
            {"target": "ftp://host/run1"},
            "target 'ftp://host/run1': unknown scheme; supported: file://, s3://, az://, gs://, "
            "memory://, null://",
        ),
    ],
)
def test_bad_run_options(hpcio, run_args, error_line, target_dir, more, kwargs, message):
    done = hpcio(*run_args(*more, **kwargs))
    assert refused(done, error_line) == f"hpcio: error: {message}"
    assert done.stdout == ""
    assert list(target_dir.iterdir()) == []


def test_missing_required_option(hpcio, error_line):
    done = hpcio("run", "--pattern", "mfmw", "--size-per-rank", "1MiB")
    assert (
        refused(done, error_line) == "hpcio: error: the following arguments are required: --target"
    )


def test_no_command(hpcio, error_line):
    assert "required" in refused(hpcio(), error_line)


@pytest.mark.parametrize("ranks", ["1", "2"])
def test_missing_target_directory(hpcio, run_args, error_line, tmp_path, file_url, ranks):
    missing = tmp_path / "nowhere"
    done = hpcio(*run_args("-n", ranks, target=file_url(missing)))
    assert refused(done, error_line) == (
        f"hpcio: error: target {file_url(missing)} does not exist; "
        f"create it with: mkdir -p {missing}"
    )
    assert not missing.exists()


def test_a_plain_path_is_taken_as_a_file_target(hpcio, run_args, error_line, tmp_path, file_url):
    missing = tmp_path / "nowhere"
    done = hpcio(*run_args("-n", "1", target=str(missing)))
    assert refused(done, error_line) == (
        f"hpcio: error: target {file_url(missing)} does not exist; "
        f"create it with: mkdir -p {missing}"
    )
    assert not missing.exists()


def test_target_that_is_a_file(hpcio, run_args, error_line, tmp_path, file_url):
    regular = tmp_path / "plain.dat"
    regular.write_text("x")
    done = hpcio(*run_args(target=file_url(regular)))
    assert (
        refused(done, error_line) == f"hpcio: error: target {file_url(regular)} is not a directory"
    )


def test_output_directory_missing(hpcio, run_args, error_line, tmp_path):
    out = tmp_path / "no" / "such" / "results.jsonl"
    done = hpcio(*run_args("-o", out))
    assert refused(done, error_line) == (
        f"hpcio: error: -o {out}: directory {out.parent} does not exist"
    )


def test_output_is_a_directory(hpcio, run_args, error_line, tmp_path, target_dir):
    done = hpcio(*run_args("-o", tmp_path))
    assert (
        refused(done, error_line) == f"hpcio: error: -o {tmp_path}: cannot write (Is a directory)"
    )
    assert list(target_dir.iterdir()) == []


def test_sweep_needs_output(hpcio, error_line, target_dir, file_url):
    done = hpcio(
        "sweep", "--pattern", "mfmw", "--sizes", "1MiB..2MiB", "--target", file_url(target_dir)
    )
    assert refused(done, error_line) == (
        "hpcio: error: sweep needs -o FILE: it appends there and resumes from it"
    )


def test_report_on_json_that_is_not_hpcio(hpcio, error_line, tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text('{"bandwidth": 1}\n')
    done = hpcio("report", path)
    assert refused(done, error_line) == f"hpcio: error: {path}:1: not an hpcio result document"


def test_report_on_text(hpcio, error_line, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("bandwidth was good\nlatency too\n")
    done = hpcio("report", path)
    assert refused(done, error_line).startswith(
        f"hpcio: error: {path}:1: not an hpcio result document (not JSON"
    )


def test_report_on_binary(hpcio, error_line, tmp_path):
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 4)
    done = hpcio("report", path)
    assert refused(done, error_line) == f"hpcio: error: {path}: not a text file of hpcio results"


def test_report_on_missing_and_empty_files(hpcio, error_line, tmp_path):
    missing, empty = tmp_path / "missing.jsonl", tmp_path / "empty.jsonl"
    empty.write_text("")
    done = hpcio("report", missing)
    assert refused(done, error_line) == (
        f"hpcio: error: cannot read results {missing}: No such file or directory"
    )
    done = hpcio("report", empty)
    assert refused(done, error_line) == f"hpcio: error: no result documents in {empty}"


def mounted(setup):
    """A launcher that runs hpcio in a private mount namespace after `setup` (shell)."""
    return ("unshare", "-m", "sh", "-c", f'{setup} && exec "$@"', "sh")


@pytest.mark.parametrize("ranks", ["1", "2"])
def test_direct_refused_by_file_system(
    hpcio, run_args, error_line, target_dir, file_url, private_mounts, ranks
):
    # ramfs has no O_DIRECT: open(2) fails with EINVAL.
    done = hpcio(
        *run_args("--direct", "-n", ranks), launcher=mounted(f"mount -t ramfs none '{target_dir}'")
    )
    assert refused(done, error_line) == (
        f"hpcio: error: target {file_url(target_dir)}: its file "
        "system refuses O_DIRECT (--direct); run without "
        "--direct"
    )


def test_same_ramfs_without_direct_runs(hpcio, run_args, target_dir, private_mounts):
    done = hpcio(*run_args(), launcher=mounted(f"mount -t ramfs none '{target_dir}'"))
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("ranks", ["1", "2"])
def test_read_only_target(hpcio, run_args, error_line, target_dir, file_url, private_mounts, ranks):
    setup = f"mount --bind '{target_dir}' '{target_dir}' && mount -o remount,ro,bind '{target_dir}'"
    done = hpcio(*run_args("-n", ranks), launcher=mounted(setup))
    assert refused(done, error_line) == (
        f"hpcio: error: target {file_url(target_dir)} is on a read-only file system"
    )
    assert list(target_dir.iterdir()) == []


def test_closed_stdout_is_not_a_traceback(hpcio, run_args, target_dir):
    # `hpcio run ... | head -1` once head has exited: the reader is gone before hpcio prints.
    done = hpcio(*run_args(), stdout_closed=True)
    assert "Traceback" not in done.stderr, done.stderr
    assert list(target_dir.iterdir()) == []


def test_drop_caches_where_proc_sys_is_read_only(hpcio, run_args, error_line, private_mounts):
    setup = "mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys"
    done = hpcio(*run_args("--drop-caches"), launcher=mounted(setup))
    assert refused(done, error_line).startswith(
        "hpcio: error: --drop-caches needs to write /proc/sys/vm/drop_caches, which is "
    )


def test_drop_caches_on_an_object_store(hpcio, error_line):
    done = hpcio("run", "--pattern", "mfmw", "--target", "memory://", "--size-per-rank", "1MiB",
                 "--drop-caches")  # fmt: skip
    assert refused(done, error_line) == (
        "hpcio: error: --drop-caches: memory targets have no page cache to drop; drop --drop-caches"
    )


TEMPLATE_JOB = ("template", "slurm", "--nodes", "2", "--tasks-per-node", "2")
TEMPLATE_RUN = ("run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "--target", SOME_DIRECTORY)
TEMPLATE_RUN_O = (*TEMPLATE_RUN, "-o", "r.jsonl")


def _job(kind="slurm", nodes="2", *more):
    return ("template", kind, "--nodes", nodes, "--tasks-per-node", "2", *more)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(("template", "lsf", "--nodes", "1"), "invalid choice: 'lsf'", id="kind"),
        pytest.param((*_job(nodes="0"), "--", *TEMPLATE_RUN_O), "--nodes must be at least 1",
                     id="no-nodes"),
        pytest.param((*_job("pbs", "1", "--time", "30m"), "--", *TEMPLATE_RUN_O),
                     "--time takes HH:MM:SS", id="time"),
        pytest.param(_job(), "give the hpcio command the job runs after --", id="empty"),
        pytest.param((*_job(), "--", *TEMPLATE_RUN_O, "--size-per-rank", "1QiB"),
                     "--size-per-rank is given twice", id="twice"),
        pytest.param((*_job(), "--", *TEMPLATE_RUN_O, "--bogus"),
                     "unrecognized arguments: --bogus", id="parse"),
        pytest.param((*_job(), "--", *TEMPLATE_RUN), "needs -o FILE", id="no-output"),
        pytest.param((*_job(), "--", *TEMPLATE_RUN_O, "-n", "8"),
                     "needs 8 ranks but the job has 2 node(s) x 2 tasks = 4", id="ranks"),
        pytest.param((*_job(), "--", *TEMPLATE_RUN_O, "--store-option", "k=secret"),
                     "--store-option values would be written into the job file",
                     id="store-option"),
        pytest.param((*_job(), "--", "report", "r.jsonl"), "runs `run`, `sweep` or `suite run`",
                     id="report"),
        pytest.param((*_job("k8s"), "--", *TEMPLATE_RUN_O),
                     "-o r.jsonl is not on the results volume", id="k8s-output"),
    ],
)  # fmt: skip
def test_bad_job_templates(hpcio, error_line, args, message):
    done = hpcio(*args)
    assert done.returncode == 2
    assert message in error_line(done)
    assert "secret" not in done.stderr
