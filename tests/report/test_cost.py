import csv
import io
import json
from pathlib import Path

import pytest
import recorded
from hpcio import _engine
from hpcio.commands.cost import run_facts
from hpcio.errors import SpecError
from hpcio.report.cost import (
    REQUEST_KINDS,
    RunFacts,
    choose_price,
    estimate_cost,
    parse_duration,
    render_costs,
    translate_requests,
)
from hpcio.report.cost import (
    facts_of as report_facts_of,
)
from hpcio.report.prices import CatalogueError, load_catalogue
from hpcio.report.scenario import load_scenario, render_scenario
from hpcio.results import io as results_io
from hpcio.spec.model import RunSpec
from recorded import V1

MiB = 1 << 20
ROOT = Path(__file__).resolve().parents[2]
MONTH_30D = 720 / 730  # --keep 30d in billing months of 730 hours


def facts_of(doc) -> RunFacts:
    """What `hpcio cost` learns of the document's run from its workload."""
    return run_facts(RunSpec.from_dict(doc.run))


def test_the_request_kinds_are_the_engines():
    assert list(REQUEST_KINDS) == _engine.REQUEST_KINDS


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


class CostDocs:
    """Recorded documents (tests/data/v1), one per file:

    - parts:  mfmw, 1 rank, 1 MiB in 256 KiB transfers, 2 iterations, file://
    - whole:  mfmw, 1 rank, 1 MiB in one transfer, 3 iterations, file://
    - memory: sfmw, 1 rank, 16 MiB in 8 MiB parts, 2 iterations, memory://
    """

    def __init__(self, root: Path) -> None:
        self.parts = recorded.selected(
            V1 / "file-1rank.jsonl", root / "parts.jsonl", pattern="mfmw", size_per_rank_bytes=MiB
        )
        self.whole = V1 / "file-whole.jsonl"
        self.memory = V1 / "memory-parts.jsonl"

    def doc(self, name: str):
        (doc,) = results_io.read(getattr(self, name))
        return doc


@pytest.fixture(scope="module")
def cost_docs(tmp_path_factory) -> CostDocs:
    return CostDocs(tmp_path_factory.mktemp("cost"))


def test_shipped_catalogue_holds_the_studies_figures(catalogue):
    blob = catalogue.get("azure-blob-gpv1-lrs-uksouth-2018")
    assert (blob.provider, blob.region, blob.currency) == ("azure", "uksouth", "GBP")
    assert [t.per_gb_month for t in blob.storage] == [0.0224, 0.0220, 0.0217, 0.0213, 0.0209]
    assert [t.up_to_gb for t in blob.storage] == [1024, 51200, 512000, 1024000, 5120000]
    assert blob.requests_per == 10000
    assert set(blob.requests.values()) == {0.00027}
    files = catalogue.get("azure-files-gpv1-lrs-uksouth-2018")
    assert [t.per_gb_month for t in files.storage] == [0.056]
    assert set(files.requests.values()) == {0.0112}
    standard = catalogue.get("azure-netapp-files-standard-southcentralus-2022")
    ultra = catalogue.get("azure-netapp-files-ultra-southcentralus-2022")
    assert standard.model == ultra.model == "reserved"
    assert standard.storage[0].per_gb_month * 4096 == 602
    assert ultra.storage[0].per_gb_month * 4096 == 1608
    s3 = catalogue.get("aws-s3-standard-us-east-1")
    assert [t.per_gb_month for t in s3.storage] == [0.023, 0.022, 0.021]
    assert s3.requests == {"put_copy_post_list": 0.005, "get_select_other": 0.0004}
    gcs = catalogue.get("gcp-gcs-standard-us-central1")
    assert gcs.requests == {"class_a": 0.005, "class_b": 0.0004}
    for price in catalogue.prices:
        assert price.provider and price.product and price.region and price.source
        assert price.currency in ("USD", "GBP") and len(price.as_of) == 10


