//! System One request bodies that more than one suite sends.

use serde_json::{Value, json};

/// A System One request with a noul (`refund_intent`), a choice (`queue`, one option without
/// a description) and a score (`frustration`, three levels) question, about a duplicate
/// charge: the fake's suites send it.
pub fn mixed_request() -> Value {
    json!({"model": "jev-latest",
        "state": {"ticket": {"subject": "Duplicate charge", "messages": [{"from": "customer",
                  "text": "I was charged twice for order A-104. Please refund the duplicate."}]},
                  "refund_policy": "Duplicate charges are eligible for a refund."},
        "questions": {
            "refund_intent": {"type": "noul", "instructions": "Is the customer asking for a refund?",
                              "criteria": {"true": "Asks to reverse or return a charge", "false": "Does not"}},
            "queue": {"type": "choice", "instructions": "Which queue should handle this `ticket`?",
                      "criteria": {"billing": "Charges, invoices, or refunds", "technical": "Product errors", "other": null}},
            "frustration": {"type": "score", "instructions": "How frustrated is the customer?",
                            "criteria": ["Calm", "Frustrated", "Very angry"]}}})
}
