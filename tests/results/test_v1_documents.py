"""The schema_version 1 documents recorded in tests/data/v1 (real output of hpcio 0.1.0) load
as they are: whatever hpcio writes later, it keeps reading what it wrote before."""

import json
from pathlib import Path

import pytest
from hpcio.results import io as results_io
from hpcio.results.schema import ResultDocument

V1 = Path(__file__).resolve().parents[1] / "data" / "v1"
RECORDED = sorted(V1.glob("*.jsonl"))
#: tests/servers.py's S3Server keys, in the environment of the recorded S3 run.
S3_KEYS = ("hpcio-test-access-key", "hpcio-test-secret-key")


def test_every_recording_is_here():
    assert len(RECORDED) == 20
    assert all(path.name in (V1 / "README.md").read_text() for path in RECORDED)


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_recorded_document_loads(path):
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert records and {r["schema_version"] for r in records} == {1}
    documents = results_io.read(path)
    assert len(documents) == len(records)
    for record, document in zip(records, documents, strict=True):
        assert ResultDocument.from_dict(record) == document
        assert document.phases and document.summary


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_no_credential_was_recorded(path):
    text = path.read_text()
    assert not [key for key in S3_KEYS if key in text]


def test_the_special_runs_are_what_their_names_say():
    (stopped,) = results_io.read(V1 / "file-interrupted.jsonl")
    assert stopped.status == "interrupted" and stopped.summary["write"].iterations == 2
    (own,) = results_io.read(V1 / "file-sfmr-own.jsonl")
    assert (own.workload, own.params["read_scope"]) == ("sfmr", "own")
    suite = results_io.read(V1 / "suite-ranks-per-node.jsonl")
    assert [d.run["ranks_per_node"] for d in suite] == [1, 1, 2, 2]
    s3 = results_io.read(V1 / "s3-2ranks.jsonl")
    assert {d.run["target"]["kind"] for d in s3} == {"s3"}
    assert all(p.requests for d in s3 for p in d.phases)