def test_tiers_are_graduated_and_reserved_capacity_has_a_floor(catalogue):
    s3 = catalogue.get("aws-s3-standard-us-east-1")
    # 51,200 GB at 0.023, then 8,800 at 0.022
    assert catalogue.storage_per_month(s3, 60000) == pytest.approx(1177.6 + 193.6)
    # ... then 460,800 at 0.022 and 88,000 over 500 TB at 0.021
    assert catalogue.storage_per_month(s3, 600000) == pytest.approx(1177.6 + 10137.6 + 1848)
    blob = catalogue.get("azure-blob-gpv1-lrs-uksouth-2018")
    assert catalogue.storage_per_month(blob, 2048) == pytest.approx(1024 * 0.0224 + 1024 * 0.022)
    anf = catalogue.get("azure-netapp-files-standard-southcentralus-2022")
    assert catalogue.storage_per_month(anf, 100) == pytest.approx(602)
    assert catalogue.storage_per_month(anf, 5000) == pytest.approx(5000 * 602 / 4096)


def test_no_storage_price_beyond_the_last_tier(catalogue):
    blob = catalogue.get("azure-blob-gpv1-lrs-uksouth-2018")
    with pytest.raises(CatalogueError) as caught:
        catalogue.storage_per_month(blob, 6_000_000)
    line = _line_of(catalogue.path, "storage = [")  # the blob's, the first in the file
    assert str(caught.value) == (
        f"{catalogue.path}:{line}: price 'azure-blob-gpv1-lrs-uksouth-2018' has no storage "
        "price beyond 5,120,000 GB (6,000,000.0 GB needed)"
    )


def test_durations():
    assert parse_duration("30d") == 720
    assert parse_duration("1mo") == 730
    assert parse_duration("12h") == 12
    assert parse_duration("2w") == 336
    assert parse_duration("1y") == 8760
    assert parse_duration("0") == 0
    with pytest.raises(SpecError, match="'30 days' is not a duration"):
        parse_duration("30 days")


def test_posix_run_priced_as_s3_by_hand(cost_docs, catalogue):
    doc = cost_docs.doc("parts")
    assert _counted(doc) == {"open": 4, "write": 8, "read": 8, "close": 4}
    price, kind = choose_price(catalogue, "posix", as_kind="s3")
    assert (price.id, kind) == ("aws-s3-standard-us-east-1", "s3")
    cost = estimate_cost(doc, catalogue, price, kind, 720, facts_of(doc))
    # Per iteration: one file in 4 transfers = create + 4 parts + complete; 4 ranged GETs.
    assert cost.billed_requests == {
        "create_multipart": 2,
        "upload_part": 8,
        "complete_multipart": 2,
        "get": 8,
    }
    assert cost.by_class == {"put_copy_post_list": 12, "get_select_other": 8}
    assert cost.requests_cost == pytest.approx(12 / 1000 * 0.005 + 8 / 1000 * 0.0004)
    assert cost.stored_bytes == MiB
    assert cost.keep_cost == pytest.approx(1 / 1024 * 0.023 * MONTH_30D)
    assert cost.total == pytest.approx(0.0000632 + 0.023 / 1024 * MONTH_30D)
    assert any("parts of at least 5 MiB" in note for note in cost.notes)


def test_posix_run_priced_as_azure_and_gcs_by_hand(cost_docs, catalogue):
    doc = cost_docs.doc("parts")
    price, kind = choose_price(catalogue, "posix", as_kind="azure")
    cost = estimate_cost(doc, catalogue, price, kind, 720, facts_of(doc))
    assert (cost.currency, cost.price_id) == ("GBP", "azure-blob-gpv1-lrs-uksouth-2018")
    # Per iteration: 4 staged blocks + 1 block list (write), 4 reads.
    assert cost.by_class == {"write": 10, "read": 8}
    assert cost.requests_cost == pytest.approx(18 / 10000 * 0.00027)
    assert cost.keep_cost == pytest.approx(1 / 1024 * 0.0224 * MONTH_30D)
    price, kind = choose_price(catalogue, "posix", provider="gcp")
    assert kind == "gcs"
    cost = estimate_cost(doc, catalogue, price, kind, 730, facts_of(doc))
    assert cost.by_class == {"class_a": 12, "class_b": 8}
    assert cost.keep_cost == pytest.approx(0.020 / 1024)


def test_single_transfer_files_are_single_puts(cost_docs, catalogue):
    doc = cost_docs.doc("whole")
    billed, _ = translate_requests(facts_of(doc), doc, "posix", "s3")
    assert billed == {"put": 3, "get": 3}
    price, kind = choose_price(catalogue, "posix", as_kind="s3")
    cost = estimate_cost(doc, catalogue, price, kind, 0, facts_of(doc))
    assert cost.requests_cost == pytest.approx(3 * 0.005 / 1000 + 3 * 0.0004 / 1000)
    assert cost.keep_cost == 0
    assert not any("5 MiB" in note for note in cost.notes)  # no multipart, no part limit


