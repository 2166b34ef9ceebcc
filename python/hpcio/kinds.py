"""Target kinds, the ground floor: one row per kind says what every layer needs to know of it
(its URL's form, where its endpoint and credentials come from, its part limits, its pricing
class, the library store class that reaches it, whether its data lives in this process), so no
other code tests a kind by name. Importable without the native engine (reports use it).

A new kind is a row here and its engine module; tests/test_kinds.py holds the rows' limits to
the engine's own (`_engine.Target(url).limits()`)."""

from __future__ import annotations

from dataclasses import dataclass

from hpcio.errors import SpecError

MiB, GiB = 1 << 20, 1 << 30


@dataclass(frozen=True, slots=True)
class Setting:
    """One place a store setting may come from: a --store-option key or an environment
    variable (object_store's builders read both), and what it means for the run."""

    key: str
    variable: str
    means: str = ""


@dataclass(frozen=True, slots=True)
class PartLimits:
    """The multipart upload (or block list) limits of a kind: 0 where there is no limit."""

    #: Every part but the last must be at least this long.
    min_part_bytes: int = 0
    max_part_bytes: int = 0
    max_parts: int = 0


@dataclass(frozen=True, slots=True)
class Container:
    """What the first part of an object store's URL names, and the provider's naming rule."""

    word: str  # "bucket", "container"
    example: str
    #: The rule as a pattern, and in words for the message that refuses a name.
    pattern: str
    rule: str
    #: Longest name without dots (GCS allows 222 characters only in names with dots).
    max_plain_length: int | None = None


@dataclass(frozen=True, slots=True)
class TargetKind:
    """What a target of one kind is. `name` is the engine's name for it (TargetSpec.kind)."""

    name: str
    scheme: str
    #: Keys name objects, written whole or in parts; False: files at paths (a file system).
    object_store: bool
    #: Its data lives and dies with this one process: one rank, no lock, no uploads left over.
    in_process: bool = False
    #: Prices of one pricing class apply to each other's kinds ("hpcio cost --as").
    pricing_class: str = ""
    #: Sold by a provider: `hpcio cost --as` may price a run as this kind.
    priced: bool = False
    #: The requests an upload in parts makes: "parts" (create, upload_part, complete) or
    #: "blocks" (put_block, put_block_list); "" where there are none.
    uploads: str = ""
    limits: PartLimits = PartLimits()
    #: Where the endpoint may be set, and where credentials may come from, in the order
    #: object_store's builders read them (engine/src/target/credentials.rs).
    endpoints: tuple[Setting, ...] = ()
    credentials: tuple[Setting, ...] = ()
    #: A setting that points the store at its local emulator, and the endpoint it then uses.
    emulator: tuple[Setting, str] | None = None
    #: object_store's other names for its settings (alias, config key), so a
    #: `--store-option endpoint=...` is the endpoint `hpcio env` describes and checks.
    aliases: tuple[tuple[str, str], ...] = ()
    #: obstore's store class for it (workloads/seismic/stores.py); None: no library store.
    store_class: str | None = None
    #: What the URL's first part names; None: a file path (file://) or a bare name (memory://).
    container: Container | None = None
    #: What it is given is kept for a later read; False (null://): nothing is, so there is
    #: nothing to lock, abort or clean.
    keeps: bool = True
    #: For a kind with no storage behind it: what its figures measure (said in every document).
    measures: str = ""
    #: For a kind that needs no credentials: why.
    no_credentials: str = ""
    #: What may follow `scheme://` (a pattern) and the words refusing anything else; None: a
    #: path or a container and prefix, as the row's other fields say.
    url_rest: tuple[str, str] | None = None
    #: Transfers a rank keeps in flight when the run does not say (--in-flight), within
    #: DEFAULT_BUFFER_BYTES (`default_in_flight`). A store across a network needs several: one
    #: request carries at most a connection's cap, and less when it is short next to the round
    #: trip (docs/cloud.md); a file system and the in-process kinds keep one.
    in_flight: int = 1

    @property
    def lasting(self) -> bool:
        """Its objects outlive the process that wrote them: runs lock it, and a failed run's
        uploads and objects must be cleaned up."""
        return self.keeps and not self.in_process

    @property
    def durable_at_commit(self) -> bool:
        """Its writes are durable once committed (a PUT, a completed multipart upload, a
        committed block list): --fsync adds nothing there."""
        return self.object_store and self.lasting


