//! Reading the decision log back: `GET /v1/reviews/{id}`, `GET /v1/reviews?…`, and the
//! readiness probe `GET /readyz`.

use axum::{
    Json,
    extract::{Path, Query, State, rejection::PathRejection, rejection::QueryRejection},
    http::{HeaderMap, StatusCode, header::AUTHORIZATION},
    response::{IntoResponse, Response},
};
use jevjudge_store::{Cursor, Filter, MAX_PAGE, ReviewId, STATUSES, StoreError};

use crate::{ServeError, ServeState};

/// The page size when the caller names none.
pub(crate) const DEFAULT_LIMIT: u32 = 50;

fn unavailable(state: &ServeState, error: &StoreError) -> ServeError {
    tracing::warn!(%error, "the decision log could not be read");
    ServeError::StoreUnavailable {
        retry_after_secs: state.config().retry_after_secs(),
    }
}

/// Whether the caller may read the decision log. Without a review queue, whoever passed the
/// route's caller-token check (any caller when none is configured). While a queue is on, the
/// log would tell a reviewer Jev's verdict on the item they hold, so it needs a caller token:
/// with none configured every read is 401 (the start-up log says so), and a reviewer's token
/// is refused even where it is also a caller's.
pub(crate) fn may_read_log(state: &ServeState, headers: &HeaderMap) -> Result<(), ServeError> {
    if !state.queue_enabled() {
        return Ok(());
    }
    if !state.config().auth_tokens.is_enabled() {
        return Err(ServeError::Unauthorized);
    }
    let header = headers.get(AUTHORIZATION).map(|value| value.as_bytes());
    if state.reviewer_for_header(header).is_some() {
        return Err(ServeError::Unauthorized);
    }
    Ok(())
}

/// `GET /v1/reviews/{id}`: one review (no state text), 404 `review_not_found` for an id no
/// review has (or that is not a review id).
pub(crate) async fn get_review(
    State(state): State<ServeState>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ServeError> {
    may_read_log(&state, &headers)?;
    let log = state.decision_log().ok_or(ServeError::NoStore)?;
    let Ok(Path(id)) = path else {
        return Err(ServeError::ReviewNotFound);
    };
    let id: ReviewId = id.parse().map_err(|_| ServeError::ReviewNotFound)?;
    match log.store().get(id).await {
        Ok(Some(review)) => Ok(Json(review).into_response()),
        Ok(None) => Err(ServeError::ReviewNotFound),
        Err(error) => Err(unavailable(&state, &error)),
    }
}

/// The filters, page size and cursor of a list request.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ListQuery {
    pub(crate) filter: Filter,
    pub(crate) limit: u32,
    pub(crate) cursor: Option<Cursor>,
}

impl ListQuery {
    /// Reads `reference`, `version`, `status`, `since`, `shadow` (`true`: shadow reviews too),
    /// `limit` and `cursor`; an unknown or
    /// repeated parameter, or a bad value, is an error naming it.
    pub(crate) fn parse(pairs: Vec<(String, String)>) -> Result<ListQuery, String> {
        let mut query = ListQuery {
            limit: DEFAULT_LIMIT,
            ..ListQuery::default()
        };
        let mut seen: Vec<String> = Vec::new();
        for (key, value) in pairs {
            if seen.contains(&key) {
                return Err(format!("`{key}` is given more than once"));
            }
            match key.as_str() {
                "reference" => {
                    jevjudge_store::check_reference(&value)?;
                    query.filter.reference = Some(value);
                }
                "version" => {
                    if value.is_empty() || value.chars().count() > 256 {
                        return Err("`version` must be 1 to 256 characters".to_owned());
                    }
                    jevjudge_store::check_no_controls("version", &value)?;
                    query.filter.version = Some(value);
                }
                "status" => {
                    let status = value.to_ascii_uppercase();
                    if !STATUSES.contains(&status.as_str()) {
                        return Err("`status` must be PASS, FAIL, INCONCLUSIVE or ERROR".to_owned());
                    }
                    query.filter.status = Some(status);
                }
                "since" => {
                    query.filter.since = Some(
                        jevjudge_store::parse_time(&value)
                            .map_err(|_| "`since` must be an RFC 3339 time like 2026-11-30T12:00:00Z or a date like 2026-11-30".to_owned())?,
                    );
                }
                "limit" => {
                    query.limit = value
                        .parse::<u32>()
                        .ok()
                        .filter(|n| (1..=MAX_PAGE).contains(n))
                        .ok_or_else(|| {
                            format!("`limit` must be a whole number from 1 to {MAX_PAGE}")
                        })?;
                }
                "shadow" => {
                    query.filter.shadow = match value.as_str() {
                        "true" => true,
                        "false" => false,
                        _ => return Err("`shadow` must be true or false".to_owned()),
                    };
                }
                "cursor" => {
                    query.cursor = Some(
                        value
                            .parse()
                            .map_err(|e: jevjudge_store::CursorError| e.to_string())?,
                    );
                }
                _ => {
                    let shown: String = key.chars().take(64).filter(|c| !c.is_control()).collect();
                    return Err(format!(
                        "unknown parameter `{shown}`; expected reference, version, status, since, shadow, limit, cursor"
                    ));
                }
            }
            seen.push(key);
        }
        Ok(query)
    }
}

