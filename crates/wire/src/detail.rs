//! The fixed vocabulary of safe failure codes (judge-contract rule 28).

use std::{fmt, str::FromStr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A short, machine-readable reason for an ERROR verdict or a client failure.
///
/// Every code comes from a fixed list, so a detail can never carry raw text (exception
/// messages, response bodies, state or keys). The JSON and `Display` form is the code itself,
/// for example `answer_missing` or `http_status_429`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Detail {
    /// TIMEOUT: the deadline passed during an attempt or a wait.
    BudgetElapsed,
    /// TIMEOUT: the next retry's wait would end after the deadline, so it was not started.
    RetryWaitExceedsBudget,
    /// INVALID_RESPONSE: the backend finished without producing a response.
    NoResponse,
    /// INVALID_RESPONSE: a 200 body that is empty, not strict JSON, or the wrong shape.
    BodyUnreadable,
    /// INVALID_RESPONSE: a question id has no answer.
    AnswerMissing,
    /// INVALID_RESPONSE: an answer id matches no question.
    AnswerExtra,
    /// INVALID_RESPONSE: an answer's type differs from its question's.
    AnswerWrongType,
    /// INVALID_RESPONSE: a probability is null or absent.
    ProbabilityMissing,
    /// INVALID_RESPONSE: a probability is NaN or infinite.
    ProbabilityNotFinite,
    /// INVALID_RESPONSE: a probability is below 0 or above 1.
    ProbabilityOutOfRange,
    /// INVALID_RESPONSE: a choice names an option that was not asked.
    ChoiceUnknown,
    /// INVALID_RESPONSE: probability or legend keys differ from the options or levels.
    ProbabilitiesKeys,
    /// INVALID_RESPONSE: probabilities do not sum to 1 within 5e-5 per option (D7).
    ProbabilitiesSum,
    /// INVALID_RESPONSE: a score is not finite or outside [0, n−1].
    ScoreOutOfRange,
    /// INVALID_RESPONSE: a confidence is not null, absent, or finite within [0, 1].
    ConfidenceInvalid,
    /// BACKEND: an HTTP error status (the last one seen when retries ran out).
    HttpStatus(u16),
    /// BACKEND: the request is over the model's token limit.
    TokenLimit,
    /// BACKEND: the connection failed, was reset, or closed before a response.
    Transport,
    /// BACKEND: every attempt hit the per-attempt timeout before the budget ran out.
    AttemptsExhausted,
    /// BACKEND: the client refused to send the request.
    RequestInvalid,
    /// BACKEND: an injected backend returned an error.
    BackendError,
    /// BACKEND: the replay backend has no recorded exchange for this request.
    NotRecorded,
    /// EVALUATOR: the evaluator returned an error (runner-made row).
    EvaluatorFailed,
    /// EVALUATOR: the evaluator panicked (runner-made row).
    EvaluatorPanicked,
    /// EVALUATOR: the evaluator finished without a response (runner-made row).
    EvaluatorEmpty,
}

const NAMED: &[(Detail, &str)] = &[
    (Detail::BudgetElapsed, "budget_elapsed"),
    (Detail::RetryWaitExceedsBudget, "retry_wait_exceeds_budget"),
    (Detail::NoResponse, "no_response"),
    (Detail::BodyUnreadable, "body_unreadable"),
    (Detail::AnswerMissing, "answer_missing"),
    (Detail::AnswerExtra, "answer_extra"),
    (Detail::AnswerWrongType, "answer_wrong_type"),
    (Detail::ProbabilityMissing, "probability_missing"),
    (Detail::ProbabilityNotFinite, "probability_not_finite"),
    (Detail::ProbabilityOutOfRange, "probability_out_of_range"),
    (Detail::ChoiceUnknown, "choice_unknown"),
    (Detail::ProbabilitiesKeys, "probabilities_keys"),
    (Detail::ProbabilitiesSum, "probabilities_sum"),
    (Detail::ScoreOutOfRange, "score_out_of_range"),
    (Detail::ConfidenceInvalid, "confidence_invalid"),
    (Detail::TokenLimit, "token_limit"),
    (Detail::Transport, "transport"),
    (Detail::AttemptsExhausted, "attempts_exhausted"),
    (Detail::RequestInvalid, "request_invalid"),
    (Detail::BackendError, "backend_error"),
    (Detail::NotRecorded, "not_recorded"),
    (Detail::EvaluatorFailed, "evaluator_failed"),
    (Detail::EvaluatorPanicked, "evaluator_panicked"),
    (Detail::EvaluatorEmpty, "evaluator_empty"),
];

impl Detail {
    /// The code of a named detail; `None` for [`Detail::HttpStatus`], whose code is built.
    pub fn name(self) -> Option<&'static str> {
        NAMED
            .iter()
            .find(|(detail, _)| *detail == self)
            .map(|(_, name)| *name)
    }
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detail::HttpStatus(status) => write!(f, "http_status_{status}"),
            other => f.write_str(other.name().unwrap_or("unknown")),
        }
    }
}

/// A string that is not a detail code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown detail code")]
pub struct UnknownDetail;

impl FromStr for Detail {
    type Err = UnknownDetail;

    fn from_str(code: &str) -> Result<Detail, UnknownDetail> {
        if let Some(digits) = code.strip_prefix("http_status_") {
            let valid = digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit());
            return match digits.parse::<u16>() {
                Ok(status) if valid && (100..=599).contains(&status) => {
                    Ok(Detail::HttpStatus(status))
                }
                _ => Err(UnknownDetail),
            };
        }
        NAMED
            .iter()
            .find(|(_, name)| *name == code)
            .map(|(detail, _)| *detail)
            .ok_or(UnknownDetail)
    }
}

impl Serialize for Detail {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Detail {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Detail, D::Error> {
        let code = String::deserialize(deserializer)?;
        code.parse()
            .map_err(|_| serde::de::Error::custom(format_args!("unknown detail code `{code}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_text() {
        for (detail, name) in NAMED {
            assert_eq!(detail.to_string(), *name);
            assert_eq!(name.parse::<Detail>(), Ok(*detail));
        }
        assert_eq!(Detail::HttpStatus(429).to_string(), "http_status_429");
        assert_eq!("http_status_529".parse(), Ok(Detail::HttpStatus(529)));
        assert_eq!("http_status_29".parse::<Detail>(), Err(UnknownDetail));
        assert_eq!("http_status_+29".parse::<Detail>(), Err(UnknownDetail));
        assert_eq!("secret response".parse::<Detail>(), Err(UnknownDetail));
    }
}
