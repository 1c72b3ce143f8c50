//! The client: one System One call, with retries, backoff, server waits and a deadline
//! (systemone-wire.md §3, §8–§10).
//!
//! A call is a loop of attempts. Each attempt runs under the earlier of its own timeout and the
//! call's deadline; a failure is sorted by [`crate::retry`] into final or retryable, and a
//! retry waits for the server's requested time or the backoff, provided the wait ends by the
//! deadline. Everything runs on the caller's task with tokio timers: dropping the call's future
//! drops the in-flight request or the sleep, and nothing outlives it.

use std::{borrow::Cow, fmt, sync::Arc, time::Duration, time::SystemTime};

use bytes::Bytes;

use jevjudge_wire::{ModelList, Request, Response, Usage};
use reqwest::header::HeaderName;
use serde_json::Value;
use tokio::time::Instant;

use crate::{
    AttemptEvent, AttemptOutcome, Error, ErrorKind, HttpRequest, HttpResponse, HttpTransport,
    Method, Transport,
    backoff::Jitter,
    deadline::Deadline,
    error::ResponseFacts,
    limit::estimate_tokens,
    message::ErrorBody,
    retry::{Decision, is_retryable_status},
    retry_after::server_wait,
    settings::Settings,
};

/// The `User-Agent` sent with every request.
pub const USER_AGENT: &str = concat!("jevjudge/", env!("CARGO_PKG_VERSION"));
/// The request header naming the retry (1, 2, …), absent on the first attempt.
pub const RETRY_COUNT_HEADER: &str = "X-TypeSafe-Retry-Count";
/// The response header carrying the server's request id.
pub const REQUEST_ID_HEADER: &str = "x-typesafe-request-id";
/// The gateway fallback for [`REQUEST_ID_HEADER`].
pub const FALLBACK_REQUEST_ID_HEADER: &str = "x-request-id";

/// The longest request id kept, in characters.
const MAX_REQUEST_ID_CHARS: usize = 128;

/// Per-call options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallOptions {
    /// When the whole call must be over (a review's budget): every attempt and every wait
    /// counts against it. `None` means the client's call timeout, counted from the call's start.
    pub deadline: Option<Instant>,
}

impl CallOptions {
    /// Options with an explicit deadline.
    pub fn with_deadline(deadline: Instant) -> CallOptions {
        CallOptions {
            deadline: Some(deadline),
        }
    }
}

/// A successful System One call.
#[derive(Clone)]
pub struct Exchange {
    /// The response, already checked against the request's questions (systemone-wire.md §7).
    pub response: Response,
    /// The model that was asked (the request's, else the client's); the response's `model`
    /// is the resolved versioned id and may differ.
    pub requested_model: String,
    /// The server's request id, when the response carried one.
    pub request_id: Option<String>,
    /// How many attempts it took (1 without retries).
    pub attempts: u32,
    /// Whether the answer came from jevjudge's fake server: the response carried
    /// `x-jevjudge-fake: 1` ([`jevjudge_wire::FAKE_MARK_HEADER`]). Such answers are never a
    /// model's, whatever `model` they name.
    pub fake: bool,
}

impl fmt::Debug for Exchange {
    /// Shows the model, usage and counts; answers are summarised by number, since legends
    /// echo question text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exchange")
            .field("model", &self.response.model)
            .field("answers", &self.response.answers.len())
            .field("usage", &self.response.usage)
            .field("requested_model", &self.requested_model)
            .field("request_id", &self.request_id)
            .field("attempts", &self.attempts)
            .field("fake", &self.fake)
            .finish()
    }
}

/// An async System One client. Cheap to clone: clones share one transport and configuration.
///
/// Build one with [`Client::builder`]; see the crate docs for an example.
pub struct Client<T: Transport = HttpTransport> {
    inner: Arc<Inner<T>>,
}

struct Inner<T> {
    transport: T,
    settings: Settings,
    /// `Bearer <key>`, built once.
    authorization: Option<String>,
}

/// A response that ends the attempt loop successfully (a 2xx).
struct Delivered {
    response: HttpResponse,
    request_id: Option<String>,
    attempts: u32,
}