_S3_NAME = (
    r"(?!xn--)(?!.*\.\.)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]",
    "3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit",
)
_AZURE_NAME = (
    r"(?!.*--)[a-z0-9][a-z0-9-]{1,61}[a-z0-9]",
    "3-63 lowercase letters, digits and single hyphens, starting and ending with a letter or digit",
)
_GCS_NAME = (
    r"(?!goog)(?!.*\.\.)[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]",
    "3-63 lowercase letters, digits, hyphens and underscores (up to 222 with dots), starting "
    "and ending with a letter or digit",
)
#: Requests in flight a rank of a run on a cloud store keeps by default: 8 x 16 MiB objects or
#: parts fill a 1 Gbit/s link 20 ms away from one rank (docs/benchmarks.md, bench/cloud_link),
#: as the AWS CLI's 10 requests and s5cmd's 5 parts per file do.
_STORE_IN_FLIGHT = 8
#: The transfer buffers (in-flight depth x transfer) a rank may hold by the default depth: a
#: larger transfer lowers the default (64 MiB parts: 2 in flight), never below one.
DEFAULT_BUFFER_BYTES = 128 * MiB

#: S3 and GCS's XML multipart API: parts of 5 MiB to 5 GiB (the last may be smaller), at most
#: 10,000; Azure block blobs: blocks up to 4000 MiB, at most 50,000 (engine/src/target/object.rs).
_S3_PARTS = PartLimits(min_part_bytes=5 * MiB, max_part_bytes=5 * GiB, max_parts=10_000)
_AZURE_BLOCKS = PartLimits(max_part_bytes=4000 * MiB, max_parts=50_000)

#: One setting of null:// (engine/src/target/null.rs): a round trip, a request's rate, a link's.
_NUMBER = r"\d+(\.\d+)?"
_NULL_SETTING = (
    rf"(delay={_NUMBER}(ns|us|ms|s)|(rate|link)={_NUMBER}(B|KiB|MiB|GiB|KB|MB|GB|Kbit|Mbit|Gbit))"
)

