"""Named network conditions (conditions.toml beside this file): the link's cap, the delay each
way, a per-connection cap and the faults of a store far away, as data; `toxics()` turns one
into the toxics toxiproxy applies. Nothing here opens a socket: tests/servers.py and
bench/cloud_link set the conditions up, docs/cloud.md says how to rehearse with them."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpcio.errors import HpcioError

_FILE = Path(__file__).with_name("conditions.toml")
#: toxiproxy's bandwidth toxic takes its rate in KB/s of 1000 bytes.
_BYTES_PER_KB = 1000


@dataclass(frozen=True, slots=True)
class Faults:
    reset_share: float = 0.0
    reset_after_ms: int = 0
    cut_share: float = 0.0
    cut_after_bytes: int = 0
    stall_share: float = 0.0
    stall_ms: int = 0
    slow_close_ms: int = 0


@dataclass(frozen=True, slots=True)
class Condition:
    name: str
    description: str
    #: the link's cap in Mbit/s (10^6 bit/s)
    link_mbit: float
    #: added each way, milliseconds
    latency_ms: float
    jitter_ms: float
    #: each connection's cap in Mbit/s, 0 for none
    connection_mbit: float
    faults: Faults

    @property
    def link_mib_s(self) -> float:
        """The link's cap in MiB/s (2^20 bytes a second), the unit hpcio reports."""
        return self.link_mbit * 1e6 / 8 / (1 << 20)

    def toxics(self) -> list[dict[str, Any]]:
        """The toxics of toxiproxy's HTTP API (POST /proxies/NAME/toxics) for this condition,
        the link's cap aside (that is a qdisc, not a toxic)."""
        toxics: list[dict[str, Any]] = []
        for stream in ("upstream", "downstream"):
            if self.latency_ms:
                delay = {"latency": round(self.latency_ms), "jitter": round(self.jitter_ms)}
                toxics.append(_toxic(f"latency_{stream}", "latency", stream, **delay))
            if self.connection_mbit:
                rate = round(self.connection_mbit * 1e6 / 8 / _BYTES_PER_KB)
                toxics.append(_toxic(f"bandwidth_{stream}", "bandwidth", stream, rate=rate))
        f = self.faults
        if f.reset_share:
            toxics.append(_toxic("reset", "reset_peer", "downstream", f.reset_share,
                                 timeout=f.reset_after_ms))  # fmt: skip
        if f.cut_share:
            toxics.append(_toxic("cut", "limit_data", "upstream", f.cut_share,
                                 bytes=f.cut_after_bytes))  # fmt: skip
        if f.stall_share:
            toxics.append(_toxic("stall", "timeout", "upstream", f.stall_share,
                                 timeout=f.stall_ms))  # fmt: skip
        if f.slow_close_ms:
            toxics.append(_toxic("slow_close", "slow_close", "downstream",
                                 delay=f.slow_close_ms))  # fmt: skip
        return toxics


def _toxic(
    name: str, kind: str, stream: str, toxicity: float = 1.0, **attributes: int
) -> dict[str, Any]:
    return {
        "name": name,
        "type": kind,
        "stream": stream,
        "toxicity": toxicity,
        "attributes": attributes,
    }


def names() -> list[str]:
    """The conditions' names, in the file's order."""
    return list(_load())


def condition(name: str) -> Condition:
    """The condition called `name`; HpcioError naming the known ones otherwise."""
    table = _load()
    if name not in table:
        raise HpcioError(f"unknown network condition {name!r}; known: {', '.join(table)}")
    return table[name]


def _load() -> dict[str, Condition]:
    with _FILE.open("rb") as f:
        data = tomllib.load(f)
    return {
        name: Condition(
            name=name,
            description=entry["description"],
            link_mbit=float(entry["link_mbit"]),
            latency_ms=float(entry["latency_ms"]),
            jitter_ms=float(entry.get("jitter_ms", 0)),
            connection_mbit=float(entry.get("connection_mbit", 0)),
            faults=Faults(**entry.get("faults", {})),
        )
        for name, entry in data.items()
    }