def test_object_store_requests_priced_as_counted(cost_docs, catalogue):
    doc = cost_docs.doc("memory")
    assert _counted(doc) == {
        "get": 4,
        "create_multipart": 2,
        "upload_part": 4,
        "complete_multipart": 2,
    }
    price, kind = choose_price(catalogue, "memory")
    assert price is None
    unpriced = estimate_cost(doc, catalogue, price, kind, 720, facts_of(doc))
    assert unpriced.total is None and "--as s3" in unpriced.notes[0]
    price, kind = choose_price(catalogue, "memory", as_kind="s3")
    cost = estimate_cost(doc, catalogue, price, kind, 730, facts_of(doc))
    assert cost.billed_requests == _counted(doc)
    assert cost.requests_cost == pytest.approx(8 * 0.005 / 1000 + 4 * 0.0004 / 1000)
    assert cost.keep_cost == pytest.approx(16 / 1024 * 0.023)
    price, kind = choose_price(catalogue, "memory", as_kind="azure")
    cost = estimate_cost(doc, catalogue, price, kind, 730, facts_of(doc))
    assert cost.billed_requests == {"get": 4, "put_block": 4, "put_block_list": 2}
    assert cost.by_class == {"read": 4, "write": 6}


def test_posix_priced_as_a_file_service(cost_docs, catalogue):
    doc = cost_docs.doc("parts")
    price, kind = choose_price(catalogue, "posix", price_id="azure-files-gpv1-lrs-uksouth-2018")
    cost = estimate_cost(doc, catalogue, price, kind, 730, facts_of(doc))
    assert kind == "posix" and cost.billed_requests == _counted(doc)
    # open and close are "other" transactions: 24 in all at £0.0112 per 10,000.
    assert cost.by_class == {"other": 8, "write": 8, "read": 8}
    assert cost.requests_cost == pytest.approx(24 / 10000 * 0.0112)
    price, kind = choose_price(catalogue, "posix", product="netapp files, ultra")
    cost = estimate_cost(doc, catalogue, price, kind, 730, facts_of(doc))
    assert cost.requests_cost == 0 and cost.keep_cost == pytest.approx(1608)


def test_choosing_prices(catalogue):
    assert choose_price(catalogue, "s3")[0].id == "aws-s3-standard-us-east-1"
    assert choose_price(catalogue, "gcs")[0].id == "gcp-gcs-standard-us-central1"
    assert choose_price(catalogue, "azure")[0].id == "azure-blob-gpv1-lrs-uksouth-2018"
    assert choose_price(catalogue, "posix") == (None, "posix")
    with pytest.raises(CatalogueError, match="matches several prices: azure-files"):
        choose_price(catalogue, "posix", provider="azure")
    with pytest.raises(CatalogueError, match="is for gcs targets, not s3"):
        choose_price(catalogue, "posix", as_kind="s3", price_id="gcp-gcs-standard-us-central1")
    with pytest.raises(CatalogueError, match="did you mean 'aws-s3-standard-us-east-1'"):
        choose_price(catalogue, "s3", price_id="aws-s3-standard")


def test_render_formats(cost_docs, catalogue):
    doc = cost_docs.doc("parts")
    price, kind = choose_price(catalogue, "posix", as_kind="s3")
    costs = [estimate_cost(doc, catalogue, price, kind, 720, facts_of(doc))]
    md = render_costs(costs, catalogue, "md")
    assert "| mfmw 1 rank 1 MiB/rank x2 | file://" in md
    assert "put_copy_post_list 12, get_select_other 8 | 1 MiB | $0.0000632 |" in md
    assert "keep 30d" in md
    assert "Price: aws-s3-standard-us-east-1: aws S3 Standard, us-east-1, USD, as of " in md
    (row,) = csv.DictReader(io.StringIO(render_costs(costs, catalogue, "csv")))
    assert float(row["request_cost"]) == pytest.approx(0.0000632)
    assert row["currency"] == "USD" and row["stored_bytes"] == str(MiB)
    data = json.loads(render_costs(costs, catalogue, "json"))
    assert data["runs"][0]["by_class"] == {"put_copy_post_list": 12, "get_select_other": 8}
    assert data["prices"][0]["source"] == "https://aws.amazon.com/s3/pricing/"


