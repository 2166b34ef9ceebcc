//! S3's ListMultipartUploads, for `hpcio clean`: object_store 0.14 can abort an upload by id
//! but has no call to list the ones in progress, and an upload a dead run never completed or
//! aborted is billed for its parts until it goes. One GET `?uploads`, signed with
//! object_store's own SigV4 authorizer and the store's own credentials.

use super::http::CountingConnector;
use crate::requests::Counters;
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey, AwsAuthorizer};
use object_store::client::{HttpClient, HttpConnector, HttpRequest};
use object_store::{ClientConfigKey, ClientOptions};
use std::sync::Arc;

/// At most this many pages of 1,000 uploads are listed (a bound, not a limit seen in practice).
const MAX_PAGES: usize = 1000;

#[derive(Debug)]
pub struct S3Uploads {
    store: Arc<AmazonS3>,
    client: HttpClient,
    /// https://s3.REGION.amazonaws.com/BUCKET, or the endpoint's equivalent.
    bucket_url: String,
    region: String,
}

/// Percent-encoding of a query value (RFC 3986 unreserved characters stay).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Every `<tag>...</tag>` in `xml`, in order.
fn all<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut found = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let from = start + open.len();
        let Some(len) = rest[from..].find(&close) else { break };
        found.push(&rest[from..from + len]);
        rest = &rest[from + len + close.len()..];
    }
    found
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

/// (key, upload id): an upload in progress, or where the next page of them starts.
type KeyAndId = (String, String);

/// Each upload in one ListMultipartUploads answer, and the markers of the next page when the
/// answer is truncated.
fn parse(xml: &str) -> (Vec<KeyAndId>, Option<KeyAndId>) {
    let uploads = all(xml, "Upload")
        .into_iter()
        .filter_map(|u| Some((unescape(all(u, "Key").first()?), unescape(all(u, "UploadId").first()?))))
        .collect();
    let truncated = all(xml, "IsTruncated").first().is_some_and(|t| t.trim() == "true");
    let next = truncated
        .then(|| Some((unescape(all(xml, "NextKeyMarker").first()?), unescape(all(xml, "NextUploadIdMarker").first()?))))
        .flatten();
    (uploads, next)
}

impl S3Uploads {
    pub fn new(b: &AmazonS3Builder, store: Arc<AmazonS3>, bucket: &str, counters: Arc<Counters>) -> Result<Self, String> {
        let region = b.get_config_value(&AmazonS3ConfigKey::Region).unwrap_or_else(|| "us-east-1".to_string());
        let virtual_hosted = b.get_config_value(&AmazonS3ConfigKey::VirtualHostedStyleRequest).as_deref() == Some("true");
        let bucket_url = match b.get_config_value(&AmazonS3ConfigKey::Endpoint) {
            // A virtual-hosted endpoint names the bucket already (object_store's convention).
            Some(endpoint) if virtual_hosted => endpoint.trim_end_matches('/').to_string(),
            Some(endpoint) => format!("{}/{bucket}", endpoint.trim_end_matches('/')),
            None if virtual_hosted => format!("https://{bucket}.s3.{region}.amazonaws.com"),
            None => format!("https://s3.{region}.amazonaws.com/{bucket}"),
        };
        let allow_http = b.get_config_value(&AmazonS3ConfigKey::Client(ClientConfigKey::AllowHttp)).as_deref() == Some("true");
        let options = ClientOptions::new().with_allow_http(allow_http);
        let client = CountingConnector { counters }.connect(&options).map_err(|e| e.to_string())?;
        Ok(Self { store, client, bucket_url, region })
    }

    /// Uploads in progress whose key starts with `prefix`: (key, upload id).
    pub async fn list(&self, prefix: &str) -> Result<Vec<KeyAndId>, String> {
        let credential = self.store.credentials().get_credential().await.map_err(|e| e.to_string())?;
        let mut uploads = Vec::new();
        let mut marker: Option<KeyAndId> = None;
        for _ in 0..MAX_PAGES {
            let mut url = format!("{}?prefix={}&uploads=", self.bucket_url, encode(prefix));
            if let Some((key, id)) = &marker {
                url.push_str(&format!("&key-marker={}&upload-id-marker={}", encode(key), encode(id)));
            }
            let mut request = HttpRequest::new(Vec::new().into());
            *request.uri_mut() = url.parse().map_err(|e| format!("cannot list uploads at {url}: {e}"))?;
            AwsAuthorizer::new(&credential, "s3", &self.region)
                .try_authorize(&mut request, None)
                .map_err(|e| e.to_string())?;
            let response = self.client.execute(request).await.map_err(|e| e.to_string())?;
            let status = response.status();
            let bytes = response.into_body().bytes().await.map_err(|e| e.to_string())?;
            let body = String::from_utf8_lossy(&bytes);
            if !status.is_success() {
                return Err(format!("Server returned non-2xx status code: {status}: {body}"));
            }
            let (page, next) = parse(&body);
            uploads.extend(page);
            match next {
                Some(next) => marker = Some(next),
                None => return Ok(uploads),
            }
        }
        Ok(uploads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_uploads_and_the_next_page() {
        let xml = "<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>\
            <NextKeyMarker>p/b</NextKeyMarker><NextUploadIdMarker>2</NextUploadIdMarker>\
            <Upload><Key>p/a&amp;b</Key><UploadId>1</UploadId></Upload>\
            <Upload><Key>p/b</Key><UploadId>2</UploadId></Upload></ListMultipartUploadsResult>";
        let (uploads, next) = parse(xml);
        assert_eq!(uploads, vec![("p/a&b".into(), "1".into()), ("p/b".into(), "2".into())]);
        assert_eq!(next, Some(("p/b".into(), "2".into())));
        assert_eq!(encode("run 1/hpcio-"), "run%201%2Fhpcio-");
    }
}
