//! Object stores through the object_store crate: S3 (and compatibles), Azure Blob, GCS and
//! an in-process memory store. N-1 writes use the stateless, ID-based multipart API, so any
//! rank can add parts to an upload another rank created and rank 0 completes it.

use super::credentials;
use super::http::CountingConnector;
use super::uploads::S3Uploads;
use super::{Caps, Handle, Limits, Mode, OpenOptions, Receipt, Target, Upload, WriteHint};
use crate::journal::Journal;
use crate::requests::{Counters, Kind};
use bytes::Bytes;
use futures::StreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::memory::InMemory;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::client::{HttpError, HttpErrorKind};
use object_store::{BackoffConfig, ClientConfigKey, GetOptions, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};
use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// This process's probe PUT met a failure (a reset, a timeout) and was retried: the failed
/// attempt may still land after the probe's DELETE (a stalled request a proxy or load balancer
/// hands on late), leaving `.hpcio-probe-PID` behind. Every removal of the run's objects by
/// this process then deletes it again. Process-wide, as the probe's key is: the probe and the
/// removals use different `ObjectTarget`s of one process.
static PROBE_MAY_LAND_LATE: AtomicBool = AtomicBool::new(false);

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// A removal of the run's objects is tried this many times, waiting REMOVE_BACKOFF, then twice
/// as long, between tries (`remove_all`).
const REMOVE_ATTEMPTS: u32 = 4;
const REMOVE_BACKOFF: Duration = Duration::from_millis(250);
/// How long the target probe retries, past one request that ran to the user's timeout.
const PROBE_RETRY_TIMEOUT: Duration = Duration::from_secs(5);

/// Request timeout unless --store-option timeout=... says otherwise.
const DEFAULT_TIMEOUT: &str = "600s";

/// hpcio's own settings among --store-option keys; the rest go to object_store.
const RETRY_KEYS: [&str; 4] = ["max_retries", "retry_timeout_s", "backoff_initial_ms", "backoff_max_s"];

pub struct ObjectTarget {
    kind: &'static str,
    base: String,
    prefix: String,
    store: Arc<dyn ObjectStore>,
    probe_store: Arc<dyn ObjectStore>,
    parts: Arc<dyn MultipartStore>,
    runtime: tokio::runtime::Runtime,
    counters: Arc<Counters>,
    journal: Journal,
    /// The URL this target was opened with, as journal entries name it.
    url: String,
    /// S3: whether request bodies are signed (see `s3_builder`).
    payload_signing: Option<&'static str>,
    /// S3: lists the multipart uploads in progress (`hpcio clean`).
    uploads: Option<S3Uploads>,
}

impl std::fmt::Debug for ObjectTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectTarget({}/{})", self.base, self.prefix)
    }
}

fn retry_config(options: &BTreeMap<String, String>) -> Result<RetryConfig, String> {
    let number = |key: &str, default: f64| -> Result<f64, String> {
        options.get(key).map_or(Ok(default), |v| {
            v.parse::<f64>().ok().filter(|x| *x >= 0.0).ok_or(format!("--store-option {key}: not a number >= 0"))
        })
    };
    Ok(RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_secs_f64(number("backoff_initial_ms", 100.0)? / 1e3),
            max_backoff: Duration::from_secs_f64(number("backoff_max_s", 15.0)?),
            base: 2.0,
        },
        max_retries: number("max_retries", 10.0)? as usize,
        retry_timeout: Duration::from_secs_f64(number("retry_timeout_s", 180.0)?),
    })
}

fn config<K: std::str::FromStr>(scheme: &str, key: &str) -> Result<K, String> {
    key.parse::<K>().map_err(|_| format!("unknown {scheme}:// store option '{key}'"))
}

/// Whether to allow plain http for an endpoint given as http://: the AWS CLI, boto3 and the
/// Azure and GCS SDKs use an endpoint's own scheme, while object_store refuses http unless
/// allow_http is set, and its refusal reads "builder error" after every retry. An allow_http
/// the user set (environment or option), either way, decides instead.
fn http_endpoint_given(endpoint: Option<String>, allow_http_set: bool) -> bool {
    !allow_http_set && endpoint.is_some_and(|e| e.to_ascii_lowercase().starts_with("http://"))
}

type Stores = (&'static str, Arc<dyn ObjectStore>, Arc<dyn MultipartStore>, Option<&'static str>, Option<S3Uploads>);