def test_reserved_runs_are_not_summed(cost_docs, catalogue):
    doc = cost_docs.doc("parts")
    price, kind = choose_price(catalogue, "posix", product="netapp files, standard")
    costs = [estimate_cost(doc, catalogue, price, kind, 730, facts_of(doc))] * 2
    md = render_costs(costs, catalogue, "md")
    assert "Total:" not in md
    assert "once for all the runs that share it" in md


def test_study_004_what_if_reproduced(catalogue):
    table = load_scenario(ROOT / "scenarios" / "rtm.toml", catalogue)
    amounts = {label: [round(c.amount, 6) for c in cells] for label, cells in table.rows}
    assert amounts == {"ANF": [602, 1608], "Blob Hot": [9, 360]}
    assert [c.amount for c in table.compute[1]] == [6177, 247080]
    md = render_scenario(table, "md")
    assert "| ANF | $602 (standard) | $1,608 (ultra) |" in md
    assert "| Blob Hot | $9 | $360 |" in md
    assert "| Compute (4k shots) | $6,177 | $247,080 |" in md
    assert "Blob Hot costs 1.5% (1x RTM run, 100 GB used), 22.4% (40x RTM run, 4TB used)" in md
    rows = list(csv.reader(io.StringIO(render_scenario(table, "csv"))))
    assert rows[0] == ["", "1x RTM run, 100 GB used", "40x RTM run, 4TB used"]
    assert rows[1] == ["ANF", "602", "1608"]
    data = json.loads(render_scenario(table, "json"))
    assert data["rows"][1]["cells"][1]["amount"] == pytest.approx(360)


SCENARIO = """\
[scenario]
title = "pay-per-use with requests"
months = 2

[[case]]
id = "ten"
runs = 10
stored_gb = 1000
requests_per_run = { put = 1000, get = 10000 }

[[storage]]
label = "S3"
price = "aws-s3-standard-us-east-1"

[[storage]]
label = "GCS"
price = "gcp-gcs-standard-us-central1"
"""


def test_scenario_requests_and_months_by_hand(tmp_path, catalogue):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    table = load_scenario(path, catalogue)
    (s3,), (gcs,) = (cells for _, cells in table.rows)
    # 1000 GB for 2 months, plus 10 runs of 1000 PUTs and 10,000 GETs
    assert s3.amount == pytest.approx(1000 * 0.023 * 2 + 10 * (0.005 + 10 * 0.0004))
    assert gcs.amount == pytest.approx(1000 * 0.020 * 2 + 10 * (0.005 + 10 * 0.0004))
    assert table.compute is None


@pytest.mark.parametrize(
    ("change", "line", "message"),
    [
        (("runs = 10", "rnus = 10"), 7, "unknown key 'rnus'; did you mean 'runs'?"),
        (
            ('price = "aws-s3-standard-us-east-1"', 'price = "aws-s3"'),
            13,
            "no price 'aws-s3'; did you mean 'aws-s3-standard-us-east-1'?",
        ),
        (
            ('price = "aws-s3-standard-us-east-1"', 'price = { eleven = "x" }'),
            13,
            "no [[case]] with id 'eleven'",
        ),
        (
            (
                'price = "gcp-gcs-standard-us-central1"',
                'price = "azure-blob-gpv1-lrs-uksouth-2018"',
            ),
            17,
            "price 'azure-blob-gpv1-lrs-uksouth-2018' is in GBP, the scenario in USD; "
            "a table adds up one currency only",
        ),
        (("put = 1000", "put = -1"), 9, "'requests_per_run' maps request kinds to counts"),
    ],
)
def test_scenario_errors_name_the_line(tmp_path, catalogue, change, line, message):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace(*change))
    with pytest.raises(CatalogueError) as caught:
        load_scenario(path, catalogue)
    text = str(caught.value)
    assert text.startswith(f"{path}:{line}: ")
    assert message in text


def _edited_catalogue(tmp_path, old, new):
    text = (ROOT / "python" / "hpcio" / "report" / "prices.toml").read_text()
    assert old in text
    path = tmp_path / "prices.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_catalogue_without_a_billing_class_the_run_needs(tmp_path, cost_docs):
    path = _edited_catalogue(tmp_path, 'get = "get_select_other"\n', "")
    catalogue = load_catalogue(path)
    price, kind = choose_price(catalogue, "posix", as_kind="s3")
    with pytest.raises(CatalogueError) as caught:
        estimate_cost(
            cost_docs.doc("parts"), catalogue, price, kind, 720, facts_of(cost_docs.doc("parts"))
        )
    assert str(caught.value) == (
        f"{path}:{_line_of(path, '[billing.s3]')}: [billing.s3] has no class for request kind "
        "'get' (needed by price 'aws-s3-standard-us-east-1')"
    )


