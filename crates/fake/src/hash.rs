//! The fake model: a hash of (state, instructions, option or level) turned into a logit.
//!
//! Why a hash: the answer must depend only on what the question means, never on its id, its
//! position or the other questions in the request (systemone-wire.md §13 item 6), and it must be
//! the same on every run and every machine. A SHA-256 over a canonical JSON text (sorted keys,
//! compact separators) gives exactly that, whatever key order the caller used.

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// Logits are spread uniformly over `[-SPREAD, SPREAD]`: wide enough for confident answers,
/// narrow enough that every option keeps some probability.
const SPREAD: f64 = 3.0;

/// A hasher already fed with a question's state and instructions; each option or level adds its
/// own part, so a large state is canonicalised once per question, not once per option.
#[derive(Clone)]
pub(crate) struct Seed {
    prefix: Sha256,
}

impl Seed {
    /// Starts a seed for `kind` ("noul", "choice", "score") over `state` (already canonical) and
    /// `instructions`.
    pub(crate) fn new(kind: &str, canonical_state: &str, instructions: &Value) -> Self {
        let mut text = String::with_capacity(canonical_state.len() + 64);
        text.push('[');
        write_string(kind, &mut text);
        text.push(',');
        text.push_str(canonical_state);
        text.push(',');
        write_canonical(instructions, &mut text);
        let mut prefix = Sha256::new();
        prefix.update(text.as_bytes());
        Self { prefix }
    }

    /// The hash of one option or level, described by `parts`.
    pub(crate) fn digest(&self, parts: &[&Value]) -> [u8; 32] {
        let mut text = String::new();
        for part in parts {
            text.push(',');
            write_canonical(part, &mut text);
        }
        text.push(']');
        let mut hasher = self.prefix.clone();
        hasher.update(text.as_bytes());
        hasher.finalize().into()
    }

    /// The logit for one option or level, described by `parts`.
    #[cfg(test)]
    pub(crate) fn logit(&self, parts: &[&Value]) -> f64 {
        logit(&self.digest(parts))
    }
}

/// The logit an option's hash stands for: its first 8 bytes spread over `[-SPREAD, SPREAD]`.
pub(crate) fn logit(digest: &[u8; 32]) -> f64 {
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    let unit = u64::from_be_bytes(first) as f64 / 18_446_744_073_709_551_616.0;
    (unit * 2.0 - 1.0) * SPREAD
}

/// Canonical JSON text of `value`: object keys sorted by code point, no insignificant spaces.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => {
            let _ = write!(out, "{number}");
        }
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
    }
}

fn write_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn canonical_sorts_keys_at_every_depth() {
        let a = json!({"b": 1, "a": {"d": [1, 2.5], "c": "x"}});
        assert_eq!(canonical(&a), r#"{"a":{"c":"x","d":[1,2.5]},"b":1}"#);
    }

    #[test]
    fn canonical_escapes_control_characters_and_keeps_unicode_raw() {
        assert_eq!(
            canonical(&json!("a\"\\\n\u{1}é")),
            "\"a\\\"\\\\\\n\\u0001é\""
        );
    }

    #[test]
    fn logit_is_stable_and_within_the_spread() {
        let state = canonical(&json!({"x": 1}));
        let seed = Seed::new("choice", &state, &json!("Which?"));
        let one = seed.logit(&[&json!("a"), &Value::Null]);
        assert_eq!(one, seed.logit(&[&json!("a"), &Value::Null]));
        assert_ne!(one, seed.logit(&[&json!("b"), &Value::Null]));
        assert!((-SPREAD..=SPREAD).contains(&one));
    }

    #[test]
    fn key_order_of_the_state_does_not_change_the_logit() {
        let first = canonical(&json!({"a": 1, "b": 2}));
        let second =
            canonical(&serde_json::from_str::<Value>(r#"{"b":2,"a":1}"#).unwrap_or_default());
        assert_eq!(first, second);
    }
}
