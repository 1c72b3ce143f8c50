//! What `jevjudge eval` says when most of a run's reviews errored: the likeliest cause and
//! the next step, in the command line's words (docs/reference/file-formats.md).

use crate::Summary;
use jevjudge_judge::BackendKind;

/// What a hint may name about the run's backend.
pub struct HintContext<'a> {
    /// Where answers came from.
    pub kind: BackendKind,
    /// The model requests asked for.
    pub model: &'a str,
    /// With --replay: every model the recording holds.
    pub replay_models: &'a [String],
    /// `--api-key-env`, when given.
    pub api_key_env: Option<&'a str>,
    /// `--base-url`, when given.
    pub base_url: Option<&'a str>,
}

/// The stderr hint for a run in which more than half of the reviews errored, naming the most
/// frequent error's likeliest cause and the next step; `None` otherwise.
pub fn error_hint(overall: &Summary, context: &HintContext<'_>) -> Option<String> {
    if overall.total == 0 || overall.errors * 2 <= overall.total {
        return None;
    }
    let (kind, count) = overall.error_kinds.first()?;
    let detail = kind.split_once('/').map_or(kind.as_str(), |(_, d)| d);
    let share = format!(
        "{} of {} errored, most as {kind} ({count})",
        overall.errors,
        crate::plural::count(overall.total, "review")
    );
    let next = match detail {
        "not_recorded" => {
            let held: Vec<String> = context
                .replay_models
                .iter()
                .map(|m| format!("`{m}`"))
                .collect();
            if context.replay_models.iter().any(|m| m == context.model) {
                format!(
                    "the recording holds model `{}` but not these requests: the cases or the \
                     definition's questions differ from what was recorded; record again with \
                     --record",
                    context.model
                )
            } else {
                format!(
                    "the recording holds no exchange for model `{}`; it holds {}: pass --model {}",
                    context.model,
                    held.join(", "),
                    context.replay_models.first().map_or("NAME", String::as_str)
                )
            }
        }
        "http_status_401" | "http_status_403" => format!(
            "the API key was refused: check the key in {}",
            match context.api_key_env {
                Some(var) => format!("${var} (named by --api-key-env)"),
                None => "$TYPESAFE_API_KEY (or $JEV_API_KEY)".to_owned(),
            }
        ),
        "transport" => format!(
            "the backend could not be reached: check the base URL {} and the network",
            match context.base_url {
                Some(url) => format!("`{url}` (--base-url)"),
                None => "($TYPESAFE_BASE_URL, else https://api.typesafe.ai)".to_owned(),
            }
        ),
        "http_status_400" => format!(
            "the backend refused the request as invalid: check the model name (--model `{}`) \
             and the definition's questions",
            context.model
        ),
        "http_status_404" => format!(
            "the backend found no such model or endpoint: check --model `{}` and the base URL",
            context.model
        ),
        "budget_elapsed" | "retry_wait_exceeds_budget" | "attempts_exhausted" => {
            "reviews ran out of time: raise --budget (or --timeout), or lower --concurrency"
                .to_owned()
        }
        "http_status_429" => {
            "the backend is rate limiting: lower --concurrency or try again later".to_owned()
        }
        d if d.starts_with("http_status_5") => {
            "the backend is failing (5xx): try again later".to_owned()
        }
        "evaluator_failed" | "evaluator_panicked" | "evaluator_empty" => {
            "the evaluator itself failed: this is a bug, please report it".to_owned()
        }
        _ => match context.kind {
            BackendKind::Replay | BackendKind::Fixture => {
                "the recorded answers do not fit the definition's questions: record again"
                    .to_owned()
            }
            _ => "see the errors by kind in the summary".to_owned(),
        },
    };
    Some(format!("jevjudge: hint: {share}: {next}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(total: u64, kinds: &[(&str, u64)]) -> Summary {
        let errors = kinds.iter().map(|(_, n)| n).sum();
        Summary {
            total,
            weighted: None,
            effective_n: None,
            correct: total - errors,
            incorrect: 0,
            abstained: 0,
            errors,
            accuracy: 0.0,
            p50_millis: 0.0,
            p95_millis: 0.0,
            synthesized_rows: 0,
            input_tokens: None,
            output_tokens: None,
            usage_known_rows: 0,
            cost: None,
            error_kinds: kinds.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect(),
            attempts: None,
            risk: Default::default(),
            repeated: Default::default(),
        }
    }

    fn context<'a>(models: &'a [String]) -> HintContext<'a> {
        HintContext {
            kind: BackendKind::Replay,
            model: "jev-latest",
            replay_models: models,
            api_key_env: Some("MY_KEY"),
            base_url: Some("http://127.0.0.1:9"),
        }
    }

    #[test]
    fn half_or_fewer_errors_give_no_hint() {
        let models = ["jev-1".to_owned()];
        assert_eq!(
            error_hint(&summary(4, &[("BACKEND/transport", 2)]), &context(&models)),
            None
        );
    }

    #[test]
    fn each_likely_cause_names_its_next_step() {
        let models = ["jev-1.13.0".to_owned()];
        let cases = [
            ("BACKEND/not_recorded", "pass --model jev-1.13.0"),
            ("BACKEND/http_status_401", "$MY_KEY"),
            ("BACKEND/http_status_403", "$MY_KEY"),
            ("BACKEND/transport", "`http://127.0.0.1:9` (--base-url)"),
            ("BACKEND/http_status_400", "--model `jev-latest`"),
            ("TIMEOUT/budget_elapsed", "raise --budget"),
        ];
        for (kind, expected) in cases {
            let hint = error_hint(&summary(3, &[(kind, 2)]), &context(&models)).unwrap();
            assert!(hint.contains(expected), "{kind}: {hint}");
            assert!(hint.contains(&format!("{kind} (2)")), "{hint}");
        }
    }
}
