//! Request bodies: one reader for every JSON body of the API. A body is parsed refusing a key
//! repeated in any object (the last would silently win), must be an object with only the
//! route's fields, and is then read into the route's `serde` struct (`deny_unknown_fields`),
//! whose field readers give the messages. Every refusal maps here to today's codes: 400
//! `malformed_json` for text that is not JSON, 422 `invalid_body` for JSON of the wrong shape.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, error::Category};

use crate::ServeError;

/// The fields a route's body takes and how its refusals read.
pub(crate) struct Shape {
    /// The fields, in the order messages list them.
    pub(crate) fields: &'static [&'static str],
    /// The refusal of an unknown field, given its (shortened) name.
    pub(crate) unknown: fn(&str) -> String,
    /// What a body that is not an object is asked to look like (`{"state": ...}`).
    pub(crate) like: Option<&'static str>,
}

/// The longest part of an unknown field name echoed in a message.
pub(crate) const MAX_ECHOED_FIELD_CHARS: usize = 64;

/// Reads `bytes` (not blank) as the body of `shape` into `T`.
pub(crate) fn parse<T: DeserializeOwned>(bytes: &[u8], shape: &Shape) -> Result<T, ServeError> {
    let fields = object(bytes, shape)?;
    serde_json::from_value(Value::Object(fields)).map_err(|error| invalid(error.to_string()))
}

/// The body's fields: JSON (else 400), no key repeated in any object, an object (else 422)
/// with only the shape's fields (else 422 naming the first other).
fn object(bytes: &[u8], shape: &Shape) -> Result<Map<String, Value>, ServeError> {
    let value = jevjudge_wire::strict_json::from_slice(bytes).map_err(|error| {
        if error.classify() == Category::Data {
            // A repeated key: valid JSON, refused for its shape.
            return invalid(message_without_position(&error));
        }
        let what = match error.classify() {
            Category::Eof => "the body ends before the JSON is complete",
            _ => "the body is not valid JSON",
        };
        ServeError::MalformedJson {
            message: format!("{what} (line {}, column {})", error.line(), error.column()),
        }
    })?;
    let Value::Object(fields) = value else {
        let like = shape
            .like
            .map(|like| format!(" like {like}"))
            .unwrap_or_default();
        return Err(invalid(format!(
            "the body must be a JSON object{like}, not {}",
            jevjudge_wire::json_kind(&value)
        )));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|key| !shape.fields.contains(&key.as_str()))
    {
        return Err(invalid((shape.unknown)(&shortened(unknown))));
    }
    Ok(fields)
}

/// 422 `invalid_body` with this message.
pub(crate) fn invalid(message: String) -> ServeError {
    ServeError::InvalidBody { message }
}

/// A field name as messages echo it: at most [`MAX_ECHOED_FIELD_CHARS`] characters, no control
/// character, `…` when cut.
pub(crate) fn shortened(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(MAX_ECHOED_FIELD_CHARS)
        .filter(|c| !c.is_control())
        .collect();
    if text.chars().count() > MAX_ECHOED_FIELD_CHARS {
        out.push('…');
    }
    out
}

/// `serde_json`'s message without its ` at line L column C` tail.
fn message_without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Pair {
        a: Value,
        #[serde(default)]
        b: Option<Value>,
    }

    const PAIR: Shape = Shape {
        fields: &["a", "b"],
        unknown: |name| format!("unknown field `{name}`; expected `a`, `b`"),
        like: Some("{\"a\": ...}"),
    };

    fn refusal(body: &str) -> (&'static str, String) {
        let error = parse::<Pair>(body.as_bytes(), &PAIR).expect_err("refused");
        (error.code(), format!("{} {error}", error.status().as_u16()))
    }

    #[test]
    fn a_repeated_key_is_refused_422_at_any_depth() {
        for body in [r#"{"a": 1, "a": 2}"#, r#"{"a": {"x": 1, "x": 2}}"#] {
            let (code, text) = refusal(body);
            assert_eq!(code, "invalid_body", "{body}");
            assert!(text.starts_with("422"), "{text}");
            assert!(text.contains("appears twice"), "{text}");
        }
    }

    #[test]
    fn text_that_is_not_json_is_400_and_other_shapes_are_422() {
        assert_eq!(refusal("{\"a\": ").0, "malformed_json");
        assert_eq!(refusal("nope").0, "malformed_json");
        let (code, text) = refusal("[1]");
        assert_eq!(code, "invalid_body");
        assert!(text.contains(r#"like {"a": ...}, not array"#), "{text}");
        let (code, text) = refusal(r#"{"a": 1, "c": 2}"#);
        assert_eq!(code, "invalid_body");
        assert!(
            text.contains("unknown field `c`; expected `a`, `b`"),
            "{text}"
        );
        let (code, text) = refusal(r#"{"b": 2}"#);
        assert_eq!(code, "invalid_body");
        assert!(text.contains("missing field `a`"), "{text}");
    }
}