/// An S3 builder from the environment and `options`. Over TLS (an https:// endpoint, or
/// AWS's own, which is https) request bodies go unsigned (`UNSIGNED-PAYLOAD`), as the AWS
/// SDKs and boto3 send them there: signing hashes every byte with SHA-256 on the client (40%
/// of hpcio's CPU in 16 MiB PUTs) and again on the server, which TLS makes redundant. Over
/// plain http they are signed, as boto3 does. AWS_UNSIGNED_PAYLOAD or `--store-option
/// unsigned_payload=...` decides instead. Also returns which it is, for the result.
fn s3_builder(bucket: &str, options: Vec<(String, String)>) -> Result<(AmazonS3Builder, &'static str), String> {
    let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
    let mut chosen = std::env::var_os("AWS_UNSIGNED_PAYLOAD").is_some();
    let mut allow_http_set = std::env::var_os("AWS_ALLOW_HTTP").is_some();
    for (k, v) in options {
        let key: AmazonS3ConfigKey = config("s3", &k)?;
        chosen |= matches!(key, AmazonS3ConfigKey::UnsignedPayload);
        allow_http_set |= matches!(key, AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp));
        b = b.with_config(key, v);
    }
    if http_endpoint_given(b.get_config_value(&AmazonS3ConfigKey::Endpoint), allow_http_set) {
        b = b.with_config(AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp), "true");
    }
    let over_tls = b
        .get_config_value(&AmazonS3ConfigKey::Endpoint)
        .is_none_or(|e| e.to_ascii_lowercase().starts_with("https://"));
    if !chosen && over_tls {
        b = b.with_config(AmazonS3ConfigKey::UnsignedPayload, "true");
    }
    let unsigned = b.get_config_value(&AmazonS3ConfigKey::UnsignedPayload).as_deref() == Some("true");
    Ok((b, if unsigned { "unsigned payload" } else { "payload signed (SHA-256)" }))
}

/// The store for `scheme`: environment first (AWS_*, AZURE_*, GOOGLE_*), then `options`.
fn build_stores(
    scheme: &str,
    bucket: &str,
    options: Vec<(String, String)>,
    retry: RetryConfig,
    counters: Arc<Counters>,
) -> Result<Stores, String> {
    let connector = CountingConnector { counters: counters.clone() };
    let fail = |e: object_store::Error| format!("cannot configure {scheme}://{bucket}: {e}");
    Ok(match scheme {
        "s3" => {
            let (b, signing) = s3_builder(bucket, options)?;
            if let Some(missing) = credentials::s3_missing(&b) {
                return Err(missing);
            }
            let s = Arc::new(b.clone().with_retry(retry).with_http_connector(connector).build().map_err(fail)?);
            let uploads = S3Uploads::new(&b, s.clone(), bucket, counters)?;
            ("s3", s.clone(), s, Some(signing), Some(uploads))
        }
        "az" => {
            let mut b = MicrosoftAzureBuilder::from_env().with_container_name(bucket);
            let mut allow_http_set = std::env::var_os("AZURE_ALLOW_HTTP").is_some();
            for (k, v) in options {
                let key: AzureConfigKey = config(scheme, &k)?;
                allow_http_set |= matches!(key, AzureConfigKey::Client(ClientConfigKey::AllowHttp));
                b = b.with_config(key, v);
            }
            if http_endpoint_given(b.get_config_value(&AzureConfigKey::Endpoint), allow_http_set) {
                b = b.with_config(AzureConfigKey::Client(ClientConfigKey::AllowHttp), "true");
            }
            if let Some(missing) = credentials::azure_missing(&b) {
                return Err(missing);
            }
            let s = Arc::new(b.with_retry(retry).with_http_connector(connector).build().map_err(fail)?);
            ("azure", s.clone(), s, None, None)
        }
        "gs" => {
            let mut b = GoogleCloudStorageBuilder::from_env().with_bucket_name(bucket);
            let mut allow_http_set = std::env::var_os("GOOGLE_ALLOW_HTTP").is_some();
            for (k, v) in options {
                let key: GoogleConfigKey = config(scheme, &k)?;
                allow_http_set |= matches!(key, GoogleConfigKey::Client(ClientConfigKey::AllowHttp));
                b = b.with_config(key, v);
            }
            if http_endpoint_given(b.get_config_value(&GoogleConfigKey::BaseUrl), allow_http_set) {
                b = b.with_config(GoogleConfigKey::Client(ClientConfigKey::AllowHttp), "true");
            }
            if let Some(missing) = credentials::gcs_missing(&b) {
                return Err(missing);
            }
            let s = Arc::new(b.with_retry(retry).with_http_connector(connector).build().map_err(fail)?);
            ("gcs", s.clone(), s, None, None)
        }
        _ => {
            let s = Arc::new(InMemory::new());
            ("memory", s.clone(), s, None, None)
        }
    })
}

