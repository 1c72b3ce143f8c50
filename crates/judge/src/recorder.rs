//! Recording exchanges to a `.jevl` file while reviewing (`--record`).

use std::{
    fs::{File, OpenOptions},
    io::Write,
    path::Path,
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
};

use jevjudge_wire::{
    Request, Response,
    record::{self, Record},
};
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::{Backend, BackendFuture, BackendKind};

/// Appends records to a file, one line per exchange, each line written whole and flushed, so
/// concurrent reviews never interleave and an interruption loses nothing written.
#[derive(Debug)]
pub struct RecordWriter {
    file: Mutex<File>,
    written: AtomicU64,
    failed: AtomicU64,
}

impl RecordWriter {
    /// Opens `path` for appending, creating it readable and writable by its owner only (0600
    /// on Unix): records hold the reviewed state's text.
    pub fn append(path: &Path) -> std::io::Result<RecordWriter> {
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(path)?;
        Ok(RecordWriter {
            file: Mutex::new(file),
            written: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        })
    }

    /// Appends one record.
    pub fn write(&self, record: &Record) -> std::io::Result<()> {
        let line = record
            .to_line()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut file = self
            .file
            .lock()
            .map_err(|_| std::io::Error::other("record file lock poisoned"))?;
        file.write_all(line.as_bytes())?;
        file.flush()
    }

    /// Records written so far.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Exchanges that could not be written (disk full, …).
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// Records one successful exchange; a response without a model is not written (a record
    /// requires the answering model). Returns whether a record was written.
    pub fn record_exchange(
        &self,
        request: &Request,
        requested_model: &str,
        response: &Response,
    ) -> bool {
        self.record(request, requested_model, response, false)
    }

    /// Records one successful exchange answered by jevjudge's fake server: like
    /// [`RecordWriter::record_exchange`], with `meta.fake = true` so its replay says `fake`.
    pub fn record_fake_exchange(
        &self,
        request: &Request,
        requested_model: &str,
        response: &Response,
    ) -> bool {
        self.record(request, requested_model, response, true)
    }

    fn record(
        &self,
        request: &Request,
        requested_model: &str,
        response: &Response,
        fake: bool,
    ) -> bool {
        let Some(model) = response.model.as_deref() else {
            return false;
        };
        let questions = match request.questions.to_json() {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let answers = response
            .raw_answers
            .as_ref()
            .map(jevjudge_wire::RawAnswers::to_map)
            .unwrap_or_default();
        let usage = response.usage.map(jevjudge_wire::Usage::to_json);
        let outcome = Record::new(
            model,
            request.model.as_deref().unwrap_or(requested_model),
            request.state.clone(),
            questions,
            answers,
            usage,
            record::now_rfc3339(),
        )
        .map(|mut record| {
            if fake {
                record.mark_fake();
            }
            record
        })
        .map_err(|e| std::io::Error::other(e.to_string()))
        .and_then(|record| self.write(&record));
        match outcome {
            Ok(()) => {
                self.written.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(error) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(error = %error, "an exchange could not be recorded");
                false
            }
        }
    }
}

/// A backend that records every successful exchange of another backend.
#[derive(Debug)]
pub struct Recording<B> {
    inner: B,
    writer: std::sync::Arc<RecordWriter>,
    requested_model: String,
}

impl<B: Backend> Recording<B> {
    /// Records `inner`'s successful exchanges with `writer`; `requested_model` is the model
    /// asked for when a request names none (stored as `meta.requested_model`).
    pub fn new(
        inner: B,
        writer: std::sync::Arc<RecordWriter>,
        requested_model: impl Into<String>,
    ) -> Recording<B> {
        Recording {
            inner,
            writer,
            requested_model: requested_model.into(),
        }
    }
}

impl<B: Backend> Backend for Recording<B> {
    fn answer<'a>(&'a self, request: &'a Request, deadline: Instant) -> BackendFuture<'a> {
        Box::pin(async move {
            let response = self.inner.answer(request, deadline).await?;
            // Only successful exchanges: answers that fit the questions. The inner backend's
            // kind is read after its answer: a live backend learns from the answer itself that
            // the server is jevjudge's fake.
            if response.check(&request.questions).is_ok() {
                if self.inner.kind() == BackendKind::Fake {
                    self.writer
                        .record_fake_exchange(request, &self.requested_model, &response);
                } else {
                    self.writer
                        .record_exchange(request, &self.requested_model, &response);
                }
            }
            Ok(response)
        })
    }

    fn kind(&self) -> BackendKind {
        self.inner.kind()
    }
}
