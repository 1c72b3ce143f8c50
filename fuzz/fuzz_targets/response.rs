//! System One response bodies (systemone-wire.md §6–§7): any bytes are a response or a typed
//! answer error with a detail code, never a panic; checked against the documentation's mixed
//! request (a noul, a choice and a score question) and against a one-criterion noul request.
#![no_main]

use jevjudge_wire::{Questions, Response};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn questions() -> &'static [Questions; 2] {
    static QUESTIONS: OnceLock<[Questions; 2]> = OnceLock::new();
    QUESTIONS.get_or_init(|| {
        let mixed = serde_json::json!({
            "refund_intent": {"type": "noul", "instructions": "Is the customer asking for a refund?",
                              "criteria": {"true": "Asks to reverse a charge", "false": "Does not"}},
            "queue": {"type": "choice", "instructions": "Which queue?",
                      "criteria": {"billing": "Charges", "technical": "Errors", "other": null}},
            "frustration": {"type": "score", "instructions": "How frustrated?",
                            "criteria": ["Calm", "Frustrated", "Very angry"]}
        });
        let noul = serde_json::json!({"supported": {"type": "noul", "instructions": "Supported?"}});
        [
            serde_json::from_value(mixed).expect("mixed questions"),
            serde_json::from_value(noul).expect("noul question"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    match Response::from_slice(data) {
        Ok(response) => {
            for questions in questions() {
                if let Err(error) = response.check(questions) {
                    let _ = error.detail();
                }
            }
        }
        Err(error) => {
            let _ = error.detail();
        }
    }
});
