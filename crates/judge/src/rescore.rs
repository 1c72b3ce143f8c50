//! A verdict of one definition computed from another's answers: when two versions ask exactly
//! the same questions (a calibrated version only moves thresholds), the answers a review of
//! one received are the answers the other would have received, so the other's verdict is the
//! same probabilities scored against its own thresholds — no request, no tokens.

use std::time::Duration;

use jevjudge_wire::Usage;

use crate::{Definition, ErrorCode, Finding, Findings, Status, Verdict, aggregate, score};

impl Definition {
    /// Whether this definition sends exactly the questions `other` sends: the same criterion
    /// ids with the same noul questions in the same order (rules 9–11), so one answer set
    /// serves both.
    pub fn asks_same_questions(&self, other: &Definition) -> bool {
        self.questions() == other.questions()
    }

    /// This definition's verdict on the yes probabilities `live` reports, one per criterion
    /// (`live` is a review by a definition asking the same questions): each criterion scored
    /// against this definition's thresholds (rules 18–20), then aggregated (rule 23). An ERROR
    /// `live` verdict gives the same ERROR (the exchange failed for both). No request is sent,
    /// so usage is zero tokens and elapsed zero; the model is `live`'s.
    ///
    /// `None` when `live` lacks a finding for one of this definition's criteria or holds
    /// findings for criteria this definition does not have.
    pub fn verdict_from_probabilities(&self, live: &Verdict) -> Option<Verdict> {
        let none = Some(Usage {
            input_tokens: 0,
            output_tokens: 0,
        });
        if live.status == Status::Error {
            return Some(Verdict {
                definition_version: self.version().to_owned(),
                status: Status::Error,
                error: live.error,
                detail: live.detail,
                findings: Findings::default(),
                model: live.model.clone(),
                usage: none,
                elapsed: Duration::ZERO,
            });
        }
        if live.findings.len() != self.criteria().len() {
            return None;
        }
        let findings: Vec<(String, Finding)> = self
            .criteria()
            .iter()
            .map(|criterion| {
                let p = live.findings.get(criterion.id())?.yes_probability;
                Some((criterion.id().to_owned(), score(criterion, p)))
            })
            .collect::<Option<_>>()?;
        Some(Verdict {
            definition_version: self.version().to_owned(),
            status: aggregate(findings.iter().map(|(_, finding)| finding.status)),
            error: ErrorCode::None,
            detail: None,
            findings: Findings::new(findings),
            model: live.model.clone(),
            usage: none,
            elapsed: Duration::ZERO,
        })
    }
}

#[cfg(test)]
mod tests {
    use jevjudge_wire::{Detail, NoulQuestion};

    use super::*;
    use crate::Criterion;

    fn definition(version: &str, criteria: &[(&str, bool, f64, f64)]) -> Definition {
        let criteria = criteria
            .iter()
            .map(|(id, expected, fail, pass)| {
                Criterion::new(*id, NoulQuestion::new("Is it so?"), *expected, *fail, *pass)
                    .unwrap()
            })
            .collect();
        Definition::new(version, criteria).unwrap()
    }

    /// A successful live verdict with these yes probabilities (its statuses are irrelevant:
    /// only p is read).
    fn live(probabilities: &[(&str, f64)]) -> Verdict {
        let findings = probabilities
            .iter()
            .map(|(id, p)| {
                (
                    (*id).to_owned(),
                    Finding {
                        status: Status::Inconclusive,
                        yes_probability: *p,
                        expected_probability: *p,
                    },
                )
            })
            .collect();
        Verdict {
            definition_version: "live".to_owned(),
            status: Status::Inconclusive,
            error: ErrorCode::None,
            detail: None,
            findings: Findings::new(findings),
            model: Some("m-1".to_owned()),
            usage: Some(Usage {
                input_tokens: 300,
                output_tokens: 40,
            }),
            elapsed: Duration::from_millis(120),
        }
    }

    fn statuses(verdict: &Verdict) -> Vec<Status> {
        verdict.findings.iter().map(|(_, f)| f.status).collect()
    }

    // judge-contract rule 21
    #[test]
    fn rule_21_worked_values_score_against_the_shadows_thresholds() {
        let yes = definition("v+cal", &[("c", true, 0.2, 0.8)]);
        let got: Vec<Status> = [0.95, 0.8, 0.5, 0.2, 0.05]
            .iter()
            .map(|p| {
                yes.verdict_from_probabilities(&live(&[("c", *p)]))
                    .unwrap()
                    .status
            })
            .collect();
        use Status::*;
        assert_eq!(got, [Pass, Pass, Inconclusive, Fail, Fail]);
        let no = definition("v+cal", &[("c", false, 0.2, 0.8)]);
        let findings: Vec<(f64, Status)> = [0.1, 0.2, 0.8, 0.95, 0.99]
            .iter()
            .map(|p| {
                let verdict = no.verdict_from_probabilities(&live(&[("c", *p)])).unwrap();
                let finding = *verdict.findings.get("c").unwrap();
                assert_eq!(finding.yes_probability, *p);
                (finding.expected_probability, finding.status)
            })
            .collect();
        assert_eq!(
            findings,
            [
                (0.9, Pass),
                (0.8, Pass),
                (0.19999999999999996, Fail),
                (0.050000000000000044, Fail),
                (0.010000000000000009, Fail)
            ]
        );
    }

