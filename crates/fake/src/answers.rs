//! The deterministic answerer: a valid request in, `{model, answers, usage}` out, no I/O
//! (systemone-wire.md §13 item 6).
//!
//! Each answer is computed from (state, instructions, option or level) alone, so renaming an id,
//! reordering the questions or adding others never changes it.

use serde_json::{Map, Value, json};

use crate::distribution::{
    argmax, choice_confidence, expectation, round_to, rounded, score_confidence, sigmoid, softmax,
};
use crate::hash::{Seed, canonical, logit};
use crate::noise::{Draw, NoiseSource, request_identity};
use crate::rejection::Rejection;
use crate::replay::Replay;
use crate::validation::{self, Checked, Question};

/// Output tokens reported per question (the live API reports about 17.5–21).
const OUTPUT_TOKENS_PER_QUESTION: u64 = 20;

/// Answers a System One request body the way the fake server does, without any I/O.
///
/// `Ok` is the 200 body `{"model", "answers", "usage"}`; `Err` is the status and JSON body the
/// live API would send for that request (422 schema errors, 400 rule errors). The result depends
/// only on the request: the same request always gets the same answer.
///
/// ```
/// use serde_json::json;
///
/// let request = json!({"model": "jev-latest", "state": "I was charged twice.",
///     "questions": {"refund": {"type": "noul", "instructions": "Is this a refund request?"}}});
/// let body = jevjudge_fake::answer(&request).expect("a valid request");
/// assert_eq!(body["model"], "jev-1.13.0");
/// assert_eq!(body["answers"]["refund"]["type"], "noul");
///
/// let bad = json!({"model": "jev-latest", "state": "x", "questions": {}});
/// assert_eq!(jevjudge_fake::answer(&bad).unwrap_err().status, 422);
/// ```
pub fn answer(request: &Value) -> Result<Value, Rejection> {
    answer_with(request, None, None)
}

/// [`answer`] with the server's options: seeded noise on the probabilities and a replay source
/// consulted before hashing (replayed answers are never noised).
pub(crate) fn answer_with(
    request: &Value,
    noise: Option<&NoiseSource>,
    replay: Option<&Replay>,
) -> Result<Value, Rejection> {
    let checked = validation::check(request)?;
    if let Some(recorded) = replay.and_then(|r| {
        r.lookup(
            checked.requested_model,
            checked.state,
            checked.questions_value,
        )
    }) {
        let usage = recorded.usage.unwrap_or_else(|| usage(&checked));
        return Ok(json!({ "model": recorded.model, "answers": recorded.answers, "usage": usage }));
    }
    let draw = noise.map(|noise| {
        noise.draw(&request_identity(
            checked.requested_model,
            checked.state,
            checked.questions_value,
        ))
    });
    Ok(respond(&checked, draw.as_ref()))
}

fn respond(checked: &Checked<'_>, noise: Option<&Draw>) -> Value {
    let state = canonical(checked.state);
    let mut answers = Map::with_capacity(checked.questions.len());
    for (id, question) in &checked.questions {
        answers.insert((*id).to_owned(), answer_question(&state, question, noise));
    }
    json!({ "model": checked.model, "answers": answers, "usage": usage(checked) })
}

/// Usage as the live API reports it: integers, input ≈ bytes ÷ 4, output ≈ 20 per question.
fn usage(checked: &Checked<'_>) -> Value {
    let input = ((checked.state_bytes + checked.question_bytes) / 4).max(1) as u64;
    let output = OUTPUT_TOKENS_PER_QUESTION * checked.questions.len() as u64;
    json!({ "input_tokens": input, "output_tokens": output })
}

