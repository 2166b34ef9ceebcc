"""`hpcio cost`: what runs cost (requests by billing class, keeping their data) and what-if
scenarios, from result documents and a dated price catalogue."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hpcio import kinds
from hpcio.errors import SpecError

if TYPE_CHECKING:
    from hpcio.report.cost import PlannedPhase, RunFacts
    from hpcio.report.prices import Catalogue
    from hpcio.spec.model import RunSpec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="*", help="JSON Lines files written by -o")
    parser.add_argument(
        "--keep",
        default="30d",
        help="how long each run's data is kept: 12h, 30d, 2w, 1mo (730 h), 1y (default 30d)",
    )
    parser.add_argument(
        "--as",
        dest="as_kind",
        choices=kinds.priced_kinds(),
        help="price the runs as if on this object store (POSIX requests become PUT/GET/parts)",
    )
    parser.add_argument("--price", help="a price id from the catalogue (see --prices)")
    parser.add_argument("--provider", help="choose the price by provider (aws, azure, gcp)")
    parser.add_argument("--product", help="... and by a part of its product name or tier")
    parser.add_argument("--region", help="... and by region (us-east-1, uksouth)")
    parser.add_argument(
        "--catalogue",
        help="a price catalogue (TOML) instead of the shipped one; see docs/cost.md",
    )
    parser.add_argument(
        "--scenario",
        help="a what-if scenario (TOML file), or the name of a shipped one: rtm",
    )
    parser.add_argument("--prices", action="store_true", help="list the catalogue's prices")
    parser.add_argument(
        "--plan",
        nargs=argparse.REMAINDER,
        metavar="run|sweep ...",
        help="price runs before they run: the rest of the line is an hpcio run or sweep "
        "command (hpcio cost --as s3 --plan run --pattern sfmw -n 4 ...); give it last",
    )
    parser.add_argument("--format", choices=("md", "csv", "json"), default="md")


def main(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from hpcio.report.prices import load_catalogue

    catalogue = load_catalogue(args.catalogue)
    if args.prices:
        return _list_prices(catalogue)
    if args.scenario:
        if args.results:
            raise SpecError("--scenario prices a what-if: give it no results files")
        from hpcio import shipped
        from hpcio.report.scenario import load_scenario, render_scenario

        path = shipped.find(args.scenario, shipped.SCENARIOS, "scenario")
        sys.stdout.write(render_scenario(load_scenario(path, catalogue), args.format))
        return 0
    if args.plan is not None:
        if args.results:
            raise SpecError("--plan prices runs that have not run: give it no results files")
        return _plan(args, catalogue)
    if not args.results:
        raise SpecError("give results files (JSON Lines), --scenario FILE or --prices")
    from hpcio.report.cost import (
        choose_price,
        estimate_cost,
        facts_of,
        parse_duration,
        render_costs,
    )
    from hpcio.results import io as results_io

    keep_hours = parse_duration(args.keep)
    docs = [doc for path in args.results for doc in results_io.read(path)]
    if not docs:
        raise SpecError(f"no result documents in {', '.join(args.results)}")
    breakdowns = []
    for doc in docs:
        price, priced_as = choose_price(
            catalogue,
            str(doc.run["target"]["kind"]),
            as_kind=args.as_kind,
            price_id=args.price,
            provider=args.provider,
            product=args.product,
            region=args.region,
        )
        facts = facts_of(doc) or _facts_of_older(doc.run)
        breakdowns.append(estimate_cost(doc, catalogue, price, priced_as, keep_hours, facts))
    sys.stdout.write(render_costs(breakdowns, catalogue, args.format))
    return 0


def _list_prices(catalogue: Catalogue) -> int:
    from hpcio.report.cost import markdown_table

    rows = [
        [
            p.id,
            p.provider,
            p.product,
            p.region,
            p.currency,
            p.as_of,
            ", ".join(p.kinds) + (" (default)" if p.default else ""),
            p.model,
        ]
        for p in catalogue.prices
    ]
    columns = ["id", "provider", "product", "region", "currency", "as of", "prices", "model"]
    print(markdown_table(columns, rows, right_from=len(columns)))
    print(f"\nCatalogue: {catalogue.path}")
    return 0


def _plan(args: argparse.Namespace, catalogue: Catalogue) -> int:
    """--plan run|sweep ...: the runs that command would make, priced from their plans."""
    from hpcio.commands.parser import build_parser
    from hpcio.commands.run import _specs
    from hpcio.report.cost import choose_price, estimate_plan_cost, parse_duration, render_costs

    if not args.plan or args.plan[0] not in ("run", "sweep"):
        raise SpecError("--plan takes an hpcio run or sweep command: --plan run --pattern ...")
    planned = build_parser().parse_args(args.plan)
    specs = _specs(planned, planned.ranks or 1)
    keep_hours = parse_duration(args.keep)
    breakdowns = []
    for spec in specs:
        price, priced_as = choose_price(
            catalogue, spec.target.kind, as_kind=args.as_kind, price_id=args.price,
            provider=args.provider, product=args.product, region=args.region,
        )  # fmt: skip
        breakdowns.append(
            estimate_plan_cost(
                run_facts(spec), spec.target.kind, _planned_phases(spec),
                getattr(spec.params, "duration_s", None) is not None,
                catalogue, price, priced_as, keep_hours,
            )
        )  # fmt: skip
    sys.stdout.write(render_costs(breakdowns, catalogue, args.format))
    return 0


def _facts_of_older(run: dict[str, Any]) -> RunFacts:
    """A document written before its footprint record: its workload says what it stored."""
    from hpcio.spec.model import RunSpec

    return run_facts(RunSpec.from_dict(run))


def run_facts(spec: RunSpec) -> RunFacts:
    """What pricing needs of a run beyond its document: its name, what it stores and the
    objects it writes, as its workload says (the one part of `hpcio cost` that needs it)."""
    from hpcio.report.cost import RunFacts
    from hpcio.spec.suite import describe

    workload = spec.workload
    written = workload.objects_written(spec)
    return RunFacts(
        run=describe(spec, target=False),
        target_url=spec.target.url,
        stored_bytes=workload.stored_bytes(spec),
        object_bytes=max((w.bytes for w in written), default=0),
        part_bytes=max((w.part_bytes for w in written), default=1),
    )


def _planned_phases(spec: RunSpec) -> list[PlannedPhase]:
    """Every iteration's phases of `spec`, with the transfers its plans would make.

    Raises:
        SpecError: a workload whose requests are not known before it runs (its own code makes
            them).
    """
    from hpcio.report.cost import PlannedPhase

    workload = spec.workload
    phases = []
    for phase in workload.phases(spec):
        transfers = workload.planned_transfers(spec, phase)
        if transfers is None:
            raise SpecError(
                f"{workload.name}: its requests are made by its own code and known only once "
                "it runs; price its result documents instead"
            )
        phases += [PlannedPhase(phase.value, {phase.value: transfers})] * spec.iterations
    return phases
