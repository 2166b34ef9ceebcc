"""What a run costs: its requests by billing class and the keeping of its data, priced from
the catalogue (report/prices.py). Reads result documents only; never touches storage."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hpcio import kinds
from hpcio.errors import SpecError
from hpcio.report.pooled import is_time_based
from hpcio.report.prices import (
    GB_BYTES,
    MONTH_HOURS,
    Catalogue,
    CatalogueError,
    Price,
    format_money,
)
from hpcio.results.schema import ResultDocument
from hpcio.units import format_bytes
from hpcio.workloads import shown

#: The object-store kinds (hpcio/kinds.py's table says which).
OBJECT_KINDS = kinds.object_kinds()
#: The engine's request kinds in its order (its REQUEST_KINDS, which a test holds this equal
#: to; documents are priced without the engine); others follow by name.
REQUEST_KINDS = (
    "open", "write", "read", "fsync", "close", "put", "get", "head", "list", "delete",
    "create_multipart", "upload_part", "complete_multipart", "abort_multipart", "put_block",
    "put_block_list",
)  # fmt: skip
#: Parts of an S3 or GCS multipart upload must be at least this big, but the last.
_MIN_PART_BYTES = 5 << 20
#: Request kinds of a file's calls: what a POSIX target counts, and null://, whose handles
#: take the same calls (it stands in for any store, so it names none of their requests).
_FILE_REQUESTS = frozenset({"open", "close", "fsync", "write", "read"})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(h|d|w|mo|y)\s*$")
_HOURS = {"h": 1.0, "d": 24.0, "w": 24.0 * 7, "mo": MONTH_HOURS, "y": MONTH_HOURS * 12}


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What pricing needs of a run beyond its document, from its spec and workload (the
    command that prices gets them: reports read documents only)."""

    #: The run as tables name it.
    run: str
    target_url: str
    #: Bytes the run keeps on its target at its peak, all ranks.
    stored_bytes: int
    #: The largest object (file) it writes, and the largest transfer that writes one.
    object_bytes: int
    part_bytes: int


def facts_of(doc: ResultDocument) -> RunFacts | None:
    """The run's facts from its document alone; None for a document older than its
    footprint record (the caller then asks the run's workload)."""
    footprint = doc.footprint
    if footprint is None:
        return None
    return RunFacts(
        run=run_name(doc),
        target_url="+".join(str(t["url"]) for t in doc.run.get("targets") or [doc.run["target"]]),
        stored_bytes=footprint.stored_bytes,
        object_bytes=footprint.largest_object_bytes,
        part_bytes=footprint.largest_part_bytes,
    )


def run_name(doc: ResultDocument) -> str:
    """The run in a few words, as `hpcio suite show` names a point without its target:
    'sfmw 20 ranks (4/node) 64 MiB/rank x100'."""
    run = doc.run
    ranks = int(run["ranks"])
    per_node = run.get("ranks_per_node")
    layout = f" ({per_node}/node)" if per_node else ""
    size = doc.params.get("size_per_rank_bytes")
    per_rank = f" {format_bytes(size)}/rank" if size is not None else ""
    stripes = ""
    count, stripe = run.get("stripe_count"), run.get("stripe_size_bytes")
    if count is not None:
        stripes += f" {count} stripe{'s' if count != 1 else ''}"
    if stripe is not None:
        stripes += f" of {format_bytes(stripe)}"
    return (
        f"{shown.label(doc.workload, doc.settings)} {ranks} rank{'s' if ranks != 1 else ''}"
        f"{layout}{per_rank}{stripes} x{run['iterations']}"
    )


@dataclass(frozen=True, slots=True)
class CostBreakdown:
    """One run's cost. Amounts in `currency`; None when there is no price to apply."""

    run: str
    target_url: str
    target_kind: str
    #: The kind of store the run is priced as (its own, or another with --as).
    priced_as: str
    price_id: str | None
    currency: str | None
    #: The price's model: "pay-per-use" or "reserved" (None: not priced).
    model: str | None
    #: Requests by kind as the engine counted them, all phases and iterations.
    requests: dict[str, int]
    #: The requests the priced-as store would bill, by kind (== requests unless translated).
    billed_requests: dict[str, int]
    #: Billed requests by the provider's billing class.
    by_class: dict[str, int]
    #: Bytes the run leaves per iteration (size per rank x ranks): what keeping it stores.
    stored_bytes: int
    keep_hours: float
    requests_cost: float | None
    keep_cost: float | None
    notes: tuple[str, ...]

    @property
    def total(self) -> float | None:
        if self.requests_cost is None or self.keep_cost is None:
            return None
        return self.requests_cost + self.keep_cost


