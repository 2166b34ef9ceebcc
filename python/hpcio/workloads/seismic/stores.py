"""Zarr stores on hpcio's targets: a directory on file://, and on s3://, az:// and gs:// an
obstore store built from the run's own TargetSpec (URL and --store-option values) and the
environment, the same sources the engine's object_store builders read (`from_env`, then the
options), so a target is configured once. A thin wrapper counts the requests zarr makes.

zarr, obstore and numpy-heavy imports stay inside the functions: the CLI imports the registry
on start, and `pytest -m unit` must not pay for them."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from hpcio import kinds

if TYPE_CHECKING:
    from hpcio.spec.target import TargetSpec

#: --store-option keys the engine reads as its retry policy, not as store configuration.
_RETRY_KEYS = ("max_retries", "retry_timeout_s", "backoff_initial_ms", "backoff_max_s")


def object_store(spec: TargetSpec, under: str) -> Any:
    """An obstore store for `spec`'s bucket, rooted at `under` below the target's prefix."""
    import obstore.store

    parsed = urlparse(spec.url)
    prefix = "/".join(p for p in (parsed.path.strip("/"), under) if p)
    options = {k: v for k, v in spec.options.items() if k not in _RETRY_KEYS}
    made = getattr(obstore.store, str(spec.traits.store_class))
    return made(parsed.netloc, prefix=prefix, config=options, retry_config=_retry(spec.options))


def _retry(options: Any) -> Any:
    """The engine's retry defaults and keys (engine/src/target/object.rs retry_config)."""

    def number(key: str, default: float) -> float:
        return float(options.get(key, default))

    return {
        "max_retries": int(number("max_retries", 10)),
        "retry_timeout": timedelta(seconds=number("retry_timeout_s", 180)),
        "backoff": {
            "init_backoff": timedelta(milliseconds=number("backoff_initial_ms", 100)),
            "max_backoff": timedelta(seconds=number("backoff_max_s", 15)),
            "base": 2,
        },
    }


def zarr_store(spec: TargetSpec, root: str, *, read_only: bool = False) -> CountedStore:
    """The zarr store whose root is `root` (a key) under the target, wrapped for counting."""
    import os

    from zarr.storage import LocalStore, ObjectStore

    if spec.is_object_store:
        inner: Any = ObjectStore(object_store(spec, root), read_only=read_only)
    else:
        inner = LocalStore(os.path.join(spec.path, root), read_only=read_only)
    return counted(inner, spec.kind)


def counted(inner: Any, kind: str) -> CountedStore:
    """`inner`, a store on a target of `kind`, wrapped in a CountedStore (the class is made on
    first use: zarr is imported lazily)."""
    store = _counted_class()(inner)
    store.kind = kind
    return store


#: obstore's put: one PUT up to this many bytes, else a multipart upload in parts of this size.
MULTIPART_CHUNK_BYTES = 5 * 1024 * 1024


