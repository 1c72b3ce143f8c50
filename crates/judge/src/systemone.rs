//! The live backend: the System One HTTP client, with the review's budget as its deadline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use jevjudge_client::{CallOptions, Client, Transport};
use jevjudge_wire::Request;
use tokio::time::Instant;

use crate::{Backend, BackendError, BackendFuture, BackendKind};

/// Answers reviews through [`jevjudge_client::Client`]. The review's deadline is passed down
/// as the client's deadline, so the budget covers every attempt, backoff and Retry-After wait
/// (D11), and a retry that cannot finish its wait before the deadline is not started.
///
/// Once the server has marked an answer as a fake's (`x-jevjudge-fake: 1`, sent by
/// `jevjudge fake-server`), [`Backend::kind`] is [`BackendKind::Fake`] for this backend and
/// its clones, so reports and records never show the fake's answers as a model's.
#[derive(Debug, Clone)]
pub struct SystemOneBackend<T: Transport = jevjudge_client::HttpTransport> {
    client: Client<T>,
    fake: Arc<AtomicBool>,
}

impl<T: Transport> SystemOneBackend<T> {
    /// Wraps a client.
    pub fn new(client: Client<T>) -> SystemOneBackend<T> {
        SystemOneBackend {
            client,
            fake: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The client.
    pub fn client(&self) -> &Client<T> {
        &self.client
    }
}

/// Maps a client error to what a verdict may show: its detail code (TIMEOUT, INVALID_RESPONSE
/// or BACKEND by rule 28's table), plus the model and usage of a refused 200 (D3).
pub fn backend_error(error: &jevjudge_client::Error) -> BackendError {
    BackendError::new(error.detail()).with_response(error.model().map(str::to_owned), error.usage())
}

impl<T: Transport> Backend for SystemOneBackend<T> {
    fn answer<'a>(&'a self, request: &'a Request, deadline: Instant) -> BackendFuture<'a> {
        Box::pin(async move {
            self.client
                .system_one(request, CallOptions::with_deadline(deadline))
                .await
                .map(|exchange| {
                    if exchange.fake {
                        self.fake.store(true, Ordering::Relaxed);
                    }
                    exchange.response
                })
                .map_err(|error| backend_error(&error))
        })
    }

    fn kind(&self) -> BackendKind {
        if self.fake.load(Ordering::Relaxed) {
            BackendKind::Fake
        } else {
            BackendKind::Systemone
        }
    }
}
