"""`hpcio env` and the facts every document records: what measured, and the storage under a
target, with no credential anywhere in them."""

import json
import os
import subprocess
import sys

import pytest
import servers
from hpcio.runner import machine
from hpcio.spec.target import TargetSpec

SECRET = "wJalrXUtnFEMI-not-a-real-key"


def test_the_command_line_hides_store_option_values():
    argv = ["run", "--store-option", f"aws_secret_access_key={SECRET}",
            f"--store-option=azure_storage_account_key={SECRET}",
            "--target", "s3://bkt/p"]  # fmt: skip
    assert machine.command_line(argv) == [
        "run", "--store-option", "aws_secret_access_key=<hidden>",
        "--store-option=azure_storage_account_key=<hidden>", "--target", "s3://bkt/p",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("url", "options", "environ", "credentials", "endpoint"),
    [
        ("s3://bkt/p", {}, {"AWS_ACCESS_KEY_ID": SECRET, "AWS_ENDPOINT": "http://127.0.0.1:9"},
         "access key (AWS_ACCESS_KEY_ID in the environment)", "http://127.0.0.1:9"),
        ("s3://bkt/p", {"aws_access_key_id": SECRET}, {},
         "access key (--store-option aws_access_key_id)", "the provider's default"),
        ("az://ctr/p", {},
         {"AZURE_STORAGE_USE_EMULATOR": "true", "AZURE_STORAGE_ACCOUNT_KEY": SECRET},
         "the emulator's key (AZURE_STORAGE_USE_EMULATOR in the environment)",
         "http://127.0.0.1:10000 (the emulator's)"),
        ("gs://bkt/p", {}, {"GOOGLE_SERVICE_ACCOUNT_KEY": SECRET,
                          "GOOGLE_BASE_URL": "http://127.0.0.1:4443"},
         "service account key (GOOGLE_SERVICE_ACCOUNT_KEY in the environment)",
         "http://127.0.0.1:4443"),
    ],
)  # fmt: skip
def test_an_object_store_says_where_credentials_come_from(url, options, environ, credentials,
                                                          endpoint):  # fmt: skip
    facts = machine.object_store(TargetSpec.from_url(url, **options), environ)
    assert (facts["credentials"], facts["endpoint"]) == (credentials, endpoint)
    assert SECRET not in json.dumps(facts)


def test_no_credentials_is_said():
    facts = machine.object_store(TargetSpec.from_url("s3://bkt/p"), {})
    assert facts["credentials"].startswith("none found")


def test_a_directory_s_storage(tmp_path):
    facts = machine.posix(str(tmp_path))
    assert facts["file_system"] and facts["mount_point"]
    assert facts["free_bytes"] > 0 and facts["size_bytes"] >= facts["free_bytes"]
    assert facts["o_direct"] in (True, False)  # tmpfs refuses it, disks take it
    assert list(tmp_path.iterdir()) == []  # the O_DIRECT probe file is gone
    assert facts["read_ceiling"]


def test_a_missing_directory_is_said(tmp_path, hpcio_process):
    assert machine.posix(str(tmp_path / "nowhere")) == {
        "path": str(tmp_path / "nowhere"), "exists": False
    }  # fmt: skip
    done = hpcio_process("env", "--target", f"file://{tmp_path}/nowhere")
    assert f"target      file://{tmp_path}/nowhere: no such directory" in done.stdout
    assert done.returncode == 2
    assert done.stderr == f"hpcio: error: target file://{tmp_path}/nowhere: no such directory\n"


