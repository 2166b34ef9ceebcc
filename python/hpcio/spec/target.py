"""A target URL -> TargetSpec: its kind and, never printed, its options."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlparse

from hpcio import kinds
from hpcio.errors import SpecError
from hpcio.kinds import Container


def check_container_name(container: Container, scheme: str, name: str) -> None:
    """Refuse a bucket or container name its provider would reject, before any request.

    Raises:
        SpecError: the name and the provider's rule.
    """
    too_long = container.max_plain_length is not None and "." not in name
    too_long = too_long and len(name) > (container.max_plain_length or 0)
    if re.fullmatch(container.pattern, name) is None or too_long:
        raise SpecError(
            f"invalid {container.word} name '{name}' for {scheme}://: use {container.rule}"
        )


def _null_url(url: str, path: str, query: str) -> str:
    """null:// or null://?delay=2ms (the engine's target/null.rs reads the delay); the delay
    stays in the URL so that result documents show it."""
    if path.strip("/") or (query and re.fullmatch(r"delay=\d+(\.\d+)?(ns|us|ms|s)", query) is None):
        raise SpecError(
            f"target '{url}': null:// takes only a per-operation delay, e.g. null://?delay=2ms "
            "(units ns, us, ms, s)"
        )
    return f"null://?{query}" if query else "null://"


@dataclass(frozen=True, slots=True)
class TargetSpec:
    """Where a run's data goes. `options` may hold credentials: it is never printed or recorded."""

    url: str
    kind: str
    options: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: The endpoint the URL's query named (s3://b/p?endpoint=http://host:9000), the one store
    #: option a URL may carry: not a secret, and several targets of one run may differ in it.
    endpoint: str | None = None

    @classmethod
    def from_url(cls, url: str, **options: str) -> TargetSpec:
        """Parse `url` ("file:///scratch/run1", or a plain absolute path "/scratch/run1", taken
        as file:// the way IOR's -o, fio's --directory and mdtest's -d take it).

        Raises:
            SpecError: an unknown scheme, a relative path, or several targets (a comma).
        """
        if "," in url:
            raise SpecError(
                f"target '{url}': several targets (comma-separated) are for `hpcio run`, "
                "`sweep`, `tune`, `env` and `clean`; give this command one"
            )
        if url.startswith("/"):
            url = "file://" + url
        parsed = urlparse(url)
        row = kinds.SCHEMES.get(parsed.scheme)
        if row is None:
            known = ", ".join(f"{s}://" for s in kinds.SCHEMES)
            if not parsed.scheme:
                raise SpecError(
                    f"target '{url}': give an absolute path (/scratch/hpcio) or a URL; "
                    f"supported: {known}"
                )
            raise SpecError(f"target '{url}': unknown scheme; supported: {known}")
        if "@" in parsed.netloc:
            raise SpecError(
                "target URL holds credentials: give them in the environment or --store-option"
            )
        if not row.object_store:
            if parsed.netloc or not parsed.path.startswith("/"):
                raise SpecError(
                    f"target '{url}': use an absolute path, e.g. {row.scheme}:///scratch/hpcio"
                )
            path = parsed.path.rstrip("/") if parsed.path != "/" else "/"
            url = f"{row.scheme}://{path}"
        elif row.url_rest is not None:
            pattern, words = row.url_rest
            rest = (parsed.netloc + parsed.path).strip("/")
            rest += f"?{parsed.query}" if parsed.query else ""
            if re.fullmatch(pattern, rest) is None:
                raise SpecError(f"target '{url}': {words}")
            url = f"{row.scheme}://{rest}"
        elif row.container is None:
            url = f"{row.scheme}://" + (parsed.netloc + parsed.path).strip("/")
        elif not parsed.netloc:
            raise SpecError(
                f"target '{url}': name the {row.container.word}, e.g. {row.container.example}"
            )
        else:
            check_container_name(row.container, row.scheme, parsed.netloc)
            url = f"{parsed.scheme}://{parsed.netloc}/{parsed.path.strip('/')}".rstrip("/")
            endpoint = _endpoint_of(url, row, parsed.query)
            if endpoint is not None:
                options = {**options, row.endpoints[0].key: endpoint}
                return cls(url=url, kind=row.name, options=dict(options), endpoint=endpoint)
        return cls(url=url, kind=row.name, options=dict(options))

    @property
    def traits(self) -> kinds.TargetKind:
        """What a target of this kind is (hpcio/kinds.py)."""
        return kinds.of(self.kind)

    @property
    def in_process(self) -> bool:
        """Its data lives and dies with this one process (memory://)."""
        return self.traits.in_process

    @property
    def is_object_store(self) -> bool:
        """Keys name objects, not files at paths."""
        return self.traits.object_store

    @property
    def path(self) -> str:
        """The directory of a file:// target."""
        return urlparse(self.url).path

    @property
    def shown(self) -> str:
        """The URL as the user gave it: with its endpoint query, if it had one."""
        return self.url if self.endpoint is None else f"{self.url}?endpoint={self.endpoint}"

    def redacted(self) -> dict[str, object]:
        """What a result document records: URL and kind, option names but no values."""
        record: dict[str, object] = {
            "url": self.url,
            "kind": self.kind,
            "options": sorted(self.options),
        }
        if self.endpoint is not None:
            record["endpoint"] = self.endpoint
        return record


