//! The record of received requests, for tests to inspect (bodies, question order, retry
//! headers, call counts). Credentials are redacted before anything is stored.

use std::collections::VecDeque;
use std::sync::Mutex;

use axum::http::HeaderMap;
use serde_json::Value;

/// The journal keeps at most this many most recent requests…
pub(crate) const CAPACITY: usize = 10_000;
/// …and at most this many body bytes (but always the newest request), so a long benchmark
/// cannot exhaust memory.
pub(crate) const BODY_BUDGET: usize = 64 * 1024 * 1024;

/// One request as the fake received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalEntry {
    /// The HTTP method, for example `POST`.
    pub method: String,
    /// The request path, without the query string, for example `/v1/systemone`.
    pub path: String,
    /// Every header as (lowercase name, value), in arrival order. An `Authorization` value is
    /// replaced by `Bearer <redacted>` (or `<redacted>` for other schemes), as is `x-api-key`.
    pub headers: Vec<(String, String)>,
    /// The body bytes exactly as received.
    pub body: Vec<u8>,
    /// The `X-TypeSafe-Retry-Count` header, if sent.
    pub retry_count: Option<String>,
}

impl JournalEntry {
    pub(crate) fn new(method: &str, path: &str, headers: &HeaderMap, body: Vec<u8>) -> Self {
        let headers: Vec<(String, String)> = headers
            .iter()
            .map(|(name, value)| {
                let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), redact(name.as_str(), text))
            })
            .collect();
        let retry_count = headers
            .iter()
            .find(|(name, _)| name == "x-typesafe-retry-count")
            .map(|(_, value)| value.clone());
        Self {
            method: method.to_owned(),
            path: path.to_owned(),
            headers,
            body,
            retry_count,
        }
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The body parsed as JSON, if it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }
}

fn redact(name: &str, value: String) -> String {
    match name {
        "authorization"
            if value
                .get(..7)
                .is_some_and(|s| s.eq_ignore_ascii_case("bearer ")) =>
        {
            "Bearer <redacted>".to_owned()
        }
        "authorization" | "x-api-key" | "proxy-authorization" => "<redacted>".to_owned(),
        _ => value,
    }
}

/// A bounded, thread-safe list of entries. The lock is only held to push or copy, never across
/// an await.
#[derive(Debug, Default)]
pub(crate) struct Journal {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    entries: VecDeque<JournalEntry>,
    body_bytes: usize,
}

impl Journal {
    pub(crate) fn push(&self, entry: JournalEntry) {
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.body_bytes += entry.body.len();
        kept.entries.push_back(entry);
        while kept.entries.len() > 1
            && (kept.entries.len() > CAPACITY || kept.body_bytes > BODY_BUDGET)
        {
            if let Some(oldest) = kept.entries.pop_front() {
                kept.body_bytes -= oldest.body.len();
            }
        }
    }

    pub(crate) fn entries(&self) -> Vec<JournalEntry> {
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.entries.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn credentials_are_redacted() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            HeaderValue::from_static("Bearer apikey_secret"),
        );
        headers.insert("x-api-key", HeaderValue::from_static("apikey_secret"));
        headers.insert("x-typesafe-retry-count", HeaderValue::from_static("2"));
        let entry = JournalEntry::new("POST", "/v1/systemone", &headers, b"{}".to_vec());
        assert_eq!(entry.header("Authorization"), Some("Bearer <redacted>"));
        assert_eq!(entry.header("x-api-key"), Some("<redacted>"));
        assert_eq!(entry.retry_count.as_deref(), Some("2"));
        assert!(!format!("{entry:?}").contains("secret"));

        let mut basic = HeaderMap::new();
        basic.insert("authorization", HeaderValue::from_static("Basic c2VjcmV0"));
        let entry = JournalEntry::new("GET", "/v1/models", &basic, Vec::new());
        assert_eq!(entry.header("authorization"), Some("<redacted>"));
    }

    #[test]
    fn the_journal_keeps_the_most_recent_entries() {
        let journal = Journal::default();
        for i in 0..CAPACITY + 3 {
            journal.push(JournalEntry::new(
                "GET",
                &format!("/{i}"),
                &HeaderMap::new(),
                Vec::new(),
            ));
        }
        let entries = journal.entries();
        assert_eq!(entries.len(), CAPACITY);
        assert_eq!(entries[0].path, "/3");
    }

    #[test]
    fn the_journal_keeps_a_bounded_number_of_body_bytes() {
        let journal = Journal::default();
        let chunk = BODY_BUDGET / 4 + 1;
        for i in 0..6 {
            let path = format!("/{i}");
            journal.push(JournalEntry::new(
                "POST",
                &path,
                &HeaderMap::new(),
                vec![b'x'; chunk],
            ));
        }
        let paths: Vec<String> = journal.entries().into_iter().map(|e| e.path).collect();
        assert_eq!(paths, ["/3", "/4", "/5"]);
        let huge = vec![b'x'; BODY_BUDGET + 1];
        journal.push(JournalEntry::new("POST", "/huge", &HeaderMap::new(), huge));
        assert_eq!(
            journal.entries().len(),
            1,
            "the newest entry is always kept"
        );
    }
}
