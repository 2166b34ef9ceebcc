"""MLPerf Storage's LLM checkpoints: every rank saves its shard of a Llama 3 model's
checkpoint, ten times, then loads it ten times (fsync'd on POSIX, completed uploads on object
stores). A preset over the N-N pattern (mfmw): one file or object per rank.

The sizes are MLPerf Storage's (processes and checkpoint bytes per model); `--scale` divides
the bytes for one machine and keeps the shape (the ranks)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hpcio.errors import SpecError
from hpcio.units import format_bytes
from hpcio.workloads.limits import check_limits
from hpcio.workloads.patterns.mfmw import Mfmw

if TYPE_CHECKING:
    from hpcio.spec.model import RunSpec

MiB, GiB, TiB = 1 << 20, 1 << 30, 1 << 40
#: Saves, then loads, as MLPerf Storage's checkpoint benchmark does them.
SAVES = LOADS = 10
#: A shard goes in transfers of this size (parts of an upload: within S3's 5 MiB..5 GiB and
#: under 10,000 parts for every model's shard), this many in flight per rank.
TRANSFER_BYTES = 16 * MiB
IN_FLIGHT = 4


@dataclass(frozen=True, slots=True)
class Model:
    name: str
    #: Processes MLPerf Storage writes the checkpoint with: one shard each.
    ranks: int
    checkpoint_bytes: int


MODELS = {
    m.name: m
    for m in (
        Model("llama3-8b", 8, 105 * GiB),
        Model("llama3-70b", 64, 912 * GiB),
        Model("llama3-405b", 512, int(5.29 * TiB)),
        Model("llama3-1t", 1024, 18 * TiB),
    )
}


class CheckpointWorkload(Mfmw):
    """A model's checkpoint: each rank its shard, saved then loaded (`hpcio checkpoint`)."""

    family = "checkpoint"
    runs_alone = False
    in_suites = False
    lower = {"buffers": "--transfer", "data": "--scale", "disk": "--scale"}  # noqa: RUF012

    def __init__(self, model: Model) -> None:
        self.model = model
        self.name = model.name
        self.summary = (
            f"{model.name} checkpoint: {format_bytes(model.checkpoint_bytes)} in "
            f"{model.ranks} shards, saved {SAVES} times then loaded {LOADS} times"
        )

    def validate(self, run: RunSpec) -> None:
        super().validate(run)
        if run.ranks != self.model.ranks:
            raise SpecError(
                f"{self.name} is written by {self.model.ranks} processes (MLPerf Storage's "
                f"shape), one shard each; run it with -n {self.model.ranks}, not {run.ranks} "
                "(--scale makes the shards smaller, not fewer)"
            )
        if run.target.is_object_store and run.writes:
            self._check_parts(run)

    def _check_parts(self, run: RunSpec) -> None:
        """The store's part limits, said in checkpoint's own flag: a shard's parts are its
        transfers (--transfer; checkpoint has no --part-size)."""
        from hpcio import _engine

        try:
            limits = _engine.Target(run.target.url, options=dict(run.target.options)).limits()
        except (OSError, ValueError):
            return  # a target that cannot be opened is refused, and said, when the run probes it
        try:
            check_limits(run.target.kind, self.objects_written(run), limits)
        except SpecError as e:
            raise SpecError(str(e).replace("--part-size", "--transfer")) from None

    def label(self, settings: dict[str, Any]) -> str:
        phases = settings.get("phases") or ()
        step = "save" if list(phases) == ["write"] else "load" if list(phases) == ["read"] else ""
        return f"{self.name} {step}".strip()


WORKLOADS = tuple(CheckpointWorkload(m) for m in MODELS.values())


def get(name: str) -> Model:
    """Raises: SpecError: no such model (the models listed)."""
    try:
        return MODELS[name]
    except KeyError:
        raise SpecError(f"unknown model '{name}'; choose one of {', '.join(MODELS)}") from None


def shard_bytes(model: Model, scale: int, transfer: int) -> tuple[int, int]:
    """(bytes of a rank's shard, transfer) at `scale`: the shard in whole transfers, the
    transfer no larger than the shard (a shard of one transfer is a single PUT).

    Raises:
        SpecError: a scale below 1 or one that leaves less than 1 MiB per shard; a transfer
            below 1 byte.
    """
    if scale < 1:
        raise SpecError(f"--scale must be at least 1, got {scale}")
    if transfer < 1:
        raise SpecError(f"--transfer must be at least 1 byte, got {transfer}")
    shard = model.checkpoint_bytes // model.ranks // scale // MiB * MiB
    if shard < MiB:
        raise SpecError(
            f"--scale {scale} leaves {model.name} less than 1 MiB per shard; use at most "
            f"--scale {model.checkpoint_bytes // model.ranks // MiB}"
        )
    transfer = min(transfer, shard)
    return shard // transfer * transfer, transfer
