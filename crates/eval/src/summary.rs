//! Summaries: counts, accuracy, nearest-rank P50/P95 and usage totals (judge-contract §12).

use serde::{Deserialize, Serialize};

use crate::{
    Outcome, Row,
    latencies::{Latencies, p50_p95_of_union},
};

/// The figures of a set of rows (overall, or one scenario).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Rows counted.
    pub total: u64,
    /// True when some case weighs other than 1 (`weight`, 1/π of a sampled label): every rate
    /// is then weighted (Horvitz–Thompson) and its interval taken at `effective_n`; counts stay
    /// counts. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weighted: Option<bool>,
    /// With weights: the Kish effective sample size of the cases, `(Σw)² / Σw²`. Absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_n: Option<f64>,
    /// PASS/FAIL that matched `expected_pass`.
    pub correct: u64,
    /// PASS/FAIL that did not.
    pub incorrect: u64,
    /// INCONCLUSIVE rows.
    pub abstained: u64,
    /// ERROR rows (synthetic ones included).
    pub errors: u64,
    /// correct ÷ total (0.0 when empty); abstentions and errors stay in the denominator. With
    /// weights (`weighted`), Σw·correct ÷ Σw·reviews.
    pub accuracy: f64,
    /// Nearest-rank median of review times, in ms.
    pub p50_millis: f64,
    /// Nearest-rank 95th percentile of review times, in ms.
    pub p95_millis: f64,
    /// Rows the runner made because the evaluator failed (D4); also counted in `errors`.
    pub synthesized_rows: u64,
    /// Input tokens over the rows whose usage is known; null when none is (D5). Wider than a
    /// row's u64 count, so that a total never wraps.
    pub input_tokens: Option<u128>,
    /// Output tokens over the rows whose usage is known; null when none is.
    pub output_tokens: Option<u128>,
    /// How many rows have known usage.
    pub usage_known_rows: u64,
    /// input_tokens × price ÷ 1e6, only when the user gave a price; covers the known rows only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// ERROR rows by `KIND/detail` (for example `BACKEND/not_recorded`), most frequent first;
    /// absent when no row errored.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        with = "crate::ordered_map"
    )]
    pub error_kinds: Vec<(String, u64)>,
    /// HTTP attempts of this session against the live API, by outcome (overall only; absent
    /// for offline backends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<jevjudge_client::limit::AttemptCounts>,
    /// Intervals, coverage, decided accuracy, false PASS and false FAIL.
    #[serde(flatten)]
    pub risk: crate::Risk,
    /// Reviews per case and, with repeats, the noise figures.
    #[serde(flatten)]
    pub repeated: crate::Repeated,
}

/// The `KIND/detail` key of an ERROR verdict, as summaries count it.
pub fn error_key(verdict: &jevjudge_judge::Verdict) -> String {
    match verdict.detail {
        Some(detail) => format!("{}/{detail}", verdict.error.as_str()),
        None => verdict.error.as_str().to_owned(),
    }
}