fn answer_question(state: &str, question: &Question<'_>, noise: Option<&Draw>) -> Value {
    match question {
        Question::Noul {
            instructions,
            when_true,
            when_false,
        } => {
            let option = Seed::new("noul", state, instructions).digest(&[when_true, when_false]);
            let p = sigmoid(logit(&option));
            let p = round_to(noise.map_or(p, |noise| noise.apply(p, &option)), 4);
            json!({ "type": "noul", "noul": p })
        }
        Question::Choice {
            instructions,
            options,
        } => {
            let keyed = options
                .iter()
                .map(|(label, description)| (Value::from(*label), *description));
            let probabilities =
                distribution(&Seed::new("choice", state, instructions), keyed, noise);
            let top = argmax(&probabilities).unwrap_or(0);
            let choice = options
                .get(top)
                .map(|(label, _)| *label)
                .unwrap_or_default();
            let shown: Map<String, Value> = options
                .iter()
                .zip(&probabilities)
                .map(|((label, _), p)| ((*label).to_owned(), Value::from(*p)))
                .collect();
            json!({
                "type": "choice",
                "choice": choice,
                "confidence": choice_confidence(&probabilities),
                "probabilities": shown,
            })
        }
        Question::Score {
            instructions,
            levels,
        } => {
            let keyed = levels
                .iter()
                .enumerate()
                .map(|(index, level)| (Value::from(index), level));
            let probabilities =
                distribution(&Seed::new("score", state, instructions), keyed, noise);
            let legend: Map<String, Value> = levels
                .iter()
                .enumerate()
                .map(|(i, level)| (i.to_string(), level.clone()))
                .collect();
            let shown: Map<String, Value> = probabilities
                .iter()
                .enumerate()
                .map(|(i, p)| (i.to_string(), Value::from(*p)))
                .collect();
            json!({
                "type": "score",
                "score": expectation(&probabilities),
                "confidence": score_confidence(&probabilities),
                "legend": legend,
                "probabilities": shown,
            })
        }
    }
}

