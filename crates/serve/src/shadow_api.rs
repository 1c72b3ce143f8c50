//! `GET /v1/routes/{route}/shadow?version=&since=`: the evidence for a shadow version
//! ([`jevjudge_eval::shadow`]) as JSON — the same document `jevjudge routes shadow --json`
//! prints.

use axum::{
    Json,
    extract::{Path, Query, State, rejection::PathRejection, rejection::QueryRejection},
    response::{IntoResponse, Response},
};
use jevjudge_eval::shadow::{ShadowError, shadow_evidence};
use jevjudge_store::StoreError;
use serde_json::{Value, json};

use crate::{ServeError, ServeState};

/// The parameters of the evidence request.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ShadowQuery {
    pub(crate) version: Option<String>,
    pub(crate) since: Option<std::time::SystemTime>,
}

impl ShadowQuery {
    /// Reads `version` and `since`; an unknown or repeated parameter, or a bad value, is an
    /// error naming it.
    pub(crate) fn parse(pairs: Vec<(String, String)>) -> Result<ShadowQuery, String> {
        let mut query = ShadowQuery::default();
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
                    query.version = Some(value);
                }
                "since" => {
                    query.since = Some(jevjudge_store::parse_time(&value).map_err(|_| {
                        "`since` must be an RFC 3339 time like 2026-11-30T12:00:00Z or a date \
                         like 2026-11-30"
                            .to_owned()
                    })?);
                }
                _ => {
                    let shown: String = key.chars().take(64).filter(|c| !c.is_control()).collect();
                    return Err(format!(
                        "unknown parameter `{shown}`; expected version, since"
                    ));
                }
            }
            seen.push(key);
        }
        Ok(query)
    }
}

