"""Messages that say what is wrong, and secrets that stay out of them (issue 11, sections 4
and 5): each case as a user meets it, through the real CLI. No MPI, no server: a store
endpoint that is asked anything here is a closed port, so a request made would show."""

import pytest

#: No store listens here: a command that reached the network would say it could not connect.
CLOSED_ENDPOINT = {
    "AWS_ENDPOINT": "http://127.0.0.1:9",
    "AWS_ALLOW_HTTP": "true",
    "AWS_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "test-key-id",
    "AWS_SECRET_ACCESS_KEY": "test-secret",
}


def run_args(target, *more):
    return ("run", "--pattern", "mfmw", "--target", target, "--size-per-rank", "1MiB",
            "--transfer", "1MiB", *more)  # fmt: skip


def refused(done, error_line):
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    return error_line(done)


def test_a_malformed_store_option_is_named_by_position_not_echoed(hpcio, error_line, target_dir):
    done = hpcio(*run_args(f"file://{target_dir}", "--store-option", "region=us-east-1",
                           "--store-option", "secret_access_key:SUPERSECRET"))  # fmt: skip
    assert refused(done, error_line) == (
        "hpcio: error: --store-option number 2 is not KEY=VALUE (it has no '='; its text is not "
        "shown, as it may hold a secret)"
    )
    assert "SUPERSECRET" not in done.stdout + done.stderr


def test_help_says_where_secrets_are_safe(hpcio):
    done = hpcio("run", "--help")
    assert "give secrets in the environment (AWS_*, AZURE_STORAGE_*, GOOGLE_*)" in " ".join(
        done.stdout.split()
    )


def test_version_is_the_installed_one(hpcio):
    # Looked up only when asked (hpcio/__init__.py): still the installed distribution's.
    from importlib.metadata import version

    done = hpcio("--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"hpcio {version('hpcio')}\n", "")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "s3://Bad_Bucket!/x",
            "invalid bucket name 'Bad_Bucket!' for s3://: use 3-63 lowercase letters, digits, "
            "dots and hyphens, starting and ending with a letter or digit",
        ),
        (
            "az://two--hyphens/x",
            "invalid container name 'two--hyphens' for az://: use 3-63 lowercase letters, digits "
            "and single hyphens, starting and ending with a letter or digit",
        ),
        (
            "gs://ab/x",
            "invalid bucket name 'ab' for gs://: use 3-63 lowercase letters, digits, "
            "hyphens and underscores (up to 222 with dots), starting and ending with a "
            "letter or digit",
        ),
        ("az://", "target 'az://': name the container, e.g. az://container/prefix"),
        ("gs://", "target 'gs://': name the bucket, e.g. gs://bucket/prefix"),
    ],
)
def test_bucket_and_container_names_are_checked_before_any_request(hpcio, error_line, url, message):
    done = hpcio(*run_args(url), env=CLOSED_ENDPOINT)
    assert refused(done, error_line) == f"hpcio: error: {message}"


def test_missing_s3_credentials_say_where_hpcio_looked(hpcio, error_line):
    # Were a client to ask a metadata service after all, the proxy sends it to a closed port.
    env = {k: v for k, v in CLOSED_ENDPOINT.items() if not k.startswith("AWS_SECRET")}
    env.pop("AWS_ACCESS_KEY_ID")
    env.update(HTTP_PROXY="http://127.0.0.1:9", http_proxy="http://127.0.0.1:9")
    done = hpcio(*run_args("s3://hpcio-test/x"), env=env)
    assert refused(done, error_line) == (
        "hpcio: error: target s3://hpcio-test/x: no S3 credentials found: hpcio looked in "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY and in --store-option "
        "aws_access_key_id=/aws_secret_access_key=; set them (or AWS_SKIP_SIGNATURE=true for a "
        "public bucket, AWS_METADATA_ENDPOINT to use an instance profile; on an EC2 VM its "
        "instance profile is used)"
    )


def test_proc_exists_but_is_no_place_for_data(hpcio, error_line):
    done = hpcio(*run_args("file:///proc"))
    assert refused(done, error_line) == (
        "hpcio: error: target file:///proc is not a usable file system (type proc): no file can "
        "be created there"
    )


def test_no_mkdir_is_suggested_where_no_directory_can_be_made(hpcio, error_line):
    done = hpcio(*run_args("file:///proc/hpcio-data"))
    assert refused(done, error_line) == (
        "hpcio: error: target file:///proc/hpcio-data does not exist, and no directory can be "
        "made there (a proc file system)"
    )


@pytest.mark.parametrize("command", ["report", "compare", "cost"])
def test_a_one_line_garbage_file_is_named_with_its_line(hpcio, error_line, tmp_path, command):
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("garbage\n")
    done = hpcio(command, garbage, *([garbage] if command == "compare" else []))
    assert refused(done, error_line) == (
        f"hpcio: error: {garbage}:1: not an hpcio result document (not JSON: Expecting value)"
    )


def test_a_cut_off_last_document_is_still_skipped(hpcio, tmp_path):
    # What a sweep killed mid-append leaves: the start of a document and no newline.
    cut = tmp_path / "cut.jsonl"
    cut.write_text('{"schema_version": 1, "kind": "hpc')
    done = hpcio("report", cut)
    assert done.stderr.strip() == f"hpcio: error: no result documents in {cut}"


def test_output_to_a_pipe_is_refused_before_the_run(hpcio, error_line, target_dir):
    done = hpcio(*run_args(f"file://{target_dir}", "-o", "/dev/stdout"))
    assert refused(done, error_line) == (
        "hpcio: error: -o /dev/stdout: not a regular file (results are appended to a file and a "
        "sweep resumes from it); use -o - to write them to stdout"
    )
    assert done.stdout == ""  # nothing ran


def test_output_dash_puts_documents_alone_on_stdout(hpcio, target_dir, read_documents, tmp_path):
    done = hpcio(*run_args(f"file://{target_dir}", "-o", "-"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1
    saved = tmp_path / "saved.jsonl"
    saved.write_text(done.stdout)
    assert read_documents(saved)[0]["run"]["workload"] == "mfmw"
    assert done.stderr.startswith(f"hpcio run: mfmw on file://{target_dir}")
    assert not (target_dir.parent / "-").exists()
    assert not list(target_dir.parent.glob("-*"))


def test_clean_errors_carry_no_errno_noise(hpcio, error_line, tmp_path):
    missing = tmp_path / "missing"
    done = hpcio("clean", "--target", f"file://{missing}")
    assert refused(done, error_line) == (
        f"hpcio: error: clean: cannot list file://{missing}: No such file or directory"
    )


def test_clean_deletes_only_the_names_hpcio_makes(hpcio, target_dir):
    ours = ["hpcio-rank000000.dat", "hpcio-rank000001-file000002.dat", "hpcio-shared.dat",
            "hpcio-single.dat"]  # fmt: skip
    theirs = ["hpcio-notes.txt", "hpcio-rank1.dat", "hpcio-shared.dat.bak", "data.dat"]
    for name in ours + theirs:
        (target_dir / name).write_text("x")
    done = hpcio("clean", "--target", f"file://{target_dir}")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in target_dir.iterdir()) == sorted(theirs)
    assert done.stdout.splitlines()[-1] == (
        f"hpcio clean: 4 of hpcio's objects under file://{target_dir}"
    )


def test_error_lines_stay_one_line():
    from hpcio.cli import error_line as format_error_line

    message = "the store said:\nline one\r\n\tline two  "
    assert format_error_line(message) == "hpcio: error: the store said: line one line two"
