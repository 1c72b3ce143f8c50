//! systemone-wire.md §6 and §13 item 6: answers over the socket — shapes, determinism,
//! independence from ids, order and other questions; model resolution; noise; latency.

use std::time::{Duration, Instant};

use jevjudge_fake::Config;
use serde_json::{Map, Value, json};

use crate::util::{mixed_request, noul_request, post, server};

fn numbers(answer: &Value) -> Vec<f64> {
    match answer["type"].as_str() {
        Some("noul") => answer["noul"].as_f64().into_iter().collect(),
        _ => answer["probabilities"]
            .as_object()
            .map(|p| p.values().filter_map(Value::as_f64).collect())
            .unwrap_or_default(),
    }
}

#[tokio::test]
async fn mixed_answers_follow_the_formulas() {
    let fake = server(Default::default()).await;
    let body = post(&fake, &mixed_request()).await.json();
    assert_eq!(body["model"], "jev-1.13.0");
    let answers = body["answers"].as_object().expect("answers");
    assert_eq!(
        answers.keys().collect::<Vec<_>>(),
        ["refund_intent", "queue", "frustration"]
    );

    let choice = &answers["queue"];
    let p = numbers(choice);
    let n = p.len() as f64;
    let top = p.iter().copied().fold(0.0, f64::max);
    assert!((p.iter().sum::<f64>() - 1.0).abs() <= 5e-5 * n);
    assert_eq!(
        choice["probabilities"][choice["choice"].as_str().unwrap_or_default()].as_f64(),
        Some(top)
    );
    let confidence = (top - 1.0 / n) / (1.0 - 1.0 / n);
    assert!((choice["confidence"].as_f64().unwrap_or(f64::NAN) - confidence).abs() <= 0.005 + 1e-9);

    let score = &answers["frustration"];
    let p = numbers(score);
    let expected: f64 = p.iter().enumerate().map(|(i, p)| i as f64 * p).sum();
    assert!((score["score"].as_f64().unwrap_or(f64::NAN) - expected).abs() <= 1e-4);
    assert_eq!(
        score["legend"],
        json!({"0": "Calm", "1": "Frustrated", "2": "Very angry"})
    );
    let mode = p
        .iter()
        .enumerate()
        .fold(0, |best, (i, v)| if *v > p[best] { i } else { best });
    let spread: f64 = p
        .iter()
        .enumerate()
        .map(|(i, v)| v * (i as f64 - mode as f64).abs())
        .sum();
    let confidence = (1.0 - spread / (2.0 / 3.0)).max(0.0);
    assert!((score["confidence"].as_f64().unwrap_or(f64::NAN) - confidence).abs() <= 0.005 + 1e-9);

    for value in p.iter().chain(numbers(&answers["refund_intent"]).iter()) {
        assert!((0.0..=1.0).contains(value));
        assert!(
            (value * 10_000.0 - (value * 10_000.0).round()).abs() < 1e-6,
            "4 decimals: {value}"
        );
    }
    assert!(
        body["usage"]["input_tokens"]
            .as_u64()
            .is_some_and(|n| n > 50)
    );
    assert_eq!(body["usage"]["output_tokens"], 60);
}

#[tokio::test]
async fn the_same_request_gets_the_same_body() {
    let fake = server(Default::default()).await;
    let first = post(&fake, &mixed_request()).await.body;
    let second = post(&fake, &mixed_request()).await.body;
    assert_eq!(first, second);
}

#[tokio::test]
async fn ids_order_and_other_questions_never_change_an_answer() {
    let fake = server(Default::default()).await;
    let base = post(&fake, &mixed_request()).await.json();
    let questions = mixed_request()["questions"]
        .as_object()
        .cloned()
        .expect("questions");

    let mut renamed = mixed_request();
    renamed["questions"] = Value::Object(
        questions
            .iter()
            .map(|(id, q)| (format!("🙂 {id}.x"), q.clone()))
            .collect(),
    );
    let renamed = post(&fake, &renamed).await.json();

    let mut reversed = mixed_request();
    reversed["questions"] = Value::Object(
        questions
            .iter()
            .rev()
            .map(|(id, q)| (id.clone(), q.clone()))
            .collect(),
    );
    let reversed = post(&fake, &reversed).await.json();

    let mut batched = mixed_request();
    let mut more: Map<String, Value> = questions.clone();
    more.insert(
        "urgent".into(),
        json!({"type": "noul", "instructions": "Is it urgent?"}),
    );
    more.insert("lang".into(), json!({"type": "choice", "instructions": "Language?", "criteria": {"English": null, "Other": null}}));
    batched["questions"] = Value::Object(more);
    let batched = post(&fake, &batched).await.json();

    for id in questions.keys() {
        assert_eq!(
            base["answers"][id],
            renamed["answers"][format!("🙂 {id}.x")],
            "{id} renamed"
        );
        assert_eq!(
            base["answers"][id], reversed["answers"][id],
            "{id} reversed"
        );
        assert_eq!(base["answers"][id], batched["answers"][id], "{id} batched");
    }
    let order: Vec<&String> = reversed["answers"]
        .as_object()
        .map(|a| a.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        order,
        ["frustration", "queue", "refund_intent"],
        "answers follow the request order"
    );
}