def parse_duration(text: str) -> float:
    """Hours in '30d', '12h', '2w', '1mo' (730 h, a billing month), '1y' (12 months); '0' is 0.

    Raises:
        SpecError: not a duration.
    """
    if text.strip() == "0":
        return 0.0
    match = _DURATION.match(text)
    if not match:
        raise SpecError(f"'{text}' is not a duration; use e.g. 12h, 30d, 2w, 1mo or 1y")
    return float(match.group(1)) * _HOURS[match.group(2)]


def choose_price(
    catalogue: Catalogue,
    doc_kind: str,
    *,
    as_kind: str | None = None,
    price_id: str | None = None,
    provider: str | None = None,
    product: str | None = None,
    region: str | None = None,
) -> tuple[Price | None, str]:
    """The price for a run on a `doc_kind` target and the kind it is priced as.

    With no choice made, the catalogue's default for the kind (POSIX has none: a file system
    bills capacity, not requests; choose a file service or --as an object store).

    Raises:
        CatalogueError: the choice matches no price, or several.
    """
    kind = as_kind or doc_kind
    if price_id:
        price = catalogue.get(price_id)
    elif provider or product or region:
        filters = {"provider": provider, "product": product, "region": region}
        found = catalogue.select(kind=as_kind, **filters)
        if not as_kind:
            # Without --as, prefer prices for the run's own kind, then any (priced as-if).
            found = [p for p in found if doc_kind in p.kinds] or found
        asked = ", ".join(f"{k} {v}" for k, v in filters.items() if v)
        if not found:
            raise CatalogueError(f"{catalogue.path}: no price for {asked} (kind {kind})")
        if len(found) > 1:
            ids = ", ".join(p.id for p in found)
            raise CatalogueError(f"{catalogue.path}: {asked} matches several prices: {ids}")
        price = found[0]
    else:
        return catalogue.default_for(kind), kind
    if as_kind is None:
        kind = doc_kind if doc_kind in price.kinds else price.kinds[0]
    elif as_kind not in price.kinds:
        raise CatalogueError(
            f"{catalogue.where(price)}: price '{price.id}' is for {', '.join(price.kinds)} "
            f"targets, not {as_kind}"
        )
    return price, kind


def estimate_cost(
    doc: ResultDocument,
    catalogue: Catalogue,
    price: Price | None,
    priced_as: str,
    keep_hours: float,
    facts: RunFacts,
) -> CostBreakdown:
    """A run's requests and the keeping of its data for `keep_hours`, at `price`.

    Raises:
        CatalogueError: the price lacks a figure the run needs (a billing class for one of its
            request kinds, a class's price, storage for its size), naming file and line.
    """
    run = doc.run
    kind = str(run["target"]["kind"])
    counted = _requests(doc.phases)
    billed, notes = translate_requests(facts, doc, kind, priced_as)
    if run.get("targets") and price is not None and billed == counted:
        notes.append(_per_target_note(doc, catalogue, price))
    return _priced(facts, kind, counted, billed, notes, catalogue, price, priced_as, keep_hours)


def _per_target_note(doc: ResultDocument, catalogue: Catalogue, price: Price) -> str:
    """A run over several targets: each target's requests (phases[].targets, all phases and
    iterations) and what they cost at `price`, in the order of run.targets."""
    said = []
    for index, target in enumerate(doc.run["targets"]):
        counted: dict[str, int] = {}
        for phase in doc.phases:
            if index < len(phase.targets):
                for name, count in phase.targets[index].requests.items():
                    counted[name] = counted.get(name, 0) + count
        amount = 0.0
        if not price.requests_included:
            for name, count in counted.items():
                each = catalogue.request_price(price, catalogue.billing_class(price, name))
                amount += count / price.requests_per * each
        said.append(f"{target['url']}: {_counts(counted)}, {_money(amount, price.currency)}")
    return "requests per target: " + "; ".join(said)