impl ObjectTarget {
    pub fn new(scheme: &str, rest: &str, options: &OpenOptions) -> Result<Self, String> {
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let counters = Arc::new(Counters::default());
        let retry = retry_config(&options.store)?;
        let mut store_options: Vec<(String, String)> = options
            .store
            .iter()
            .filter(|(k, _)| !RETRY_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // object_store's 30 s request timeout is shorter than a large multipart completion
        // takes (the store assembles the object): the retry then "succeeds" before the object
        // exists and the phase reports bandwidth it never had. Wait as long as a store may.
        if !options.store.contains_key("timeout") && scheme != "memory" {
            store_options.push(("timeout".to_string(), DEFAULT_TIMEOUT.to_string()));
        }
        let build = |retry: RetryConfig| -> Result<Stores, String> {
            build_stores(scheme, bucket, store_options.clone(), retry, counters.clone())
        };
        let (kind, store, parts, payload_signing, uploads) = build(retry)?;
        // The probe must fail fast on an unreachable endpoint, not after minutes of retries,
        // yet ride out a throttled answer or two, and one request that stalled until the
        // request timeout the user set (a stall on a share of the connections must not end
        // the run at its probe).
        let stall = options.store.get("timeout").and_then(|t| humantime::parse_duration(t).ok());
        let probe_retry = RetryConfig {
            max_retries: 3,
            retry_timeout: PROBE_RETRY_TIMEOUT + stall.unwrap_or_default(),
            backoff: BackoffConfig { init_backoff: Duration::from_millis(50), ..BackoffConfig::default() },
        };
        let (_, probe_store, _, _, _) = build(probe_retry)?;
        // Few threads: many ranks share a node, and requests in flight, not cores, set the need.
        // One thread per two requests in flight: the runtime's threads do every connection's
        // socket reads and writes, and one of them for 4 requests held 16 MiB GETs back.
        let threads = options.in_flight.div_ceil(2).clamp(1, 4);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("hpcio-io")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the I/O runtime: {e}"))?;
        let (base, prefix) = if kind == "memory" {
            ("memory://".to_string(), rest.trim_matches('/').to_string())
        } else {
            (format!("{scheme}://{bucket}"), prefix.trim_matches('/').to_string())
        };
        let url = format!("{scheme}://{rest}").trim_end_matches('/').to_string();
        let journal = Journal::new(options.journal_dir.clone(), options.job.clone());
        Ok(Self { kind, base, prefix, store, probe_store, parts, runtime, counters, journal, url, payload_signing, uploads })
    }

    fn path(&self, key: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(key)
        } else {
            Path::from(format!("{}/{key}", self.prefix))
        }
    }

    fn run<T>(&self, future: impl std::future::Future<Output = object_store::Result<T>>, what: &str, key: &str) -> io::Result<T> {
        self.runtime.block_on(future).map_err(|e| describe(&e, what, &format!("{}/{}", self.base, self.path(key))))
    }

    fn count(&self, s3_like: Kind, azure: Kind) {
        self.counters.add(if self.kind == "azure" { azure } else { s3_like });
    }