def test_catalogue_without_a_class_price_the_run_needs(tmp_path, cost_docs):
    path = _edited_catalogue(
        tmp_path,
        "requests = { put_copy_post_list = 0.005, get_select_other = 0.0004 }",
        "requests = { put_copy_post_list = 0.005 }",
    )
    catalogue = load_catalogue(path)
    price, kind = choose_price(catalogue, "posix", as_kind="s3")
    # Whole-file runs make PUTs only on write... and GETs on read: the GET price is needed.
    with pytest.raises(CatalogueError) as caught:
        estimate_cost(
            cost_docs.doc("whole"), catalogue, price, kind, 720, facts_of(cost_docs.doc("whole"))
        )
    line = _line_of(path, "requests = { put_copy_post_list = 0.005 }")
    assert str(caught.value) == (
        f"{path}:{line}: price 'aws-s3-standard-us-east-1' has no price for "
        "'get_select_other' requests"
    )


@pytest.mark.parametrize(
    ("old", "new", "needle", "message"),
    [
        (
            'kinds = ["s3"]',
            'kind = ["s3"]',
            'kind = ["s3"]',
            "unknown key 'kind'; did you mean 'kinds'?",
        ),
        (
            'as_of = "2025-01-01"',
            'as_of = "Jan 2025"',
            'as_of = "Jan 2025"',
            "'as_of' must be a date such as 2025-01-31, got 'Jan 2025'",
        ),
        (
            'id = "gcp-gcs-standard-us-central1"',
            'id = "aws-s3-standard-us-east-1"',
            'provider = "gcp"',
            "price id 'aws-s3-standard-us-east-1' is used twice",
        ),
        ('billing = "gcs"', 'billing = "gcp"', 'billing = "gcp"', "no [billing.gcp] table"),
    ],
)
def test_malformed_catalogue_is_one_line_with_its_line(tmp_path, old, new, needle, message):
    path = _edited_catalogue(tmp_path, old, new)
    with pytest.raises(CatalogueError) as caught:
        load_catalogue(path)
    line = _line_of(path, needle)
    if needle == 'provider = "gcp"':
        line -= 1  # the id line just above it
    assert str(caught.value) == f"{path}:{line}: {message}"


def test_cost_cli(hpcio, error_line, cost_docs, tmp_path):
    done = hpcio("cost", cost_docs.parts, "--as", "s3", "--keep", "1mo")
    assert done.returncode == 0, done.stderr
    assert "| keep 1mo |" in done.stdout
    assert "Total: $" in done.stdout
    done = hpcio("cost", "--scenario", ROOT / "scenarios" / "rtm.toml")
    assert done.returncode == 0, done.stderr
    assert "| ANF | $602 (standard) | $1,608 (ultra) |" in done.stdout

    not_ours = tmp_path / "other.jsonl"
    not_ours.write_text('{"name": "a fio result"}\n')
    done = hpcio("cost", not_ours)
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: {not_ours}:1: not an hpcio result document"
    text = tmp_path / "notes.txt"
    text.write_text("hello\nworld\n")
    done = hpcio("cost", text)
    assert done.returncode == 2
    assert error_line(done).startswith(
        f"hpcio: error: {text}:1: not an hpcio result document (not JSON"
    )

    path = _edited_catalogue(tmp_path, 'get = "get_select_other"\n', "")
    done = hpcio("cost", cost_docs.parts, "--as", "s3", "--catalogue", path)
    assert done.returncode == 2
    assert error_line(done) == (
        f"hpcio: error: {path}:{_line_of(path, '[billing.s3]')}: [billing.s3] has no class for "
        "request kind 'get' (needed by price 'aws-s3-standard-us-east-1')"
    )
    done = hpcio("cost")
    assert done.returncode == 2
    assert error_line(done) == (
        "hpcio: error: give results files (JSON Lines), --scenario FILE or --prices"
    )


def _counted(doc):
    total = {}
    for phase in doc.phases:
        for name, count in phase.requests.items():
            total[name] = total.get(name, 0) + count
    return total


def _line_of(path, text):
    lines = Path(path).read_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if line.strip().startswith(text))


