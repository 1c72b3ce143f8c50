//! What the client keeps from an error response body (systemone-wire.md §8).
//!
//! Only two short fields survive: the `error_type` and one extracted message, found in the
//! official SDK's order. Everything else is dropped, in particular a 422's `input` and `ctx`
//! (they echo the request) and any body that is not JSON (gateway HTML, plain text), so no
//! private text can travel on in an error (judge-contract D12).

use serde_json::Value;

/// The longest message kept, in characters.
pub const MAX_MESSAGE_CHARS: usize = 200;
/// The longest `error_type` kept, in characters.
const MAX_ERROR_TYPE_CHARS: usize = 64;

/// The safe summary of an error body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ErrorBody {
    /// `detail.error_type` (or `error.type`, `error.error_type`, `error_type`).
    pub(crate) error_type: Option<String>,
    /// The extracted message, at most [`MAX_MESSAGE_CHARS`] characters.
    pub(crate) message: Option<String>,
}

impl ErrorBody {
    /// Reads an error body. Anything but a JSON object gives an empty summary.
    pub(crate) fn read(body: &[u8]) -> ErrorBody {
        match serde_json::from_slice::<Value>(body) {
            Ok(value) => ErrorBody {
                error_type: error_type(&value).map(|t| clip(t, MAX_ERROR_TYPE_CHARS)),
                message: extract_message(&value),
            },
            Err(_) => ErrorBody::default(),
        }
    }
}