/// The shown probabilities of a choice or score: each option (a choice's label, a score's
/// index, with its text) hashed under `seed`, then a softmax of the options' logits, noised
/// when asked, rounded to 4 decimals summing to 1.
fn distribution<'a>(
    seed: &Seed,
    options: impl Iterator<Item = (Value, &'a Value)>,
    noise: Option<&Draw>,
) -> Vec<f64> {
    let digests: Vec<[u8; 32]> = options
        .map(|(key, text)| seed.digest(&[&key, text]))
        .collect();
    let logits: Vec<f64> = digests.iter().map(logit).collect();
    let probabilities = softmax(&logits);
    match noise {
        Some(noise) => rounded(&noise.apply_all(&probabilities, &digests)),
        None => rounded(&probabilities),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suites' mixed request, with its last score level written as an object: a level
    /// may be text or `{"label": …}`, and the answers must read both.
    fn mixed() -> Value {
        let mut request = jevjudge_test_support::mixed_request();
        request["questions"]["frustration"]["criteria"][2] = json!({"label": "Very angry"});
        request
    }

    fn ok(request: &Value) -> Value {
        answer(request).unwrap_or_else(|rejection| panic!("rejected: {}", rejection.body))
    }

    #[test]
    fn every_type_has_the_documented_shape() {
        let body = ok(&mixed());
        assert_eq!(body["model"], "jev-1.13.0");
        let noul = &body["answers"]["refund_intent"];
        assert!(
            noul["noul"]
                .as_f64()
                .is_some_and(|p| (0.0..=1.0).contains(&p))
        );
        assert!(noul.get("confidence").is_none());
        let choice = &body["answers"]["queue"];
        let probabilities = choice["probabilities"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            probabilities.keys().collect::<Vec<_>>(),
            ["billing", "technical", "other"]
        );
        let best = probabilities.iter().max_by(|a, b| {
            a.1.as_f64()
                .partial_cmp(&b.1.as_f64())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        assert_eq!(best.map(|(k, _)| k.as_str()), choice["choice"].as_str());
        let score = &body["answers"]["frustration"];
        assert_eq!(
            score["legend"],
            json!({"0": "Calm", "1": "Frustrated", "2": {"label": "Very angry"}})
        );
        let p: Vec<f64> = (0..3)
            .filter_map(|i| score["probabilities"][i.to_string()].as_f64())
            .collect();
        assert!((p.iter().sum::<f64>() - 1.0).abs() <= 5e-5 * 3.0);
        let expected: f64 = p.iter().enumerate().map(|(i, p)| i as f64 * p).sum();
        assert!((score["score"].as_f64().unwrap_or(f64::NAN) - expected).abs() < 1e-3);
        assert!(body["usage"]["input_tokens"].is_u64());
        assert_eq!(body["usage"]["output_tokens"], 60);
    }

    #[test]
    fn answers_ignore_ids_order_and_other_questions() {
        let base = ok(&mixed());
        let mut renamed = mixed();
        let questions = renamed["questions"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let reversed: Map<String, Value> = questions
            .iter()
            .rev()
            .map(|(id, q)| (format!("renamed {id}"), q.clone()))
            .collect();
        renamed["questions"] = Value::Object(reversed);
        let other = ok(&renamed);
        for id in ["refund_intent", "queue", "frustration"] {
            assert_eq!(
                base["answers"][id],
                other["answers"][format!("renamed {id}")]
            );
        }
        let mut alone = mixed();
        alone["questions"] = json!({"x": mixed()["questions"]["queue"].clone()});
        assert_eq!(ok(&alone)["answers"]["x"], base["answers"]["queue"]);
    }

    #[test]
    fn the_same_request_gets_the_same_answer() {
        assert_eq!(ok(&mixed()), ok(&mixed()));
    }

    #[test]
    fn state_key_order_does_not_matter() {
        let text = r#"{"model":"jev-latest","state":{"b":1,"a":2},"questions":{"q":{"type":"noul","instructions":"?"}}}"#;
        let swapped = r#"{"model":"jev-latest","state":{"a":2,"b":1},"questions":{"q":{"type":"noul","instructions":"?"}}}"#;
        let first: Value = serde_json::from_str(text).unwrap_or_default();
        let second: Value = serde_json::from_str(swapped).unwrap_or_default();
        assert_eq!(ok(&first)["answers"], ok(&second)["answers"]);
    }

    #[test]
    fn a_versioned_model_is_echoed() {
        let mut request = mixed();
        request["model"] = json!("jev-1.13.0");
        assert_eq!(ok(&request)["model"], "jev-1.13.0");
    }

    #[test]
    fn single_option_and_level_are_answered_with_certainty() {
        let request = json!({"model": "jev-latest", "state": "s", "questions": {
            "c": {"type": "choice", "instructions": "?", "criteria": {"only": null}},
            "s": {"type": "score", "instructions": "?", "criteria": ["one"]}}});
        let body = ok(&request);
        assert_eq!(body["answers"]["c"]["probabilities"]["only"], 1.0);
        assert_eq!(body["answers"]["c"]["confidence"], 1.0);
        assert_eq!(body["answers"]["s"]["score"], 0.0);
    }

    #[test]
    fn noise_changes_answers_but_keeps_them_valid() {
        let noise = NoiseSource::new(Some(0.1), 3);
        let plain = ok(&mixed());
        let draws: Vec<Value> = (0..5)
            .map(|_| answer_with(&mixed(), noise.as_ref(), None).unwrap_or_default())
            .collect();
        assert!(draws.iter().any(|d| d["answers"] != plain["answers"]));
        assert!(draws.windows(2).any(|pair| pair[0] != pair[1]));
        for draw in draws {
            let p = draw["answers"]["refund_intent"]["noul"]
                .as_f64()
                .unwrap_or(f64::NAN);
            assert!((0.0..=1.0).contains(&p));
        }
    }

    #[test]
    fn noise_is_reproducible_from_the_seed_and_the_repeat() {
        let run = |seed| {
            let noise = NoiseSource::new(Some(0.2), seed);
            (0..4)
                .map(|_| answer_with(&mixed(), noise.as_ref(), None).unwrap_or_default())
                .collect::<Vec<Value>>()
        };
        assert_eq!(run(11), run(11));
        assert_ne!(run(11), run(12));
        // Another request in between does not shift the repeats of this one.
        let noise = NoiseSource::new(Some(0.2), 11);
        let first = answer_with(&mixed(), noise.as_ref(), None).unwrap_or_default();
        let mut other = mixed();
        other["state"] = json!("something else");
        let _ = answer_with(&other, noise.as_ref(), None);
        let second = answer_with(&mixed(), noise.as_ref(), None).unwrap_or_default();
        assert_eq!([first, second], run(11)[..2]);
    }
}