    // judge-contract rule 22
    #[test]
    fn rule_22_binary_rounding_at_the_thresholds_is_kept() {
        let a = definition("v", &[("c", false, 0.3, 0.8)]);
        let verdict = a.verdict_from_probabilities(&live(&[("c", 0.7)])).unwrap();
        assert_eq!(verdict.status, Status::Inconclusive);
        let b = definition("v", &[("c", false, 0.2, 0.93)]);
        let verdict = b.verdict_from_probabilities(&live(&[("c", 0.07)])).unwrap();
        assert_eq!(verdict.status, Status::Inconclusive);
    }

    // judge-contract rules 23 and 24 (support-draft-v1's thresholds)
    #[test]
    fn rule_24_findings_aggregate_fail_over_inconclusive() {
        let shadow = definition(
            "support-draft-v1",
            &[("covers", true, 0.3, 0.7), ("risk", false, 0.3, 0.7)],
        );
        use Status::*;
        for (covers, risk, want) in [
            (0.99, 0.99, Fail),
            (0.8, 0.1, Pass),
            (0.2, 0.1, Fail),
            (0.5, 0.1, Inconclusive),
            (0.5, 0.99, Fail),
        ] {
            let verdict = shadow
                .verdict_from_probabilities(&live(&[("covers", covers), ("risk", risk)]))
                .unwrap();
            assert_eq!(verdict.status, want, "({covers}, {risk})");
            assert_eq!(verdict.findings.len(), 2);
        }
    }

    // judge-contract rule 25: definition order, this version, the live model; no tokens
    #[test]
    fn rule_25_the_verdict_names_the_shadow_in_definition_order_with_no_tokens_spent() {
        let shadow = definition("v+cal.1", &[("b", true, 0.1, 0.6), ("a", true, 0.1, 0.6)]);
        let verdict = shadow
            .verdict_from_probabilities(&live(&[("a", 0.65), ("b", 0.5)]))
            .unwrap();
        assert_eq!(verdict.definition_version, "v+cal.1");
        let ids: Vec<&str> = verdict.findings.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["b", "a"]);
        assert_eq!(
            statuses(&verdict),
            [Status::Inconclusive, Status::Pass],
            "b at 0.5 is between 0.1 and 0.6"
        );
        assert_eq!(verdict.status, Status::Inconclusive);
        assert_eq!(verdict.error, ErrorCode::None);
        assert_eq!(verdict.model.as_deref(), Some("m-1"));
        assert_eq!(
            verdict.usage,
            Some(Usage {
                input_tokens: 0,
                output_tokens: 0
            })
        );
        assert_eq!(verdict.elapsed, Duration::ZERO);
    }

    // judge-contract rule 28: an ERROR exchange is an ERROR for every definition asking it
    #[test]
    fn rule_28_an_error_live_verdict_gives_the_same_error_with_empty_findings() {
        let shadow = definition("v+cal.1", &[("c", true, 0.2, 0.8)]);
        let error = Verdict::error(
            "v",
            ErrorCode::Timeout,
            Detail::BudgetElapsed,
            Duration::from_secs(2),
        );
        let verdict = shadow.verdict_from_probabilities(&error).unwrap();
        assert_eq!(verdict.status, Status::Error);
        assert_eq!(verdict.error, ErrorCode::Timeout);
        assert_eq!(verdict.detail, Some(Detail::BudgetElapsed));
        assert!(verdict.findings.is_empty());
        assert_eq!(verdict.definition_version, "v+cal.1");
    }

    #[test]
    fn findings_of_other_criteria_give_no_verdict() {
        let shadow = definition("v", &[("a", true, 0.2, 0.8), ("b", true, 0.2, 0.8)]);
        assert_eq!(
            shadow.verdict_from_probabilities(&live(&[("a", 0.9)])),
            None
        );
        assert_eq!(
            shadow.verdict_from_probabilities(&live(&[("a", 0.9), ("c", 0.9)])),
            None
        );
        assert_eq!(
            shadow.verdict_from_probabilities(&live(&[("a", 0.9), ("b", 0.9), ("c", 0.9)])),
            None
        );
    }

    #[test]
    fn only_the_same_questions_in_the_same_order_are_the_same_questions() {
        let live = definition("v", &[("a", true, 0.2, 0.8), ("b", true, 0.2, 0.8)]);
        let calibrated = definition("v+cal.1", &[("a", true, 0.3, 0.6), ("b", false, 0.1, 0.9)]);
        assert!(calibrated.asks_same_questions(&live));
        let reordered = definition("v2", &[("b", true, 0.2, 0.8), ("a", true, 0.2, 0.8)]);
        assert!(!reordered.asks_same_questions(&live));
        let other = Definition::new(
            "v3",
            vec![
                Criterion::new("a", NoulQuestion::new("Is it so?"), true, 0.2, 0.8).unwrap(),
                Criterion::new("b", NoulQuestion::new("Is it not?"), true, 0.2, 0.8).unwrap(),
            ],
        )
        .unwrap();
        assert!(!other.asks_same_questions(&live));
    }
}
