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

    @classmethod
    def from_url(cls, url: str, **options: str) -> TargetSpec:
        """Parse `url` ("file:///scratch/run1", or a plain absolute path "/scratch/run1", taken
        as file:// the way IOR's -o, fio's --directory and mdtest's -d take it).

        Raises:
            SpecError: an unknown scheme or a relative path.
        """
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

    def redacted(self) -> dict[str, object]:
        """What a result document records: URL and kind, option names but no values."""
        return {"url": self.url, "kind": self.kind, "options": sorted(self.options)}
