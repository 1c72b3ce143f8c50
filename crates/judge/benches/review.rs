//! The Judge's own cost: one review of the 2-criterion `support-draft-v1` against an in-process
//! backend that answers immediately. Run: `cargo bench -p jevjudge-judge --bench review`.

use std::{hint::black_box, time::Duration};

use criterion::{Criterion as Bench, criterion_group, criterion_main};
use jevjudge_judge::{Backend, BackendFuture, Criterion, Definition, Judge};
use jevjudge_wire::{Answer, NoulAnswer, Request, Response};
use serde_json::json;
use tokio::time::Instant;

/// Answers both criteria at once, as a parsed response would.
struct Immediate;

impl Backend for Immediate {
    fn answer<'a>(&'a self, _request: &'a Request, _deadline: Instant) -> BackendFuture<'a> {
        let response = Response {
            model: Some("jev-1.13.0".into()),
            answers: vec![
                (
                    "covers_request".into(),
                    Answer::Noul(NoulAnswer { noul: Some(0.9) }),
                ),
                (
                    "unsupported_commitment".into(),
                    Answer::Noul(NoulAnswer { noul: Some(0.95) }),
                ),
            ],
            usage: None,
            raw_answers: None,
        };
        Box::pin(std::future::ready(Ok(response)))
    }
}

fn support_draft_v1() -> Definition {
    let criterion = |id: &str, text: &str, expected| {
        Criterion::new(
            id,
            jevjudge_wire::NoulQuestion::new(text),
            expected,
            0.2,
            0.8,
        )
        .unwrap()
    };
    Definition::new(
        "support-draft-v1",
        vec![
            criterion("covers_request", "Does the draft address the customer's request and its conditions?", true),
            criterion("unsupported_commitment", "Does the draft claim an action has completed without a successful business record?", false),
        ],
    )
    .unwrap()
}

fn review(c: &mut Bench) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let judge = Judge::new(Immediate, Duration::from_secs(2)).unwrap();
    let definition = support_draft_v1();
    let state = json!({"request": "如果今天还不能发货，请帮我申请退款。", "draft": "您的退款已完成。",
                       "business_record": "尚未发起退款，发货状态待查询。"});
    c.bench_function(
        "review support-draft-v1 (2 criteria, immediate backend)",
        |b| {
            b.iter(|| {
                runtime.block_on(judge.review(black_box(state.clone()), black_box(&definition)))
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Bench::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = review
}
criterion_main!(benches);