def _endpoint_of(url: str, row: kinds.TargetKind, query: str) -> str | None:
    """The endpoint a bucket or container URL's query names (?endpoint=http://host:port), so
    that each of several targets can have its own; None without a query.

    Raises:
        SpecError: any other query (a credential must never sit in a URL, which is recorded).
    """
    if not query:
        return None
    key, _, value = query.partition("=")
    if key != "endpoint" or not value or not row.endpoints:
        raise SpecError(
            f"target '{url}': a URL's query may name only its endpoint "
            f"(?endpoint=http://host:port); give other settings with --store-option"
        )
    if re.fullmatch(r"https?://[^\s?#@]+", value) is None:
        raise SpecError(f"target '{url}': endpoint '{value}' is not an http(s):// URL")
    return value


#: How ranks are spread over several targets (recorded in the document's `run`).
TARGET_MAPPING = "round-robin"


def parse_targets(text: str, **options: str) -> tuple[TargetSpec, ...]:
    """One target, or several separated by commas, all of one object-store kind (s3, az, gs;
    null:// for tests): rank r of a run uses target r mod K (`target_of`).

    Raises:
        SpecError: an empty item, a repeated target, mixed kinds, or several targets of a kind
            that cannot take them (file://, memory://).
    """
    words = [w.strip() for w in text.split(",")]
    if any(not w for w in words):
        raise SpecError(f"--target '{text}': an empty item between commas")
    targets = tuple(TargetSpec.from_url(w, **options) for w in words)
    if len(targets) == 1:
        return targets
    kinds_given = sorted({t.kind for t in targets})
    if len(kinds_given) > 1:
        raise SpecError(
            f"--target: several targets must be of one kind, got {', '.join(kinds_given)}"
        )
    first = targets[0]
    if not first.is_object_store or first.in_process:
        raise SpecError(
            f"--target: several targets are for object stores (s3, az, gs) and null://; "
            f"use one {first.traits.scheme}:// target"
        )
    seen: set[tuple[str, str | None]] = set()
    for t in targets:
        if (t.url, t.endpoint) in seen and t.traits.lasting:
            raise SpecError(f"--target: {t.shown} is given twice; give each target once")
        seen.add((t.url, t.endpoint))
    return targets


def target_of(rank: int, count: int) -> int:
    """The index of the target rank `rank` uses among `count` (round-robin: neighbouring
    ranks, often on one node, go to different targets, as study 001 spreads its ranks)."""
    return rank % count