    /// One ranged GET, its body handed to `sink` piece by piece as it arrives (the offset of
    /// each piece, its bytes), without first collecting it into one buffer. A body shorter or
    /// longer than asked is an error.
    fn get(&self, handle: &Handle, offset: u64, len: u64, sink: &mut dyn FnMut(u64, &[u8])) -> io::Result<()> {
        let Handle::Get { key } = handle else {
            return Err(io::Error::other("object not open for reading"));
        };
        self.counters.add(Kind::Get);
        let path = self.path(key);
        let options = GetOptions::new().with_range(Some(offset..offset + len));
        let received = self.run(
            async {
                let mut body = self.store.get_opts(&path, options).await?.into_stream();
                let mut at = offset;
                while let Some(piece) = body.next().await {
                    let piece = piece?;
                    let end = offset + len;
                    let keep = piece.len().min(end.saturating_sub(at) as usize);
                    sink(at, &piece[..keep]);
                    at += piece.len() as u64;
                }
                Ok(at - offset)
            },
            "get",
            key,
        )?;
        if received != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{} read: {received} of {len} bytes", if received < len { "short" } else { "long" }),
            ));
        }
        Ok(())
    }

    fn probe_path(&self) -> Path {
        self.path(&format!(".hpcio-probe-{}", std::process::id()))
    }

    /// Deletes this process's probe object again where its PUT may have landed late
    /// (PROBE_MAY_LAND_LATE); best effort: `hpcio clean` removes what this misses.
    fn remove_late_probe(&self) {
        if PROBE_MAY_LAND_LATE.load(Ordering::Relaxed) {
            self.counters.add(Kind::Delete);
            let _ = self.delete_retrying(&self.store, &self.probe_path());
        }
    }

    /// One object's DELETE, tried as a removal of the run's objects is (REMOVE_ATTEMPTS):
    /// object_store does not retry S3's delete (sent as a POST) after a lost connection, and a
    /// probe or a lock whose DELETE met one reset would fail the run or leave its object.
    /// Whether the object was there (S3 does not say: true).
    fn delete_retrying(&self, store: &Arc<dyn ObjectStore>, path: &Path) -> object_store::Result<bool> {
        let mut attempt = 1;
        loop {
            match self.runtime.block_on(store.delete(path)) {
                Ok(()) => return Ok(true),
                Err(object_store::Error::NotFound { .. }) => return Ok(false),
                Err(e) if attempt == REMOVE_ATTEMPTS || !worth_retrying(&e) => return Err(e),
                Err(_) => std::thread::sleep(REMOVE_BACKOFF * 2u32.pow(attempt - 1)),
            }
            attempt += 1;
        }
    }

    fn abort(&self, key: &str, id: &str) -> io::Result<()> {
        let outcome = self.abort_upload(key, id);
        if outcome.is_ok() {
            self.journal.forget(&self.url, key, id);
        }
        outcome
    }

    fn abort_upload(&self, key: &str, id: &str) -> io::Result<()> {
        let path = self.path(key);
        if self.kind == "azure" {
            // Azure keeps uncommitted blocks for 7 days and has no call to drop them; committing
            // an empty block list discards them, and deleting the empty blob leaves nothing.
            self.counters.add(Kind::PutBlockList);
            self.run(self.parts.complete_multipart(&path, &id.to_string(), Vec::new()), "abort", key)?;
            self.counters.add(Kind::Delete);
            return self.run(self.store.delete(&path), "abort", key);
        }
        self.counters.add(Kind::AbortMultipart);
        self.run(self.parts.abort_multipart(&path, &id.to_string()), "abort upload of", key)
    }

    /// Aborts every upload of `key` but `id`. A create the store carried out but whose answer
    /// was lost (a reset, a timeout) is retried by object_store, and only the retry's upload is
    /// known here: the first stays open, billed for as long as it lives. The run holds the
    /// target's lock, so every upload of its own key is its own. Called only when a request
    /// failed during the create (any request of this target: a false alarm costs one LIST);
    /// best effort, as `hpcio clean` lists and aborts whatever this misses.
    fn abort_strays(&self, key: &str, id: &str) {
        let Ok(listed) = self.list_uploads(key) else { return };
        for (_, stray) in listed.into_iter().filter(|(k, other)| k == key && other != id) {
            self.counters.add(Kind::AbortMultipart);
            let _ = self.run(self.parts.abort_multipart(&self.path(key), &stray), "abort upload of", key);
        }
    }

    fn complete(&self, key: &str, id: &str, mut receipts: Vec<Receipt>, part_bytes: u64) -> io::Result<()> {
        receipts.sort_by_key(|(index, _)| *index);
        let blocks = receipts.len() as u64;
        let parts = receipts.into_iter().map(|(_, content_id)| PartId { content_id }).collect();
        self.count(Kind::CompleteMultipart, Kind::PutBlockList);
        let outcome = self.run(self.parts.complete_multipart(&self.path(key), &id.to_string(), parts), "complete", key);
        if let Err(e) = outcome {
            if !(self.kind == "azure" && e.to_string().contains("InvalidBlockList") && self.committed(key, blocks, part_bytes)) {
                return Err(e);
            }
        }
        self.journal.forget(&self.url, key, id);
        Ok(())
    }

    /// Whether an Azure block list whose commit was answered InvalidBlockList had in fact been
    /// committed: object_store sends `<Uncommitted>` block ids, so when a first try landed but
    /// its answer was lost (a reset, a timeout) and the client tried again, the blocks are
    /// committed already and the retry is refused. The blob is then there, as long as `blocks`
    /// parts of `part_bytes` (the last one shorter) make it. Only an earlier try of this
    /// commit can have made such a blob: the run holds the target's lock, and a commit that
    /// failed outright leaves the blocks uncommitted (the blob, if any, as it was; a stale one
    /// of the same size from an earlier --keep iteration is the one case this cannot tell).
    fn committed(&self, key: &str, blocks: u64, part_bytes: u64) -> bool {
        self.counters.add(Kind::Head);
        match self.runtime.block_on(self.store.head(&self.path(key))) {
            Ok(meta) => block_list_fits(meta.size, blocks, part_bytes),
            Err(_) => false,
        }
    }
}

