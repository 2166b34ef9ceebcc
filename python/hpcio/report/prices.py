"""The price catalogue: dated list prices per provider, product and region, from a TOML file
(python/hpcio/report/prices.toml ships with hpcio; docs/cost.md describes the keys)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpcio import tomlfile
from hpcio.errors import HpcioError

#: The catalogue shipped with hpcio.
DEFAULT_CATALOGUE = Path(__file__).with_name("prices.toml")
#: Bytes in the GB providers bill storage by (AWS, Azure and Google all use 2^30).
GB_BYTES = 1 << 30
#: Hours in a billing month, as AWS, Azure and Google count them.
MONTH_HOURS = 730.0
#: The billing class that costs nothing (DELETE on S3, say).
FREE = "free"

_TOP_KEYS = ("catalogue_version", "billing", "price")
_PRICE_KEYS = (
    "id",
    "provider",
    "product",
    "tier",
    "region",
    "currency",
    "as_of",
    "source",
    "kinds",
    "default",
    "model",
    "billing",
    "storage",
    "min_gb",
    "requests_per",
    "requests",
    "requests_included",
    "note",
)
_REQUIRED = ("id", "provider", "product", "region", "currency", "as_of", "source", "kinds")
_MODELS = ("pay-per-use", "reserved")


class CatalogueError(HpcioError, ValueError):
    """A price catalogue that is malformed, or lacks a price a run needs."""


@dataclass(frozen=True, slots=True)
class StorageTier:
    """Storage up to `up_to_gb` (None: without limit) costs `per_gb_month` a GB-month."""

    up_to_gb: float | None
    per_gb_month: float


@dataclass(frozen=True, slots=True)
class Price:
    """One product's prices in one region, as of one date, from one source."""

    id: str
    provider: str
    product: str
    region: str
    currency: str
    as_of: str
    source: str
    #: Target kinds ("s3", "azure", "posix", ...) this product can price.
    kinds: tuple[str, ...]
    #: The price for those kinds when none is chosen.
    default: bool = False
    #: "pay-per-use": data stored and requests made; "reserved": capacity paid whether used
    #: or not (at least `min_gb`).
    model: str = "pay-per-use"
    tier: str = ""
    storage: tuple[StorageTier, ...] = ()
    min_gb: float = 0.0
    #: Name of the [billing.*] table mapping request kinds to this product's classes.
    billing: str | None = None
    #: Prices per `requests_per` requests, by billing class.
    requests: Mapping[str, float] = field(default_factory=dict)
    requests_per: int = 1
    #: Requests cost nothing beyond the capacity (reserved file services).
    requests_included: bool = False
    note: str = ""

    def describe(self) -> str:
        """'aws-s3-standard-us-east-1: aws S3 Standard, us-east-1, USD, as of 2025-01-01,
        https://aws.amazon.com/s3/pricing/'."""
        return (
            f"{self.id}: {self.provider} {self.product}, {self.region}, {self.currency}, "
            f"as of {self.as_of}, {self.source}"
        )


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Prices, billing tables (request kind -> class) and where each came from in the file."""

    path: str
    prices: tuple[Price, ...]
    billing: Mapping[str, Mapping[str, str]]
    toml: tomlfile.TomlFile = field(repr=False)

    def get(self, price_id: str) -> Price:
        """The price with this id.

        Raises:
            CatalogueError: no such id (naming the closest ones).
        """
        for price in self.prices:
            if price.id == price_id:
                return price
        import difflib

        ids = [p.id for p in self.prices]
        # A shortened id ('aws-s3') is a part of the one meant; a mistyped one is close to it.
        close = [i for i in ids if price_id.lower() in i][:1] or difflib.get_close_matches(
            price_id, ids, n=1
        )
        hint = f"; did you mean '{close[0]}'?" if close else "; `hpcio cost --prices` lists them"
        raise CatalogueError(f"{self.path}: no price '{price_id}'{hint}")

    def default_for(self, kind: str) -> Price | None:
        """The default price for a target kind, if the catalogue marks one."""
        for price in self.prices:
            if price.default and kind in price.kinds:
                return price
        return None

    def select(
        self,
        *,
        kind: str | None = None,
        provider: str | None = None,
        product: str | None = None,
        region: str | None = None,
    ) -> list[Price]:
        """Prices matching every filter given: the kind it can price, provider and region
        (exact, any case), product (a part of its name or tier, any case)."""
        found = []
        for price in self.prices:
            if kind and kind not in price.kinds:
                continue
            if provider and provider.lower() != price.provider.lower():
                continue
            if region and region.lower() != price.region.lower():
                continue
            if product and product.lower() not in f"{price.product} {price.tier}".lower():
                continue
            found.append(price)
        return found

    def where(self, price: Price, *key: str | int) -> str:
        """'file:line' of a key of a price, for errors."""
        return self.toml.where(("price", self.prices.index(price), *key))

    def billing_class(self, price: Price, kind: str) -> str:
        """The class a request kind is billed in under `price`.

        Raises:
            CatalogueError: the price's billing table does not name the kind.
        """
        if price.billing is None:
            raise CatalogueError(
                f"{self.where(price)}: price '{price.id}' has no 'billing' table to map "
                f"'{kind}' requests to"
            )
        classes = self.billing[price.billing]
        if kind not in classes:
            raise CatalogueError(
                f"{self.toml.where(('billing', price.billing))}: [billing.{price.billing}] has "
                f"no class for request kind '{kind}' (needed by price '{price.id}')"
            )
        return classes[kind]

    def request_price(self, price: Price, billing_class: str) -> float:
        """Cost of `price.requests_per` requests of a class.

        Raises:
            CatalogueError: the price has no figure for that class.
        """
        if billing_class == FREE:
            return 0.0
        if billing_class not in price.requests:
            raise CatalogueError(
                f"{self.where(price, 'requests')}: price '{price.id}' has no price for "
                f"'{billing_class}' requests"
            )
        return price.requests[billing_class]

    def storage_per_month(self, price: Price, stored_gb: float) -> float:
        """Cost of keeping `stored_gb` GB for a month. Tiers are graduated (each GB at its
        tier's rate), counted from zero: as if this were all the account stores. A reserved
        product costs its capacity, at least `min_gb`, whatever is used.

        Raises:
            CatalogueError: no storage price, or none for that many GB.
        """
        if not price.storage:
            raise CatalogueError(f"{self.where(price)}: price '{price.id}' has no 'storage'")
        if price.model == "reserved":
            return max(stored_gb, price.min_gb) * price.storage[0].per_gb_month
        cost, below = 0.0, 0.0
        for tier in price.storage:
            top = stored_gb if tier.up_to_gb is None else min(stored_gb, tier.up_to_gb)
            if top > below:
                cost += (top - below) * tier.per_gb_month
                below = top
            if below >= stored_gb:
                return cost
        raise CatalogueError(
            f"{self.where(price, 'storage')}: price '{price.id}' has no storage price beyond "
            f"{below:,.0f} GB ({stored_gb:,.1f} GB needed)"
        )


def load_catalogue(path: str | os.PathLike[str] | None = None) -> Catalogue:
    """Read a catalogue (the shipped one by default) and check its shape.

    Raises:
        CatalogueError: "file:line: problem" for the first problem found.
    """
    toml = tomlfile.load(path or DEFAULT_CATALOGUE, CatalogueError)
    data = toml.data
    toml.check_keys(data, (), _TOP_KEYS, CatalogueError)
    billing = data.get("billing", {})
    if not isinstance(billing, dict):
        raise toml.error(("billing",), "'billing' must be tables", CatalogueError)
    tables: dict[str, dict[str, str]] = {}
    for name, table in billing.items():
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            raise toml.error(
                ("billing", name),
                f"[billing.{name}] maps request kinds to class names",
                CatalogueError,
            )
        tables[name] = {k: v for k, v in table.items() if k != "source"}
    entries = data.get("price", [])
    if not isinstance(entries, list) or not entries:
        raise CatalogueError(f"{toml.path}: no [[price]] entries")
    prices = [_price(toml, index, entry, tables) for index, entry in enumerate(entries)]
    seen: dict[str, int] = {}
    for index, price in enumerate(prices):
        if price.id in seen:
            raise toml.error(
                ("price", index, "id"), f"price id '{price.id}' is used twice", CatalogueError
            )
        seen[price.id] = index
    return Catalogue(toml.path, tuple(prices), tables, toml)


def _price(toml: tomlfile.TomlFile, index: int, entry: Any, billing: Mapping[str, Any]) -> Price:
    where: tomlfile.KeyPath = ("price", index)

    def fail(key: str | None, message: str) -> CatalogueError:
        return toml.error((*where, key) if key else where, message, CatalogueError)  # type: ignore[return-value]

    if not isinstance(entry, dict):
        raise fail(None, "[[price]] entries are tables")
    toml.check_keys(entry, where, _PRICE_KEYS, CatalogueError)
    for key in _REQUIRED:
        if key not in entry:
            raise fail(None, f"[[price]] needs '{key}'")
    for key in ("id", "provider", "product", "region", "currency", "as_of", "source", "tier"):
        if key in entry and not isinstance(entry[key], str):
            raise fail(key, f"'{key}' must be a string")
    kinds = entry["kinds"]
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
        raise fail("kinds", "'kinds' must be a list of target kinds, e.g. [\"s3\"]")
    model = entry.get("model", "pay-per-use")
    if model not in _MODELS:
        raise fail("model", f"'model' must be one of {', '.join(_MODELS)}, got {model!r}")
    if entry.get("billing") is not None and entry["billing"] not in billing:
        raise fail("billing", f"no [billing.{entry['billing']}] table")
    return Price(
        id=entry["id"],
        provider=entry["provider"],
        product=entry["product"],
        region=entry["region"],
        currency=entry["currency"],
        as_of=_date(entry["as_of"], fail),
        source=entry["source"],
        kinds=tuple(kinds),
        default=_flag(entry, "default", fail),
        model=model,
        tier=entry.get("tier", ""),
        storage=_tiers(entry.get("storage", []), fail),
        min_gb=_number(entry.get("min_gb", 0), "min_gb", fail),
        billing=entry.get("billing"),
        requests=_request_prices(entry.get("requests", {}), fail),
        requests_per=int(_number(entry.get("requests_per", 1), "requests_per", fail) or 1),
        requests_included=_flag(entry, "requests_included", fail),
        note=str(entry.get("note", "")),
    )


def _date(value: Any, fail: Any) -> str:
    """as_of as 'YYYY-MM-DD' (TOML dates and strings both do)."""
    import datetime

    if isinstance(value, datetime.date):
        return value.isoformat()
    try:
        return datetime.date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise fail("as_of", f"'as_of' must be a date such as 2025-01-31, got {value!r}") from None


def _flag(entry: Mapping[str, Any], key: str, fail: Any) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise fail(key, f"'{key}' must be true or false")
    return value


def _number(value: Any, key: str, fail: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise fail(key, f"'{key}' must be a number >= 0, got {value!r}")
    return float(value)


def _tiers(value: Any, fail: Any) -> tuple[StorageTier, ...]:
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise fail("storage", "'storage' is a list of {up_to_gb, per_gb_month} tables")
    tiers = []
    below = 0.0
    for tier in value:
        unknown = set(tier) - {"up_to_gb", "per_gb_month"}
        if unknown or "per_gb_month" not in tier:
            raise fail("storage", "each storage tier has per_gb_month and, but the last, up_to_gb")
        up_to = tier.get("up_to_gb")
        if up_to is not None and (_number(up_to, "up_to_gb", fail) <= below):
            raise fail("storage", "storage tiers must rise: each up_to_gb above the one before")
        tiers.append(
            StorageTier(
                None if up_to is None else float(up_to),
                _number(tier["per_gb_month"], "per_gb_month", fail),
            )
        )
        below = float(up_to) if up_to is not None else float("inf")
    return tuple(tiers)


def _request_prices(value: Any, fail: Any) -> dict[str, float]:
    if not isinstance(value, dict):
        raise fail("requests", "'requests' maps billing classes to prices")
    return {name: _number(v, "requests", fail) for name, v in value.items()}


def currency_symbol(currency: str) -> str:
    """'$' for USD, '£' for GBP, '€' for EUR; otherwise the code and a space."""
    return {"USD": "$", "GBP": "£", "EUR": "€"}.get(currency, f"{currency} ")


def format_money(amount: float, currency: str, digits: int = 2) -> str:
    """1234.5, 'USD' -> '$1,234.50' (digits after the point as asked)."""
    return f"{currency_symbol(currency)}{amount:,.{digits}f}"


def kinds_of(prices: Sequence[Price]) -> list[str]:
    """Every target kind some price can price, in catalogue order."""
    return list(dict.fromkeys(kind for price in prices for kind in price.kinds))
