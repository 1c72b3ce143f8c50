//! A scripted in-memory transport for paused-clock tests, and request fixtures.

use std::{
    collections::VecDeque,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use jevjudge_client::{
    ApiKey, AttemptEvent, Backoff, CallOptions, Client, ClientBuilder, Exchange, HttpRequest,
    HttpResponse, Transport, TransportError, TransportErrorKind,
};
use jevjudge_wire::{ChoiceOption, ChoiceQuestion, Content, NoulQuestion, Questions, Request};
use serde_json::json;
use tokio::time::Instant;

/// The key every scripted client uses; no rendering may contain it.
pub const KEY: &str = "apikey_SENTINEL_7f3a";

/// What the transport does for one attempt.
#[derive(Clone)]
pub enum Step {
    /// Answer at once.
    Respond(HttpResponse),
    /// Answer after a delay.
    RespondAfter(Duration, HttpResponse),
    /// Fail below HTTP.
    Fail(TransportErrorKind),
    /// Never answer.
    Stall,
}

/// One request the transport saw, and when (relative to the script's creation).
#[derive(Clone, Debug)]
pub struct Sent {
    pub at: Duration,
    pub request: HttpRequest,
}

/// A transport that plays steps in order, repeating the last one when the script runs out.
pub struct Scripted {
    start: Instant,
    steps: Mutex<VecDeque<Step>>,
    last: Mutex<Option<Step>>,
    sent: Mutex<Vec<Sent>>,
    finished: AtomicUsize,
    dropped: AtomicUsize,
}

impl Scripted {
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Arc<Scripted> {
        Arc::new(Scripted {
            start: Instant::now(),
            steps: Mutex::new(steps.into_iter().collect()),
            last: Mutex::new(None),
            sent: Mutex::new(Vec::new()),
            finished: AtomicUsize::new(0),
            dropped: AtomicUsize::new(0),
        })
    }

    pub fn always(step: Step) -> Arc<Scripted> {
        Scripted::new([step])
    }

    pub fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }

    pub fn attempt_times(&self) -> Vec<Duration> {
        self.sent().iter().map(|s| s.at).collect()
    }

    /// Requests whose future was dropped before it finished (cancelled).
    pub fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }

    pub fn finished(&self) -> usize {
        self.finished.load(Ordering::SeqCst)
    }

    fn next_step(&self) -> Step {
        let mut steps = self.steps.lock().unwrap();
        let mut last = self.last.lock().unwrap();
        match steps.pop_front() {
            Some(step) => {
                *last = Some(step.clone());
                step
            }
            None => last.clone().unwrap_or(Step::Stall),
        }
    }
}

/// Counts the send future as dropped unless it finished.
struct DropProbe<'a> {
    script: &'a Scripted,
    done: bool,
}

impl Drop for DropProbe<'_> {
    fn drop(&mut self) {
        let counter = if self.done {
            &self.script.finished
        } else {
            &self.script.dropped
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

impl Transport for Scripted {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        self.sent.lock().unwrap().push(Sent {
            at: self.start.elapsed(),
            request,
        });
        let step = self.next_step();
        let mut probe = DropProbe {
            script: self,
            done: false,
        };
        let result = match step {
            Step::Respond(response) => Ok(response),
            Step::RespondAfter(delay, response) => {
                tokio::time::sleep(delay).await;
                Ok(response)
            }
            Step::Fail(kind) => Err(TransportError::new(kind)),
            Step::Stall => std::future::pending().await,
        };
        probe.done = true;
        result
    }
}

/// A JSON response with a request id.
pub fn json(status: u16, body: &str) -> HttpResponse {
    HttpResponse::new(status, body)
        .with_header("content-type", "application/json")
        .with_header("x-typesafe-request-id", format!("req_{status}"))
}

pub fn respond(status: u16, body: &str) -> Step {
    Step::Respond(json(status, body))
}

/// The 200 answering [`noul_request`].
pub const NOUL_OK: &str = r#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":0.05}},"usage":{"input_tokens":312,"output_tokens":20}}"#;

pub fn ok() -> Step {
    respond(200, NOUL_OK)
}

/// A one-question request with a sentinel in its state.
pub fn noul_request() -> Request {
    let questions: Questions = [(
        "supported",
        NoulQuestion::new("Is `assistant_answer` supported by `supporting_context`?"),
    )]
    .into_iter()
    .collect();
    Request::new(
        json!({"assistant_answer": "The refund is complete.", "supporting_context": ["RAW-EVIDENCE-91c2"]}),
        questions,
    )
}

/// Three questions of all kinds, in a deliberate non-alphabetical order.
pub fn mixed_request() -> Request {
    let choice = ChoiceQuestion {
        instructions: Content::text("Which queue should handle this `ticket`?"),
        options: vec![
            ChoiceOption::new("technical").described("Product errors"),
            ChoiceOption::new("billing"),
        ],
    };
    let score = jevjudge_wire::ScoreQuestion::new(
        "How frustrated is the customer?",
        ["Calm", "Frustrated", "Very angry"],
    );
    let questions: Questions = [
        (
            "zeta",
            jevjudge_wire::Question::from(NoulQuestion::new("Is this urgent?")),
        ),
        ("queue", choice.into()),
        ("alpha", score.into()),
    ]
    .into_iter()
    .collect();
    Request::new(
        json!({"ticket": {"subject": "Duplicate charge", "text": "RAW-Q-7f3a I was charged twice."}}),
        questions,
    )
}

/// A builder over `transport` with the key, a seeded SDK backoff and no environment.
pub fn builder<T: Transport>(transport: T) -> ClientBuilder<T> {
    Client::builder()
        .env_lookup(|_| None)
        .api_key(ApiKey::new(KEY).unwrap())
        .base_url("https://api.typesafe.ai")
        .backoff(Backoff::sdk().with_seed(7))
        .transport(transport)
}

/// Calls `client` once with the `limit` budget; the error it must end in, and how long it took
/// (on tokio's clock: paused or real).
pub async fn fails_within<T: Transport>(
    client: &Client<T>,
    limit: Duration,
) -> (jevjudge_client::Error, Duration) {
    let start = Instant::now();
    let error = client
        .system_one(&noul_request(), budget(limit))
        .await
        .unwrap_err();
    (error, start.elapsed())
}

/// Call options with a deadline `duration` from now.
pub fn budget(duration: Duration) -> CallOptions {
    CallOptions::with_deadline(Instant::now() + duration)
}

/// One call of [`noul_request`] with the default options.
pub async fn call<T: Transport>(client: &Client<T>) -> Result<Exchange, jevjudge_client::Error> {
    client
        .system_one(&noul_request(), CallOptions::default())
        .await
}

/// Collects the attempt events of a client.
#[derive(Default, Clone)]
pub struct Events(Arc<Mutex<Vec<AttemptEvent>>>);

impl Events {
    pub fn hook(&self) -> jevjudge_client::AttemptHook {
        let events = Arc::clone(&self.0);
        Arc::new(move |event: &AttemptEvent| events.lock().unwrap().push(event.clone()))
    }

    pub fn all(&self) -> Vec<AttemptEvent> {
        self.0.lock().unwrap().clone()
    }
}

pub fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

pub fn secs(seconds: u64) -> Duration {
    Duration::from_secs(seconds)
}