/// `GET /v1/reviews?reference=&version=&status=&since=&shadow=&limit=&cursor=`: newest first,
/// `{"reviews": [...], "next_cursor": "..."|null}`.
pub(crate) async fn list_reviews(
    State(state): State<ServeState>,
    headers: HeaderMap,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ServeError> {
    may_read_log(&state, &headers)?;
    let log = state.decision_log().ok_or(ServeError::NoStore)?;
    let Ok(Query(pairs)) = query else {
        return Err(ServeError::InvalidQuery {
            message: "the query string is not valid (name=value pairs, percent-encoded)".to_owned(),
        });
    };
    let query = ListQuery::parse(pairs).map_err(|message| ServeError::InvalidQuery { message })?;
    match log
        .store()
        .list(&query.filter, query.limit, query.cursor)
        .await
    {
        Ok(page) => Ok(Json(page).into_response()),
        // A filter the store refuses (a control character) is the caller's mistake.
        Err(StoreError::Invalid(message)) => Err(ServeError::InvalidQuery { message }),
        Err(error) => Err(unavailable(&state, &error)),
    }
}

/// `GET /readyz`: 200 when the service can answer reviews (its backend has not refused the key
/// and its decision log, if any, takes statements now), else 503. `/healthz` stays liveness.
pub(crate) async fn readyz(State(state): State<ServeState>) -> Response {
    // A backend that refused the key (401/403) answers every review with an ERROR: not ready
    // until the service restarts with a working key.
    if !state.ready() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({"status": "not_ready", "backend": "key_refused"})),
        )
            .into_response();
    }
    match state.decision_log() {
        None => Json(serde_json::json!({"status": "ready", "store": "none"})).into_response(),
        Some(log) => {
            let ok = log.check().await;
            state.episodes().store_ok(ok);
            if ok {
                Json(serde_json::json!({"status": "ready", "store": "ok"})).into_response()
            } else {
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    Json(serde_json::json!({"status": "not_ready", "store": "unavailable"})),
                )
                    .into_response()
            }
        }
    }
}