/// Whether `size` bytes are what `blocks` blocks of `part_bytes` make, the last one shorter or
/// whole.
fn block_list_fits(size: u64, blocks: u64, part_bytes: u64) -> bool {
    blocks > 0 && part_bytes > 0 && size > (blocks - 1) * part_bytes && size <= blocks * part_bytes
}

/// Whether a failed request may succeed when sent again: not when the store answered that
/// the request is wrong (credentials, permissions, a missing bucket).
fn worth_retrying(e: &object_store::Error) -> bool {
    !matches!(classify(e).0, io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused)
}

/// One line a user can act on, from an object_store error.
fn describe(e: &object_store::Error, what: &str, location: &str) -> io::Error {
    let (kind, reason) = classify(e);
    io::Error::new(kind, format!("{what} {location}: {reason}"))
}

/// The text between the first `start` and the next `end` after it.
fn between(text: &str, start: &str, end: &str) -> Option<String> {
    let from = text.find(start)? + start.len();
    let to = text[from..].find(end)? + from;
    Some(text[from..to].trim().to_string())
}

/// XML character references as S3, Azure and GCS put them in error messages.
fn unescape(text: &str) -> String {
    text.replace("&#34;", "\"")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The store's own words from an error body: " (Code: Message)", on one line, bounded; empty
/// when the body has none. Only Code and Message: other fields may echo the access key id.
fn server_says(text: &str) -> String {
    let code = between(text, "<Code>", "</Code>").or_else(|| between(text, "\"code\":\"", "\""));
    let message = between(text, "<Message>", "</Message>").or_else(|| between(text, "\"message\":\"", "\""));
    let said = match (code, message) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (Some(c), None) => c,
        (None, Some(m)) => m,
        (None, None) => return String::new(),
    };
    let one_line = unescape(&said).split_whitespace().collect::<Vec<_>>().join(" ");
    format!(" ({})", one_line.chars().take(300).collect::<String>())
}

/// The kind of the HTTP failure under `e` (a timeout, a lost connection), if one is.
fn http_error_kind(e: &object_store::Error) -> Option<HttpErrorKind> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(http) = s.downcast_ref::<HttpError>() {
            return Some(http.kind());
        }
        source = s.source();
    }
    None
}

/// A request that got no answer, named by how: a timeout, or a connection the store (or the
/// network) closed or reset; None for other HTTP failures.
fn no_answer(kind: HttpErrorKind) -> Option<(io::ErrorKind, &'static str)> {
    match kind {
        HttpErrorKind::Timeout => Some((io::ErrorKind::TimedOut, "no answer within the request timeout")),
        HttpErrorKind::Request | HttpErrorKind::Interrupted => {
            Some((io::ErrorKind::ConnectionReset, "the connection was closed or reset before the answer"))
        }
        _ => None,
    }
}

fn classify(e: &object_store::Error) -> (io::ErrorKind, String) {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    let has = |needle: &str| text.contains(needle);
    // Match HTTP statuses as statuses: bare digits also occur in durations ("in 1.401s").
    let status = between(&text, "status code: ", " ").unwrap_or_default();
    let said = server_says(&text);
    // reqwest's "builder error" for an http:// URL: the client itself refused plain http (an
    // allow_http set to false), so no request left; named as the refusal it is.
    let (kind, reason) = if has("builder error") && has("http://") {
        (io::ErrorKind::ConnectionRefused, "the endpoint is http:// and allow_http is false: set allow_http=true or use https://".to_string())
    } else if has("error trying to connect") || has("Connection refused") || has("dns error") || has("tcp connect") {
        (io::ErrorKind::ConnectionRefused, "cannot connect to the endpoint".to_string())
    } else if has("NoSuchBucket") || has("ContainerNotFound") || has("bucket does not exist") {
        (io::ErrorKind::NotFound, "the bucket or container does not exist".to_string())
    } else if has("InvalidAccessKeyId") || has("SignatureDoesNotMatch") || has("AuthenticationFailed") || has("AuthorizationFailure") || has("XAdminUserNotFound") || status == "401" {
        // versitygw answers an unknown access key with 404 XAdminUserNotFound.
        (io::ErrorKind::PermissionDenied, format!("the credentials were rejected{said}"))
    } else if has("AccessDenied") || status == "403" || matches!(e, object_store::Error::PermissionDenied { .. }) {
        (io::ErrorKind::PermissionDenied, format!("access denied{said}"))
    } else if matches!(e, object_store::Error::NotFound { .. }) {
        (io::ErrorKind::NotFound, format!("not found{said}"))
    } else if let Some(status) = between(&text, "status code: ", ":") {
        (io::ErrorKind::Other, format!("the store refused the request (HTTP {status}){said}"))
    } else if let Some((kind, what)) = http_error_kind(e).and_then(no_answer) {
        // object_store's text repeats the request once per level of its error chain: the
        // request, its time and its retries once is what a user needs.
        let request = text.find("Error performing").map(|at| text[at..].split(" - ").next().unwrap_or(""));
        let request = request.map(|r| format!(" ({})", r.trim())).unwrap_or_default();
        (kind, format!("{what}{request}"))
    } else {
        let first = text.lines().next().unwrap_or("").chars().take(300).collect::<String>();
        (io::ErrorKind::Other, first)
    };
    (kind, reason)
}

