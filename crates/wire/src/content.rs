//! Content: what System One accepts as instructions, descriptions and levels.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// A piece of System One *content*: a JSON string, object or array (systemone-wire.md §4).
///
/// Questions, option descriptions and score levels are content. Its `Debug` output shows the
/// kind and size only, never the text, so a question can be logged without leaking it.
#[derive(Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Content(Value);

/// A value that is not content: `null`, a number or a boolean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("content must be a string, an object or an array, not {found}")]
pub struct NotContent {
    /// The JSON kind that was found (`null`, `number`, `boolean`).
    pub found: &'static str,
}

impl Content {
    /// Wraps a JSON value, refusing `null`, numbers and booleans.
    pub fn new(value: Value) -> Result<Content, NotContent> {
        match value {
            Value::String(_) | Value::Object(_) | Value::Array(_) => Ok(Content(value)),
            other => Err(NotContent {
                found: json_kind(&other),
            }),
        }
    }

    /// Content made of plain text.
    pub fn text(text: impl Into<String>) -> Content {
        Content(Value::String(text.into()))
    }

    /// The JSON value.
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// The text, when this content is a string.
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_str()
    }

    /// True for an empty string (the live API refuses empty string instructions).
    pub fn is_empty_text(&self) -> bool {
        matches!(&self.0, Value::String(text) if text.is_empty())
    }

    /// Unwraps the JSON value.
    pub fn into_value(self) -> Value {
        self.0
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Content {
        Content::text(text)
    }
}

impl From<String> for Content {
    fn from(text: String) -> Content {
        Content::text(text)
    }
}

impl TryFrom<Value> for Content {
    type Error = NotContent;

    fn try_from(value: Value) -> Result<Content, NotContent> {
        Content::new(value)
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Content, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Content::new(value).map_err(serde::de::Error::custom)
    }
}

impl fmt::Debug for Content {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        redacted(&self.0, f)
    }
}

/// Writes `<kind, N bytes>` for a JSON value without showing its text.
pub(crate) fn redacted(value: &Value, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match value {
        Value::String(text) => write!(f, "<string, {} bytes>", text.len()),
        Value::Array(items) => write!(f, "<array, {}>", crate::plural::count(items.len(), "item")),
        Value::Object(map) => write!(f, "<object, {} keys>", map.len()),
        other => write!(f, "<{}>", json_kind(other)),
    }
}

/// The JSON kind of a value, as a word for messages.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_strings_objects_and_arrays_only() {
        assert!(Content::new(json!("text")).is_ok());
        assert!(Content::new(json!({"a": 1})).is_ok());
        assert!(Content::new(json!([1, "b"])).is_ok());
        assert_eq!(Content::new(json!(null)).unwrap_err().found, "null");
        assert_eq!(Content::new(json!(1.5)).unwrap_err().found, "number");
        assert_eq!(Content::new(json!(true)).unwrap_err().found, "boolean");
        assert!(serde_json::from_str::<Content>("7").is_err());
    }

    #[test]
    fn debug_never_shows_the_text() {
        let content = Content::text("RAW-Q-7f3a");
        let shown = format!("{content:?}");
        assert!(!shown.contains("RAW-Q-7f3a"), "{shown}");
        assert_eq!(shown, "<string, 10 bytes>");
    }
}
