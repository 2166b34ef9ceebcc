"""model-load's params and the models it knows (model_load.py loads them): a light module,
imported by the option path without the workload."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.options import POSITIVE, SIZE, choice, option


@dataclass(frozen=True, slots=True)
class Architecture:
    hidden: int
    layers: int
    mlp: int
    shards: int
    vocabulary: int = 128_256
    kv_width: int = 8 * 128


#: Llama 3.1's configs (config.json) and the shards of its Hugging Face releases.
MODELS = {
    "8b": Architecture(hidden=4096, layers=32, mlp=14_336, shards=4),
    "70b": Architecture(hidden=8192, layers=80, mlp=28_672, shards=30),
    "405b": Architecture(hidden=16_384, layers=126, mlp=53_248, shards=191),
}
SMALL_DIVISOR = 16
LOADS = ("whole", "ranged", "mmap")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelLoadParams:
    model: str = option(
        "--model", kind=choice(*MODELS), default="8b",
        help="model-load: Llama 3.1's 8b, 70b or 405b, BF16 (2 bytes a parameter)",
    )  # fmt: skip
    scale: str = option(
        "--scale", kind=choice("full", "small"), default="full",
        help="model-load: full, or small (hidden, MLP and vocabulary sizes divided by 16)",
    )  # fmt: skip
    load: str = option(
        "--load", kind=choice(*LOADS), default="ranged",
        help="model-load: whole (each shard read front to back), ranged (header, then the "
        "tensors in parallel ranged reads) or mmap (POSIX: tensors copied from a mapping)",
    )  # fmt: skip
    transfer_bytes: int | None = option(
        "--transfer", kind=SIZE, unit="bytes", default=None,
        help="bytes per read call (model-load's default: 16 MiB)",
    )  # fmt: skip
    in_flight: int = option(
        "--in-flight", kind=POSITIVE, default=4,
        help="model-load: tensors each rank reads at once (--load ranged)",
    )  # fmt: skip
