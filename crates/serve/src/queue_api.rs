//! The reviewer API of the review queue: `POST /v1/queue/claim`,
//! `POST /v1/queue/{item}/decision`, `POST /v1/queue/{item}/release`, `GET /v1/queue/stats`,
//! `GET /v1/queue/mine` and, for leads, `GET /v1/queue/decisions`.
//!
//! A claim hands back an item the reviewer holds before a new one (`"resumed": true`);
//! `{"new": true}` asks for another. A lead claims adjudications with
//! `{"kind": "adjudication"}` (403 `not_a_lead` for anyone else) and decides and releases them
//! on the same item routes.
//!
//! Every route needs `Authorization: Bearer <reviewer token>` (from `--reviewer-tokens-env`,
//! not the callers' `--auth-token-env`): 401 otherwise. Without a queue they answer 404
//! `no_queue`. Claims are leases in the store, so two reviewers on any replicas sharing one
//! store never hold the same item. The claim is blind: it carries the state and the criteria,
//! never Jev's findings; the decision's answer reveals them.

use std::{collections::BTreeMap, time::SystemTime};

use axum::{
    Extension, Json,
    body::Body,
    extract::{Path, Query, State, rejection::PathRejection, rejection::QueryRejection},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use jevjudge_store::{
    Adjudication, AdjudicationClaim, Claim, Claimed, Decision, DecisionCursor, DecisionFilter,
    MAX_NOTE_CHARS, MAX_PAGE, QueueError, QueueItemId, StoreError,
};
use serde::{Deserialize, Deserializer, de::DeserializeOwned, de::Error as _};
use serde_json::{Value, json};

use crate::{
    ServeError, ServeState,
    body::{self, Shape},
    reviewers::Reviewer,
};

/// The largest body of a queue request, in bytes (a decision: findings and a note).
pub const MAX_QUEUE_BODY_BYTES: usize = 64 * 1024;

fn unavailable(state: &ServeState, error: &StoreError) -> ServeError {
    tracing::warn!(%error, "the review queue's store failed");
    ServeError::StoreUnavailable {
        retry_after_secs: state.config().retry_after_secs(),
    }
}

fn queue_error(state: &ServeState, error: QueueError) -> ServeError {
    match error {
        QueueError::NotFound => ServeError::QueueItemNotFound,
        QueueError::LeaseNotHeld => ServeError::LeaseNotHeld,
        QueueError::AlreadyDecided => ServeError::AlreadyDecided,
        QueueError::Expired => ServeError::ItemExpired,
        QueueError::Invalid(message) => ServeError::InvalidDecision { message },
        QueueError::Store(error) => unavailable(state, &error),
        _ => ServeError::Internal,
    }
}

/// Reads a small JSON body of `shape` into `T`; an empty body is `{}`.
pub(crate) async fn json_body<T: DeserializeOwned>(
    body: Body,
    shape: &Shape,
) -> Result<T, ServeError> {
    let bytes = axum::body::to_bytes(body, MAX_QUEUE_BODY_BYTES)
        .await
        .map_err(|_| ServeError::BodyTooLarge {
            limit: MAX_QUEUE_BODY_BYTES,
        })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return body::parse(b"{}", shape);
    }
    body::parse(&bytes, shape)
}

/// The message of an unknown field of a queue body.
pub(crate) fn unknown(name: &str, fields: &[&str]) -> String {
    let expected: Vec<String> = fields.iter().map(|field| format!("`{field}`")).collect();
    format!("unknown field `{name}`; expected {}", expected.join(", "))
}

/// The body of `POST /v1/queue/claim`: `{"version": "…", "new": true, "kind": "review" |
/// "adjudication"}`, all optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClaimBody {
    #[serde(default, deserialize_with = "version")]
    version: Option<String>,
    #[serde(default, deserialize_with = "flag")]
    new: bool,
    #[serde(default, deserialize_with = "kind")]
    kind: Kind,
}

/// What a claim asks for.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A queued review (the default).
    #[default]
    Review,
    /// An adjudication (leads only).
    Adjudication,
}

fn flag<'de, D: Deserializer<'de>>(from: D) -> Result<bool, D::Error> {
    match Value::deserialize(from)? {
        Value::Null => Ok(false),
        Value::Bool(flag) => Ok(flag),
        _ => Err(D::Error::custom("`new` must be true or false")),
    }
}

