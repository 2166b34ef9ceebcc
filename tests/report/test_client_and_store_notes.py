"""`hpcio report` shows failed store requests next to the bandwidth and says which points were
client-bound; documents written before either was recorded read and report as before."""

import json

import recorded
from hpcio.report.html import caveats
from hpcio.report.tables import render, study_tables
from hpcio.results.schema import ResultDocument

V1 = recorded.V1


def single() -> dict:
    """A recorded v1 document (mfmw, 1 MiB per rank, 2 ranks, 1 iteration) as upgraded."""
    line = (V1 / "file-single.jsonl").read_text().splitlines()[0]
    return json.loads(json.dumps(ResultDocument.from_dict(json.loads(line)).to_dict()))


def with_figures(record: dict, phase: str, **summary) -> ResultDocument:
    record["summary"][phase].update(summary)
    return ResultDocument.from_dict(record)


def test_failed_requests_get_a_column_beside_the_bandwidth_and_a_note_by_cause():
    doc = with_figures(single(), "write", store_failures={"503": 6, "connection_reset": 2})
    (write,) = [t for t in study_tables([doc]) if t.title.startswith("mfmw write")]
    assert write.columns[-2:] == ("Bandwidth (MiB/s)", "Failed Requests Per Iteration")
    assert write.rows[0][-1] == 8.0
    (note,) = [n for n in write.notes if n.startswith("failed requests")]
    assert "503: 6, connection_reset: 2" in note
    (read,) = [t for t in study_tables([doc]) if t.title.startswith("mfmw read")]
    assert "Failed Requests Per Iteration" not in read.columns


def test_older_documents_count_their_throttled_and_retried_requests():
    doc = with_figures(single(), "read", throttled=3, retried=1)
    (read,) = [t for t in study_tables([doc]) if t.title.startswith("mfmw read")]
    assert read.rows[0][-1] == 4.0


def test_a_client_bound_point_is_noted_under_its_table_and_on_the_page():
    record = single()
    record["warnings"] = [
        "client-bound: write in 1 of 1 iteration(s): the ranks were on a core or waiting for "
        "one over 90% of the phase; the write bandwidth measures the client's CPU, not the "
        "storage"
    ]
    doc = with_figures(record, "write", client_bound_iterations=1)
    text = render(study_tables([doc]), "md")
    assert "Note: client-bound on file:///tmp/hpcio-v1/t1 at File Size Per Proc 1 MiB" in text
    assert text.count("client-bound") == 1  # the read table has no such note
    assert any("client-bound: write" in c.text for c in caveats([doc]))


def test_documents_without_the_new_figures_have_neither_column_nor_note():
    doc = ResultDocument.from_dict(single())
    assert doc.phases[0].cpu is None and doc.phases[0].store_failures == {}
    assert doc.summary["write"].cpu_core_fraction is None
    text = render(study_tables([doc]), "md")
    assert "Failed Requests" not in text and "client-bound" not in text
