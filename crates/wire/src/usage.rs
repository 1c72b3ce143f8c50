//! Token usage reported by System One.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Token counts of one request: `input_tokens` is billable, `output_tokens` free.
///
/// A response without usage, or with counts that are not non-negative integers, has *unknown*
/// usage (`Option::None` wherever a `Usage` appears), never zero (judge-contract D5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Billable tokens of the whole request.
    pub input_tokens: u64,
    /// Output tokens (reported, not billed).
    pub output_tokens: u64,
}

impl Usage {
    /// Reads a `usage` JSON value leniently: both counts must be non-negative integer tokens
    /// (`70.0` is not), otherwise the usage is unknown.
    pub fn from_json(value: &Value) -> Option<Usage> {
        let map = value.as_object()?;
        Usage::from_counts(map.get("input_tokens"), map.get("output_tokens"))
    }

    /// Reads the two counts of a `usage` object, as [`Usage::from_json`] does.
    pub(crate) fn from_counts(input: Option<&Value>, output: Option<&Value>) -> Option<Usage> {
        Some(Usage {
            input_tokens: input?.as_u64()?,
            output_tokens: output?.as_u64()?,
        })
    }

    /// The JSON form, `{"input_tokens": n, "output_tokens": n}`.
    pub fn to_json(self) -> Value {
        serde_json::json!({"input_tokens": self.input_tokens, "output_tokens": self.output_tokens})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integer_counts_are_known_anything_else_is_unknown() {
        assert_eq!(
            Usage::from_json(&json!({"input_tokens": 312, "output_tokens": 48, "extra": 1})),
            Some(Usage {
                input_tokens: 312,
                output_tokens: 48
            })
        );
        assert_eq!(
            Usage::from_json(&json!({"input_tokens": 70.0, "output_tokens": 2})),
            None
        );
        assert_eq!(
            Usage::from_json(&json!({"input_tokens": -1, "output_tokens": 2})),
            None
        );
        assert_eq!(Usage::from_json(&json!({"input_tokens": 1})), None);
        assert_eq!(Usage::from_json(&json!(null)), None);
    }
}
