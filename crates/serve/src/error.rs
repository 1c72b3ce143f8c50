//! The one error type of the service, and how it becomes an HTTP response.

use axum::{
    Json,
    http::{
        HeaderValue, StatusCode,
        header::{RETRY_AFTER, WWW_AUTHENTICATE},
    },
    response::{IntoResponse, Response},
};

/// Why a request got no verdict.
///
/// Each variant is one HTTP status and one stable `code`; the body is
/// `{"error": {"code": "...", "message": "..."}}`. Messages name the problem in the request
/// (a field, a limit) and never hold internals, state text, tokens or keys. A review that ran
/// is never an error here: an ERROR verdict is a 200.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// 401 `unauthorized`: no valid bearer token.
    #[error("a valid bearer token is required (Authorization: Bearer TOKEN)")]
    Unauthorized,
    /// 404 `unknown_version`: no definition has this version.
    #[error("no definition has this version; GET /v1/definitions lists them")]
    UnknownVersion,
    /// 404 `not_found`: no such route.
    #[error("no such route; GET /openapi.json describes the API")]
    NotFound,
    /// 405 `method_not_allowed`: the route exists for other methods.
    #[error("this method is not allowed on this route")]
    MethodNotAllowed,
    /// 413 `body_too_large`.
    #[error("the body is larger than the limit of {limit} bytes")]
    BodyTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// 400 `body_unreadable`: the body could not be received.
    #[error("the body could not be read")]
    BodyUnreadable,
    /// 408 `body_timeout`: the body did not arrive within the longest review budget.
    #[error("the body did not arrive in time")]
    BodyTimeout,
    /// 400 `malformed_json`: the body is not JSON.
    #[error("{message}")]
    MalformedJson {
        /// What is wrong, with its line and column.
        message: String,
    },
    /// 422 `invalid_body`: JSON, but not a review request.
    #[error("{message}")]
    InvalidBody {
        /// Which field is wrong and why.
        message: String,
    },
    /// 503 `overloaded`: the queue is full; retry after the given seconds.
    #[error("the service is at capacity; retry later")]
    Overloaded {
        /// The `Retry-After` value, in seconds.
        retry_after_secs: u64,
    },
    /// 503 `queue_timeout`: no backend slot freed within the review's budget.
    #[error("no backend slot became free within the review's budget; retry later")]
    QueueTimeout {
        /// The `Retry-After` value, in seconds.
        retry_after_secs: u64,
    },
    /// 503 `store_unavailable`: the decision log cannot take the review's record, so no
    /// verdict is answered (never a verdict without its record).
    #[error("the decision log is unavailable; retry later")]
    StoreUnavailable {
        /// The `Retry-After` value, in seconds.
        retry_after_secs: u64,
    },
    /// 404 `review_not_found`: no review has this id.
    #[error("no review has this id")]
    ReviewNotFound,
    /// 400 `invalid_query`: a query parameter is unknown, repeated or invalid.
    #[error("{message}")]
    InvalidQuery {
        /// Which parameter is wrong and why.
        message: String,
    },
    /// 404 `no_store`: the service keeps no decision log.
    #[error("this service keeps no decision log")]
    NoStore,
    /// 404 `no_queue`: the service queues no reviews (no `--queue-statuses`/`--sample-pass`).
    #[error("this service has no review queue")]
    NoQueue,
    /// 404 `queue_item_not_found`: no queue item has this id.
    #[error("no queue item has this id")]
    QueueItemNotFound,
    /// 409 `lease_not_held`: the item is not leased to the caller, or the lease has expired.
    #[error("the item is not leased to you, or its lease has expired: claim an item again")]
    LeaseNotHeld,
    /// 409 `already_decided`: the item has been decided already.
    #[error("the item has been decided already")]
    AlreadyDecided,
    /// 409 `item_expired`: the item was closed undecided, its state text erased by retention.
    #[error("the item has expired: retention erased its state text before it was decided")]
    ItemExpired,
    /// 409 `too_many_leases`: the reviewer holds as many items as one reviewer may; the body
    /// lists them in `held`.
    #[error(
        "you hold {} items, the most one reviewer may hold at once: decide or release one \
         (listed in `held`) before claiming another", held.len()
    )]
    TooManyLeases {
        /// The items the reviewer holds.
        held: Vec<String>,
    },
    /// 422 `invalid_decision`: a decision that does not fit the item (for example an unknown criterion id); the
    /// message names the field.
    #[error("{message}")]
    InvalidDecision {
        /// What is wrong.
        message: String,
    },
    /// 403 `not_a_lead`: only a lead (`name:token:lead` in the reviewer list) may do this.
    #[error("only a lead may do this: adjudications and the decisions are the leads'")]
    NotALead,
    /// 403 `forbidden`: a caller's or a reviewer's token on a request that needs an
    /// administrator's (changing a route).
    #[error(
        "this needs an administrator's token: callers' and reviewers' tokens may not change routes"
    )]
    Forbidden,
    /// 409 `route_conflict`: the route change does not fit the route as held (its live version
    /// changes only through promote, nothing to roll back, changed meanwhile, a name that is a
    /// definition version); the message says which.
    #[error("{message}")]
    RouteConflict {
        /// What is in the way.
        message: String,
    },
    /// 409 `promote_refused`: the promote gate refused; the message names the figure, the body
    /// carries all of them in `figures`; `"force": true` overrides it.
    #[error("{message}")]
    PromoteRefused {
        /// The refusal, naming the figure.
        message: String,
        /// The gate's figures.
        figures: jevjudge_store::PromoteFigures,
    },
    /// 500 `internal`: a bug; details are only in the logs.
    #[error("internal error")]
    Internal,
}