impl Summary {
    /// Errors by kind as people read them: `BACKEND/not_recorded 150, TIMEOUT/budget_elapsed 2`
    /// (empty when none).
    pub fn errors_text(&self) -> String {
        self.error_kinds
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Token totals as people read them: `in/out (n rows)`, or `unknown` when no row's usage is
    /// known (never 0, D5).
    pub fn tokens_text(&self) -> String {
        match (self.input_tokens, self.output_tokens) {
            (Some(input), Some(output)) => {
                format!(
                    "{input}/{output} ({})",
                    crate::plural::count(self.usage_known_rows, "row")
                )
            }
            _ => "unknown".to_owned(),
        }
    }
}

/// Builds a [`Summary`] one row at a time; memory is about one byte per case (its tally, see
/// [`crate::RiskBuilder`]), the review times going to a temporary file past a fixed number
/// ([`Latencies`]).
#[derive(Debug, Default)]
pub struct SummaryBuilder {
    correct: u64,
    incorrect: u64,
    abstained: u64,
    errors: u64,
    synthesized: u64,
    // Wider than any one row's count: a sum of u64 counts cannot wrap (2^64 rows would be
    // needed).
    input_tokens: u128,
    output_tokens: u128,
    usage_known: u64,
    durations: Latencies,
    /// The review times are kept by other builders (the overall summary's by its scenarios').
    times_elsewhere: bool,
    error_kinds: std::collections::HashMap<String, u64>,
    risk: crate::RiskBuilder,
    repeated: crate::RepeatedBuilder,
}

impl SummaryBuilder {
    /// Counts one row.
    pub fn add(&mut self, row: &Row) {
        self.risk.add(row);
        self.repeated.add(row);
        // Every review counts: with repeats, cases × repeats.
        for verdict in row.verdicts() {
            self.add_review(verdict, row.expected_pass);
        }
    }

    fn add_review(&mut self, verdict: &jevjudge_judge::Verdict, expected_pass: bool) {
        match Outcome::of(verdict.status, expected_pass) {
            Outcome::Correct => self.correct += 1,
            Outcome::Incorrect => self.incorrect += 1,
            Outcome::Abstained => self.abstained += 1,
            Outcome::Error => {
                self.errors += 1;
                *self.error_kinds.entry(error_key(verdict)).or_default() += 1;
            }
        }
        if verdict.error == jevjudge_judge::ErrorCode::Evaluator {
            self.synthesized += 1;
        }
        if let Some(usage) = verdict.usage {
            self.input_tokens += u128::from(usage.input_tokens);
            self.output_tokens += u128::from(usage.output_tokens);
            self.usage_known += 1;
        }
        if !self.times_elsewhere {
            self.durations.push(verdict.elapsed);
        }
    }

    /// The summary; `price_per_million_input` adds a cost (D5).
    pub fn finish(self, price_per_million_input: Option<f64>) -> Summary {
        let mut this = self;
        let weighting = this.risk.weighting();
        let risk = std::mem::take(&mut this.risk).finish();
        let repeated = std::mem::take(&mut this.repeated).finish();
        let mut summary = this.finish_counts(price_per_million_input);
        summary.risk = risk;
        summary.repeated = repeated;
        if let Some((accuracy, effective_n)) = weighting {
            summary.accuracy = accuracy;
            summary.weighted = Some(true);
            summary.effective_n = Some(effective_n);
        }
        summary
    }

    fn finish_counts(mut self, price_per_million_input: Option<f64>) -> Summary {
        let total = self.correct + self.incorrect + self.abstained + self.errors;
        let (p50, p95) = self.durations.p50_p95();
        let known = self.usage_known > 0;
        let input_tokens = known.then_some(self.input_tokens);
        let mut error_kinds: Vec<(String, u64)> = self.error_kinds.into_iter().collect();
        error_kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Summary {
            total,
            weighted: None,
            effective_n: None,
            correct: self.correct,
            incorrect: self.incorrect,
            abstained: self.abstained,
            errors: self.errors,
            accuracy: if total == 0 {
                0.0
            } else {
                self.correct as f64 / total as f64
            },
            p50_millis: p50,
            p95_millis: p95,
            synthesized_rows: self.synthesized,
            input_tokens,
            output_tokens: known.then_some(self.output_tokens),
            usage_known_rows: self.usage_known,
            // From the exact (wide) total; a price is checked finite by the caller.
            cost: price_per_million_input
                .filter(|_| known)
                .map(|price| self.input_tokens as f64 * price / 1_000_000.0),
            error_kinds,
            attempts: None,
            risk: crate::Risk::default(),
            repeated: crate::Repeated::default(),
        }
    }
}

/// Summaries overall and per scenario. Scenarios come in first-seen order of the *input*
/// (rule 58): each remembers the lowest case index it was seen at, so rows may arrive in
/// completion order. Review times are kept once, by the scenarios; the overall P50/P95 are
/// taken over their union.
#[derive(Debug)]
pub struct SummariesBuilder {
    overall: SummaryBuilder,
    scenarios: Vec<(String, usize, SummaryBuilder)>,
    index: std::collections::HashMap<String, usize>,
}

impl Default for SummariesBuilder {
    fn default() -> SummariesBuilder {
        SummariesBuilder {
            overall: SummaryBuilder {
                times_elsewhere: true,
                ..SummaryBuilder::default()
            },
            scenarios: Vec::new(),
            index: std::collections::HashMap::new(),
        }
    }
}

impl SummariesBuilder {
    /// Counts one row (the case at input position `case_index`) overall and in its scenario.
    pub fn add(&mut self, case_index: usize, row: &Row) {
        self.overall.add(row);
        let slot = match self.index.get(&row.scenario) {
            Some(&slot) => slot,
            None => {
                self.index
                    .insert(row.scenario.clone(), self.scenarios.len());
                self.scenarios
                    .push((row.scenario.clone(), case_index, SummaryBuilder::default()));
                self.scenarios.len() - 1
            }
        };
        let (_, first, builder) = &mut self.scenarios[slot];
        *first = (*first).min(case_index);
        builder.add(row);
    }

