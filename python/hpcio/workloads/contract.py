"""The workload contract: what every workload answers for itself, and the three kinds of
phase body it may hand the runner (an engine plan, a collective step, a Python body)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from hpcio.errors import SpecError
from hpcio.options import declared
from hpcio.units import format_bytes

if TYPE_CHECKING:
    from hpcio import _engine
    from hpcio.results.schema import PhaseFigures
    from hpcio.spec.model import RunSpec
    from hpcio.workloads.plans import Plan


class Phase(enum.StrEnum):
    WRITE = "write"
    READ = "read"
    #: Reads and writes drawn at a mix, on the same files (fio's rwmixread).
    MIXED = "mixed"


@dataclass(frozen=True, slots=True)
class RankInfo:
    """Where one rank sits in the job."""

    rank: int
    size: int
    node: int = 0
    local_rank: int = 0
    ranks_per_node: int = 1
    nodes: int = 1

    #: The node of every rank, by rank; empty where unknown (then ranks are taken to be placed
    #: in blocks of ranks_per_node, as mpiexec does by default).
    placement: tuple[int, ...] = ()

    def read_source(self, reorder: bool) -> int:
        """The rank whose data this rank reads back: itself, or with reorder (IOR's -C) the rank
        one node further on, or the next rank when the job has a single node."""
        if not reorder or self.size == 1:
            return self.rank
        return self.read_sources(reorder)[self.rank]

    def read_sources(self, reorder: bool) -> tuple[int, ...]:
        """read_source of every rank, by rank."""
        if not reorder or self.size == 1:
            return tuple(range(self.size))
        if self.nodes > 1 and self.placement:
            return reorder_sources(self.placement, self.nodes)
        shift = self.ranks_per_node if self.nodes > 1 else 1
        return tuple((rank + shift) % self.size for rank in range(self.size))


def reorder_sources(placement: Sequence[int], nodes: int) -> tuple[int, ...]:
    """For every rank, the rank whose data it reads with --reorder across `nodes` nodes: the one
    with the same place among its node's ranks on the next node (wrapping round a node with
    fewer ranks). IOR's -C shifts by ranks per node instead, which lands on the same node when
    the launcher deals ranks out round robin (--map-by node)."""
    on_node: list[list[int]] = [[] for _ in range(nodes)]
    local = []
    for rank, node in enumerate(placement):
        local.append(len(on_node[node]))
        on_node[node].append(rank)
    sources = []
    for rank, node in enumerate(placement):
        peers = on_node[(node + 1) % nodes]
        sources.append(peers[local[rank] % len(peers)])
    return tuple(sources)


# --- phase bodies ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlanBody:
    """The engine runs this rank's whole plan, with the GIL released."""

    plan: Plan
    #: Transfers in flight asked for; the runner never gives more lanes than a batch has.
    in_flight: int
    #: fio's time_based: the lanes go round their transfers until this many seconds have passed.
    until_s: float | None = None


@dataclass(frozen=True, slots=True)
class CollectBody:
    """Collect-and-write, or read-and-scatter: one collector rank does all the storage I/O,
    the others send it their data or receive theirs (runner/choreography.py)."""

    #: The collector's open, (fsync,) close; the pieces are fed between them.
    plan: Plan
    key: str
    transfer_bytes: int
    file_bytes: int
    #: (file offset, length) of every piece of a rank's data, by rank.
    pieces: tuple[tuple[tuple[int, int], ...], ...]
    #: Rank -> the rank whose data it reads back.
    reads_from: tuple[int, ...]
    #: The collector's transfers in flight.
    in_flight: int
    collector: int = 0


@dataclass(frozen=True, slots=True)
class SharedUploadBody:
    """N-1 writes on an object store: parts of one upload (or block list) that rank 0 starts
    and completes, every rank putting its own parts (runner/choreography.py)."""

    plan: Plan
    part_bytes: int
    in_flight: int