#: The phases of a plan, with the transfers each would make as the requests a POSIX run counts.
@dataclass(frozen=True, slots=True)
class PlannedPhase:
    phase: str
    requests: dict[str, int]


def estimate_plan_cost(
    facts: RunFacts,
    kind: str,
    phases: Sequence[PlannedPhase],
    time_based: bool,
    catalogue: Catalogue,
    price: Price | None,
    priced_as: str,
    keep_hours: float,
) -> CostBreakdown:
    """What a run would cost before it runs: the transfers its plans make (`phases`, every
    iteration's), as requests of `priced_as` (a file written in one transfer is one PUT, in
    several a multipart upload or a block list; a read transfer one GET), and keeping its data.

    Raises:
        CatalogueError: as estimate_cost.
    """
    as_object = priced_as if priced_as in OBJECT_KINDS else None
    if as_object is None:
        counted = _requests(phases)
        return _priced(facts, kind, counted, counted, ["planned: not run"],
                       catalogue, price, priced_as, keep_hours)  # fmt: skip
    billed, notes = _posix_as_object(facts, time_based, phases, as_object)
    notes[0] = (
        f"planned, not run: {as_object} requests from the plans' transfers (an object written "
        "in one transfer is one PUT, in several a multipart upload or block list with a part "
        "per transfer; each read transfer one GET; the untimed layout of reading workloads is "
        "not counted)"
    )
    return _priced(facts, kind, billed, billed, notes, catalogue, price, priced_as, keep_hours)


def _priced(
    facts: RunFacts,
    kind: str,
    counted: dict[str, int],
    billed: dict[str, int],
    notes: list[str],
    catalogue: Catalogue,
    price: Price | None,
    priced_as: str,
    keep_hours: float,
) -> CostBreakdown:
    stored = facts.stored_bytes
    by_class: dict[str, int] = {}
    requests_cost = keep_cost = None
    if price is None:
        why = (
            "a POSIX file system bills capacity, not requests: price it as an object store "
            "(--as s3) or as a file service (--price)"
            if priced_as == "posix"
            else f"the catalogue has no default price for {priced_as} targets: choose one "
            "with --price, or price it as another store with --as s3"
        )
        notes.append(f"not priced: {why}")
    else:
        if price.requests_included:
            requests_cost = 0.0
        else:
            requests_cost = 0.0
            for request_kind, count in billed.items():
                billing_class = catalogue.billing_class(price, request_kind)
                by_class[billing_class] = by_class.get(billing_class, 0) + count
            for billing_class, count in by_class.items():
                each = catalogue.request_price(price, billing_class)
                requests_cost += count / price.requests_per * each
        stored_gb = stored / GB_BYTES
        keep_cost = catalogue.storage_per_month(price, stored_gb) * keep_hours / MONTH_HOURS
        if price.model == "reserved":
            notes.append(
                f"{price.id} is reserved capacity: at least {price.min_gb:,.0f} GB are paid "
                "for, used or not, once for all the runs that share it; requests are included"
            )
    return CostBreakdown(
        run=facts.run,
        target_url=facts.target_url,
        target_kind=kind,
        priced_as=priced_as,
        price_id=price.id if price else None,
        currency=price.currency if price else None,
        model=price.model if price else None,
        requests=counted,
        billed_requests=billed,
        by_class=by_class,
        stored_bytes=stored,
        keep_hours=keep_hours,
        requests_cost=requests_cost,
        keep_cost=keep_cost,
        notes=tuple(notes),
    )