fn kind<'de, D: Deserializer<'de>>(from: D) -> Result<Kind, D::Error> {
    match Value::deserialize(from)? {
        Value::Null => Ok(Kind::Review),
        Value::String(kind) if kind == "review" => Ok(Kind::Review),
        Value::String(kind) if kind == "adjudication" => Ok(Kind::Adjudication),
        _ => Err(D::Error::custom(
            "`kind` must be \"review\" or \"adjudication\"",
        )),
    }
}

const CLAIM_BODY: Shape = Shape {
    fields: &["version", "new", "kind"],
    unknown: |name| unknown(name, CLAIM_BODY.fields),
    like: None,
};

fn version<'de, D: Deserializer<'de>>(from: D) -> Result<Option<String>, D::Error> {
    match Value::deserialize(from)? {
        Value::Null => Ok(None),
        Value::String(version) if !version.is_empty() && version.chars().count() <= 256 => {
            jevjudge_store::check_no_controls("version", &version).map_err(D::Error::custom)?;
            Ok(Some(version))
        }
        _ => Err(D::Error::custom(
            "`version` must be a string of 1 to 256 characters",
        )),
    }
}

/// The body of `POST /v1/queue/{item}/decision`:
/// `{"findings": {"<criterion id>": true|false|null}, "note": "…"}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    #[serde(default, deserialize_with = "findings")]
    findings: Option<BTreeMap<String, Option<bool>>>,
    #[serde(default, deserialize_with = "note")]
    note: Option<String>,
}

const DECISION_BODY: Shape = Shape {
    fields: &["findings", "note"],
    unknown: |name| unknown(name, DECISION_BODY.fields),
    like: None,
};

const FINDINGS_SHAPE: &str =
    "`findings` must be an object: {\"<criterion id>\": true | false | null}";

fn findings<'de, D: Deserializer<'de>>(
    from: D,
) -> Result<Option<BTreeMap<String, Option<bool>>>, D::Error> {
    let Value::Object(findings) = Value::deserialize(from)? else {
        return Err(D::Error::custom(FINDINGS_SHAPE));
    };
    let mut decided = BTreeMap::new();
    for (id, answer) in findings {
        let answer = match answer {
            Value::Bool(holds) => Some(holds),
            Value::Null => None,
            _ => {
                return Err(D::Error::custom(
                    "each finding must be true (holds), false (does not hold) or null (can't tell)",
                ));
            }
        };
        decided.insert(id, answer);
    }
    Ok(Some(decided))
}

fn note<'de, D: Deserializer<'de>>(from: D) -> Result<Option<String>, D::Error> {
    let refused = || {
        D::Error::custom(format_args!(
            "`note` must be a string of at most {MAX_NOTE_CHARS} characters"
        ))
    };
    match Value::deserialize(from)? {
        Value::Null => Ok(None),
        Value::String(note) => match jevjudge_store::check_note(&note) {
            Ok(()) => Ok(Some(note)),
            Err(message) => Err(D::Error::custom(message)),
        },
        _ => Err(refused()),
    }
}

/// The claim's JSON: the item, the definition version, the state, and the criteria (id,
/// question, expected flag). Blind: nothing that reveals Jev's verdict or leads to it — no
/// review id (it would resolve on `GET /v1/reviews/{id}`), no reason (`sampled_pass` says Jev
/// said PASS), no reference.
pub fn claim_json(claimed: &Claimed, resumed: bool) -> Value {
    json!({
        "item": claimed.item.to_string(),
        "definition_version": claimed.subject.review.definition_version,
        "slot": claimed.slot,
        "state": claimed.subject.state,
        "criteria": criteria_json(&claimed.subject.questions, claimed.subject.expected.as_ref()),
        "lease_expires": claimed.lease_expires_rfc3339(),
        "resumed": resumed,
    })
}