def put_requests(kind: str, nbytes: int) -> dict[str, int]:
    """The requests one obstore put of `nbytes` makes on a store of `kind`, by the engine's
    names for them (phases[].requests), so `hpcio cost` bills them as a plan's."""
    if nbytes <= MULTIPART_CHUNK_BYTES:
        return {"put": 1}
    parts = -(-nbytes // MULTIPART_CHUNK_BYTES)
    if kinds.of(kind).uploads == "blocks":
        return {"put_block": parts, "put_block_list": 1}
    return {"create_multipart": 1, "upload_part": parts, "complete_multipart": 1}


class CountedStore:  # the interface the workload reads; the real class is built lazily
    #: The target's kind: on object stores, what a put becomes (put_requests).
    kind: str
    #: Requests by the engine's kind names (get, put, upload_part, list...).
    requests: Counter[str]
    #: Bytes the store returned to zarr (compressed chunks, metadata), and bytes zarr put.
    fetched_bytes: int
    put_bytes: int

    def close(self) -> None: ...


_CLASS: list[type] = []


def _counted_class() -> type:
    if _CLASS:
        return _CLASS[0]
    from zarr.storage import WrapperStore

    class _Counted(WrapperStore):
        """Every request zarr makes, by kind, with the bytes each moved; the wrapped store
        does the work. Counts are kept on the store's event loop thread alone."""

        def __init__(self, store: Any) -> None:
            super().__init__(store)
            self.requests: Counter[str] = Counter()
            self.fetched_bytes = 0
            self.put_bytes = 0
            self.kind = "posix"

        def _with_store(self, store: Any) -> Any:
            # zarr re-wraps for read-only views: they count into the same figures.
            view = type(self)(store)
            view.requests, view.fetched_bytes, view.put_bytes = self.requests, 0, 0
            view.kind = self.kind
            return view

        async def get(self, key: str, prototype: Any, byte_range: Any = None) -> Any:
            found = await self._store.get(key, prototype, byte_range)
            self.requests["get"] += 1
            if found is not None:
                self.fetched_bytes += len(found)
            return found

        async def get_partial_values(self, prototype: Any, key_ranges: Iterable[Any]) -> Any:
            found = await self._store.get_partial_values(prototype, key_ranges)
            self.requests["get"] += len(found)
            self.fetched_bytes += sum(len(b) for b in found if b is not None)
            return found

        async def _get_many(self, requests: Iterable[Any]) -> AsyncGenerator[Any, None]:
            for key, prototype, byte_range in requests:
                yield key, await self.get(key, prototype, byte_range)

        async def exists(self, key: str) -> bool:
            self.requests["head"] += 1
            return await self._store.exists(key)

        async def set(self, key: str, value: Any) -> None:
            await self._store.set(key, value)
            self.requests.update(put_requests(self.kind, len(value)))
            self.put_bytes += len(value)

        async def set_if_not_exists(self, key: str, value: Any) -> None:
            self.requests.update(put_requests(self.kind, len(value)))
            self.put_bytes += len(value)
            await self._store.set_if_not_exists(key, value)

        async def _set_many(self, values: Iterable[Any]) -> None:
            for key, value in values:
                await self.set(key, value)

        async def delete(self, key: str) -> None:
            self.requests["delete"] += 1
            await self._store.delete(key)

        async def delete_dir(self, prefix: str) -> None:
            # A listing, then a DELETE per key found (zarr's overwrite of a fresh prefix
            # finds none; the deletes of an old one are not counted).
            self.requests["list"] += 1
            await self._store.delete_dir(prefix)

        def list(self) -> AsyncIterator[str]:
            self.requests["list"] += 1
            return self._store.list()

        def list_prefix(self, prefix: str) -> AsyncIterator[str]:
            self.requests["list"] += 1
            return self._store.list_prefix(prefix)

        def list_dir(self, prefix: str) -> AsyncIterator[str]:
            self.requests["list"] += 1
            return self._store.list_dir(prefix)

    _CLASS.append(_Counted)
    return _Counted


def keys_below(spec: TargetSpec, start: str) -> list[str]:
    """Every key under the "directories" of an object-store target whose names begin with
    `start` (a zarr array's chunks): the engine's listing keeps to the target's own level."""
    import obstore

    with store_errors():
        store = object_store(spec, "")
        tops = obstore.list_with_delimiter(store)["common_prefixes"]
        found = []
        for top in (t for t in tops if t.startswith(start)):
            for batch in obstore.list(store, prefix=top):
                found += [meta["path"] for meta in batch]
    return sorted(found)


@contextlib.contextmanager
def store_errors() -> Iterator[None]:
    """obstore's errors as OSError: a store that refuses or cannot be reached fails the phase
    on every rank with its message, as the engine's do, not as a bug."""
    try:
        yield
    except Exception as e:
        if type(e).__module__.startswith("obstore"):
            raise OSError(f"{type(e).__name__}: {e}") from None
        raise