#[tokio::test]
async fn different_states_get_different_answers() {
    let fake = server(Default::default()).await;
    let first = post(&fake, &noul_request()).await.json();
    let mut other = noul_request();
    other["state"] = json!("Where is my parcel?");
    let second = post(&fake, &other).await.json();
    assert_ne!(first["answers"]["refund"], second["answers"]["refund"]);
}

#[tokio::test]
async fn aliases_resolve_and_versioned_ids_echo() {
    let fake = server(Default::default()).await;
    let mut answers = Vec::new();
    for model in ["jev-latest", "jev-preview", "jev-1.13.0"] {
        let mut request = noul_request();
        request["model"] = json!(model);
        let body = post(&fake, &request).await.json();
        assert_eq!(body["model"], "jev-1.13.0", "{model}");
        answers.push(body["answers"].clone());
    }
    assert!(answers.windows(2).all(|pair| pair[0] == pair[1]));
}

#[tokio::test]
async fn structured_content_is_answered_and_echoed() {
    let fake = server(Default::default()).await;
    let request = json!({"model": "jev-latest", "state": ["a", {"b": 1}],
        "questions": {
            "n": {"type": "noul", "instructions": {"task": "decide"}, "criteria": {"true": ["x"], "false": {"y": 1}}},
            "c": {"type": "choice", "instructions": ["Route.", "Pick one."],
                  "criteria": {"환불 요청": {"owns": ["refunds"]}, "🙂 기타": ["other"], "a.b": null}},
            "s": {"type": "score", "instructions": {"scale": 1}, "criteria": [{"label": "Calm"}, ["Angry"]]}}});
    let body = post(&fake, &request).await.json();
    let labels: Vec<&String> = body["answers"]["c"]["probabilities"]
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    assert_eq!(labels, ["환불 요청", "🙂 기타", "a.b"]);
    assert_eq!(
        body["answers"]["s"]["legend"],
        json!({"0": {"label": "Calm"}, "1": ["Angry"]})
    );
}

#[tokio::test]
async fn noise_varies_repeats_and_replays_from_the_seed() {
    let noisy = || Config {
        noise: Some(0.1),
        seed: 9,
        ..Config::default()
    };
    let mut runs = Vec::new();
    for config in [
        noisy(),
        noisy(),
        Config {
            seed: 10,
            ..noisy()
        },
    ] {
        let fake = server(config).await;
        let mut seen = Vec::new();
        for _ in 0..6 {
            let body = post(&fake, &mixed_request()).await.json();
            for answer in body["answers"].as_object().expect("answers").values() {
                let p = numbers(answer);
                assert!(p.iter().all(|v| (0.0..=1.0).contains(v)));
                if answer["type"] != "noul" {
                    assert!((p.iter().sum::<f64>() - 1.0).abs() <= 5e-5 * p.len() as f64);
                }
            }
            seen.push(body["answers"].clone());
        }
        assert!(seen.windows(2).any(|pair| pair[0] != pair[1]));
        runs.push(seen);
        fake.shutdown().await;
    }
    assert_eq!(runs[0], runs[1], "the same seed gives the same answers");
    assert_ne!(runs[0], runs[2], "another seed gives other answers");
}

#[tokio::test]
async fn noise_has_the_given_spread_around_the_hash_answer() {
    let centre =
        jevjudge_fake::answer(&noul_request()).expect("an answer")["answers"]["refund"]["noul"]
            .as_f64()
            .expect("a probability");
    // Far enough from 0 and 1 that clamping is negligible at SD 0.05.
    assert!((0.25..=0.75).contains(&centre), "{centre}");
    let fake = server(Config {
        noise: Some(0.05),
        seed: 1,
        ..Config::default()
    })
    .await;
    let mut draws = Vec::new();
    for _ in 0..200 {
        let body = post(&fake, &noul_request()).await.json();
        draws.push(
            body["answers"]["refund"]["noul"]
                .as_f64()
                .expect("a probability"),
        );
    }
    fake.shutdown().await;
    let n = draws.len() as f64;
    let mean = draws.iter().sum::<f64>() / n;
    let sd = (draws.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    // Seeded, so these are fixed numbers; the bounds are what 200 normal draws allow
    // (4 standard errors of the mean, ±20 % on the SD).
    assert!(
        (mean - centre).abs() < 4.0 * 0.05 / n.sqrt(),
        "{mean} vs {centre}"
    );
    assert!((sd - 0.05).abs() < 0.01, "{sd}");
}

#[tokio::test]
async fn latency_delays_every_answer() {
    let fake = server(Config {
        latency: Duration::from_millis(150),
        ..Config::default()
    })
    .await;
    let started = Instant::now();
    let reply = post(&fake, &noul_request()).await;
    assert_eq!(reply.status, 200);
    // The fake wakes 1 ms early to offset tokio's late timer, so it never answers sooner than
    // latency − 1 ms.
    assert!(started.elapsed() >= Duration::from_millis(149));
}