/// The criteria of a definition's questions: id, question, expected flag.
fn criteria_json(questions: &Value, expected: Option<&BTreeMap<String, bool>>) -> Vec<Value> {
    match questions {
        Value::Object(questions) => questions
            .iter()
            .map(|(id, question)| {
                json!({
                    "id": id,
                    "instructions": question.get("instructions").cloned().unwrap_or(Value::Null),
                    "expected": expected.and_then(|expected| expected.get(id)).copied(),
                })
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// An adjudication claim's JSON: the state, the criteria and both reviewers' answers and
/// notes — nothing of Jev's.
pub fn adjudication_json(adjudication: &Adjudication, resumed: bool) -> Value {
    json!({
        "item": adjudication.item.to_string(),
        "kind": "adjudication",
        "definition_version": adjudication.definition_version,
        "disagreement": adjudication.disagreement,
        "state": adjudication.state,
        "criteria": criteria_json(&adjudication.questions, None),
        "answers": adjudication.answers,
        "lease_expires": adjudication.lease_expires,
        "resumed": resumed,
    })
}

/// `POST /v1/queue/claim` with an optional `{"version": "…"}`: 200 with the leased item, 204
/// when nothing is pending, 409 `too_many_leases` (with the `held` item ids) when the reviewer
/// holds `--max-leases-per-reviewer` items already.
pub(crate) async fn claim(
    State(state): State<ServeState>,
    Extension(reviewer): Extension<Reviewer>,
    body: Body,
) -> Result<Response, ServeError> {
    let ClaimBody { version, new, kind } = json_body(body, &CLAIM_BODY).await?;
    let store = state.store().ok_or(ServeError::NoQueue)?;
    if kind == Kind::Adjudication {
        if !reviewer.lead {
            return Err(ServeError::NotALead);
        }
        return match store
            .claim_adjudication_at(
                &reviewer.name,
                state.lease(),
                state.max_leases_per_reviewer(),
                new,
                SystemTime::now(),
            )
            .await
        {
            Ok(AdjudicationClaim::Leased {
                adjudication,
                resumed,
            }) => Ok(Json(adjudication_json(&adjudication, resumed)).into_response()),
            Ok(AdjudicationClaim::Empty) => Ok(StatusCode::NO_CONTENT.into_response()),
            Ok(AdjudicationClaim::AtCap { held }) => Err(ServeError::TooManyLeases {
                held: held.iter().map(ToString::to_string).collect(),
            }),
            Err(StoreError::Invalid(message)) => Err(body::invalid(message)),
            Err(error) => Err(unavailable(&state, &error)),
        };
    }
    match store
        .claim_or_resume_at(
            &reviewer.name,
            version.as_deref(),
            state.lease(),
            state.max_leases_per_reviewer(),
            new,
            SystemTime::now(),
        )
        .await
    {
        Ok((Claim::Leased(claimed), resumed)) => {
            Ok(Json(claim_json(&claimed, resumed)).into_response())
        }
        Ok((Claim::Empty, _)) => Ok(StatusCode::NO_CONTENT.into_response()),
        Ok((Claim::AtCap { held }, _)) => Err(ServeError::TooManyLeases {
            held: held.iter().map(ToString::to_string).collect(),
        }),
        // A version the store refuses (a control character) is the caller's mistake.
        Err(StoreError::Invalid(message)) => Err(body::invalid(message)),
        Err(error) => Err(unavailable(&state, &error)),
    }
}

fn item_id(path: Result<Path<String>, PathRejection>) -> Result<QueueItemId, ServeError> {
    let Ok(Path(item)) = path else {
        return Err(ServeError::QueueItemNotFound);
    };
    item.parse().map_err(|_| ServeError::QueueItemNotFound)
}

/// The decision a body holds.
fn decision(body: DecisionBody) -> Result<Decision, ServeError> {
    let Some(findings) = body.findings else {
        return Err(body::invalid(FINDINGS_SHAPE.to_owned()));
    };
    Ok(Decision {
        findings,
        note: body.note,
    })
}

/// `POST /v1/queue/{item}/decision`: saves the decision of the item's lease holder; 200 with
/// Jev's verdict and findings (revealed now), 404, 409 `lease_not_held` / `already_decided`,
/// 422 for a decision that does not answer exactly the definition's criteria.
pub(crate) async fn decide(
    State(state): State<ServeState>,
    Extension(reviewer): Extension<Reviewer>,
    path: Result<Path<String>, PathRejection>,
    body: Body,
) -> Result<Response, ServeError> {
    let item = item_id(path)?;
    let decision = decision(json_body(body, &DECISION_BODY).await?)?;
    let store = state.store().ok_or(ServeError::NoQueue)?;
    let decided = match store.decide(item, &reviewer.name, &decision).await {
        Err(QueueError::NotFound) if reviewer.lead => {
            // Not a queue item: a lead's adjudication, perhaps.
            let adjudicated = store
                .decide_adjudication_at(item, &reviewer.name, &decision, SystemTime::now())
                .await
                .map_err(|error| queue_error(&state, error))?;
            return Ok(Json(json!({
                "item": adjudicated.item.to_string(),
                "kind": "adjudication",
                "definition_version": adjudicated.definition_version,
                "reviewer": reviewer.name,
                "findings": decision.findings,
                "answers": adjudicated.answers,
                "upheld": adjudicated.upheld,
            }))
            .into_response());
        }
        other => other.map_err(|error| queue_error(&state, error))?,
    };
    Ok(Json(json!({
        "item": decided.item.to_string(),
        "review_id": decided.review.review_id.to_string(),
        "definition_version": decided.review.definition_version,
        "reviewer": reviewer.name,
        "findings": decision.findings,
        "status_by_jev": decided.review.status,
        "findings_by_jev": decided.findings_by_jev,
    }))
    .into_response())
}

/// `POST /v1/queue/{item}/release`: gives a held item back to the queue; 200
/// `{"item": …, "released": true}`, 404, 409.
pub(crate) async fn release(
    State(state): State<ServeState>,
    Extension(reviewer): Extension<Reviewer>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ServeError> {
    let item = item_id(path)?;
    let store = state.store().ok_or(ServeError::NoQueue)?;
    match store.release(item, &reviewer.name).await {
        Err(QueueError::NotFound) if reviewer.lead => store
            .release_adjudication_at(item, &reviewer.name, SystemTime::now())
            .await
            .map_err(|error| queue_error(&state, error))?,
        other => other.map_err(|error| queue_error(&state, error))?,
    }
    Ok(Json(json!({"item": item.to_string(), "released": true})).into_response())
}

/// `GET /v1/queue/stats`: pending by version, claimed, decided, and agreement (Scott's π
/// per criterion) over items decided by two reviewers.
pub(crate) async fn stats(
    State(state): State<ServeState>,
    Extension(_reviewer): Extension<Reviewer>,
) -> Result<Response, ServeError> {
    let store = state.store().ok_or(ServeError::NoQueue)?;
    let stats = store
        .queue_stats()
        .await
        .map_err(|error| unavailable(&state, &error))?;
    let adjudication = store
        .adjudication_stats()
        .await
        .map_err(|error| unavailable(&state, &error))?;
    let mut body = serde_json::to_value(stats).map_err(|_| ServeError::Internal)?;
    body["adjudication"] = serde_json::to_value(adjudication).map_err(|_| ServeError::Internal)?;
    Ok(Json(body).into_response())
}

/// `GET /v1/queue/mine`: the items the caller holds under a live lease, soonest lease end
/// first: `{"items": [{"item", "kind", "definition_version", "lease_expires"}]}`.
pub(crate) async fn mine(
    State(state): State<ServeState>,
    Extension(reviewer): Extension<Reviewer>,
) -> Result<Response, ServeError> {
    let store = state.store().ok_or(ServeError::NoQueue)?;
    match store.held_at(&reviewer.name, SystemTime::now()).await {
        Ok(items) => Ok(Json(json!({ "items": items })).into_response()),
        Err(error) => Err(unavailable(&state, &error)),
    }
}

/// `GET /v1/queue/decisions?version=&since=&reviewer=&disagreement=&cursor=&limit=` (leads
/// only): the queued reviews with their decisions, oldest first decision first,
/// keyset-paged.
pub(crate) async fn decisions(
    State(state): State<ServeState>,
    Extension(reviewer): Extension<Reviewer>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ServeError> {
    if !reviewer.lead {
        return Err(ServeError::NotALead);
    }
    let store = state.store().ok_or(ServeError::NoQueue)?;
    let Ok(Query(pairs)) = query else {
        return Err(ServeError::InvalidQuery {
            message: "the query string is not valid (name=value pairs, percent-encoded)".to_owned(),
        });
    };
    let (filter, limit, cursor) =
        decisions_query(pairs).map_err(|message| ServeError::InvalidQuery { message })?;
    match store.queue_decisions(&filter, limit, cursor.as_ref()).await {
        Ok(page) => Ok(Json(page).into_response()),
        Err(StoreError::Invalid(message)) => Err(ServeError::InvalidQuery { message }),
        Err(error) => Err(unavailable(&state, &error)),
    }
}

/// The filter, page size and cursor of a decisions request; an unknown or repeated parameter,
/// or a bad value, is an error naming it.
fn decisions_query(
    pairs: Vec<(String, String)>,
) -> Result<(DecisionFilter, u32, Option<DecisionCursor>), String> {
    let mut filter = DecisionFilter::default();
    let mut limit = crate::reviews_api::DEFAULT_LIMIT;
    let mut cursor = None;
    let mut seen: Vec<String> = Vec::new();
    for (key, value) in pairs {
        if seen.contains(&key) {
            return Err(format!("`{key}` is given more than once"));
        }
        match key.as_str() {
            "version" => {
                if value.is_empty() || value.chars().count() > 256 {
                    return Err("`version` must be 1 to 256 characters".to_owned());
                }
                jevjudge_store::check_no_controls("version", &value)?;
                filter.version = Some(value);
            }
            "reviewer" => {
                if !crate::reviewers::valid_reviewer_name(&value) {
                    return Err(
                        "`reviewer` must be a reviewer name (1–64 characters of A–Z a–z 0–9 - _ . @)"
                            .to_owned(),
                    );
                }
                filter.reviewer = Some(value);
            }
            "since" => {
                filter.since = Some(jevjudge_store::parse_time(&value).map_err(|_| {
                    "`since` must be an RFC 3339 time like 2026-11-30T12:00:00Z or a date like \
                     2026-11-30"
                        .to_owned()
                })?);
            }
            "disagreement" => {
                filter.disagreement = Some(match value.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err("`disagreement` must be true or false".to_owned()),
                });
            }
            "limit" => {
                limit = value
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=MAX_PAGE).contains(n))
                    .ok_or_else(|| {
                        format!("`limit` must be a whole number from 1 to {MAX_PAGE}")
                    })?;
            }
            "cursor" => {
                cursor = Some(
                    value
                        .parse::<DecisionCursor>()
                        .map_err(|e: jevjudge_store::CursorError| e.to_string())?,
                );
            }
            _ => {
                let shown: String = key.chars().take(64).filter(|c| !c.is_control()).collect();
                return Err(format!(
                    "unknown parameter `{shown}`; expected version, since, reviewer, \
                     disagreement, limit, cursor"
                ));
            }
        }
        seen.push(key);
    }
    Ok((filter, limit, cursor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(body: &Value) -> Result<Decision, ServeError> {
        decision(body::parse(body.to_string().as_bytes(), &DECISION_BODY)?)
    }

    #[test]
    fn a_decision_with_a_repeated_key_is_refused_422() {
        for body in [
            r#"{"findings": {"a": true}, "note": "x", "note": "y"}"#,
            r#"{"findings": {"a": true, "a": false}}"#,
        ] {
            let error = body::parse::<DecisionBody>(body.as_bytes(), &DECISION_BODY)
                .err()
                .expect("refused");
            assert_eq!(error.status().as_u16(), 422, "{body}");
            assert_eq!(error.code(), "invalid_body");
            assert!(error.to_string().contains("appears twice"), "{error}");
        }
    }

    #[test]
    fn control_characters_in_a_claim_version_are_refused_422_naming_the_field() {
        for version in ["v1\u{0}", "\u{7}", "v\n1"] {
            let body = json!({ "version": version }).to_string();
            let error = body::parse::<ClaimBody>(body.as_bytes(), &CLAIM_BODY)
                .err()
                .expect("refused");
            assert_eq!(error.status().as_u16(), 422);
            assert_eq!(error.code(), "invalid_body");
            assert!(
                error
                    .to_string()
                    .contains("`version` must not contain control characters"),
                "{error}"
            );
        }
        // Line breaks and tabs are a note's own; other control characters are not.
        let fine = json!({"findings": {"a": true}, "note": "line one\r\nline two\tend"});
        assert!(parsed(&fine).is_ok());
    }

    #[test]
    fn a_decision_takes_true_false_or_null_per_criterion_and_a_note() {
        let fields = json!({"findings": {"a": true, "b": false, "c": null}, "note": "ok"});
        let decided = parsed(&fields).unwrap();
        assert_eq!(decided.findings["a"], Some(true));
        assert_eq!(decided.findings["b"], Some(false));
        assert_eq!(decided.findings["c"], None);
        assert_eq!(decided.note.as_deref(), Some("ok"));
    }

    #[test]
    fn a_malformed_decision_is_422_naming_the_field() {
        for (body, message) in [
            (json!({}), "`findings` must be an object"),
            (json!({"findings": []}), "`findings` must be an object"),
            (
                json!({"findings": {"a": "yes"}}),
                "each finding must be true",
            ),
            (
                json!({"findings": {}, "note": 3}),
                "`note` must be a string",
            ),
            (json!({"findings": {}, "extra": 1}), "unknown field `extra`"),
            (
                json!({"findings": {}, "note": "x".repeat(MAX_NOTE_CHARS + 1)}),
                "`note` must be at most",
            ),
            (
                json!({"findings": {}, "note": "a\u{0}b"}),
                "`note` must not contain control characters",
            ),
        ] {
            let error = parsed(&body).unwrap_err();
            assert_eq!(error.code(), "invalid_body");
            assert!(error.to_string().contains(message), "{error}");
        }
    }
}