impl ServeError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ServeError::Unauthorized => StatusCode::UNAUTHORIZED,
            ServeError::UnknownVersion | ServeError::NotFound => StatusCode::NOT_FOUND,
            ServeError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ServeError::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            ServeError::BodyTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            ServeError::BodyUnreadable | ServeError::MalformedJson { .. } => {
                StatusCode::BAD_REQUEST
            }
            ServeError::InvalidBody { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ServeError::Overloaded { .. }
            | ServeError::QueueTimeout { .. }
            | ServeError::StoreUnavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ServeError::ReviewNotFound | ServeError::NoStore => StatusCode::NOT_FOUND,
            ServeError::InvalidQuery { .. } => StatusCode::BAD_REQUEST,
            ServeError::NoQueue | ServeError::QueueItemNotFound => StatusCode::NOT_FOUND,
            ServeError::LeaseNotHeld
            | ServeError::AlreadyDecided
            | ServeError::ItemExpired
            | ServeError::TooManyLeases { .. } => StatusCode::CONFLICT,
            ServeError::InvalidDecision { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ServeError::NotALead | ServeError::Forbidden => StatusCode::FORBIDDEN,
            ServeError::RouteConflict { .. } | ServeError::PromoteRefused { .. } => {
                StatusCode::CONFLICT
            }
            ServeError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ServeError::Unauthorized => "unauthorized",
            ServeError::UnknownVersion => "unknown_version",
            ServeError::NotFound => "not_found",
            ServeError::MethodNotAllowed => "method_not_allowed",
            ServeError::BodyTooLarge { .. } => "body_too_large",
            ServeError::BodyUnreadable => "body_unreadable",
            ServeError::BodyTimeout => "body_timeout",
            ServeError::MalformedJson { .. } => "malformed_json",
            ServeError::InvalidBody { .. } => "invalid_body",
            ServeError::Overloaded { .. } => "overloaded",
            ServeError::QueueTimeout { .. } => "queue_timeout",
            ServeError::StoreUnavailable { .. } => "store_unavailable",
            ServeError::ReviewNotFound => "review_not_found",
            ServeError::InvalidQuery { .. } => "invalid_query",
            ServeError::NoStore => "no_store",
            ServeError::NoQueue => "no_queue",
            ServeError::QueueItemNotFound => "queue_item_not_found",
            ServeError::LeaseNotHeld => "lease_not_held",
            ServeError::AlreadyDecided => "already_decided",
            ServeError::ItemExpired => "item_expired",
            ServeError::TooManyLeases { .. } => "too_many_leases",
            ServeError::InvalidDecision { .. } => "invalid_decision",
            ServeError::NotALead => "not_a_lead",
            ServeError::Forbidden => "forbidden",
            ServeError::RouteConflict { .. } => "route_conflict",
            ServeError::PromoteRefused { .. } => "promote_refused",
            ServeError::Internal => "internal",
        }
    }

    /// Every code, for the OpenAPI document.
    pub(crate) const CODES: [&'static str; 27] = [
        "unauthorized",
        "unknown_version",
        "not_found",
        "method_not_allowed",
        "body_too_large",
        "body_unreadable",
        "body_timeout",
        "malformed_json",
        "invalid_body",
        "overloaded",
        "queue_timeout",
        "store_unavailable",
        "review_not_found",
        "invalid_query",
        "no_store",
        "no_queue",
        "queue_item_not_found",
        "lease_not_held",
        "already_decided",
        "item_expired",
        "too_many_leases",
        "invalid_decision",
        "not_a_lead",
        "forbidden",
        "route_conflict",
        "promote_refused",
        "internal",
    ];
}