impl Target for ObjectTarget {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn caps(&self) -> Caps {
        Caps { range_write: false, range_read: true, sync: false, direct_io: false, multipart: true }
    }

    fn limits(&self) -> Limits {
        match self.kind {
            // S3 and GCS's XML multipart API: parts of 5 MiB to 5 GiB (the last may be smaller),
            // at most 10,000 parts, objects up to 5 TiB.
            "s3" | "gcs" => Limits { min_part_bytes: 5 * MIB, max_part_bytes: 5 * GIB, max_parts: 10_000, max_object_bytes: 5 * TIB },
            // Azure block blobs: blocks up to 4000 MiB, at most 50,000 committed blocks.
            "azure" => Limits { min_part_bytes: 0, max_part_bytes: 4000 * MIB, max_parts: 50_000, max_object_bytes: 50_000 * 4000 * MIB },
            _ => Limits::default(),
        }
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn open(&self, key: &str, mode: Mode, hint: WriteHint) -> io::Result<Handle> {
        if mode == Mode::Read {
            return Ok(Handle::Get { key: key.to_string() });
        }
        if hint.writes <= 1 {
            return Ok(Handle::Put { key: key.to_string() });
        }
        let id = self.begin_shared(key)?;
        let upload = Upload { id, part_bytes: hint.part_bytes.max(1), receipts: Mutex::new(Vec::new()) };
        Ok(Handle::Multipart { key: key.to_string(), upload: Arc::new(upload), shared: false })
    }

    fn write_at(&self, handle: &Handle, offset: u64, data: &[u8]) -> io::Result<()> {
        self.write_bytes(handle, offset, Bytes::copy_from_slice(data))
    }

    fn takes_bodies(&self) -> bool {
        true
    }

    fn payload_signing(&self) -> Option<&'static str> {
        self.payload_signing
    }

    fn write_bytes(&self, handle: &Handle, offset: u64, data: Bytes) -> io::Result<()> {
        match handle {
            Handle::Put { key } => {
                self.counters.add(Kind::Put);
                let payload = PutPayload::from(data);
                self.run(self.store.put(&self.path(key), payload), "put", key).map(|_| ())
            }
            Handle::Multipart { key, upload, .. } => {
                let index = offset / upload.part_bytes;
                let index = u32::try_from(index).map_err(|_| io::Error::other("part index out of range"))?;
                self.count(Kind::UploadPart, Kind::PutBlock);
                let payload = PutPayload::from(data);
                let part = self.run(
                    self.parts.put_part(&self.path(key), &upload.id, index as usize, payload),
                    "upload part of",
                    key,
                )?;
                upload.receipts.lock().unwrap().push((index, part.content_id));
                Ok(())
            }
            _ => Err(io::Error::other("object not open for writing")),
        }
    }

    fn read_at(&self, handle: &Handle, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let end = buf.len();
        self.get(handle, offset, end as u64, &mut |at, piece| {
            let from = (at - offset) as usize;
            buf[from..end.min(from + piece.len())].copy_from_slice(piece);
        })
    }

    fn read_pieces(&self, handle: &Handle, offset: u64, len: u64, sink: &mut dyn FnMut(u64, &[u8])) -> Option<io::Result<()>> {
        Some(self.get(handle, offset, len, sink))
    }

    fn sync(&self, _handle: &Handle) -> io::Result<()> {
        Ok(()) // an object is durable once its PUT or completion returns
    }

    fn close(&self, handle: Handle) -> io::Result<()> {
        match handle {
            Handle::Multipart { key, upload, shared: false } => {
                let receipts = std::mem::take(&mut *upload.receipts.lock().unwrap());
                self.complete(&key, &upload.id, receipts, upload.part_bytes)
            }
            _ => Ok(()),
        }
    }