impl<T: Transport> Client<T> {
    pub(crate) fn from_settings(transport: T, settings: Settings) -> Client<T> {
        let authorization = settings
            .key
            .as_ref()
            .map(|key| format!("Bearer {}", key.expose_secret()));
        Client {
            inner: Arc::new(Inner {
                transport,
                settings,
                authorization,
            }),
        }
    }

    /// The model sent when a request names none.
    pub fn model(&self) -> &str {
        &self.inner.settings.model
    }

    /// The System One endpoint, joined from the base URL.
    pub fn endpoint(&self) -> &str {
        &self.inner.settings.endpoints.systemone
    }

    /// The models URL, joined from the base URL.
    pub fn models_endpoint(&self) -> &str {
        &self.inner.settings.endpoints.models
    }

    /// The transport under the client.
    pub fn transport(&self) -> &T {
        &self.inner.transport
    }

    /// Sends one System One request and checks the answers against its questions.
    ///
    /// - The request is checked first (systemone-wire.md §5); on failure nothing is sent and the
    ///   error is [`ErrorKind::RequestRefused`].
    /// - 408, 429, 5xx, connection failures and per-attempt timeouts are retried (default 2
    ///   retries), waiting the server's `retry-after-ms`/`Retry-After` (≤ 60 s) or the backoff.
    /// - A 200 is never retried: its body is read and checked, and a failure is
    ///   [`ErrorKind::InvalidAnswers`] keeping the model and usage when they could be read.
    /// - The deadline (`options.deadline`, else the call timeout) covers everything; see
    ///   [`ErrorKind::Deadline`].
    ///
    /// Dropping the future cancels the in-flight request and any wait.
    pub async fn system_one(
        &self,
        request: &Request,
        options: CallOptions,
    ) -> Result<Exchange, Error> {
        let settings = &self.inner.settings;
        let started = Instant::now();
        let body: Bytes = request
            .to_body(&settings.model)
            .map(Bytes::from)
            .map_err(|error| Error::new(ErrorKind::RequestRefused(error), 0))?;
        let requested_model = request.model_or(&settings.model).to_owned();
        let deadline = Deadline::start(options.deadline, settings.call_timeout, started);
        let delivered = self
            .execute(Method::Post, &settings.endpoints.systemone, body, deadline)
            .await?;
        let invalid = |error, model, usage| {
            let facts = ResponseFacts {
                status: Some(delivered.response.status),
                request_id: delivered.request_id.clone(),
                ..ResponseFacts::default()
            };
            Error::new(ErrorKind::InvalidAnswers(error), delivered.attempts)
                .with_facts(facts)
                .with_received(model, usage)
        };
        let response = match Response::from_slice(&delivered.response.body) {
            Ok(response) => response,
            Err(error) => {
                let (model, usage) = salvage_model_and_usage(&delivered.response.body);
                return Err(invalid(error, model, usage));
            }
        };
        if let Err(error) = response.check(&request.questions) {
            return Err(invalid(error, response.model.clone(), response.usage));
        }
        const FAKE_MARK: HeaderName = HeaderName::from_static(jevjudge_wire::FAKE_MARK_HEADER);
        let fake = delivered
            .response
            .header(&FAKE_MARK)
            .is_some_and(|value| value.trim() == "1");
        Ok(Exchange {
            response,
            requested_model,
            request_id: delivered.request_id,
            attempts: delivered.attempts,
            fake,
        })
    }

    /// Lists the model aliases (`GET /v1/models`), with the same retries and the call timeout
    /// as the deadline. A body without a `models` array is [`ErrorKind::UnreadableBody`].
    pub async fn list_models(&self) -> Result<ModelList, Error> {
        let settings = &self.inner.settings;
        let deadline = Deadline::start(None, settings.call_timeout, Instant::now());
        let delivered = self
            .execute(
                Method::Get,
                &settings.endpoints.models,
                Bytes::new(),
                deadline,
            )
            .await?;
        serde_json::from_slice::<ModelList>(&delivered.response.body).map_err(|_| {
            Error::new(ErrorKind::UnreadableBody, delivered.attempts).with_facts(ResponseFacts {
                status: Some(delivered.response.status),
                request_id: delivered.request_id,
                ..ResponseFacts::default()
            })
        })
    }

