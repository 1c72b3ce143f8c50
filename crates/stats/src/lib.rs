//! Pure statistics for jevjudge: percentiles, binomial intervals and tests, calibration metrics
//! and bootstrap resampling.
//!
//! Everything here is a plain function of its arguments — no I/O, no clocks, no global state,
//! no dependencies — so the numbers a report prints can be recomputed and checked by hand. No
//! function panics: inputs a statistic is undefined for (no rows, NaN probabilities, a class
//! that never occurs) give `None`, as each item's documentation says.
//!
//! # Brief overview
//!
//! - **Review times** (judge-contract rule 56): [`p50_p95`] sorts durations and takes the
//!   nearest-rank P50 and P95; [`nearest_rank`] and [`nearest_rank_index`] are its parts.
//! - **Proportions**: [`wilson`] and [`wilson_lower`] bound a success rate (such as the precision
//!   of a threshold) with the Wilson score interval; [`mcnemar_exact`] is the exact two-sided
//!   McNemar test `compare` reports on the cases correct in exactly one of two runs.
//!   [`clustered_wilson`] is the Wilson interval at the effective sample size of reviews that
//!   come in clusters (a case reviewed several times), so the case, not the review, is the unit.
//! - **Exact methods**: [`clopper_pearson_upper`] bounds a rare rate with guaranteed coverage;
//!   [`newcombe_paired`] is the interval of the change in a rate between two runs on the same
//!   cases; [`fisher_exact`] tests one case's repeat counts, and [`holm`] and
//!   [`benjamini_hochberg`] correct many such tests.
//! - **Prevalence**: [`precision_at_prevalence`] is a verdict's precision at a stated share of
//!   its class in production, with a delta-method interval.
//! - **Calibration** of yes-probabilities against labels, on [`Point`]s: [`brier`],
//!   [`log_loss`], [`auroc`], reliability tables of [`Bin`]s ([`reliability_equal_width`],
//!   [`reliability_equal_mass`]) and their summaries [`ece`] and [`mce`].
//! - **Agreement** of two raters on yes/no questions: [`AgreementTable`] and [`cohen_kappa`]
//!   (observed agreement, Cohen's κ, and Scott's π with a bootstrap interval for the review
//!   queue's two exchangeable slots).
//! - **Bootstrap**: the seeded [`SplitMix64`] generator and [`resample_indices`] for
//!   out-of-bag resampling, so a recommendation is reproducible.
//! - **Thresholds**: [`choose`] picks a criterion's `(fail_at_or_below, pass_at_or_above)` that
//!   abstains least while the Wilson lower bounds of both precisions reach their [`Targets`];
//!   [`out_of_bag`] checks how often that choice holds on rows it was not fitted on; [`tally`]
//!   counts what a pair of [`Thresholds`] decides.
//!
//! # Example
//!
//! ```
//! use jevjudge_stats::{
//!     auroc, brier, ece, mcnemar_exact, p50_p95, reliability_equal_width, wilson_lower, Point,
//! };
//!
//! // Review times in milliseconds, synthetic rows at 0 included (rule 56).
//! let mut millis = [0.0, 0.0, 7.0, 9.0];
//! assert_eq!(p50_p95(&mut millis), (0.0, 9.0));
//!
//! // One criterion's yes-probabilities against whether the condition really holds.
//! let points = [
//!     Point::new(0.9, true),
//!     Point::new(0.8, true),
//!     Point::new(0.3, false),
//!     Point::new(0.2, false),
//! ];
//! // ((0.1)² + (0.2)² + (0.3)² + (0.2)²) / 4 = 0.18 / 4
//! assert!((brier(&points).unwrap() - 0.045).abs() < 1e-12);
//! assert_eq!(auroc(&points), Some(1.0));
//! let table = reliability_equal_width(&points, 2).unwrap();
//! // [0, 0.5): mean 0.25, observed 0, gap 0.25; [0.5, 1]: mean 0.85, observed 1, gap 0.15.
//! // ECE = (2 · 0.25 + 2 · 0.15) / 4
//! assert!((ece(&table).unwrap() - 0.2).abs() < 1e-12);
//!
//! // 12 passes, all correct: precision is at least ~0.76 at 95 % confidence.
//! assert!(wilson_lower(12, 12, 1.96).unwrap() > 0.75);
//!
//! // Candidate fixed 9 cases and broke 1: exact two-sided p = 2 · 11 / 1024.
//! assert!((mcnemar_exact(1, 9) - 0.021_484_375).abs() < 1e-15);
//! ```

mod agreement;
mod binomial;
mod bootstrap;
mod clustered;
mod exact;
mod percentile;
mod prevalence;
mod scoring;
#[cfg(test)]
mod test_points;
mod thresholds;

pub use agreement::{AgreementTable, MIN_AGREEMENT_ITEMS, cohen_kappa};
pub use binomial::{mcnemar_exact, wilson, wilson_lower};
pub use bootstrap::{SplitMix64, resample_indices};
pub use clustered::{clustered_wilson, effective_trials, wilson_effective};
pub use exact::{
    PairedTable, benjamini_hochberg, beta_regularized, clopper_pearson, clopper_pearson_lower,
    clopper_pearson_upper, fisher_exact, holm, hybrid_interval, ln_gamma, newcombe_paired,
};
pub use percentile::{nearest_rank, nearest_rank_index, p50_p95};
pub use prevalence::precision_at_prevalence;
pub use scoring::{
    Bin, LOG_LOSS_EPSILON, Point, auroc, brier, ece, log_loss, mce, reliability_equal_mass,
    reliability_equal_width,
};
pub use thresholds::{
    Choice, Decision, NoChoice, OutOfBag, Tally, Targets, Thresholds, choose, out_of_bag, tally,
};
