//! Verdicts: the Result of one review (judge-contract §1, §6, §7; cli-and-formats.md §4.1).

use std::{fmt, time::Duration};

use jevjudge_wire::{Detail, Usage};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The outcome of a review or of one criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Every criterion passed.
    Pass,
    /// At least one criterion failed.
    Fail,
    /// No failure, but at least one criterion fell in its uncertain band.
    Inconclusive,
    /// The review produced no valid answers; never a probability, never a FAIL.
    Error,
}

impl Status {
    /// The JSON name (`PASS`, `FAIL`, `INCONCLUSIVE`, `ERROR`).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Inconclusive => "INCONCLUSIVE",
            Status::Error => "ERROR",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a verdict is ERROR; `None` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// Not an error.
    None,
    /// The review's budget ran out.
    Timeout,
    /// The answers broke the rules (missing, extra, wrong type, bad probability, unreadable).
    InvalidResponse,
    /// Anything else from the backend: transport, HTTP status, refusal to send, injected error.
    Backend,
    /// A row the runner made because the evaluator failed (D4); the Judge never produces it.
    Evaluator,
}

impl ErrorCode {
    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::None => "NONE",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::InvalidResponse => "INVALID_RESPONSE",
            ErrorCode::Backend => "BACKEND",
            ErrorCode::Evaluator => "EVALUATOR",
        }
    }

    /// The error code a detail belongs to (rule 28's table).
    pub fn for_detail(detail: Detail) -> ErrorCode {
        match detail {
            Detail::BudgetElapsed | Detail::RetryWaitExceedsBudget => ErrorCode::Timeout,
            Detail::NoResponse
            | Detail::BodyUnreadable
            | Detail::AnswerMissing
            | Detail::AnswerExtra
            | Detail::AnswerWrongType
            | Detail::ProbabilityMissing
            | Detail::ProbabilityNotFinite
            | Detail::ProbabilityOutOfRange
            | Detail::ChoiceUnknown
            | Detail::ProbabilitiesKeys
            | Detail::ProbabilitiesSum
            | Detail::ScoreOutOfRange
            | Detail::ConfidenceInvalid => ErrorCode::InvalidResponse,
            Detail::EvaluatorFailed | Detail::EvaluatorPanicked | Detail::EvaluatorEmpty => {
                ErrorCode::Evaluator
            }
            _ => ErrorCode::Backend,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How one criterion scored: never ERROR.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// PASS, FAIL or INCONCLUSIVE.
    pub status: Status,
    /// p: the yes probability the model reported.
    pub yes_probability: f64,
    /// p′: the probability that the criterion's expectation holds (p, or 1 − p in f64).
    pub expected_probability: f64,
}

/// Findings by criterion id, in definition order (D1). Read-only once built (rule 26).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Findings(Vec<(String, Finding)>);

impl Findings {
    /// Builds findings from `(criterion id, finding)` pairs in order.
    pub fn new(entries: Vec<(String, Finding)>) -> Findings {
        Findings(entries)
    }

    /// The finding of a criterion.
    pub fn get(&self, id: &str) -> Option<&Finding> {
        self.0.iter().find(|(key, _)| key == id).map(|(_, f)| f)
    }

    /// The findings in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Finding)> {
        self.0.iter().map(|(id, finding)| (id.as_str(), finding))
    }

    /// How many findings.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none (always so for ERROR).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Findings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        jevjudge_wire::ordered_map::serialize(&self.0, serializer)
    }
}

impl<'de> Deserialize<'de> for Findings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Findings, D::Error> {
        jevjudge_wire::ordered_map::read(deserializer, "an object of criterion id to finding", None)
            .map(Findings)
    }
}

/// The Result of one review ("verdict").
///
/// Holds no raw text: statuses, probabilities, a detail *code*, the definition version, the
/// answering model, usage and the elapsed time. Its `Debug`, `Display` and JSON forms are
/// therefore safe to log (rule 29, D12).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The definition's version.
    pub definition_version: String,
    /// The overall status.
    pub status: Status,
    /// Why the status is ERROR (`NONE` otherwise).
    pub error: ErrorCode,
    /// A safe code when the status is ERROR, else `None`.
    pub detail: Option<Detail>,
    /// One finding per criterion in definition order; empty for ERROR.
    pub findings: Findings,
    /// The model that answered, when known.
    pub model: Option<String>,
    /// Token usage, when known (absent means unknown, never zero).
    pub usage: Option<Usage>,
    /// Time from the start of the review until the answers were mapped or the error occurred.
    #[serde(rename = "elapsed_millis", with = "millis")]
    pub elapsed: Duration,
}