class Context(Protocol):
    """What a Python body gets on every rank (runner/body.py makes it)."""

    run: RunSpec
    phase: Phase
    who: RankInfo
    #: The engine's handle on the run's target (plans, removal), shared with the runner.
    target: _engine.Target
    #: Times every operation the body does itself: reports cannot tell its figures from a plan's.
    recorder: _engine.Recorder
    #: Figures only this workload has, summed or averaged by the body itself on rank 0.
    metrics: dict[str, Any]

    def communicator(self) -> Any:
        """The job's real mpi4py communicator (parallel HDF5, NetCDF, MPI-IO need it)."""
        ...

    def barrier(self) -> None:
        """Wait for every rank; a signal still stops the wait (a blocking MPI_Barrier would
        hold the rank until mpiexec kills it, its clean-up undone)."""
        ...

    def background(self, plan: Plan, in_flight: int, buffer_bytes: int | None = None) -> Background:
        """Start `plan` on the engine and return at once; its figures join the phase's. A
        joined plan's executor (lanes, buffers of `buffer_bytes` or the plan's largest
        transfer) runs the next plan that fits it."""
        ...

    def write_from(self, plan: Plan, source: Any, in_flight: int) -> None:
        """Run `plan` now, its writes taking `source`'s bytes (a numpy uint8 array, each batch
        of transfers from its start) instead of the payload; its figures join the phase's."""
        ...

    def shared_upload(self, plan: Plan, part_bytes: int) -> None:
        """Collective: every rank's `plan` puts its parts (offset / part_bytes) of one object
        that rank 0's upload (or block list) starts and completes; its figures join the
        phase's."""
        ...

    def path(self, key: str) -> str:
        """The local path of `key` on a POSIX target."""
        ...

    def interruptible(self, call: Callable[[], Any]) -> Any:
        """`call()`, native code that releases the GIL and stops at the engine's cancel flag,
        made so that Ctrl-C or SIGTERM still stops it: the signal's handler sets the flag."""
        ...

    def finding(self, start_ns: int, end_ns: int) -> None:
        """The body spent `start_ns`..`end_ns` (clock_ns) finding its files, outside any
        operation it records (a listing, stats): the phase's open span and time include it."""
        ...


class Background(Protocol):
    def wait(self) -> None:
        """Until the plan has run (a signal still interrupts it)."""
        ...

    def failed(self) -> bool:
        """After wait(): whether any of its operations failed (the phase then fails)."""
        ...


@dataclass(frozen=True, slots=True)
class PythonBody:
    """The workload's own code, run on every rank inside the phase window: barrier, t0, the
    call, end. It times each operation through `context.recorder`."""

    call: Callable[[Context], None]


Body = PlanBody | CollectBody | SharedUploadBody | PythonBody


# --- what a workload says about itself ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Written:
    """An object (or file) a run writes, for store limits and prices."""

    what: str  # "each rank's object", "the shared object"
    bytes: int
    #: Bytes per part (or block) when it goes up in parts.
    part_bytes: int
    #: Written by several ranks as parts of one upload, never as a single PUT.
    shared: bool


@dataclass(frozen=True, slots=True)
class CacheFacts:
    """What a run reads back, for saying whether its reads could have come from RAM."""

    #: Bytes all ranks write (or lay out) per iteration.
    data_set_bytes: int
    #: Every node reads all of the data (whole-file reads, or one collector node).
    whole_data_per_node: bool = False
    #: Whose data is read, where the workload has its own answer; None: by --reorder.
    read_back_from: str | None = None
    #: Reads come from data this node wrote even with --reorder.
    reads_local_data: bool = False
    #: Several ranks of a node read the same data (all but the first may read the cache).
    rereads: bool = False
    reorder: bool = False


@dataclass(frozen=True, slots=True)
class MemoryNeed:
    """Bytes a node's ranks hold in buffers at once, and how that figure is made up."""

    bytes: int
    breakdown: str
    #: The options that make the figure smaller.
    options: str