    fn abandon(&self, handle: Handle) {
        if let Handle::Multipart { key, upload, shared: false } = handle {
            let _ = self.abort(&key, &upload.id);
        }
    }

    fn remove(&self, key: &str) -> io::Result<bool> {
        self.counters.add(Kind::Delete);
        self.delete_retrying(&self.store, &self.path(key))
            .map_err(|e| describe(&e, "delete", &format!("{}/{}", self.base, self.path(key))))
    }

    fn remove_all(&self, keys: &[String]) -> io::Result<usize> {
        // S3 bulk-deletes 1,000 keys a request and Azure 256; GCS sends 10 DELETEs at once.
        // S3 does not say which keys existed, so there every key counts as removed. object_store
        // does not retry S3's bulk delete (a POST) after a lost connection, and a failed batch
        // does not say which keys it held: the whole removal is tried again, a DELETE of a key
        // already gone being harmless.
        let mut removed = 0;
        for attempt in 1..=REMOVE_ATTEMPTS {
            let paths: Vec<object_store::Result<Path>> = keys.iter().map(|k| Ok(self.path(k))).collect();
            let outcomes: Vec<_> =
                self.runtime.block_on(self.store.delete_stream(futures::stream::iter(paths).boxed()).collect());
            let mut failed = None;
            for outcome in outcomes {
                match outcome {
                    Ok(_) => removed += 1,
                    Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => failed = Some(e),
                }
            }
            match failed {
                None => break,
                Some(e) if attempt == REMOVE_ATTEMPTS || !worth_retrying(&e) => {
                    return Err(describe(&e, "delete", &self.base));
                }
                Some(_) => std::thread::sleep(REMOVE_BACKOFF * 2u32.pow(attempt - 1)),
            }
        }
        self.remove_late_probe();
        Ok(removed.min(keys.len()))
    }

    fn list(&self, start: &str) -> io::Result<Vec<String>> {
        self.counters.add(Kind::List);
        let prefix = (!self.prefix.is_empty()).then(|| Path::from(self.prefix.as_str()));
        let listed: Vec<_> = self.runtime.block_on(self.store.list(prefix.as_ref()).collect());
        let mut keys = Vec::new();
        for meta in listed {
            let meta = meta.map_err(|e| describe(&e, "list", &self.base))?;
            let full = meta.location.to_string();
            let name = full.strip_prefix(&self.prefix).unwrap_or(&full).trim_start_matches('/');
            if name.starts_with(start) && !name.contains('/') {
                keys.push(name.to_string());
            }
        }
        keys.sort();
        Ok(keys)
    }

    fn list_uploads(&self, start: &str) -> io::Result<Vec<(String, String)>> {
        let Some(uploads) = &self.uploads else { return Ok(Vec::new()) };
        self.counters.add(Kind::List);
        let prefix = if self.prefix.is_empty() { start.to_string() } else { format!("{}/{start}", self.prefix) };
        let listed = self.runtime.block_on(uploads.list(&prefix)).map_err(|text| {
            let reason = if text.contains("error trying to connect") || text.contains("tcp connect") {
                "cannot connect to the endpoint".to_string()
            } else {
                format!("the store refused to list uploads{}", server_says(&text))
            };
            io::Error::other(format!("list uploads in {}: {reason}", self.base))
        })?;
        let own = self.prefix.is_empty().then(String::new).unwrap_or(format!("{}/", self.prefix));
        Ok(listed
            .into_iter()
            .filter_map(|(key, id)| Some((key.strip_prefix(&own)?.to_string(), id)))
            .filter(|(key, _)| !key.contains('/'))
            .collect())
    }

    fn probe(&self, write: bool) -> io::Result<()> {
        let reason = |e: object_store::Error| {
            let (kind, reason) = classify(&e);
            io::Error::new(kind, reason)
        };
        let store = &self.probe_store;
        if !write {
            let prefix = Path::from(self.prefix.as_str());
            let first = self.runtime.block_on(async { store.list(Some(&prefix)).next().await });
            return first.map_or(Ok(()), |r| r.map(|_| ()).map_err(reason));
        }
        let path = self.probe_path();
        let failed_before = self.counters.failures_total();
        let put = self.runtime.block_on(store.put(&path, PutPayload::from_static(b"hpcio")));
        if self.counters.failures_total() != failed_before {
            PROBE_MAY_LAND_LATE.store(true, Ordering::Relaxed);
        }
        if let Err(e) = put {
            // The PUT may have landed though its answer was lost (a reset or a stall on the way
            // back): a failed probe must not leave its object behind either.
            let _ = self.delete_retrying(store, &path);
            return Err(reason(e));
        }
        self.delete_retrying(store, &path).map(|_| ()).map_err(reason)
    }

