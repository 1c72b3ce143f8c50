//! `POST /v1/reviews/{version}`: read a bounded body, wait for a backend slot, review.

use std::time::Duration;

use axum::{
    Extension,
    body::{Body, Bytes},
    extract::{Path, State, rejection::PathRejection},
    http::{HeaderMap, HeaderValue, header::CONTENT_LENGTH, header::CONTENT_TYPE},
    response::{IntoResponse, Response},
};
use futures_util::StreamExt as _;
use jevjudge_judge::{BackendKind, Verdict};
use serde::{Deserialize, Deserializer, de::Error as _};
use serde_json::Value;
use tokio::time::Instant;

use crate::{
    RequestId, ServeError, ServeState,
    body::{self, Shape},
    connection::ReviewClock,
    decision_log::{capturing_answers, state_digest},
    metrics::Rejection,
};

/// The most JSON values (strings, numbers, objects, arrays… each counting one) a state may
/// hold. As a tree every value takes 72 bytes or more (an object entry about 100) whatever its
/// text, so a 1 MiB body of `[0,0,…]` would take some 36 MiB; with the cap a tree costs at
/// most about 10 MiB beyond its text.
pub const MAX_STATE_VALUES: usize = 100_000;

/// The body of `POST /v1/reviews/{version}`:
/// `{"state": <json>, "budget_millis": <ms>, "reference": "<ticket id>"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRequest {
    /// The state to review: a JSON string, object or array, sent to the backend unchanged.
    pub state: Value,
    /// The budget the caller asked for (positive), if any; the server caps it.
    pub budget: Option<Duration>,
    /// The caller's reference (a ticket or message id, 1–256 characters), kept with the
    /// review in the decision log.
    pub reference: Option<String>,
}

impl ReviewRequest {
    /// Parses and checks a body: 400 when it is not JSON, 422 when it is JSON of the wrong
    /// shape (not an object, `state` missing or not a string/object/array, `budget_millis` not
    /// a positive integer, `reference` not a string of 1–256 characters without control
    /// characters, an unknown field). Messages never quote the state or the reference.
    pub fn from_slice(body: &[u8]) -> Result<ReviewRequest, ServeError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(ServeError::MalformedJson {
                message: "the body is empty; send {\"state\": ...}".to_owned(),
            });
        }
        let ReviewBody {
            state,
            budget_millis,
            reference,
        } = body::parse(body, &REVIEW_BODY)?;
        if !matches!(state, Value::String(_) | Value::Object(_) | Value::Array(_)) {
            return Err(body::invalid(format!(
                "`state` must be a JSON string, object or array, not {}",
                jevjudge_wire::json_kind(&state)
            )));
        }
        if !within_values(&state, MAX_STATE_VALUES) {
            return Err(body::invalid(format!(
                "`state` holds more than {MAX_STATE_VALUES} JSON values; send fewer, larger \
                 values (text is fine)"
            )));
        }
        Ok(ReviewRequest {
            state,
            budget: budget_millis,
            reference,
        })
    }
}

/// The body of `POST /v1/reviews/{version}` as sent.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewBody {
    state: Value,
    #[serde(default, deserialize_with = "budget_millis")]
    budget_millis: Option<Duration>,
    #[serde(default, deserialize_with = "reference")]
    reference: Option<String>,
}

const REVIEW_BODY: Shape = Shape {
    fields: &["state", "budget_millis", "reference"],
    unknown: |name| {
        format!(
            "unknown field `{name}`; expected `state` and optionally `budget_millis` and \
             `reference`"
        )
    },
    like: Some("{\"state\": ...}"),
};

fn budget_millis<'de, D: Deserializer<'de>>(from: D) -> Result<Option<Duration>, D::Error> {
    match Value::deserialize(from)? {
        Value::Null => Ok(None),
        // `1500.0` is the integer 1500 to JSON Schema (and so to the OpenAPI document).
        value => match value.as_u64().or_else(|| whole_number(&value)) {
            Some(millis) if millis > 0 => Ok(Some(Duration::from_millis(millis))),
            _ => Err(D::Error::custom(
                "`budget_millis` must be a positive whole number of milliseconds",
            )),
        },
    }
}