class Workload:
    """A registered workload. Subclasses set the class attributes and override what differs;
    the defaults fit a workload whose ranks each write and read their own files."""

    name: str
    #: Which report tables show its documents: "pattern", "profile", "iozone", or its own.
    family: str
    #: Its parameters: a frozen dataclass of fields declared with hpcio.options.option.
    params: type
    #: One line for listings and help.
    summary: str
    #: Timed phases, in order, when --phases does not choose.
    own_phases: tuple[Phase, ...] = (Phase.WRITE, Phase.READ)
    #: `hpcio run --workload` can run it from its params alone (a preset such as a storage
    #: profile is run by the command that fills its params in).
    runs_alone: bool = True
    #: A suite's `workloads` axis may name it: true for what `hpcio run` runs, and for a
    #: workload whose command only fills its params (training, whose accelerator counts a
    #: suite sweeps).
    in_suites: bool = True
    #: Its study plots bandwidth against the global data size (all ranks' bytes), not the
    #: size per rank: reports add that figure for its documents.
    sized_globally: bool = False
    #: Each phase moves the whole data set (its files' size); False where a phase moves what
    #: it moves (a replay's reads): tables then divide the bytes moved by the time.
    moves_data_set: bool = True
    #: Its phases' figures are bandwidths: the console prints the bandwidth line and table.
    #: False where they are rates of calls that move no bytes the engine counts (mdtest):
    #: `progress_words` and `notes` say its own figures instead.
    shows_bandwidth: bool = True

    def __repr__(self) -> str:
        # A RunSpec's repr names its workload, as its documents do.
        return f"<workload {self.name}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        # A registered workload crosses ranks by name, so every rank's RunSpec holds the
        # registry's own object (and specs built on two ranks compare equal).
        from hpcio.workloads import registry

        if registry.found(self.name) is self:
            return (_registered, (self.name,))
        return super().__reduce_ex__(protocol)

    def phases(self, run: RunSpec) -> tuple[Phase, ...]:
        """The timed phases of `run`, in order."""
        if run.phases is not None:
            return tuple(Phase(p) for p in run.phases)
        return self.own_phases

    def validate(self, run: RunSpec) -> None:
        """Checks of the params against each other and the common settings.

        Raises:
            SpecError: one line naming the option and a value that would work.
        """
        writes = run.phases is not None and Phase.WRITE.value in run.phases
        if writes and Phase.WRITE not in self.own_phases:
            raise SpecError(f"{self.name} only reads; use --phases read")
        # Each param as its option's kind reads it: a spec built in code, or rebuilt from a
        # document, is held to what the command line and suites accept.
        for opt in declared(self.params):
            value = getattr(run.params, opt.field)
            if value is not None:
                opt.read(value)

    def body(self, run: RunSpec, phase: Phase, who: RankInfo) -> Body:
        """What this rank does in `phase` (built before the phase barrier, so untimed)."""
        raise NotImplementedError

    def keys(self, run: RunSpec) -> list[str]:
        """Every file or object the run creates, for removal."""
        raise NotImplementedError

    def owns_key(self, name: str) -> bool:
        """Whether `name` is a file or object this workload makes (`hpcio clean` removes
        those and nothing else)."""
        return False

    def prepare(self, run: RunSpec) -> RunSpec | None:
        """An untimed run whose write phase lays out the data, once before the iterations
        (for workloads that only read); None: nothing to lay out."""
        return None

    def lay_out(self, run: RunSpec) -> RunSpec | None:
        """An untimed write before each iteration's timed write (time-based writes rewrite a
        laid-out file); None: none."""
        return None

    def planned_transfers(self, run: RunSpec, phase: Phase, sample: int = 64) -> int | None:
        """Transfers all ranks make in one `phase`, counted from their bodies' plans (the
        first `sample` ranks, scaled up for a large job); None where the workload's own code
        makes them (a Python body: not known before it runs)."""
        from hpcio.workloads.plans import Op

        sampled = min(run.ranks, sample)
        total = 0
        for rank in range(sampled):
            who = RankInfo(rank, run.ranks, ranks_per_node=run.ranks_per_node or run.ranks)
            body = self.body(run, phase, who)
            if isinstance(body, CollectBody):  # the collector moves every piece, in transfers
                return sum(
                    length // body.transfer_bytes for mine in body.pieces for _, length in mine
                )
            if not isinstance(body, PlanBody | SharedUploadBody):
                return None
            plan = body.plan
            moving = (plan.ops == int(Op.WRITE)) | (plan.ops == int(Op.READ))
            total += int(plan.counts[moving].sum())
        return total * run.ranks // sampled

    def uses_mpiio(self, run: RunSpec) -> bool:
        """The run opens its files through MPI-IO, so it takes MPI-IO hints (striping among
        them: workloads/striping.py)."""
        return False

    def in_flight(self, run: RunSpec) -> int:
        """Requests one rank may have in flight: object-store threads and warm connections."""
        return 1

    def stored_bytes(self, run: RunSpec) -> int:
        """Bytes the run keeps on its target at its peak, all ranks."""
        return sum(w.bytes for w in self.objects_written(run))

    def moved_bytes(self, run: RunSpec, phase: Phase) -> int:
        """Bytes all ranks move in one `phase` of one iteration (for ETAs and plans)."""
        return self.stored_bytes(run)

    def objects_written(self, run: RunSpec) -> list[Written]:
        """Each distinct kind of object the run writes (for limits and prices)."""
        return []

    def memory(self, run: RunSpec, ranks_per_node: int) -> MemoryNeed:
        """Buffers the busiest node's ranks hold at once."""
        return MemoryNeed(0, "no buffers", "")

    def cache_facts(self, run: RunSpec) -> CacheFacts:
        return CacheFacts(data_set_bytes=self.stored_bytes(run))

    #: The options that lower a figure, in the words of the command that makes the run:
    #: "buffers" (memory), "data" (data held in memory://), "disk" (free space).
    lower: dict[str, str] = {}  # noqa: RUF012

    def disk_words(self, run: RunSpec) -> str:
        """How the stored bytes are made up, for the free-space check's message."""
        return f"{run.ranks} rank(s)"

    def describe(self, run: RunSpec) -> str:
        """What a run does, in a few words, after its name: progress lines and headers."""
        return ""

    def reduce_metrics(self, per_rank: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The phase's metrics from each rank's (a Python body's context.metrics): numbers
        summed over ranks by default; a workload whose figures average overrides this."""
        total: dict[str, Any] = {}
        for metrics in per_rank:
            for name, value in metrics.items():
                number = isinstance(value, int | float) and not isinstance(value, bool)
                total[name] = total.get(name, 0) + value if number else total.get(name, value)
        return total

    def progress_words(self, figures: PhaseFigures) -> str | None:
        """One iteration's phase in its own words, for the console's iteration line; None:
        the bandwidth line."""
        return None

    def notes(self, phase: str, metrics: Sequence[dict[str, Any]]) -> list[str]:
        """Lines for the run's summary about its own figures, from the `metrics` of every
        iteration of `phase`; none by default."""
        return []

    def takes(self, field: str) -> bool:
        """Whether its params declare `field` (such as size_per_rank_bytes)."""
        return any(opt.field == field for opt in declared(self.params))

    def label(self, settings: dict[str, Any]) -> str:
        """A document's name in tables (its `settings`, as ResultDocument.settings)."""
        return self.name


def _registered(name: str) -> Workload:
    """The registered workload `name` (a workload unpickled on another rank)."""
    from hpcio.workloads import registry

    return registry.get(name)


def size_hint(size: int) -> str:
    """A size as an option value: '4MiB'."""
    return format_bytes(size).replace(" ", "")