/// Adds the decision log to the OpenAPI document: `review_id` and `reference`, the read
/// routes, `/readyz`, and 503 `store_unavailable` on reviews.
pub(crate) fn describe(
    document: &mut serde_json::Value,
    secured: &serde_json::Value,
    unauthorized: &serde_json::Value,
) {
    use serde_json::json;
    let error = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        })
    };
    let schemas = &mut document["components"]["schemas"];
    schemas["ReviewRequest"]["properties"]["reference"] = json!({
        "description": "Your own reference for this review (a ticket or message id), 1–256 \
                        characters without control characters; kept in the decision log and \
                        searchable with GET /v1/reviews?reference=.",
        "type": ["string", "null"], "minLength": 1, "maxLength": 256
    });
    schemas["Result"]["properties"]["review_id"] = json!({
        "description": "The review's id in the decision log (a UUIDv7), present when the \
                        service keeps one (--store): the row was committed before this response.",
        "type": "string", "format": "uuid"
    });
    schemas["Review"] = json!({
        "type": "object",
        "description": "A review as the decision log keeps it. Never holds state text.",
        "required": ["review_id", "received_at", "definition_version", "definition_digest",
                     "state_digest", "reference", "status", "error", "detail", "findings",
                     "model", "usage", "elapsed_millis", "request_id", "backend", "state_kept",
                     "state_erased_at"],
        "properties": {
            "review_id": {"type": "string", "format": "uuid"},
            "received_at": {"type": "string", "format": "date-time"},
            "definition_version": {"type": "string"},
            "definition_digest": {"description": "sha256 of the definition's questions and \
                                                  thresholds.", "type": "string"},
            "state_digest": {"description": "sha256 of the state's canonical JSON.",
                             "type": "string"},
            "reference": {"type": ["string", "null"]},
            "status": {"$ref": "#/components/schemas/Status"},
            "error": {"type": "string"},
            "detail": {"type": ["string", "null"]},
            "findings": {"type": "object",
                         "additionalProperties": {"$ref": "#/components/schemas/Finding"}},
            "model": {"type": ["string", "null"]},
            "usage": {"type": ["object", "null"]},
            "elapsed_millis": {"type": "number", "minimum": 0},
            "request_id": {"type": "string"},
            "backend": {"type": "string"},
            "state_kept": {"description": "Whether the state text is kept (--store-state).",
                           "type": "boolean"},
            "state_erased_at": {"description": "When kept state text was erased by retention.",
                                "type": ["string", "null"], "format": "date-time"},
            "shadow_of": {"description": "For a shadow review: the id of the live review it \
                                          shadows (listed only with shadow=true).",
                          "type": "string", "format": "uuid"},
            "route": {"description": "The route the live review came through.",
                      "type": "string"}
        }
    });
    schemas["ReviewPage"] = json!({
        "type": "object",
        "required": ["reviews", "next_cursor"],
        "properties": {
            "reviews": {"type": "array", "items": {"$ref": "#/components/schemas/Review"}},
            "next_cursor": {"description": "Pass as `cursor` for the next (older) page; null \
                                            on the last page.", "type": ["string", "null"]}
        }
    });
    let store_unavailable = error(
        "The decision log cannot take the review's record (`store_unavailable`): no verdict is \
         answered without its record. Retry after `Retry-After` seconds.",
    );
    let paths = &mut document["paths"];
    let post_503 = &mut paths["/v1/reviews/{version}"]["post"]["responses"]["503"]["description"];
    if let Some(text) = post_503.as_str() {
        *post_503 = json!(format!(
            "{text} Or the decision log cannot take the review's record (`store_unavailable`): \
             no verdict is answered without its record."
        ));
    }
    paths["/v1/reviews/{version}"]["get"] = json!({
        "operationId": "getReview",
        "summary": "One review from the decision log, by id.",
        "security": secured,
        "parameters": [{
            "name": "version", "in": "path", "required": true,
            "description": "For this GET: the review's id (`review_id` of the review's response). \
                            The path template is shared with POST, where it is a definition version.",
            "schema": {"type": "string"}
        }],
        "responses": {
            "200": {"description": "The review.", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Review"}}}},
            "401": unauthorized,
            "404": error("No review has this id (`review_not_found`), or the service keeps \
                          no decision log (`no_store`)."),
            "503": store_unavailable.clone()
        }
    });
    let query = |name: &str, description: &str, schema: serde_json::Value| {
        json!({"name": name, "in": "query", "required": false, "description": description,
               "schema": schema})
    };
    paths["/v1/reviews"] = json!({"get": {
        "operationId": "listReviews",
        "summary": "Reviews from the decision log, newest first, one page at a time.",
        "security": secured,
        "parameters": [
            query("reference", "Only reviews with this reference.",
                  json!({"type": "string", "maxLength": 256})),
            query("version", "Only reviews of this definition version.", json!({"type": "string"})),
            query("status", "Only reviews with this status.",
                  json!({"$ref": "#/components/schemas/Status"})),
            query("since", "Only reviews received at or after this time (RFC 3339, or a date \
                            meaning midnight UTC).", json!({"type": "string"})),
            query("shadow", "true: shadow reviews too (left out by default).",
                  json!({"type": "string", "enum": ["true", "false"]})),
            query("limit", &format!("Page size (default {DEFAULT_LIMIT})."),
                  json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE})),
            query("cursor", "The `next_cursor` of the previous page.", json!({"type": "string"}))
        ],
        "responses": {
            "200": {"description": "A page of reviews.", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/ReviewPage"}}}},
            "400": error("A parameter is unknown, repeated or invalid (`invalid_query`)."),
            "401": unauthorized,
            "404": error("The service keeps no decision log (`no_store`)."),
            "503": store_unavailable
        }
    }});
    paths["/readyz"] = json!({"get": {
        "operationId": "ready",
        "summary": "Readiness: 200 when reviews can be answered and kept; 503 while the \
                    decision log is unavailable or after the backend refused the key. No token needed. /healthz stays liveness.",
        "security": [],
        "responses": {
            "200": {"description": "Ready.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["status", "store"],
                "properties": {"status": {"const": "ready"},
                               "store": {"enum": ["ok", "none"]}}}}}},
            "503": {"description": "Not ready: the decision log is unavailable (`store`), or \
                                    the backend refused the API key (`backend`: key_refused).",
                    "content": {"application/json": {"schema": {
                "type": "object", "required": ["status"],
                "properties": {"status": {"const": "not_ready"},
                               "store": {"const": "unavailable"},
                               "backend": {"const": "key_refused"}}}}}}
        }
    }});
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<ListQuery, String> {
        ListQuery::parse(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn list_parameters_are_read_and_checked() {
        let query = parse(&[]).unwrap();
        assert_eq!(query.limit, DEFAULT_LIMIT);
        assert_eq!(query.filter, Filter::default());
        let query = parse(&[
            ("reference", "T-1"),
            ("version", "v1"),
            ("status", "fail"),
            ("since", "2026-11-30"),
            ("limit", "500"),
        ])
        .unwrap();
        assert_eq!(query.filter.reference.as_deref(), Some("T-1"));
        assert_eq!(query.filter.status.as_deref(), Some("FAIL"));
        assert_eq!(query.limit, 500);
        assert!(query.filter.since.is_some());
        assert!(
            !query.filter.shadow,
            "shadow reviews are left out unless asked for"
        );
        assert!(parse(&[("shadow", "true")]).unwrap().filter.shadow);
        assert!(!parse(&[("shadow", "false")]).unwrap().filter.shadow);
        let limit = "`limit` must be a whole number from 1 to 500";
        for (pairs, message) in [
            (vec![("limit", "0")], limit),
            (vec![("limit", "501")], limit),
            (
                vec![("status", "MAYBE")],
                "`status` must be PASS, FAIL, INCONCLUSIVE or ERROR",
            ),
            (
                vec![("cursor", "abc")],
                "`cursor` is not a cursor from a previous page's next_cursor",
            ),
            (
                vec![("since", "soon")],
                "`since` must be an RFC 3339 time like 2026-11-30T12:00:00Z or a date like 2026-11-30",
            ),
            (
                vec![("ref", "x")],
                "unknown parameter `ref`; expected reference, version, status, since, shadow, limit, cursor",
            ),
            (vec![("shadow", "yes")], "`shadow` must be true or false"),
            (
                vec![("version", "a"), ("version", "b")],
                "`version` is given more than once",
            ),
            (
                vec![("version", "v1\0")],
                "`version` must not contain control characters",
            ),
            (
                vec![("reference", "T\u{1b}1")],
                "`reference` must not contain control characters",
            ),
        ] {
            assert_eq!(parse(&pairs).err().as_deref(), Some(message), "{pairs:?}");
        }
        let long = "x".repeat(257);
        assert!(parse(&[("reference", &long)]).is_err());
    }
}