def test_software_without_probing_starts_nothing_and_names_versions():
    # In a child: asking MPI for its library starts MPI, which must not start in pytest's
    # process (its later mpiexec launches would take it for a rank).
    code = (
        "import json, sys; from hpcio.runner import machine; "
        "facts = machine.software(probe=False); "
        "facts['imported'] = 'netCDF4' in sys.modules; print(json.dumps(facts))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)  # fmt: skip
    facts = json.loads(done.stdout)
    assert "launcher" not in facts  # would start mpiexec --version
    assert facts["engine_build"] in ("release", "debug")
    assert facts["mpi"]["library"] and "\x00" not in facts["mpi"]["library"]
    assert not facts["imported"] and "parallel" not in facts["libraries"]["netCDF4"]


def _start_mpi_in_a_child(code: str, **environ: str) -> dict:
    """MPI started by `code` (which binds MPI) in a child; LD_DEBUG=files names on stderr
    every library the dynamic loader maps, also those MPI unloads again."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("OMPI_MCA_")}
    report = (
        "; import json, os; print(json.dumps({'size': MPI.COMM_WORLD.Get_size(), "
        "'mca': {k: v for k, v in os.environ.items() if k.startswith('OMPI_MCA_')}}))"
    )
    environ = {**base, **environ, "LD_DEBUG": "files"}
    done = subprocess.run([sys.executable, "-c", code + report], capture_output=True,
                          text=True, check=True, env=environ)  # fmt: skip
    return {**json.loads(done.stdout.splitlines()[-1]), "psm2": "libpsm2" in done.stderr}


def test_a_process_no_launcher_started_starts_mpi_alone_and_passes_nothing_on():
    # A world of one starts MPI without Open MPI's helper daemon and without the PSM2 MTL,
    # whose library sleeps in its constructor; the settings are for that start only, so a
    # job the process launches later gets the user's environment as it was.
    quick = "from hpcio.runner import world; MPI = world.import_mpi()"
    assert _start_mpi_in_a_child(quick) == {"size": 1, "psm2": False, "mca": {}}
    # A user's own setting is theirs: kept, and left in the environment.
    mine = _start_mpi_in_a_child(quick, OMPI_MCA_ess_singleton_isolated="0")
    assert mine["mca"] == {"OMPI_MCA_ess_singleton_isolated": "0"}
    if not _start_mpi_in_a_child("from mpi4py import MPI")["psm2"]:
        pytest.skip("this Open MPI loads no libpsm2 (nothing was left out)")


def test_hpcio_env_as_json(hpcio_process, tmp_path):
    done = hpcio_process("env", "--format", "json", "--target", f"file://{tmp_path}")
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["target"]["path"] == str(tmp_path)
    assert facts["node"]["cores"] == len(os.sched_getaffinity(0))
    assert facts["software"]["launcher"] is None or "mpiexec" in facts["software"]["launcher"]
    assert set(facts["software"]["libraries"]) >= {"h5py", "netCDF4", "zarr", "obstore", "pnetcdf"}


def test_hpcio_env_never_prints_a_credential(hpcio_process):
    # env checks the target: an endpoint on 127.0.0.1 where nothing listens keeps the check
    # off the network, and its refusal is said (exit 2) without the secret.
    closed = f"http://127.0.0.1:{servers.free_port()}"
    done = hpcio_process("env", "--target", "s3://bucket/p", "--store-option",
                         f"aws_secret_access_key={SECRET}", "--store-option",
                         f"aws_access_key_id={SECRET}", "--store-option", f"endpoint={closed}",
                         "--store-option", "allow_http=true")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"endpoint      {closed}" in done.stdout
    assert SECRET not in done.stdout + done.stderr
    assert "credentials   access key (--store-option aws_access_key_id)" in done.stdout


def test_hpcio_env_refuses_a_bad_target_in_one_line(hpcio, error_line):
    done = hpcio("env", "--target", "ftp://x")
    assert done.returncode == 2
    assert error_line(done).startswith("hpcio: error: target 'ftp://x': unknown scheme")


def test_a_document_records_software_and_command(hpcio_process, tmp_path, read_documents):
    out = tmp_path / "r.jsonl"
    done = hpcio_process("run", "--pattern", "sfmw", "--size-per-rank", "1MiB", "--target",
                         "memory://m", "--store-option", f"aws_secret_access_key={SECRET}",
                         "-q", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    assert SECRET not in out.read_text()
    assert doc["command_line"][:2] == ["hpcio", "run"]
    assert "aws_secret_access_key=<hidden>" in doc["command_line"]
    assert doc["software"]["mpi"]["library"]
    assert doc["software"]["engine_build"] == "release"
    assert doc["storage"] == {"url": "memory://m", "kind": "memory",
                              "endpoint": "the provider's default",
                              "credentials": "none needed (in this process)"}  # fmt: skip


def test_a_posix_document_records_its_storage(hpcio_process, target_dir, tmp_path,
                                              read_documents):  # fmt: skip
    out = tmp_path / "r.jsonl"
    done = hpcio_process("run", "--pattern", "mfmw", "--size-per-rank", "1MiB", "--target",
                         f"file://{target_dir}", "-q", "-o", out)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (doc,) = read_documents(out)
    storage = doc["storage"]
    assert storage["path"] == str(target_dir) and storage["file_system"]
    assert storage["o_direct"] in (True, False) and storage["free_bytes"] > 0
    assert list(target_dir.iterdir()) == []
