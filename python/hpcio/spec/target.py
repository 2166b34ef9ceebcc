"""A target URL -> TargetSpec: its kind and, never printed, its options."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlparse

from hpcio.errors import SpecError

#: URL scheme -> target kind, as the engine's scheme table names them.
KINDS = {
    "file": "posix",
    "s3": "s3",
    "az": "azure",
    "gs": "gcs",
    "memory": "memory",
    "null": "null",
}
#: Kinds with no file system behind them (no path, lock file, page cache or O_DIRECT); null://
#: keeps nothing, and its N-1 writes are a shared upload that keeps no parts.
OBJECT_KINDS = ("s3", "azure", "gcs", "memory", "null")

#: Scheme -> (what the first part of the URL names, an example URL).
_CONTAINERS = {
    "s3": ("bucket", "s3://bucket/prefix"),
    "az": ("container", "az://container/prefix"),
    "gs": ("bucket", "gs://bucket/prefix"),
}

#: Scheme -> (the provider's naming rule for buckets or containers, as a pattern; in words).
_NAME_RULES = {
    "s3": (
        r"(?!xn--)(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]",
        "3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter "
        "or digit",
    ),
    "az": (
        r"(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]",
        "3-63 lowercase letters, digits and single hyphens, starting and ending with a letter "
        "or digit",
    ),
    "gs": (
        r"(?!goog)(?!.*\.\.)[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]",
        "3-63 lowercase letters, digits, hyphens and underscores (up to 222 with dots), "
        "starting and ending with a letter or digit",
    ),
}


def check_container_name(scheme: str, name: str) -> None:
    """Refuse a bucket or container name its provider would reject, before any request.

    Raises:
        SpecError: the name and the provider's rule.
    """
    what, _ = _CONTAINERS[scheme]
    pattern, rule = _NAME_RULES[scheme]
    too_long = scheme == "gs" and "." not in name and len(name) > 63
    if re.fullmatch(pattern, name) is None or too_long:
        raise SpecError(f"invalid {what} name '{name}' for {scheme}://: use {rule}")


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
        """Parse `url` ("file:///scratch/run1").

        Raises:
            SpecError: an unknown scheme or a relative path.
        """
        parsed = urlparse(url)
        if parsed.scheme not in KINDS:
            known = ", ".join(f"{s}://" for s in KINDS)
            raise SpecError(f"target '{url}': unknown scheme; supported: {known}")
        if "@" in parsed.netloc:
            raise SpecError(
                "target URL holds credentials: give them in the environment or --store-option"
            )
        if parsed.scheme == "file":
            if parsed.netloc or not parsed.path.startswith("/"):
                raise SpecError(f"target '{url}': use an absolute path, e.g. file:///scratch/hpcio")
            url = "file://" + parsed.path.rstrip("/") if parsed.path != "/" else "file:///"
        elif parsed.scheme == "memory":
            url = "memory://" + (parsed.netloc + parsed.path).strip("/")
        elif parsed.scheme == "null":
            url = _null_url(url, parsed.netloc + parsed.path, parsed.query)
        elif not parsed.netloc:
            what, example = _CONTAINERS[parsed.scheme]
            raise SpecError(f"target '{url}': name the {what}, e.g. {example}")
        else:
            check_container_name(parsed.scheme, parsed.netloc)
            url = f"{parsed.scheme}://{parsed.netloc}/{parsed.path.strip('/')}".rstrip("/")
        return cls(url=url, kind=KINDS[parsed.scheme], options=dict(options))

    @property
    def is_object_store(self) -> bool:
        return self.kind in OBJECT_KINDS

    @property
    def path(self) -> str:
        """The directory of a file:// target."""
        return urlparse(self.url).path

    def redacted(self) -> dict[str, object]:
        """What a result document records: URL and kind, option names but no values."""
        return {"url": self.url, "kind": self.kind, "options": sorted(self.options)}