    fn warm(&self, connections: usize) -> usize {
        if self.kind == "memory" {
            return 0;
        }
        // Concurrent HEADs of a name no run writes (a 404 is an answer too): each opens a
        // connection of its own, which the pool keeps for the phases where the server keeps
        // it alive, and the first pays the client's one-time set-up (35 ms of TLS set-up on
        // this machine, against 5 ms for the next).
        let path = self.path(".hpcio-warm");
        let heads = (0..connections.max(1)).map(|_| self.store.head(&path));
        let answers = self.runtime.block_on(futures::future::join_all(heads));
        answers.iter().filter(|a| matches!(a, Ok(_) | Err(object_store::Error::NotFound { .. }))).count()
    }

    fn begin_shared(&self, key: &str) -> io::Result<String> {
        let id = if self.kind == "azure" {
            // Azure has no upload to create: blocks are staged against the blob's name.
            String::from("blocks")
        } else {
            self.counters.add(Kind::CreateMultipart);
            let failed_before = self.counters.failures_total();
            let id = self.run(self.parts.create_multipart(&self.path(key)), "start upload of", key)?;
            if self.counters.failures_total() != failed_before {
                self.abort_strays(key, &id);
            }
            id
        };
        if self.kind != "memory" {
            self.journal.record(&self.url, key, &id);
        }
        Ok(id)
    }

    fn finish_shared(&self, key: &str, id: &str, receipts: Vec<Receipt>, part_bytes: u64) -> io::Result<()> {
        self.complete(key, id, receipts, part_bytes)
    }

    fn abort_shared(&self, key: &str, id: &str) -> io::Result<()> {
        self.abort(key, id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signing(options: &[(&str, &str)]) -> &'static str {
        let options = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        s3_builder("b", options).unwrap().1
    }

    #[test]
    fn payloads_go_unsigned_over_tls_unless_the_user_chooses() {
        assert_eq!(signing(&[]), "unsigned payload"); // AWS's own endpoints are https
        assert_eq!(signing(&[("aws_endpoint", "https://s3.example.org")]), "unsigned payload");
        assert_eq!(signing(&[("aws_endpoint", "http://127.0.0.1:9000")]), "payload signed (SHA-256)");
        let http_unsigned = [("aws_endpoint", "http://127.0.0.1:9000"), ("unsigned_payload", "true")];
        assert_eq!(signing(&http_unsigned), "unsigned payload");
        let tls_signed = [("aws_endpoint", "https://s3.example.org"), ("aws_unsigned_payload", "false")];
        assert_eq!(signing(&tls_signed), "payload signed (SHA-256)");
    }

    #[test]
    fn a_committed_block_list_is_recognised_by_its_size() {
        let mib = 1 << 20;
        assert!(block_list_fits(20 * mib, 4, 5 * mib)); // four whole blocks
        assert!(block_list_fits(16 * mib, 4, 5 * mib)); // the last one shorter
        assert!(!block_list_fits(15 * mib, 4, 5 * mib)); // three blocks' worth: not this list
        assert!(!block_list_fits(21 * mib, 4, 5 * mib));
        assert!(!block_list_fits(0, 0, 5 * mib));
        assert!(!block_list_fits(5 * mib, 1, 0)); // part size unknown: never assumed
    }

    #[test]
    fn a_request_without_an_answer_is_named_so_once() {
        let timed_out = io::Error::new(io::ErrorKind::TimedOut, "operation timed out");
        let e = object_store::Error::Generic { store: "S3", source: Box::new(HttpError::new(HttpErrorKind::Timeout, timed_out)) };
        let (kind, reason) = classify(&e);
        assert_eq!(kind, io::ErrorKind::TimedOut);
        assert_eq!(reason, "no answer within the request timeout");
        assert!(worth_retrying(&e));
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "connection reset");
        let e = object_store::Error::Generic { store: "S3", source: Box::new(HttpError::new(HttpErrorKind::Interrupted, reset)) };
        assert_eq!(classify(&e), (io::ErrorKind::ConnectionReset, "the connection was closed or reset before the answer".to_string()));
        let odd = io::Error::other("invalid body");
        let e = object_store::Error::Generic { store: "S3", source: Box::new(HttpError::new(HttpErrorKind::Decode, odd)) };
        assert_eq!(classify(&e).0, io::ErrorKind::Other);
    }
}