    /// The attempt loop: sends until a 2xx, a final failure, the last retry, or the deadline.
    async fn execute(
        &self,
        method: Method,
        url: &str,
        body: Bytes,
        deadline: Deadline,
    ) -> Result<Delivered, Error> {
        let settings = &self.inner.settings;
        let mut jitter: Option<Jitter> = None;
        // The facts of the last attempt that got a response, for deadline errors.
        let mut last: Option<ResponseFacts> = None;
        let mut attempt: u32 = 0;
        loop {
            let started = Instant::now();
            if deadline.has_passed(started) {
                return Err(Error::deadline(false, last, attempt));
            }
            attempt += 1;
            let window = deadline.attempt_window(started, settings.attempt_timeout);
            let request = self.request(method, url, &body, attempt - 1);
            let sent =
                tokio::time::timeout_at(window.end, self.inner.transport.send(request)).await;
            let elapsed = started.elapsed();
            if let Some(limiter) = &settings.limiter {
                let (outcome, retry_after) = match &sent {
                    Ok(Ok(response)) => (
                        AttemptOutcome::Status(response.status),
                        is_retryable_status(response.status)
                            .then(|| server_wait(|name| response.header(name), SystemTime::now()))
                            .flatten(),
                    ),
                    Ok(Err(failure)) => (AttemptOutcome::Transport(failure.kind()), None),
                    Err(_) if window.cut_by_deadline => (AttemptOutcome::DeadlineElapsed, None),
                    Err(_) => (AttemptOutcome::TimedOut, None),
                };
                limiter.record_attempt(outcome, attempt, started, retry_after);
            }
            let (error, retryable, requested_wait) = match sent {
                Ok(Ok(response)) => {
                    let request_id = request_id(&response);
                    self.report(
                        method,
                        attempt,
                        AttemptOutcome::Status(response.status),
                        elapsed,
                        request_id.clone(),
                    );
                    if (200..300).contains(&response.status) {
                        return Ok(Delivered {
                            response,
                            request_id,
                            attempts: attempt,
                        });
                    }
                    let facts = response_facts(&response, request_id);
                    let retryable = is_retryable_status(response.status);
                    let requested_wait = facts.retry_after.filter(|_| retryable);
                    let error = Error::from_status(facts.clone(), attempt);
                    last = Some(facts);
                    (error, retryable, requested_wait)
                }
                Ok(Err(failure)) => {
                    let kind = failure.kind();
                    self.report(
                        method,
                        attempt,
                        AttemptOutcome::Transport(kind),
                        elapsed,
                        None,
                    );
                    last = None;
                    (Error::transport(kind, attempt), kind.is_retryable(), None)
                }
                Err(_) if window.cut_by_deadline => {
                    self.report(
                        method,
                        attempt,
                        AttemptOutcome::DeadlineElapsed,
                        elapsed,
                        None,
                    );
                    return Err(Error::deadline(false, last, attempt));
                }
                Err(_) => {
                    self.report(method, attempt, AttemptOutcome::TimedOut, elapsed, None);
                    last = None;
                    (Error::new(ErrorKind::AttemptTimeout, attempt), true, None)
                }
            };
            let jitter = jitter.get_or_insert_with(|| settings.backoff.jitter());
            let decision = settings.retry.decide(
                attempt,
                retryable,
                requested_wait,
                &settings.backoff,
                jitter,
            );
            let Decision::Retry { retry, mut wait } = decision else {
                return Err(error);
            };
            let now = Instant::now();
            if let Some(limiter) = &settings.limiter {
                // The server's last requested wait holds for every request of the process.
                wait = wait.max(limiter.floor_from(now));
            }
            if !deadline.admits_wait(now, wait) {
                tracing::debug!(
                    attempt,
                    retry,
                    wait_ms = wait.as_millis() as u64,
                    "retry skipped: its wait ends after the deadline"
                );
                return Err(if deadline.is_explicit() {
                    Error::deadline(true, last, attempt)
                } else {
                    error
                });
            }
            tracing::debug!(attempt, retry, wait_ms = wait.as_millis() as u64, detail = %error.detail(), "retrying System One call");
            tokio::time::sleep_until(now + wait).await;
            if let Some(limiter) = &settings.limiter {
                // Pacing counts against the budget: a retry that cannot go out by the deadline
                // is not sent.
                let paced = tokio::time::timeout_at(
                    deadline.at(),
                    limiter.pace_retry(estimate_tokens(body.len())),
                )
                .await;
                match paced {
                    Ok(true) => {}
                    Ok(false) => return Err(error),
                    Err(_) => {
                        return Err(if deadline.is_explicit() {
                            Error::deadline(true, last, attempt)
                        } else {
                            error
                        });
                    }
                }
            }
        }
    }