def translate_requests(
    facts: RunFacts, doc: ResultDocument, kind: str, priced_as: str
) -> tuple[dict[str, int], list[str]]:
    """The requests a run on `kind` would have made on a `priced_as` store, with notes on the
    assumptions. Same kind (or two S3-like kinds): the counts as they are.

    POSIX -> object store, phase by phase: a file written in one transfer is one PUT; a file
    written in several is a multipart upload (S3, GCS: create, one part per transfer,
    complete; Azure: one staged block per transfer, one block-list commit); each read
    transfer is one ranged GET. Opens, fsyncs and closes have no object counterpart.

    Raises:
        SpecError: object-store requests cannot be priced as a POSIX file system.
    """
    counted = _requests(doc.phases)
    if kind == priced_as:
        return counted, []
    file_calls = kinds.pricing_class(kind) == "posix" or set(counted) <= _FILE_REQUESTS
    if file_calls and priced_as in OBJECT_KINDS:
        return _posix_as_object(facts, is_time_based(doc.run), doc.phases, priced_as)
    if kinds.pricing_class(kind) == kinds.pricing_class(priced_as) != "":
        return counted, []
    if kind in OBJECT_KINDS and priced_as in OBJECT_KINDS:
        return _object_as_object(counted, priced_as), [
            f"requests renamed from {kind} to {priced_as} (multipart parts <-> staged blocks)"
        ]
    raise SpecError(f"cannot price a run on a {kind} target as {priced_as}")