_ROWS = (
    TargetKind("posix", "file", object_store=False, pricing_class="posix"),
    TargetKind(
        "s3", "s3", object_store=True, pricing_class="s3-like", priced=True, uploads="parts",
        in_flight=_STORE_IN_FLIGHT,
        limits=_S3_PARTS,
        endpoints=(Setting("aws_endpoint", "AWS_ENDPOINT_URL"),
                   Setting("aws_endpoint", "AWS_ENDPOINT")),
        credentials=(
            Setting("aws_access_key_id", "AWS_ACCESS_KEY_ID", "access key"),
            Setting("aws_skip_signature", "AWS_SKIP_SIGNATURE", "none (unsigned requests)"),
            Setting("aws_web_identity_token_file", "AWS_WEB_IDENTITY_TOKEN_FILE", "web identity"),
            Setting("aws_container_credentials_relative_uri",
                    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "container credentials"),
            Setting("aws_metadata_endpoint", "AWS_METADATA_ENDPOINT", "instance profile"),
        ),
        aliases=(("endpoint", "aws_endpoint"), ("endpoint_url", "aws_endpoint"),
                 ("aws_endpoint_url", "aws_endpoint"), ("access_key_id", "aws_access_key_id"),
                 ("skip_signature", "aws_skip_signature")),
        store_class="S3Store",
        container=Container("bucket", "s3://bucket/prefix", *_S3_NAME),
    ),
    TargetKind(
        "azure", "az", object_store=True, pricing_class="azure", priced=True, uploads="blocks",
        in_flight=_STORE_IN_FLIGHT,
        limits=_AZURE_BLOCKS,
        endpoints=(Setting("azure_storage_endpoint", "AZURE_STORAGE_ENDPOINT"),),
        credentials=(
            Setting("azure_storage_use_emulator", "AZURE_STORAGE_USE_EMULATOR",
                    "the emulator's key"),
            Setting("azure_storage_account_key", "AZURE_STORAGE_ACCOUNT_KEY", "account key"),
            Setting("azure_storage_sas_key", "AZURE_STORAGE_SAS_KEY", "SAS"),
            Setting("azure_storage_token", "AZURE_STORAGE_TOKEN", "bearer token"),
            Setting("azure_client_id", "AZURE_CLIENT_ID",
                    "service principal or managed identity"),
            Setting("azure_federated_token_file", "AZURE_FEDERATED_TOKEN_FILE",
                    "workload identity"),
            Setting("azure_use_azure_cli", "AZURE_USE_AZURE_CLI", "the Azure CLI's login"),
            Setting("azure_skip_signature", "AZURE_SKIP_SIGNATURE", "none (unsigned requests)"),
            Setting("azure_msi_endpoint", "AZURE_MSI_ENDPOINT", "managed identity"),
        ),
        emulator=(Setting("azure_storage_use_emulator", "AZURE_STORAGE_USE_EMULATOR"),
                  "http://127.0.0.1:10000 (the emulator's)"),
        aliases=(("endpoint", "azure_storage_endpoint"),
                 ("use_emulator", "azure_storage_use_emulator"),
                 ("account_key", "azure_storage_account_key")),
        store_class="AzureStore",
        container=Container("container", "az://container/prefix", *_AZURE_NAME),
    ),
    TargetKind(
        "gcs", "gs", object_store=True, pricing_class="s3-like", priced=True, uploads="parts",
        in_flight=_STORE_IN_FLIGHT,
        limits=_S3_PARTS,
        endpoints=(Setting("google_base_url", "GOOGLE_BASE_URL"),),
        credentials=(
            Setting("google_service_account", "GOOGLE_SERVICE_ACCOUNT", "service account file"),
            Setting("google_service_account_key", "GOOGLE_SERVICE_ACCOUNT_KEY",
                    "service account key"),
            Setting("google_application_credentials", "GOOGLE_APPLICATION_CREDENTIALS",
                    "application credentials file"),
            Setting("google_bearer_token", "GOOGLE_BEARER_TOKEN", "bearer token"),
            Setting("google_skip_signature", "GOOGLE_SKIP_SIGNATURE", "none (unsigned requests)"),
        ),
        aliases=(("base_url", "google_base_url"), ("service_account", "google_service_account")),
        store_class="GCSStore",
        container=Container("bucket", "gs://bucket/prefix", *_GCS_NAME, max_plain_length=63),
    ),
    TargetKind(
        "memory", "memory", object_store=True, in_process=True, pricing_class="s3-like",
        uploads="parts",
        measures="memory:// keeps objects in this process (object_store's in-memory store): no "
        "storage or network behind it, but costs of its own (an upload in parts is assembled "
        "at its close; reads return the stored bytes without a copy); null:// measures hpcio's "
        "own work alone",
        no_credentials="none needed (in this process)",
    ),
    # The engine's test double and ceiling (engine/src/target/null.rs): writes discarded, reads
    # answered with the expected payload; no part limits (it keeps no parts).
    TargetKind(
        "null", "null", object_store=True, pricing_class="s3-like", uploads="parts", keeps=False,
        measures="null:// keeps nothing: writes are discarded and reads answered with the "
        "expected data, so the figures measure hpcio's own work (and any ?delay= per operation)",
        no_credentials="none needed (nothing is stored)",
        url_rest=(rf"(\?{_NULL_SETTING}(&{_NULL_SETTING})*)?",
                  "null:// takes only a per-operation delay, a per-request rate and a link's "
                  "rate, e.g. null://?delay=2ms or null://?delay=20ms&rate=60MiB&link=1Gbit "
                  "(delay in ns, us, ms, s; rates per second in B, KiB, MiB, GiB, KB, MB, GB, "
                  "Kbit, Mbit, Gbit)"),
    ),
)  # fmt: skip

#: Kind name (TargetSpec.kind, as the engine names it) -> its row.
KINDS = {row.name: row for row in _ROWS}
#: URL scheme -> its kind's row.
SCHEMES = {row.scheme: row for row in _ROWS}


def of(name: str) -> TargetKind:
    """The row of kind `name` ("posix", "s3", ...).

    Raises:
        SpecError: a kind this hpcio does not know (a newer hpcio's document).
    """
    try:
        return KINDS[name]
    except KeyError:
        raise SpecError(f"unknown target kind '{name}'; known: {', '.join(KINDS)}") from None


def default_in_flight(name: str, transfer_bytes: int) -> int:
    """The in-flight depth of a run on kind `name` that does not set --in-flight: the kind's
    own, lowered so that depth x `transfer_bytes` stays within DEFAULT_BUFFER_BYTES (and at
    least 1).

    Raises:
        SpecError: a kind this hpcio does not know.
    """
    depth = of(name).in_flight
    return max(1, min(depth, DEFAULT_BUFFER_BYTES // max(1, transfer_bytes)))


def pricing_class(name: str) -> str:
    """The pricing class of kind `name`: kinds of one class are priced by each other's prices
    (S3, GCS and memory:// make the same requests); "" for a kind not known here."""
    found = KINDS.get(name)
    return found.pricing_class if found else ""


def object_kinds() -> tuple[str, ...]:
    """The kinds whose keys name objects (not files at paths)."""
    return tuple(row.name for row in _ROWS if row.object_store)


def priced_kinds() -> tuple[str, ...]:
    """The kinds a provider sells, that `hpcio cost --as` may price a run as."""
    return tuple(row.name for row in _ROWS if row.priced)