/// The message of a JSON error body, in the SDK's order:
/// 1. `error` (a string); 2. `error.message`; 3. `message`; 4. `detail` (a string);
/// 5. `detail.message`; 6. `detail[]`, joined as `loc: msg` with the leading `body` dropped.
///
/// Blank candidates are skipped. The result is at most [`MAX_MESSAGE_CHARS`] characters with
/// control characters replaced by spaces.
///
/// ```
/// use jevjudge_client::extract_message;
/// use serde_json::json;
///
/// let body = json!({"detail": [{"loc": ["body", "questions"], "msg": "Field required",
///                               "type": "missing", "input": {"secret": "RAW"}}]});
/// assert_eq!(extract_message(&body).as_deref(), Some("questions: Field required"));
/// ```
pub fn extract_message(body: &Value) -> Option<String> {
    let error = body.get("error");
    let detail = body.get("detail");
    let candidates = [
        error.and_then(Value::as_str).map(str::to_owned),
        error
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        body.get("message")
            .and_then(Value::as_str)
            .map(str::to_owned),
        detail.and_then(Value::as_str).map(str::to_owned),
        detail
            .and_then(|d| d.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        detail
            .and_then(Value::as_array)
            .and_then(|items| join_validation_errors(items)),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(|text| clip(&text, MAX_MESSAGE_CHARS))
        .find(|text| !text.is_empty())
}

/// FastAPI's `detail` list: `loc: msg` per item, `; `-separated. Only `loc` and `msg` are read.
fn join_validation_errors(items: &[Value]) -> Option<String> {
    let mut parts = Vec::new();
    let mut length = 0;
    for item in items {
        let Some(msg) = item.get("msg").and_then(Value::as_str) else {
            continue;
        };
        let loc = item
            .get("loc")
            .and_then(Value::as_array)
            .map(|segments| {
                let mut segments: Vec<String> = segments
                    .iter()
                    .filter_map(|segment| match segment {
                        Value::String(text) => Some(text.clone()),
                        Value::Number(number) => Some(number.to_string()),
                        _ => None,
                    })
                    .collect();
                if segments.first().is_some_and(|first| first == "body") {
                    segments.remove(0);
                }
                segments.join(".")
            })
            .unwrap_or_default();
        let part = if loc.is_empty() {
            msg.to_owned()
        } else {
            format!("{loc}: {msg}")
        };
        length += part.len();
        parts.push(part);
        if length > MAX_MESSAGE_CHARS * 4 {
            break; // the rest would be clipped anyway
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn error_type(body: &Value) -> Option<&str> {
    let error = body.get("error");
    [
        body.get("detail").and_then(|d| d.get("error_type")),
        error.and_then(|e| e.get("error_type")),
        error.and_then(|e| e.get("type")),
        body.get("error_type"),
    ]
    .into_iter()
    .flatten()
    .filter_map(Value::as_str)
    .find(|text| !text.trim().is_empty())
}

/// Replaces control characters by spaces, trims, and keeps at most `max` characters (the last
/// one an ellipsis when text was cut).
fn clip(text: &str, max: usize) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.chars().count() <= max {
        return cleaned.to_owned();
    }
    let mut clipped: String = cleaned.chars().take(max.saturating_sub(1)).collect();
    clipped.push('…');
    clipped
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn message(body: Value) -> Option<String> {
        extract_message(&body)
    }

    #[test]
    fn extraction_follows_the_sdk_order() {
        let full = json!({
            "error": "1 error string",
            "message": "3 message",
            "detail": {"message": "5 detail.message"},
        });
        assert_eq!(message(full).as_deref(), Some("1 error string"));
        assert_eq!(
            message(json!({"error": {"message": "2 error.message"}, "message": "3"})).as_deref(),
            Some("2 error.message")
        );
        assert_eq!(
            message(json!({"message": "3 message", "detail": "4"})).as_deref(),
            Some("3 message")
        );
        assert_eq!(
            message(json!({"detail": "Too many choices. Must have at most 255 choices."}))
                .as_deref(),
            Some("Too many choices. Must have at most 255 choices.")
        );
        assert_eq!(
            message(json!({"detail": {"error_type": "api_usage_error", "message": "Unknown model: jev-typo"}}))
                .as_deref(),
            Some("Unknown model: jev-typo")
        );
        assert_eq!(
            message(json!({"detail": {"error_type": "max_tokens_exceeded"}})),
            None
        );
        assert_eq!(
            message(json!({"error": "  ", "message": "next"})).as_deref(),
            Some("next")
        );
        assert_eq!(message(json!({"error": 5})), None);
        assert_eq!(message(json!([1, 2])), None);
    }

    #[test]
    fn validation_lists_join_loc_and_msg_without_body() {
        let body = json!({"detail": [
            {"loc": ["body", "questions"], "msg": "Dictionary should have at least 1 item after validation, not 0",
             "type": "too_short", "input": {}, "ctx": {"field_type": "Dictionary"}},
            {"loc": ["body", "questions", "q1", "score", "criteria", 0], "msg": "Input should be a valid string",
             "type": "string_type", "input": {"RAW-Q-7f3a": true}},
            {"loc": ["body"], "msg": "Input should be a valid dictionary"},
            {"loc": ["query", "x"], "msg": "kept"},
            {"no": "msg"}
        ]});
        assert_eq!(
            message(body).as_deref(),
            Some(concat!(
                "questions: Dictionary should have at least 1 item after validation, not 0; ",
                "questions.q1.score.criteria.0: Input should be a valid string; ",
                "Input should be a valid dictionary; query.x: kept"
            ))
        );
    }

    #[test]
    fn a_422_echo_of_input_and_ctx_is_never_kept() {
        let body = br#"{"detail":[{"loc":["body","state"],"msg":"Input should be a valid string",
            "type":"string_type","input":"RAW-EVIDENCE-91c2","ctx":{"echo":"RAW-EVIDENCE-91c2"}}]}"#;
        let read = ErrorBody::read(body);
        assert_eq!(
            read.message.as_deref(),
            Some("state: Input should be a valid string")
        );
        assert!(!format!("{read:?}").contains("RAW-EVIDENCE"));
    }

    #[test]
    fn non_json_bodies_keep_nothing() {
        for body in [
            &b"<html><body>502 Bad Gateway RAW-HTML</body></html>"[..],
            b"Unauthorized",
            b"",
            b")]}'\n{\"error\":\"x\"}",
        ] {
            assert_eq!(ErrorBody::read(body), ErrorBody::default());
        }
    }

    #[test]
    fn error_type_is_read_from_detail_or_error() {
        let read = |text: &str| ErrorBody::read(text.as_bytes()).error_type;
        assert_eq!(
            read(r#"{"detail":{"error_type":"max_tokens_exceeded"}}"#).as_deref(),
            Some("max_tokens_exceeded")
        );
        assert_eq!(
            read(r#"{"error":{"type":"rate_limit_error","message":"slow"}}"#).as_deref(),
            Some("rate_limit_error")
        );
        assert_eq!(read(r#"{"detail":"Not Found"}"#), None);
    }

    #[test]
    fn long_messages_are_clipped_and_cleaned() {
        let long = "é".repeat(500);
        let clipped = message(json!({ "message": long })).unwrap();
        assert_eq!(clipped.chars().count(), MAX_MESSAGE_CHARS);
        assert!(clipped.ends_with('…'));
        assert_eq!(
            message(json!({"message": " line\nbreak\u{0}x "})).as_deref(),
            Some("line break x")
        );
    }

    proptest! {
        #[test]
        fn reading_any_bytes_never_panics_and_stays_short(body in proptest::collection::vec(any::<u8>(), 0..300)) {
            let read = ErrorBody::read(&body);
            if let Some(message) = read.message {
                prop_assert!(message.chars().count() <= MAX_MESSAGE_CHARS);
            }
        }

        #[test]
        fn any_message_text_is_clipped(text in any::<String>()) {
            if let Some(message) = message(json!({"detail": {"message": text}})) {
                prop_assert!(message.chars().count() <= MAX_MESSAGE_CHARS);
                prop_assert!(!message.chars().any(char::is_control));
            }
        }
    }
}
