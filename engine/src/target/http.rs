//! An HTTP connector that counts what the store did to us: throttling (429, 503) and other
//! retryable failures (5xx, connection errors, timeouts). object_store retries these itself;
//! counting them here lets each phase say whether the store limited the run.

use async_trait::async_trait;
use http_body_util::BodyExt;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpResponseBody, HttpService,
    ReqwestConnector,
};
use object_store::ClientOptions;
use crate::first_byte::Answered;
use crate::requests::{self, Counters};
use object_store::client::HttpErrorKind;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug)]
pub struct CountingConnector {
    pub counters: Arc<Counters>,
}

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(CountingService { inner, counters: self.counters.clone() }))
    }
}

#[derive(Debug)]
struct CountingService {
    inner: HttpClient,
    counters: Arc<Counters>,
}

#[async_trait]
impl HttpService for CountingService {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let answered = answered_of(&req);
        let sent = Instant::now();
        let response = self.inner.execute(req).await.map(|r| self.counting_body(r));
        // The response future resolves once the status line and headers are in: for a GET,
        // before its body; for a PUT, once the store has taken the whole body.
        if let (Some(answered), Ok(_)) = (answered, &response) {
            let waited = u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX);
            self.counters.first_bytes.record(answered, waited);
        }
        match &response {
            Ok(r) => {
                if let Some(cause) = requests::failure_of_status(r.status().as_u16()) {
                    self.counters.failed(cause);
                }
            }
            Err(e) => self.counters.failed(failure_of_error(e.kind())),
        }
        match &response {
            Ok(r) if matches!(r.status().as_u16(), 429 | 503) => {
                self.counters.throttled.fetch_add(1, Ordering::Relaxed);
            }
            Ok(r) if r.status().is_server_error() => {
                self.counters.retried.fetch_add(1, Ordering::Relaxed);
            }
            Ok(_) => {}
            Err(_) => {
                self.counters.retried.fetch_add(1, Ordering::Relaxed);
            }
        }
        response
    }
}

impl CountingService {
    /// The response with its body watched: object_store resumes a GET whose body was cut
    /// mid-way (a reset, a stall) with a GET of the rest, inside its retry limits, and that
    /// failure never reaches `call` as an error. Each is counted here, by cause, as retried.
    fn counting_body(&self, response: HttpResponse) -> HttpResponse {
        let counters = self.counters.clone();
        response.map(|body| {
            HttpResponseBody::new(body.map_err(move |e| {
                counters.failed(failure_of_error(e.kind()));
                counters.retried.fetch_add(1, Ordering::Relaxed);
                e
            }))
        })
    }
}

/// The FAILURES slot of a request that got no answer (or whose answer's body broke off). hyper reports a connection the store
/// closed before answering as Request (an incomplete message) and a reset one as Interrupted:
/// both are the store dropping the connection.
fn failure_of_error(kind: HttpErrorKind) -> usize {
    match kind {
        HttpErrorKind::Timeout => requests::TIMEOUT,
        HttpErrorKind::Connect => requests::CONNECT,
        HttpErrorKind::Request | HttpErrorKind::Interrupted => requests::CONNECTION_RESET,
        _ => requests::OTHER_ERROR,
    }
}

/// Whether a request moves an object's bytes, and which way: a GET of an object (a listing is
/// a GET of the bucket with a list query: S3 `list-type`, Azure `comp=list`, GCS `prefix`), or
/// a PUT of an object, part or block (not Azure's block list, which commits and carries none).
fn answered_of(req: &HttpRequest) -> Option<Answered> {
    let query = req.uri().query().unwrap_or("");
    match req.method().as_str() {
        "GET" if !(query.contains("list") || query.contains("prefix=")) => Some(Answered::Get),
        "PUT" if !query.contains("comp=blocklist") => Some(Answered::Put),
        _ => None,
    }
}
