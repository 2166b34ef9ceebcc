"""A target URL -> TargetSpec: its kind and, never printed, its options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlparse

from hpcio.errors import SpecError

#: URL scheme -> target kind, as the engine's scheme table names them.
KINDS = {"file": "posix", "s3": "s3", "az": "azure", "gs": "gcs", "memory": "memory"}
OBJECT_KINDS = ("s3", "azure", "gcs", "memory")


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
        elif not parsed.netloc:
            raise SpecError(
                f"target '{url}': name the bucket or container, e.g. s3://bucket/prefix"
            )
        else:
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