impl Verdict {
    /// An ERROR verdict with empty findings (rule 28).
    pub fn error(
        definition_version: impl Into<String>,
        error: ErrorCode,
        detail: Detail,
        elapsed: Duration,
    ) -> Verdict {
        Verdict {
            definition_version: definition_version.into(),
            status: Status::Error,
            error,
            detail: Some(detail),
            findings: Findings::default(),
            model: None,
            usage: None,
            elapsed,
        }
    }

    /// `elapsed` in milliseconds as an f64 (nanoseconds ÷ 1e6), as reports count it.
    pub fn elapsed_millis(&self) -> f64 {
        self.elapsed.as_nanos() as f64 / 1e6
    }

    /// True when the status is PASS.
    pub fn is_pass(&self) -> bool {
        self.status == Status::Pass
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.definition_version, self.status)?;
        if let Some(detail) = self.detail {
            write!(f, " {}/{}", self.error, detail)?;
        }
        for (id, finding) in self.findings.iter() {
            write!(
                f,
                " {id}={} (p={}, p'={})",
                finding.status, finding.yes_probability, finding.expected_probability
            )?;
        }
        if let Some(model) = &self.model {
            write!(f, " model={model}")?;
        }
        write!(f, " in {:.1} ms", self.elapsed_millis())
    }
}

/// `elapsed_millis`: a Duration as fractional milliseconds.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(value.as_nanos() as f64 / 1e6)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        let millis = f64::deserialize(deserializer)?;
        if !millis.is_finite() || millis < 0.0 {
            return Err(serde::de::Error::custom(
                "elapsed_millis must be a non-negative number",
            ));
        }
        Duration::try_from_secs_f64(millis / 1e3).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_layout_matches_cli_and_formats_4_1() {
        let verdict = Verdict {
            definition_version: "refund-answer-v1".into(),
            status: Status::Pass,
            error: ErrorCode::None,
            detail: None,
            findings: Findings::new(vec![(
                "supported".into(),
                Finding {
                    status: Status::Pass,
                    yes_probability: 0.95,
                    expected_probability: 0.95,
                },
            )]),
            model: Some("jev-1.13.0".into()),
            usage: Some(Usage {
                input_tokens: 75,
                output_tokens: 2,
            }),
            elapsed: Duration::from_micros(412_700),
        };
        let json = serde_json::to_string(&verdict).unwrap();
        assert_eq!(
            json,
            concat!(
                r#"{"definition_version":"refund-answer-v1","status":"PASS","error":"NONE","detail":null,"#,
                r#""findings":{"supported":{"status":"PASS","yes_probability":0.95,"expected_probability":0.95}},"#,
                r#""model":"jev-1.13.0","usage":{"input_tokens":75,"output_tokens":2},"elapsed_millis":412.7}"#
            )
        );
        let back: Verdict = serde_json::from_str(&json).unwrap();
        assert_eq!(back, verdict);
    }

    #[test]
    fn error_verdicts_serialise_their_detail_code() {
        let verdict = Verdict::error(
            "v1",
            ErrorCode::Backend,
            Detail::HttpStatus(429),
            Duration::from_millis(3),
        );
        let json = serde_json::to_value(&verdict).unwrap();
        assert_eq!(json["status"], "ERROR");
        assert_eq!(json["error"], "BACKEND");
        assert_eq!(json["detail"], "http_status_429");
        assert_eq!(json["findings"], serde_json::json!({}));
        assert_eq!(json["model"], serde_json::Value::Null);
        assert_eq!(json["usage"], serde_json::Value::Null);
        assert_eq!(
            verdict.to_string(),
            "v1 ERROR BACKEND/http_status_429 in 3.0 ms"
        );
    }

    #[test]
    fn every_detail_has_the_error_code_of_rule_28() {
        // Rule 28's table, a row per error code: its details by their wire codes.
        for (code, details) in [
            (
                ErrorCode::Timeout,
                "budget_elapsed retry_wait_exceeds_budget",
            ),
            (
                ErrorCode::InvalidResponse,
                "no_response body_unreadable answer_missing answer_extra answer_wrong_type \
                 probability_missing probability_not_finite probability_out_of_range \
                 choice_unknown probabilities_keys probabilities_sum score_out_of_range \
                 confidence_invalid",
            ),
            (
                ErrorCode::Backend,
                "http_status_401 http_status_429 http_status_529 token_limit transport \
                 attempts_exhausted request_invalid backend_error not_recorded",
            ),
            (
                ErrorCode::Evaluator,
                "evaluator_failed evaluator_panicked evaluator_empty",
            ),
        ] {
            for name in details.split_whitespace() {
                let detail: Detail = name
                    .parse()
                    .unwrap_or_else(|_| panic!("`{name}` is not a detail code"));
                assert_eq!(ErrorCode::for_detail(detail), code, "{detail}");
            }
        }
    }
}