def _posix_as_object(
    facts: RunFacts, time_based: bool, phases: Sequence[Any], priced_as: str
) -> tuple[dict[str, int], list[str]]:
    object_bytes = facts.object_bytes
    transfer = facts.part_bytes
    # Transfers that make one object: a time-based run (--duration) goes over its files
    # again and again, and every pass is an upload of its own.
    parts_per_object = max(1, -(-object_bytes // transfer))
    billed: dict[str, int] = {}

    def add(name: str, count: int) -> None:
        if count:
            billed[name] = billed.get(name, 0) + count

    multipart = False
    for phase in phases:
        if phase.phase == "write":
            transfers = phase.requests.get("write", 0)
            uploads = -(-transfers // parts_per_object)
            if parts_per_object == 1:
                add("put", transfers)
            elif priced_as == "azure":
                multipart = True
                add("put_block", transfers)
                add("put_block_list", uploads)
            else:
                multipart = True
                add("create_multipart", uploads)
                add("upload_part", transfers)
                add("complete_multipart", uploads)
        else:
            add("get", phase.requests.get("read", 0))
    notes = [
        f"priced as if on {priced_as}: requests derived from the POSIX ones (a file written in "
        "one transfer is one PUT, in several a multipart upload with one part per transfer; "
        "each read transfer one GET; the untimed layout of reading patterns is not counted)"
    ]
    if time_based:
        notes.append(
            "time-based run: every pass over a file counts as a new PUT or upload of its object"
        )
    if multipart and priced_as in ("s3", "gcs") and transfer < _MIN_PART_BYTES:
        notes.append(
            f"a real {priced_as} run needs parts of at least {format_bytes(_MIN_PART_BYTES)}; "
            f"these assume parts of {format_bytes(transfer)} (the run's transfer)"
        )
    return billed, notes


def _object_as_object(counted: Mapping[str, int], priced_as: str) -> dict[str, int]:
    billed: dict[str, int] = {}
    for name, count in counted.items():
        if priced_as == "azure":
            renamed = {
                "upload_part": ["put_block"],
                "complete_multipart": ["put_block_list"],
                "create_multipart": [],
                "abort_multipart": ["put_block_list", "delete"],
            }.get(name, [name])
        else:
            renamed = {
                "put_block": ["upload_part"],
                "put_block_list": ["create_multipart", "complete_multipart"],
            }.get(name, [name])
        for new in renamed:
            billed[new] = billed.get(new, 0) + count
    return billed


def _requests(phases: Sequence[Any]) -> dict[str, int]:
    """Requests by kind over `phases` (a document's, or a plan's PlannedPhase)."""
    total: dict[str, int] = {}
    for phase in phases:
        for name, count in _store_requests(phase).items():
            total[name] = total.get(name, 0) + int(count)
    return dict(sorted(total.items(), key=lambda item: _kind_rank(item[0])))


def _store_requests(phase: Any) -> Mapping[str, int]:
    """A phase's requests to its store: a library workload on an object store counts them
    itself (metrics requests_<kind>), its phase's own requests being the library's calls."""
    metrics = getattr(phase, "metrics", None) or {}
    counted = {k.removeprefix(_LIBRARY_REQUESTS): v for k, v in metrics.items()
               if k.startswith(_LIBRARY_REQUESTS)}  # fmt: skip
    return counted or phase.requests


#: The prefix of a library workload's store requests among a phase's metrics.
_LIBRARY_REQUESTS = "requests_"


def _kind_rank(name: str) -> tuple[int, str]:
    return (REQUEST_KINDS.index(name) if name in REQUEST_KINDS else len(REQUEST_KINDS), name)


def format_hours(hours: float) -> str:
    """720 -> '30d', 730 -> '1mo', 36 -> '36h'."""
    if hours and hours % MONTH_HOURS == 0:
        return f"{hours / MONTH_HOURS:g}mo"
    if hours and hours % 24 == 0:
        return f"{hours / 24:g}d"
    return f"{hours:g}h"


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count:,}" for name, count in counts.items()) or "none"


def _money(amount: float | None, currency: str | None) -> str:
    if amount is None or currency is None:
        return "n/a"
    # Requests of small runs cost fractions of a cent: show three significant digits of them.
    digits = 2 if amount == 0 or amount >= 0.01 else 2 - math.floor(math.log10(amount))
    return format_money(amount, currency, digits)


_COLUMNS = (
    "run",
    "target",
    "requests counted",
    "priced as",
    "requests billed",
    "stored",
    "request cost",
    "keep",
    "total",
)


def _cells(b: CostBreakdown) -> list[str]:
    billed = _counts(b.by_class) if b.by_class else _counts(b.billed_requests)
    return [
        b.run,
        b.target_url,
        _counts(b.requests),
        f"{b.priced_as} ({b.price_id})" if b.price_id else b.priced_as,
        billed,
        format_bytes(b.stored_bytes),
        _money(b.requests_cost, b.currency),
        _money(b.keep_cost, b.currency),
        _money(b.total, b.currency),
    ]


def render_costs(breakdowns: Sequence[CostBreakdown], catalogue: Catalogue, fmt: str) -> str:
    """Per-run costs as Markdown ("md"), CSV ("csv", plain numbers and a currency column) or
    JSON ("json"), with the prices used (provider, product, region, currency, date, source)
    and the notes under them."""
    used = [catalogue.get(i) for i in dict.fromkeys(b.price_id for b in breakdowns if b.price_id)]
    keep = format_hours(breakdowns[0].keep_hours) if breakdowns else "0h"
    columns = [f"keep {keep}" if c == "keep" else c for c in _COLUMNS]
    if fmt == "json":
        return (
            json.dumps(
                {
                    "runs": [{**asdict(b), "total": b.total} for b in breakdowns],
                    "prices": [asdict(p) for p in used],
                    "catalogue": catalogue.path,
                },
                indent=2,
                default=str,
            )
            + "\n"
        )
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(
            [*columns[:5], "stored_bytes", "request_cost", f"keep_{keep}_cost", "total", "currency"]
        )
        for b in breakdowns:
            amounts = [b.requests_cost, b.keep_cost, b.total]
            writer.writerow(
                [
                    *_cells(b)[:5],
                    b.stored_bytes,
                    *("" if a is None else f"{a:.10g}" for a in amounts),
                    b.currency or "",
                ]
            )
        return out.getvalue()
    lines = [markdown_table(columns, [_cells(b) for b in breakdowns], right_from=5), ""]
    totals: dict[str, float] = {}
    for b in breakdowns:
        # Reserved capacity is paid once however many runs share it: no sum over runs.
        if b.total is not None and b.currency and b.model == "pay-per-use":
            totals[b.currency] = totals.get(b.currency, 0.0) + b.total
    for currency, amount in totals.items():
        lines.append(f"Total: {_money(amount, currency)} over {len(breakdowns)} run(s)")
    for price in used:
        lines.append(f"Price: {price.describe()}")
    notes = list(dict.fromkeys(n for b in breakdowns for n in b.notes))
    notes.append(
        "list prices from the catalogue, to be checked; a GB is 2^30 bytes, a month 730 hours; "
        "storage tiers count from zero, as if the run's data were all the account holds"
    )
    lines.extend(f"Note: {n}" for n in notes)
    return "\n".join(lines) + "\n"


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]], right_from: int) -> str:
    """A Markdown table; columns from `right_from` on are right-aligned (amounts)."""
    align = [" --- " if i < right_from else " ---: " for i in range(len(columns))]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(align) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return "\n".join(lines)
