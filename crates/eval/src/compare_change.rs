//! The change in accuracy, coverage and decided accuracy between two runs on the same cases,
//! each with a 95 % interval that accounts for the pairing.
//!
//! - **Single runs**, accuracy and coverage: Newcombe's hybrid score interval for a paired
//!   difference ([`jevjudge_stats::newcombe_paired`], method 10 of Newcombe 1998): each run's
//!   Wilson interval, combined with the phi correlation of the paired 2×2 table. Two runs that
//!   agree on most cases give a narrow interval, as they should.
//! - **Repeated runs**: the same square-and-add combination of each run's clustered interval
//!   (the case is the unit), with phi the correlation of the cases' rates between the runs.
//! - **Decided accuracy** is over different sets of reviews in the two runs (those each
//!   decided), so it has no paired table: the square-and-add interval with phi = 0, which is
//!   conservative when the runs agree more than chance.

use serde::{Deserialize, Serialize};

use crate::{Outcome, Row, Summary, risk::Z95};

/// One figure's change, CANDIDATE − BASE.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// BASE's figure (null when undefined).
    pub base: Option<f64>,
    /// CANDIDATE's figure.
    pub candidate: Option<f64>,
    /// candidate − base.
    pub difference: Option<f64>,
    /// 95 % interval of the difference.
    pub ci: Option<[f64; 2]>,
    /// How the interval was computed: `newcombe_paired`, `newcombe_clustered` or
    /// `newcombe_unpaired`.
    pub method: String,
}

impl Change {
    /// Whether the interval excludes 0 (the change is unlikely to be chance at 5 %).
    pub fn excludes_zero(&self) -> bool {
        self.ci.is_some_and(|[low, high]| low > 0.0 || high < 0.0)
    }
}

/// The three changes `compare` reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    /// Correct ÷ reviews.
    pub accuracy: Change,
    /// Decided ÷ reviews.
    pub coverage: Change,
    /// Correct ÷ decided.
    pub decided_accuracy: Change,
}

fn from_hybrid(
    base: Option<f64>,
    base_ci: Option<[f64; 2]>,
    candidate: Option<f64>,
    candidate_ci: Option<[f64; 2]>,
    phi: f64,
    method: &str,
) -> Change {
    let interval = match (base, base_ci, candidate, candidate_ci) {
        (Some(b), Some([bl, bh]), Some(c), Some([cl, ch])) => Some(
            jevjudge_stats::hybrid_interval((b, bl, bh), (c, cl, ch), phi),
        ),
        _ => None,
    };
    Change {
        base,
        candidate,
        difference: interval.map(|(d, ..)| d),
        ci: interval.map(|(_, low, high)| [low, high]),
        method: method.to_owned(),
    }
}

/// The per-case rate of `event` (events ÷ reviews).
fn rate(row: &Row, event: fn(Outcome) -> bool) -> f64 {
    let verdicts = row.verdicts();
    let hits = verdicts
        .iter()
        .filter(|v| event(Outcome::of(v.status, row.expected_pass)))
        .count();
    hits as f64 / verdicts.len().max(1) as f64
}

/// The Pearson correlation of two lists (0 when either does not vary).
fn correlation(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    if x.is_empty() {
        return 0.0;
    }
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

/// Each run's figure and 95 % interval: `(base, base_ci, candidate, candidate_ci)`.
type Sides = (Option<f64>, Option<[f64; 2]>, Option<f64>, Option<[f64; 2]>);

/// The paired change of one rate.
fn paired(base: &[&Row], candidate: &[&Row], event: fn(Outcome) -> bool, sides: Sides) -> Change {
    let single = base
        .iter()
        .chain(candidate)
        .all(|row| row.verdicts().len() == 1);
    let base_rates: Vec<f64> = base.iter().map(|r| rate(r, event)).collect();
    let candidate_rates: Vec<f64> = candidate.iter().map(|r| rate(r, event)).collect();
    if single {
        let mut table = jevjudge_stats::PairedTable::default();
        for (b, c) in base_rates.iter().zip(&candidate_rates) {
            match (*b > 0.5, *c > 0.5) {
                (true, true) => table.both += 1,
                (true, false) => table.first_only += 1,
                (false, true) => table.second_only += 1,
                (false, false) => table.neither += 1,
            }
        }
        let interval = jevjudge_stats::newcombe_paired(&table, Z95);
        return Change {
            base: sides.0,
            candidate: sides.2,
            difference: interval.map(|(d, ..)| d),
            ci: interval.map(|(_, low, high)| [low, high]),
            method: "newcombe_paired".to_owned(),
        };
    }
    let phi = correlation(&base_rates, &candidate_rates);
    from_hybrid(
        sides.0,
        sides.1,
        sides.2,
        sides.3,
        phi,
        "newcombe_clustered",
    )
}

/// The changes of paired rows (same cases, same order) whose summaries are `base` and
/// `candidate`.
pub fn changes(
    base_rows: &[&Row],
    candidate_rows: &[&Row],
    base: &Summary,
    candidate: &Summary,
) -> Changes {
    let accuracy = |s: &Summary| (s.total > 0).then_some(s.accuracy);
    Changes {
        accuracy: paired(
            base_rows,
            candidate_rows,
            |o| o == Outcome::Correct,
            (
                accuracy(base),
                base.risk.accuracy_ci,
                accuracy(candidate),
                candidate.risk.accuracy_ci,
            ),
        ),
        coverage: paired(
            base_rows,
            candidate_rows,
            |o| matches!(o, Outcome::Correct | Outcome::Incorrect),
            (
                base.risk.coverage,
                base.risk.coverage_ci,
                candidate.risk.coverage,
                candidate.risk.coverage_ci,
            ),
        ),
        decided_accuracy: from_hybrid(
            base.risk.decided_accuracy,
            base.risk.decided_accuracy_ci,
            candidate.risk.decided_accuracy,
            candidate.risk.decided_accuracy_ci,
            0.0,
            "newcombe_unpaired",
        ),
    }
}