    /// The overall summary and the scenario summaries in first-seen order.
    pub fn finish(mut self, price: Option<f64>) -> (Summary, Vec<(String, Summary)>) {
        self.scenarios.sort_by_key(|(_, first, _)| *first);
        let (p50, p95) = p50_p95_of_union(
            &mut self
                .scenarios
                .iter_mut()
                .map(|(_, _, builder)| &mut builder.durations)
                .collect::<Vec<_>>(),
        );
        let scenarios = self
            .scenarios
            .into_iter()
            .map(|(name, _, builder)| (name, builder.finish(price)))
            .collect();
        let mut overall = self.overall.finish(price);
        overall.p50_millis = p50;
        overall.p95_millis = p95;
        (overall, scenarios)
    }
}

/// Summaries of rows given in input order (for example a resumed run's merged rows).
pub fn summarize<'a>(
    rows: impl IntoIterator<Item = &'a Row>,
    price_per_million_input: Option<f64>,
) -> (Summary, Vec<(String, Summary)>) {
    let mut builder = SummariesBuilder::default();
    for (index, row) in rows.into_iter().enumerate() {
        builder.add(index, row);
    }
    builder.finish(price_per_million_input)
}

impl Summary {
    /// The PASS and FAIL precisions of this summary's verdicts at `prevalence`.
    ///
    /// A weighted summary keeps no weighted class-by-verdict counts, and its plain counts
    /// would understate the errors of a sampled class: it gives no precision here, and says
    /// that `calibrate --prevalence` weighs them (per criterion).
    pub fn at_prevalence(&self, prevalence: f64) -> crate::prevalence::AtPrevalence {
        if self.weighted == Some(true) {
            return crate::prevalence::AtPrevalence {
                prevalence,
                cases_expected_pass_share: None,
                pass_precision: None,
                pass_precision_ci: None,
                fail_precision: None,
                fail_precision_ci: None,
                warning: Some(
                    "the cases are weighted: precisions at a stated prevalence need weighted \
                     per-class rates, which calibrate --prevalence computes per criterion"
                        .to_owned(),
                ),
            };
        }
        let r = &self.risk;
        // The case is the unit: with repeats, every count over the repeats.
        let scale = 1.0 / self.repeated.repeats.max(1) as f64;
        let f = |x: u64| x as f64 * scale;
        let pass_hits = r.pass_verdicts - r.false_pass;
        let fail_hits = r.fail_verdicts - r.false_fail;
        crate::prevalence::precisions(
            prevalence,
            f(r.expected_pass_reviews),
            f(r.expected_fail_reviews),
            (f(pass_hits), f(r.false_pass)),
            (f(fail_hits), f(r.false_fail)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jevjudge_judge::{ErrorCode, Status, Verdict};
    use jevjudge_wire::{Detail, Usage};
    use std::time::Duration;

    fn row(usage: Option<Usage>, error: bool) -> Row {
        let mut verdict =
            Verdict::error("v", ErrorCode::Backend, Detail::Transport, Duration::ZERO);
        if !error {
            verdict.status = Status::Pass;
        }
        verdict.usage = usage;
        Row {
            scenario: "s".into(),
            id: "a".into(),
            expected_pass: true,
            pass: !error,
            score: 1.0,
            verdict,
            expected_findings: None,
            repeats: None,
            weight: 1.0,
        }
    }

    #[test]
    fn token_totals_do_not_wrap() {
        let huge = Usage {
            input_tokens: 1 << 63,
            output_tokens: u64::MAX,
        };
        let mut builder = SummaryBuilder::default();
        builder.add(&row(Some(huge), false));
        builder.add(&row(Some(huge), false));
        let summary = builder.finish(Some(1.0));
        assert_eq!(summary.input_tokens, Some(1u128 << 64));
        assert_eq!(summary.output_tokens, Some(2 * u128::from(u64::MAX)));
        assert_eq!(summary.cost, Some(2f64.powi(64) / 1e6));
        let json = serde_json::to_string(&summary).unwrap();
        assert!(
            json.contains("\"input_tokens\":18446744073709551616"),
            "{json}"
        );
        let back: Summary = serde_json::from_str(&json).unwrap();
        assert_eq!(back, summary);
    }

    /// A row from generated parts: its scenario, expected_pass, and each review's status and
    /// time in nanoseconds (several reviews: repeats).
    fn generated(scenario: u8, expected_pass: bool, reviews: &[(u8, u64)], weight: f64) -> Row {
        let verdicts: Vec<Verdict> = reviews
            .iter()
            .map(|&(status, nanos)| {
                let status = [
                    Status::Pass,
                    Status::Fail,
                    Status::Inconclusive,
                    Status::Error,
                ][usize::from(status % 4)];
                Verdict {
                    elapsed: Duration::from_nanos(nanos),
                    ..crate::test_support::verdict("v", status, Default::default())
                }
            })
            .collect();
        let mut row = crate::test_support::row(
            &format!("s{scenario}"),
            "id",
            expected_pass,
            verdicts[0].clone(),
        );
        row.weight = weight;
        if verdicts.len() > 1 {
            row.repeats = Some(crate::Repeats {
                verdicts,
                pass_rate: 0.0,
            });
        }
        row
    }

    /// P50, P95, the accuracy interval and the false PASS rate's upper bound of one summary.
    type Figures = (f64, f64, Option<[f64; 2]>, Option<f64>);

    /// The figures as the summaries computed them before they were kept compactly: every
    /// review's milliseconds as f64, sorted; clusters of every case, in the order they came.
    fn reference(rows: &[Row]) -> Vec<Figures> {
        let figures = |rows: Vec<&Row>| {
            let mut millis: Vec<f64> = rows
                .iter()
                .flat_map(|row| row.verdicts().iter().map(|v| v.elapsed_millis()))
                .collect();
            let (p50, p95) = jevjudge_stats::p50_p95(&mut millis);
            let tally = |row: &Row,
                         success: fn(&Verdict, bool) -> bool,
                         trial: fn(&Verdict, bool) -> bool| {
                let (mut s, mut n) = (0u64, 0u64);
                for v in row.verdicts() {
                    s += u64::from(success(v, row.expected_pass));
                    n += u64::from(trial(v, row.expected_pass));
                }
                (s, n)
            };
            let correct = |v: &Verdict, e: bool| Outcome::of(v.status, e) == Outcome::Correct;
            let any = |_: &Verdict, _: bool| true;
            let false_pass = |v: &Verdict, e: bool| !e && v.status == Status::Pass;
            let decided = |v: &Verdict, e: bool| {
                matches!(
                    Outcome::of(v.status, e),
                    Outcome::Correct | Outcome::Incorrect
                )
            };
            let clusters = |success, trial| -> Vec<(u64, u64)> {
                rows.iter()
                    .map(|row| tally(row, success, trial))
                    .filter(|(_, n)| *n > 0)
                    .collect()
            };
            (
                p50,
                p95,
                jevjudge_stats::clustered_wilson(&clusters(correct, any), crate::risk::Z95)
                    .map(|(l, h)| [l, h]),
                crate::risk::clopper_pearson_upper_clustered(&clusters(false_pass, decided)),
            )
        };
        let mut scenarios: Vec<&str> = Vec::new();
        for row in rows {
            if !scenarios.contains(&row.scenario.as_str()) {
                scenarios.push(&row.scenario);
            }
        }
        std::iter::once(figures(rows.iter().collect()))
            .chain(
                scenarios
                    .iter()
                    .map(|name| figures(rows.iter().filter(|row| row.scenario == *name).collect())),
            )
            .collect()
    }

    fn nanos() -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::prelude::*;
        prop_oneof![
            0u64..3_000_000,
            4_294_967_290u64..4_294_967_300,
            0u64..20_000_000_000
        ]
    }

    proptest::proptest! {
        /// P50/P95 (overall over the scenarios' times) and the clustered intervals from the
        /// compact builders equal those of every time and tally kept in full.
        #[test]
        fn compact_summaries_give_the_figures_of_full_ones(
            parts in proptest::collection::vec(
                (0u8..3, proptest::bool::ANY, proptest::collection::vec((0u8..4, nanos()), 1..4)),
                0..60,
            )
        ) {
            let rows: Vec<Row> = parts
                .iter()
                .map(|(scenario, expected, reviews)| generated(*scenario, *expected, reviews, 1.0))
                .collect();
            let (overall, scenarios) = summarize(&rows, None);
            let got: Vec<_> = std::iter::once(&overall)
                .chain(scenarios.iter().map(|(_, s)| s))
                .map(|s| (s.p50_millis, s.p95_millis, s.risk.accuracy_ci, s.risk.false_pass_rate_upper))
                .collect();
            proptest::prop_assert_eq!(got, reference(&rows));
        }
    }

    #[test]
    fn summaries_past_the_spill_threshold_give_the_figures_of_full_ones() {
        // Every scenario holds more times than memory keeps: they go to temporary files.
        let per_scenario = crate::latencies::SPILL_AT + 1_000;
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let rows: Vec<Row> = (0..3 * per_scenario)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let nanos = state % 50_000_000 + if i % 97 == 0 { 5_000_000_000 } else { 0 };
                generated(
                    (i % 3) as u8,
                    i % 2 == 0,
                    &[((state >> 40) as u8, nanos)],
                    1.0,
                )
            })
            .collect();
        let (overall, scenarios) = summarize(&rows, None);
        let got: Vec<_> = std::iter::once(&overall)
            .chain(scenarios.iter().map(|(_, s)| s))
            .map(|s| {
                (
                    s.p50_millis,
                    s.p95_millis,
                    s.risk.accuracy_ci,
                    s.risk.false_pass_rate_upper,
                )
            })
            .collect();
        assert_eq!(got, reference(&rows));
    }

    #[test]
    fn errors_are_counted_by_kind_and_detail_most_frequent_first() {
        let mut builder = SummaryBuilder::default();
        builder.add(&row(None, true));
        builder.add(&row(None, true));
        builder.add(&row(None, false));
        let summary = builder.finish(None);
        assert_eq!(
            summary.error_kinds,
            vec![("BACKEND/transport".to_owned(), 2)]
        );
        assert_eq!(summary.errors_text(), "BACKEND/transport 2");
    }
}