    /// The request of one attempt, with the headers of systemone-wire.md §3.
    /// The body is shared with the other attempts, not copied.
    fn request(&self, method: Method, url: &str, body: &Bytes, retry: u32) -> HttpRequest {
        let mut headers: Vec<(&'static str, Cow<'static, str>)> = Vec::with_capacity(5);
        if let Some(authorization) = &self.inner.authorization {
            headers.push(("Authorization", authorization.clone().into()));
        }
        if method == Method::Post {
            headers.push(("Content-Type", "application/json".into()));
        }
        headers.push(("Accept", "application/json".into()));
        headers.push(("User-Agent", USER_AGENT.into()));
        if retry > 0 {
            headers.push((RETRY_COUNT_HEADER, retry.to_string().into()));
        }
        HttpRequest {
            method,
            url: url.to_owned(),
            headers,
            body: body.clone(),
        }
    }

    fn report(
        &self,
        method: Method,
        attempt: u32,
        outcome: AttemptOutcome,
        elapsed: Duration,
        request_id: Option<String>,
    ) {
        if let Some(hook) = &self.inner.settings.on_attempt {
            hook(&AttemptEvent {
                method,
                attempt,
                retry_count: attempt - 1,
                outcome,
                elapsed,
                request_id,
            });
        }
    }
}

/// The request id of a response: `x-typesafe-request-id`, else `x-request-id`; only visible
/// ASCII, at most 128 characters, or none.
fn request_id(response: &HttpResponse) -> Option<String> {
    const NAME: HeaderName = HeaderName::from_static(REQUEST_ID_HEADER);
    const FALLBACK: HeaderName = HeaderName::from_static(FALLBACK_REQUEST_ID_HEADER);
    response
        .header(&NAME)
        .or_else(|| response.header(&FALLBACK))
        .map(str::trim)
        .filter(|id| {
            !id.is_empty()
                && id.len() <= MAX_REQUEST_ID_CHARS
                && id.bytes().all(|b| b.is_ascii_graphic())
        })
        .map(str::to_owned)
}

/// What an error response leaves behind: status, request id, requested wait, error type and
/// the extracted message.
fn response_facts(response: &HttpResponse, request_id: Option<String>) -> ResponseFacts {
    let body = ErrorBody::read(&response.body);
    ResponseFacts {
        status: Some(response.status),
        request_id,
        retry_after: server_wait(|name| response.header(name), SystemTime::now()),
        error_type: body.error_type,
        message: body.message,
    }
}

/// Model and usage from a 200 body that failed to read as a response (for example, no
/// `answers` object) but is still a JSON object (judge-contract D3).
fn salvage_model_and_usage(body: &[u8]) -> (Option<String>, Option<Usage>) {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => (
            map.get("model").and_then(Value::as_str).map(str::to_owned),
            map.get("usage").and_then(Usage::from_json),
        ),
        _ => (None, None),
    }
}

impl<T: Transport> Clone for Client<T> {
    fn clone(&self) -> Client<T> {
        Client {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T: Transport> fmt::Debug for Client<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = &self.inner.settings;
        f.debug_struct("Client")
            .field("endpoint", &settings.endpoints.systemone)
            .field("model", &settings.model)
            .field("has_key", &settings.key.is_some())
            .field("attempt_timeout", &settings.attempt_timeout)
            .field("call_timeout", &settings.call_timeout)
            .field("retries", &settings.retry.retries())
            .field("backoff", &settings.backoff)
            .finish_non_exhaustive()
    }
}