@pytest.mark.parametrize(
    ("recording", "per_object"),
    [("file-timed.jsonl", 4), ("file-files-per-rank.jsonl", 1)],
    ids=["time-based", "files-per-rank"],
)
def test_posix_writes_priced_as_s3_count_every_object_written(
    tmp_path, catalogue, recording, per_object
):
    """A time-based run (2 ranks, 1 MiB per rank in 256 KiB transfers, 0.2 s) writes each file
    again in every pass (4 parts each time); with four files per rank every 256 KiB transfer is
    an object of its own, one PUT."""
    output = recorded.selected(V1 / recording, tmp_path / "r.jsonl", size_per_rank_bytes=MiB)
    (doc,) = results_io.read(output)
    assert (doc.ranks, doc.params["transfer_bytes"]) == (2, 256 << 10)
    (write,) = [p for p in doc.phases if p.phase == "write"]
    transfers = write.requests["write"]
    cost = estimate_cost(doc, catalogue, None, "s3", 0, facts_of(doc))
    if per_object == 1:
        assert cost.billed_requests["put"] == transfers == 8
        assert "create_multipart" not in cost.billed_requests
    else:
        assert transfers > 2 * per_object  # several passes over both ranks' files
        uploads = -(-transfers // per_object)
        assert cost.billed_requests["create_multipart"] == uploads
        assert cost.billed_requests["complete_multipart"] == uploads
        assert cost.billed_requests["upload_part"] == transfers
        assert any(n.startswith("time-based run: every pass") for n in cost.notes)


def test_a_plan_is_priced_before_it_runs(hpcio):
    # No server anywhere: pricing a plan makes no request.
    done = hpcio("cost", "--format", "json", "--plan", "run", "--pattern", "sfmw", "-n", 4,
                 "--size-per-rank", "1GiB", "--transfer", "16MiB",
                 "--target", "s3://bkt/p")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (row,) = json.loads(done.stdout)["runs"]
    assert row["requests"] == {"create_multipart": 1, "upload_part": 256,
                               "complete_multipart": 1, "get": 256}  # fmt: skip
    assert row["stored_bytes"] == 4 << 30 and row["total"] > 0
    assert row["notes"][0].startswith("planned, not run: s3 requests from the plans' transfers")


def test_a_planned_sweep_is_priced_point_by_point(hpcio):
    done = hpcio("cost", "--as", "azure", "--format", "json", "--plan", "sweep", "--pattern",
                 "mfmw", "--sizes", "1MiB..2MiB", "--target", "file:///tmp")  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["runs"]
    assert [r["requests"] for r in rows] == [
        {"put": 1, "get": 1}, {"put_block": 2, "put_block_list": 1, "get": 2}
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--plan", "run", "--workload", "python-files", "--target", "file:///tmp"),
         "python-files: its requests are made by its own code and known only once it runs; "
         "price its result documents instead"),
        (("--plan", "report", "x"), "--plan takes an hpcio run or sweep command: --plan run "
         "--pattern ..."),
    ],
)  # fmt: skip
def test_what_a_plan_cannot_price_is_one_line(hpcio, error_line, args, message):
    done = hpcio("cost", *args)
    assert done.returncode == 2
    assert error_line(done) == f"hpcio: error: {message}"


def test_a_null_run_is_priced_from_its_file_calls(catalogue):
    """null:// takes a file's calls (open, write, read, close), not any store's requests: priced
    as a store, they are translated as a POSIX run's are."""
    (doc,) = results_io.read(Path(__file__).parents[1] / "data" / "null" / "mfmw-one-rank.jsonl")
    assert _counted(doc) == {"open": 2, "write": 16, "read": 16, "close": 2}
    facts = report_facts_of(doc)
    billed, notes = translate_requests(facts, doc, "null", "s3")
    # One 16 MiB object in 1 MiB transfers: create + 16 parts + complete; 16 ranged GETs.
    assert billed == {"create_multipart": 1, "upload_part": 16, "complete_multipart": 1, "get": 16}
    assert "derived from the POSIX ones" in notes[0]
    billed, _ = translate_requests(facts, doc, "null", "azure")
    assert billed == {"put_block": 16, "put_block_list": 1, "get": 16}
    price, kind = choose_price(catalogue, "null", as_kind="s3")
    cost = estimate_cost(doc, catalogue, price, kind, 0, facts)
    assert cost.by_class == {"put_copy_post_list": 18, "get_select_other": 16}