/// `GET /v1/routes/{route}/shadow`: 404 `not_found` for a route the store does not hold, 400
/// `invalid_query` for a bad parameter or a route without shadows and no `version`, 503 when
/// the store cannot be read.
pub(crate) async fn shadow_report(
    State(state): State<ServeState>,
    path: Result<Path<String>, PathRejection>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, ServeError> {
    let store = state.store().ok_or(ServeError::NoStore)?;
    let Ok(Path(route)) = path else {
        return Err(ServeError::NotFound);
    };
    let Ok(Query(pairs)) = query else {
        return Err(ServeError::InvalidQuery {
            message: "the query string is not valid (name=value pairs, percent-encoded)".to_owned(),
        });
    };
    let query =
        ShadowQuery::parse(pairs).map_err(|message| ServeError::InvalidQuery { message })?;
    if jevjudge_store::check_no_controls("route", &route).is_err() {
        return Err(ServeError::NotFound);
    }
    match shadow_evidence(store, &route, query.version.as_deref(), query.since).await {
        Ok(evidence) => Ok(Json(evidence.to_document()).into_response()),
        Err(ShadowError::UnknownRoute(_)) => Err(ServeError::NotFound),
        Err(error @ ShadowError::NoShadow(_)) => Err(ServeError::InvalidQuery {
            message: error.to_string(),
        }),
        Err(ShadowError::Store(StoreError::Invalid(message))) => {
            Err(ServeError::InvalidQuery { message })
        }
        Err(ShadowError::Store(error)) => {
            tracing::warn!(%error, "the shadow reviews could not be read");
            Err(ServeError::StoreUnavailable {
                retry_after_secs: state.config().retry_after_secs(),
            })
        }
        Err(error) => {
            tracing::warn!(%error, "the shadow evidence could not be computed");
            Err(ServeError::Internal)
        }
    }
}

/// Adds `GET /v1/routes/{route}/shadow` and its `ShadowReport` schema to the OpenAPI document.
pub(crate) fn describe(document: &mut Value, secured: &Value, unauthorized: &Value) {
    let error = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        })
    };
    let rate = json!({
        "type": "object", "required": ["count", "of", "rate", "ci"],
        "properties": {
            "count": {"type": "integer", "minimum": 0},
            "of": {"type": "integer", "minimum": 0},
            "rate": {"type": ["number", "null"]},
            "ci": {"description": "95 % Wilson interval.",
                   "type": ["array", "null"], "items": {"type": "number"}}
        }
    });
    let schemas = &mut document["components"]["schemas"];
    schemas["ShadowRate"] = rate;
    let rate = json!({"$ref": "#/components/schemas/ShadowRate"});
    schemas["ShadowReport"] = json!({
        "type": "object",
        "description": "A route's live version against one shadow version on the live reviews \
                        the shadow judged; on those people labelled in the review queue, the \
                        `compare --json` document of live (base) against shadow (candidate).",
        "required": ["route", "shadow", "live", "since", "reviews", "agreement", "transitions",
                     "coverage", "shadow_input_tokens", "labelled"],
        "properties": {
            "route": {"type": "string"},
            "shadow": {"description": "The shadow version.", "type": "string"},
            "live": {"description": "The live versions that judged the shadowed reviews.",
                     "type": "array", "items": {"type": "string"}},
            "since": {"type": ["string", "null"], "format": "date-time"},
            "reviews": {"description": "Shadowed live reviews.", "type": "integer", "minimum": 0},
            "agreement": rate.clone(),
            "transitions": {"description": "Changed statuses, live->shadow (`PASS->FAIL`, …).",
                            "type": "object", "additionalProperties": {"type": "integer"}},
            "coverage": {"type": "object", "required": ["live", "shadow"],
                         "properties": {"live": rate.clone(), "shadow": rate}},
            "shadow_input_tokens": {"description": "Input tokens the shadow's reviews spent \
                                                    (0 when scored on the live answers).",
                                    "type": "integer", "minimum": 0},
            "labelled": {
                "type": "object", "required": ["cases", "left_out", "compare"],
                "properties": {
                    "cases": {"type": "integer", "minimum": 0},
                    "left_out": {"type": "object",
                                 "additionalProperties": {"type": "integer", "minimum": 0}},
                    "compare": {"description": "`jevjudge compare --json` of the two sides on \
                                                the labelled reviews; null when none.",
                                "type": ["object", "null"]}
                }
            }
        }
    });
    let query = |name: &str, description: &str| {
        json!({"name": name, "in": "query", "required": false, "description": description,
               "schema": {"type": "string"}})
    };
    document["paths"]["/v1/routes/{route}/shadow"] = json!({"get": {
        "operationId": "getShadowReport",
        "summary": "The evidence for a shadow version of a route: agreement, flips, coverage and, \
                    on labelled reviews, compare's figures.",
        "security": secured,
        "parameters": [
            {"name": "route", "in": "path", "required": true,
             "description": "The route's name.", "schema": {"type": "string"}},
            query("version", "The shadow version (default: the route's first shadow)."),
            query("since", "Only reviews shadowed at or after this time (RFC 3339, or a date \
                            meaning midnight UTC).")
        ],
        "responses": {
            "200": {"description": "The evidence.", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/ShadowReport"}}}},
            "400": error("A parameter is unknown, repeated or invalid, or the route has no \
                          shadow and no version was named (`invalid_query`)."),
            "401": unauthorized,
            "404": error("No route has this name (`not_found`), or the service keeps no store \
                          (`no_store`)."),
            "500": error("The evidence could not be computed (`internal`)."),
            "503": error("The store cannot be read (`store_unavailable`). Retry after \
                          `Retry-After` seconds.")
        }
    }});
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn version_and_since_are_read_and_anything_else_is_refused_by_name() {
        let query =
            ShadowQuery::parse(pairs(&[("version", "v+cal.1"), ("since", "2026-11-30")])).unwrap();
        assert_eq!(query.version.as_deref(), Some("v+cal.1"));
        assert!(query.since.is_some());
        assert_eq!(ShadowQuery::parse(vec![]).unwrap(), ShadowQuery::default());
        let twice = ShadowQuery::parse(pairs(&[("version", "a"), ("version", "b")]));
        assert_eq!(twice.unwrap_err(), "`version` is given more than once");
        let unknown = ShadowQuery::parse(pairs(&[("colour", "red")])).unwrap_err();
        assert!(unknown.contains("`colour`"), "{unknown}");
        let since = ShadowQuery::parse(pairs(&[("since", "yesterday")])).unwrap_err();
        assert!(since.starts_with("`since` must be"), "{since}");
        let empty = ShadowQuery::parse(pairs(&[("version", "")])).unwrap_err();
        assert!(empty.contains("1 to 256"), "{empty}");
    }
}
