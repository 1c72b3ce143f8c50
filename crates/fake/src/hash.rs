//! The fake model: a hash of (state, instructions, option or level) turned into a logit.
//!
//! Why a hash: the answer must depend only on what the question means, never on its id, its
//! position or the other questions in the request (systemone-wire.md §13 item 6), and it must be
//! the same on every run and every machine. A SHA-256 over a canonical JSON text (sorted keys,
//! compact separators) gives exactly that, whatever key order the caller used. The canonical
//! text is the wire crate's ([`jevjudge_wire::canonical`], the one `.jevl` ids use), so the
//! project has one canonical JSON, not two that disagree on floats and escapes.

use jevjudge_wire::canonical::to_canonical_string;
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
        write_canonical(&Value::from(kind), &mut text);
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

/// Canonical JSON text of `value`, as `.jevl` ids use it ([`jevjudge_wire::canonical`]: Python's
/// `json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)`).
///
/// A value without a canonical form — nested deeper than the wire's 512 levels, or holding a
/// number Python cannot write — is hashed by its serde_json text instead. Neither can come from
/// a request body (serde_json's parser stops at 128 levels and reads no NaN), only from a value
/// built in code and passed to [`crate::answer`]; its answer is then still deterministic.
pub(crate) fn canonical(value: &Value) -> String {
    to_canonical_string(value).unwrap_or_else(|_| value.to_string())
}

/// Appends [`canonical`]`(value)` to `out` without an intermediate string.
fn write_canonical(value: &Value, out: &mut String) {
    if jevjudge_wire::canonical::write_canonical(value, out).is_err() {
        out.push_str(&value.to_string());
    }
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
    fn canonical_is_the_wire_one_python_floats_and_short_escapes() {
        // systemone-wire.md §15: Python's float repr and json escapes, as `.jevl` ids use.
        let value = json!({"b": [1e-7, 1.0, 1e21, 1], "a": "\u{8}\u{c}"});
        assert_eq!(canonical(&value), r#"{"a":"\b\f","b":[1e-07,1.0,1e+21,1]}"#);
        assert_eq!(
            canonical(&value),
            jevjudge_wire::canonical::to_canonical_string(&value).unwrap_or_default()
        );
    }

    #[test]
    fn a_value_too_deep_for_the_wire_still_hashes() {
        let mut deep = json!(1);
        for _ in 0..600 {
            deep = json!([deep]);
        }
        assert!(jevjudge_wire::canonical::to_canonical_string(&deep).is_err());
        assert_eq!(canonical(&deep), deep.to_string());
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
