//! Error answers in the live API's shapes (systemone-wire.md §8).

use serde_json::{Value, json};

/// A request the fake refuses: the HTTP status and the JSON body the live API would send.
///
/// Bodies never contain the API key; a 422 echoes parts of the request body as FastAPI does.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("the fake rejected the request with status {status}")]
pub struct Rejection {
    /// The HTTP status: 400, 401, 403, 404, 405, 413 or 422.
    pub status: u16,
    /// The JSON body, for example `{"detail": {"error_type": "max_tokens_exceeded"}}`.
    pub body: Value,
}

impl Rejection {
    /// 422 with FastAPI's list of `{"loc": ["body", …], "msg", "type", "input"}` entries.
    pub(crate) fn validation(errors: Vec<Value>) -> Self {
        Self {
            status: 422,
            body: json!({ "detail": errors }),
        }
    }

    /// 400 `api_usage_error` with `message`.
    pub(crate) fn usage(message: &str) -> Self {
        Self {
            status: 400,
            body: error_type(400, "api_usage_error", message).body,
        }
    }

    /// 400 with a bare-string `detail`, as the live API sends for too many options or levels.
    pub(crate) fn plain(message: &str) -> Self {
        Self {
            status: 400,
            body: json!({ "detail": message }),
        }
    }

    /// 400 `max_tokens_exceeded`, with no message (as observed live).
    pub(crate) fn max_tokens() -> Self {
        Self {
            status: 400,
            body: json!({ "detail": { "error_type": "max_tokens_exceeded" } }),
        }
    }

    /// 403: no `Authorization: Bearer` header.
    pub(crate) fn key_missing() -> Self {
        error_type(
            403,
            "authentication_error",
            "Must supply an API key! Check your request and try again.",
        )
    }

    /// 401: a key that is not the configured one (never echoed).
    pub(crate) fn key_invalid() -> Self {
        error_type(
            401,
            "authentication_error",
            "Cannot authenticate with the server. Please check your API key and try again.",
        )
    }

    /// 404 for any unknown route.
    pub(crate) fn not_found() -> Self {
        Self {
            status: 404,
            body: json!({ "detail": "Not Found" }),
        }
    }

    /// 405 for a known route with the wrong method.
    pub(crate) fn method_not_allowed() -> Self {
        Self {
            status: 405,
            body: json!({ "detail": "Method Not Allowed" }),
        }
    }

    /// 413 for a body the fake will not buffer.
    pub(crate) fn too_large() -> Self {
        Self {
            status: 413,
            body: json!({ "detail": "Request body too large" }),
        }
    }

    /// 400 for a body that could not be read at all.
    pub(crate) fn unreadable() -> Self {
        Self::usage("Could not read the request body.")
    }
}

fn error_type(status: u16, kind: &str, message: &str) -> Rejection {
    Rejection {
        status,
        body: json!({ "detail": { "error_type": kind, "message": message } }),
    }
}

/// One FastAPI validation entry at `["body", loc…]`.
pub(crate) fn entry(loc: &[Value], kind: &str, message: &str, input: &Value) -> Value {
    let mut path = Vec::with_capacity(loc.len() + 1);
    path.push(Value::from("body"));
    path.extend(loc.iter().cloned());
    json!({ "type": kind, "loc": path, "msg": message, "input": input })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_bodies_have_the_live_shape() {
        let missing = Rejection::key_missing();
        assert_eq!(missing.status, 403);
        assert_eq!(missing.body["detail"]["error_type"], "authentication_error");
        let invalid = Rejection::key_invalid();
        assert_eq!(invalid.status, 401);
        assert!(
            invalid.body["detail"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("Cannot authenticate"))
        );
    }

    #[test]
    fn validation_entries_start_at_body() {
        let e = entry(
            &[Value::from("questions")],
            "too_short",
            "short",
            &json!({}),
        );
        assert_eq!(e["loc"], json!(["body", "questions"]));
        assert_eq!(Rejection::validation(vec![e]).status, 422);
    }

    #[test]
    fn display_is_a_short_phrase() {
        assert_eq!(
            Rejection::max_tokens().to_string(),
            "the fake rejected the request with status 400"
        );
    }
}
