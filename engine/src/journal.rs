//! The upload journal: one small local file per multipart upload in progress (target URL,
//! key, upload id, job), removed when the upload completes or aborts. A rank that is killed
//! cannot abort its uploads; whoever outlives it (the launching hpcio, or `hpcio clean`)
//! aborts what the journal still lists. Credentials are never written.

use std::path::PathBuf;

pub struct Journal {
    dir: Option<PathBuf>,
    job: String,
}

fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl Journal {
    /// The journal in `dir` (None: uploads are not journaled), entries tagged `job`.
    pub fn new(dir: Option<PathBuf>, job: String) -> Self {
        Self { dir, job }
    }

    fn entry(&self, url: &str, key: &str, id: &str) -> Option<PathBuf> {
        let name = crate::payload::key_hash(&format!("{url}\n{key}\n{id}"));
        self.dir.as_ref().map(|d| d.join(format!("upload-{name:016x}.json")))
    }

    pub fn record(&self, url: &str, key: &str, id: &str) {
        let Some(path) = self.entry(url, key, id) else { return };
        let text = format!(
            "{{\"url\": {}, \"key\": {}, \"id\": {}, \"job\": {}, \"pid\": {}}}\n",
            json_string(url),
            json_string(key),
            json_string(id),
            json_string(&self.job),
            std::process::id()
        );
        // Best effort: a journal that cannot be written must not fail the upload itself.
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(path, text);
    }

    pub fn forget(&self, url: &str, key: &str, id: &str) {
        if let Some(path) = self.entry(url, key, id) {
            let _ = std::fs::remove_file(path);
        }
    }
}