impl IntoResponse for ServeError {
    fn into_response(self) -> Response {
        let mut body = serde_json::json!({
            "error": {"code": self.code(), "message": self.to_string()}
        });
        if let ServeError::TooManyLeases { held } = &self {
            body["held"] = serde_json::json!(held);
        }
        if let ServeError::PromoteRefused { figures, .. } = &self {
            body["figures"] = serde_json::json!(figures);
        }
        let mut response = (self.status(), Json(body)).into_response();
        let headers = response.headers_mut();
        match self {
            ServeError::Unauthorized => {
                headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ServeError::Overloaded { retry_after_secs }
            | ServeError::QueueTimeout { retry_after_secs }
            | ServeError::StoreUnavailable { retry_after_secs } => {
                headers.insert(RETRY_AFTER, HeaderValue::from(retry_after_secs));
            }
            _ => {}
        }
        response.extensions_mut().insert(ErrorCode(self.code()));
        response
    }
}

/// The code of an error response, for the request log.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ErrorCode(pub(crate) &'static str);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_listed_once() {
        let errors = [
            ServeError::Unauthorized,
            ServeError::UnknownVersion,
            ServeError::NotFound,
            ServeError::MethodNotAllowed,
            ServeError::BodyTooLarge { limit: 1 },
            ServeError::BodyUnreadable,
            ServeError::BodyTimeout,
            ServeError::MalformedJson {
                message: String::new(),
            },
            ServeError::InvalidBody {
                message: String::new(),
            },
            ServeError::Overloaded {
                retry_after_secs: 1,
            },
            ServeError::QueueTimeout {
                retry_after_secs: 1,
            },
            ServeError::StoreUnavailable {
                retry_after_secs: 1,
            },
            ServeError::ReviewNotFound,
            ServeError::InvalidQuery {
                message: String::new(),
            },
            ServeError::NoStore,
            ServeError::NoQueue,
            ServeError::QueueItemNotFound,
            ServeError::LeaseNotHeld,
            ServeError::AlreadyDecided,
            ServeError::ItemExpired,
            ServeError::TooManyLeases { held: Vec::new() },
            ServeError::InvalidDecision {
                message: String::new(),
            },
            ServeError::NotALead,
            ServeError::Forbidden,
            ServeError::RouteConflict {
                message: String::new(),
            },
            ServeError::PromoteRefused {
                message: String::new(),
                figures: jevjudge_store::PromoteFigures::default(),
            },
            ServeError::Internal,
        ];
        let codes: Vec<&str> = errors.iter().map(ServeError::code).collect();
        assert_eq!(codes, ServeError::CODES);
    }

    #[test]
    fn overload_says_when_to_retry() {
        let response = ServeError::Overloaded {
            retry_after_secs: 3,
        }
        .into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[RETRY_AFTER], "3");
        let response = ServeError::Unauthorized.into_response();
        assert_eq!(response.headers()[WWW_AUTHENTICATE], "Bearer");
    }
}