fn reference<'de, D: Deserializer<'de>>(from: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(from)? {
        Value::Null => Ok(None),
        Value::String(reference) => {
            jevjudge_store::check_reference(&reference).map_err(D::Error::custom)?;
            Ok(Some(reference))
        }
        other => Err(D::Error::custom(format_args!(
            "`reference` must be a string, not {}",
            jevjudge_wire::json_kind(&other)
        ))),
    }
}

/// Whether `value` holds at most `limit` JSON values (itself included); stops counting early.
fn within_values(value: &Value, limit: usize) -> bool {
    let mut pending = vec![value];
    let mut seen = 0usize;
    while let Some(value) = pending.pop() {
        seen += 1;
        if seen > limit {
            return false;
        }
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(fields) => pending.extend(fields.values()),
            _ => {}
        }
    }
    true
}

/// A JSON number with no fractional part that fits a `u64` (`1500.0`), as an integer.
fn whole_number(value: &Value) -> Option<u64> {
    let number = value.as_f64()?;
    (number.fract() == 0.0 && (0.0..u64::MAX as f64).contains(&number)).then_some(number as u64)
}

/// Reads at most `limit` bytes of body: 413 beyond it (at once when `Content-Length` says
/// so), 400 when the body cannot be received. The bytes are kept in one buffer of their exact
/// size (a queued request holds nothing else).
async fn read_body(body: Body, limit: usize, declared: Option<u64>) -> Result<Bytes, ServeError> {
    let mut stream = body.into_data_stream();
    let mut collected: Vec<u8> = Vec::new();
    let mut first: Option<Bytes> = None;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| ServeError::BodyUnreadable)?;
        let total = first.as_ref().map_or(0, Bytes::len) + collected.len() + chunk.len();
        if total > limit {
            return Err(ServeError::BodyTooLarge { limit });
        }
        // The common case is one chunk: keep it without copying.
        match first.take() {
            None if collected.is_empty() => first = Some(chunk),
            Some(previous) => {
                // `declared` is at most `limit` here; without it, room for the two chunks.
                let expected = declared.map_or(0, |length| length as usize);
                collected.reserve(expected.max(previous.len() + chunk.len()));
                collected.extend_from_slice(&previous);
                collected.extend_from_slice(&chunk);
            }
            None => collected.extend_from_slice(&chunk),
        }
    }
    Ok(first.unwrap_or_else(|| Bytes::from(collected.into_boxed_slice())))
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The Result JSON of cli-and-formats.md §4.1, plus `"backend"` (`systemone`, `replay`,
/// `fixture`, `fake`, `injected`) as `jevjudge judge` prints it, so answers that did not come
/// from a model always say so.
fn result_json(
    verdict: &Verdict,
    backend: BackendKind,
    review_id: Option<jevjudge_store::ReviewId>,
) -> serde_json::Result<Vec<u8>> {
    let mut value = serde_json::to_value(verdict)?;
    if let Value::Object(fields) = &mut value {
        fields.insert("backend".to_owned(), Value::from(backend.as_str()));
        if let Some(id) = review_id {
            fields.insert("review_id".to_owned(), Value::from(id.to_string()));
        }
    }
    serde_json::to_vec(&value)
}

/// The definition a route's live version names (the route read through its short cache).
/// No such route, or a live version not loaded here: 404 `unknown_version`; the store
/// unreadable: 503 `store_unavailable`.
async fn live_definition(
    state: &ServeState,
    name: &str,
) -> Result<(jevjudge_judge::Definition, jevjudge_store::Route), ServeError> {
    let table = state.route_table().ok_or(ServeError::UnknownVersion)?;
    let route = table.route(name).await.map_err(|error| {
        tracing::warn!(%error, "the route could not be read");
        ServeError::StoreUnavailable {
            retry_after_secs: state.config().retry_after_secs(),
        }
    })?;
    let route = route.ok_or(ServeError::UnknownVersion)?;
    let definition = state
        .definitions()
        .get(&route.live)
        .cloned()
        .ok_or(ServeError::UnknownVersion)?;
    Ok((definition, route))
}

/// `POST /v1/reviews/{version}` (`{version}` is a definition version or a route's name, which
/// reviews with the route's live version; the token was checked by the route layer): unknown
/// version or route 404, declared length over the limit 413, no admission 503, then the body (413, 408, 400,
/// 422), a backend slot within the budget (else 503), and the review in what is left of the
/// budget: 200 with the Result. The budget counts from the request's arrival (its head).
///
/// With a decision log, the review is written before the response: 200 only once its row
/// is committed (the Result then carries `review_id`), else 503 `store_unavailable`. While
/// the store is known to be down, each request first checks it, so no backend call is spent
/// on a verdict that could not be kept.
pub(crate) async fn review(
    State(state): State<ServeState>,
    path: Result<Path<String>, PathRejection>,
    request_id: Option<Extension<RequestId>>,
    clock: Option<Extension<ReviewClock>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ServeError> {
    let arrived = Instant::now();
    let Ok(Path(version)) = path else {
        return Err(ServeError::UnknownVersion);
    };
    let (definition, route) = match state.definitions().get(&version).cloned() {
        Some(definition) => (definition, None),
        None => {
            let (definition, route) = live_definition(&state, &version).await?;
            (definition, Some(route))
        }
    };
    let config = state.config();
    let limit = config.max_body_bytes;
    if declared_length(&headers).is_some_and(|length| length > limit as u64) {
        return Err(ServeError::BodyTooLarge { limit });
    }
    let retry_after_secs = config.retry_after_secs();
    let span = tracing::Span::current();
    span.record("definition", definition.version());
    let Some(ticket) = state.admission().enter() else {
        state.metrics().record_rejection(Rejection::Full);
        return Err(ServeError::Overloaded { retry_after_secs });
    };
    // A slow body must not hold its place in the queue for ever.
    let declared = declared_length(&headers);
    let body = tokio::time::timeout(config.max_budget, read_body(body, limit, declared))
        .await
        .map_err(|_| ServeError::BodyTimeout)??;
    // Checked now (400/422 at once), but only the bytes wait in the queue: the JSON tree,
    // which can be many times the body's size, is built once a backend slot is held.
    let requested = ReviewRequest::from_slice(&body)?.budget;
    let budget = config.budget_for(requested);
    let log = state.decision_log();
    if let Some(log) = log {
        if !log.is_ready() && !log.check().await {
            return Err(ServeError::StoreUnavailable { retry_after_secs });
        }
    }
    span.record("budget_millis", budget.as_millis() as u64);
    // The budget is end to end: the body, the wait for a slot and the review all count.
    let deadline = arrived + budget;

    let queued = Instant::now();
    let slot = match tokio::time::timeout_at(deadline, ticket.slot()).await {
        Ok(Some(slot)) => slot,
        Ok(None) => return Err(ServeError::Internal),
        Err(_elapsed) => {
            state.metrics().record_rejection(Rejection::Timeout);
            return Err(ServeError::QueueTimeout { retry_after_secs });
        }
    };
    let queue_wait = queued.elapsed();
    let request = ReviewRequest::from_slice(&body)?;
    drop(body);
    let review_id = log.map(|_| jevjudge_store::ReviewId::new());
    let digest = log.map(|_| state_digest(&request.state));
    let kept_state = log
        .filter(|log| log.keeps_state())
        .map(|_| request.state.clone());
    // A route's shadows run after the caller has its answer; those needing their own
    // request need the state.
    let route_name = route.as_ref().map(|route| route.name.clone());
    let shadowed = route.filter(|route| {
        log.is_some()
            && !route.shadows.is_empty()
            && review_id.is_some_and(|id| crate::shadows::is_sampled(id, route.shadow_sample))
    });
    let shadow_state = shadowed
        .as_ref()
        .filter(|route| crate::shadows::needs_state(route, &definition, &state.definitions()))
        .map(|_| request.state.clone());
    let remaining = deadline.saturating_duration_since(Instant::now());
    let running = state
        .judge()
        .review_within(request.state, &definition, remaining);
    let (verdict, answers) = if kept_state.is_some() {
        capturing_answers(running).await
    } else {
        (running.await, None)
    };
    drop(slot);
    drop(ticket);
    if let (Some(log), Some(id)) = (log, review_id) {
        let request_id = request_id.map(|Extension(id)| id);
        let mut row = log.row(
            id,
            &definition,
            digest.unwrap_or_default(),
            request.reference,
            &verdict,
            request_id.as_ref().map_or("", RequestId::as_str),
            state.backend_kind(),
            kept_state,
            answers.filter(|_| verdict.status != jevjudge_judge::Status::Error),
        );
        row.route = route_name;
        let enqueue = state.queue_policy().and_then(|policy| {
            let queueing = policy.decide(&id.to_string(), verdict.status)?;
            let enqueue = jevjudge_store::Enqueue {
                reason: match queueing.reason {
                    crate::Reason::Status => jevjudge_store::QueueReason::Status,
                    crate::Reason::SampledPass => jevjudge_store::QueueReason::SampledPass,
                },
                copies: queueing.copies,
            };
            // A validated policy never queues at π = 0 (a rate of 0 samples nothing).
            let inclusion = jevjudge_store::Inclusion::new(policy.inclusion(queueing.reason))
                .unwrap_or(jevjudge_store::Inclusion::FULL);
            Some((enqueue, inclusion))
        });
        let written = log.write_queued(&row, enqueue.as_ref()).await;
        state.episodes().store_ok(written.is_ok());
        if let Err(error) = written {
            // One WARN line when the outage begins (episodes), not one per request.
            tracing::debug!(%error, "a review could not be written to the decision log");
            return Err(ServeError::StoreUnavailable { retry_after_secs });
        }
        if let Some(route) = shadowed {
            let live = crate::shadows::LiveReview {
                id,
                route,
                definition: definition.clone(),
                verdict: verdict.clone(),
                state: shadow_state,
                state_digest: row.state_digest.clone(),
                reference: row.reference.clone(),
                request_id: row.request_id.clone(),
            };
            state.shadows().start(
                log,
                state.metrics(),
                &state.definitions(),
                state.backend_kind(),
                live,
            );
        }
    }
    state.episodes().key_refused(!state.ready());
    state
        .episodes()
        .review(verdict.status == jevjudge_judge::Status::Error);
    state.metrics().record_review(&verdict);
    span.record("verdict", tracing::field::display(verdict.status));
    span.record("verdict_error", tracing::field::display(verdict.error));
    if let Some(detail) = verdict.detail {
        span.record("verdict_detail", tracing::field::display(detail));
    }
    span.record("queue_millis", queue_wait.as_secs_f64() * 1e3);
    span.record("elapsed_millis", verdict.elapsed_millis());
    let json = result_json(&verdict, state.backend_kind(), review_id).map_err(|error| {
        tracing::error!(%error, "a verdict could not be serialised");
        ServeError::Internal
    })?;
    let timing = format!(
        "queue;dur={:.3}, review;dur={:.3}",
        queue_wait.as_secs_f64() * 1e3,
        verdict.elapsed_millis()
    );
    let mut response = (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        json,
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&timing) {
        response.headers_mut().insert("server-timing", value);
    }
    if let Some(Extension(clock)) = clock {
        clock.report(queue_wait, verdict.elapsed);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn code_and_message(body: &str) -> (&'static str, String) {
        match ReviewRequest::from_slice(body.as_bytes()) {
            Ok(_) => ("ok", String::new()),
            Err(error) => (error.code(), error.to_string()),
        }
    }

    #[test]
    fn a_state_and_an_optional_budget() {
        let request = ReviewRequest::from_slice(br#"{"state": {"a": 1}}"#).unwrap();
        assert_eq!(request.state, json!({"a": 1}));
        assert_eq!(request.budget, None);
        assert_eq!(request.reference, None);
        let request = ReviewRequest::from_slice(
            br#"{"budget_millis": 1500, "state": "text", "reference": "T-4711"}"#,
        )
        .unwrap();
        assert_eq!(request.reference.as_deref(), Some("T-4711"));
        assert_eq!(request.budget, Some(Duration::from_millis(1500)));
        let request =
            ReviewRequest::from_slice(br#"{"state": [1], "budget_millis": null}"#).unwrap();
        assert_eq!(request.budget, None);
    }

    #[test]
    fn not_json_is_400_naming_the_position() {
        assert_eq!(code_and_message("").0, "malformed_json");
        let (code, message) = code_and_message("{\"state\": \"SECRET");
        assert_eq!(code, "malformed_json");
        assert!(message.starts_with("the body ends before"), "{message}");
        assert!(!message.contains("SECRET"));
        let (code, message) = code_and_message("{\"state\": SECRET}");
        assert_eq!(code, "malformed_json");
        assert_eq!(message, "the body is not valid JSON (line 1, column 11)");
    }

    #[test]
    fn the_wrong_shape_is_422_naming_the_field() {
        for (body, message) in [
            (
                "[1]",
                "the body must be a JSON object like {\"state\": ...}, not array",
            ),
            ("{}", "missing field `state`"),
            (
                r#"{"state": 5}"#,
                "`state` must be a JSON string, object or array, not number",
            ),
            (
                r#"{"state": null}"#,
                "`state` must be a JSON string, object or array, not null",
            ),
            (
                r#"{"state": "x", "budget": 5}"#,
                "unknown field `budget`; expected `state` and optionally `budget_millis` and \
                 `reference`",
            ),
            (
                r#"{"state": "x", "budget_millis": 0}"#,
                "`budget_millis` must be a positive whole number of milliseconds",
            ),
            (
                r#"{"state": "x", "budget_millis": -5}"#,
                "`budget_millis` must be a positive whole number of milliseconds",
            ),
            (
                r#"{"state": "x", "budget_millis": "SECRET"}"#,
                "`budget_millis` must be a positive whole number of milliseconds",
            ),
            (
                r#"{"state": "x", "budget_millis": 1.5}"#,
                "`budget_millis` must be a positive whole number of milliseconds",
            ),
            (
                r#"{"state": "x", "reference": 4711}"#,
                "`reference` must be a string, not number",
            ),
            (
                r#"{"state": "x", "reference": ""}"#,
                "`reference` must not be empty",
            ),
            (
                r#"{"state": "x", "reference": "a\nb"}"#,
                "`reference` must not contain control characters",
            ),
        ] {
            assert_eq!(code_and_message(body), ("invalid_body", message.to_owned()));
        }
    }

    #[test]
    fn a_state_of_too_many_values_is_422_naming_the_cap() {
        let at_cap = format!(
            r#"{{"state": [{}]}}"#,
            vec!["0"; MAX_STATE_VALUES - 1].join(",")
        );
        assert_eq!(code_and_message(&at_cap).0, "ok");
        let over = format!(
            r#"{{"state": [{}]}}"#,
            vec!["0"; MAX_STATE_VALUES].join(",")
        );
        let (code, message) = code_and_message(&over);
        assert_eq!(code, "invalid_body");
        assert!(
            message.contains("more than 100000 JSON values"),
            "{message}"
        );
        // Nested values count too.
        let nested = format!(
            r#"{{"state": {{"a": [{}]}}}}"#,
            vec!["{}"; MAX_STATE_VALUES].join(",")
        );
        assert_eq!(code_and_message(&nested).0, "invalid_body");
    }

    #[test]
    fn long_unknown_fields_are_cut() {
        let body = format!(r#"{{"state": "x", "{}": 1}}"#, "k".repeat(500));
        let (_, message) = code_and_message(&body);
        assert!(message.len() < 200, "{message}");
        assert!(message.contains('…'));
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_refused() {
        let body = Body::from(vec![b'x'; 11]);
        assert_eq!(
            read_body(body, 10, None).await,
            Err(ServeError::BodyTooLarge { limit: 10 })
        );
        let body = Body::from(vec![b'x'; 10]);
        assert_eq!(read_body(body, 10, Some(10)).await.map(|b| b.len()), Ok(10));
        let chunks = futures_util::stream::iter(
            ["ab", "cd", "ef"].map(|s| Ok::<_, std::io::Error>(Bytes::from_static(s.as_bytes()))),
        );
        let body = Body::from_stream(chunks);
        assert_eq!(
            read_body(body, 10, None).await,
            Ok(Bytes::from_static(b"abcdef"))
        );
    }

    #[test]
    fn a_whole_number_with_a_fraction_part_is_a_budget() {
        // JSON Schema's "integer" (the OpenAPI document's type) includes 1500.0.
        let request =
            ReviewRequest::from_slice(br#"{"state": "x", "budget_millis": 1500.0}"#).unwrap();
        assert_eq!(request.budget, Some(Duration::from_millis(1500)));
        for body in [
            r#"{"state": "x", "budget_millis": 1500.5}"#,
            r#"{"state": "x", "budget_millis": 0.0}"#,
            r#"{"state": "x", "budget_millis": -3.0}"#,
            r#"{"state": "x", "budget_millis": 1e300}"#,
            r#"{"state": "x", "budget_millis": 18446744073709551616}"#,
        ] {
            assert_eq!(code_and_message(body).0, "invalid_body", "{body}");
        }
    }
}
