//! Calibration of a report's per-criterion probabilities, and threshold advice (the
//! `calibrate` command; cli-and-formats.md §1.5).
//!
//! A report keeps every finding's yes-probability p and p′, so calibration needs no backend
//! call: [`extract`] pairs each row's p with the criterion's *label* — whether the condition
//! really holds — and [`calibrate`] computes, per criterion:
//!
//! - on the raw p against that label: count, positives (base rate), Brier, log loss, AUROC,
//!   ECE over [`BINS`] equal-width bins and over [`BINS`] equal-mass bins, MCE and the
//!   reliability table (both over the equal-width bins);
//! - on p′ against "the expectation holds" (the label when a yes is expected, its negation
//!   otherwise): a joint recommendation of `(fail_at_or_below, pass_at_or_above)` from
//!   [`jevjudge_stats::certify`] — the least-abstaining pair whose PASS and FAIL precisions are
//!   certified by Learn then Test with family-wise error at most [`DELTA`] — with its guarantee,
//!   and a bootstrap stability figure ([`jevjudge_stats::stability`], [`RESAMPLES`] seeded
//!   resamples; a description, not a check).
//!
//! Every review of a repeated report is used; the case is the cluster (the certification counts
//! cases, the bootstraps resample cases).
//!
//! Why refuse instead of always printing a number? Advice fitted to a handful of cases, or to
//! probabilities that do not rank the classes, would look as precise as good advice. So a
//! criterion gets a [`Refusal`] with its reason when a class has fewer than [`MIN_CLASS`]
//! cases, when AUROC is below [`MIN_AUROC`], or when no pair is certified within the abstention
//! target.
//!
//! # Labels
//!
//! A row's label for a criterion is its `expected_findings` entry. For a one-criterion
//! definition a row without one takes it from `expected_pass`, with `expected` taken into
//! account: the condition holds when `expected_pass == expected`. Rows without a finding
//! (ERROR verdicts) or without a label are counted and left out.
//!
//! # Layout
//!
//! One job per file: `settings` (the documented constants and [`CalibrationSettings`]),
//! `labels` (criteria and each row's label, [`extract`]),
//! `metrics` ([`CriterionMetrics`]), `advice` (recommendations, refusals, [`Calibration`]),
//! `document` (the `--json` document), `plan` (the checks before and the file after) and
//! `version` ([`calibrated_version`]).

mod advice;
mod document;
mod labels;
mod metrics;
mod plan;
mod settings;
#[cfg(test)]
mod tests;
mod version;

pub use advice::{
    Calibration, CriterionCalibration, PairsAtPrevalence, Recommendation, Refusal,
    WeightedDecisions, calibrate, criteria_at_prevalence, set_prevalence_of, weighted_decisions,
};
pub use document::{
    CalibrationDocument, CriterionDocument, GuaranteeDocument, RecommendationDocument,
    ReliabilityBin, StabilityDocument,
};
pub use labels::{
    CalibrationError, CriterionPoints, CriterionSpec, LabelledPoint, check_criteria, extract,
    infer_criteria,
};
pub use metrics::{CriterionMetrics, INTERVAL_RESAMPLES, Metrics, metrics};
pub use plan::{
    CalibratedFile, CalibratedFileError, DeltaOutOfRange, NoRows, SettingsError, Target,
    calibrated_file, check_rows, expectations,
};
pub use settings::{BINS, CalibrationSettings, DELTA, MIN_AUROC, MIN_CLASS, RESAMPLES, SEED, Z};
pub use version::{DefinitionTextError, calibrated_definition_text, calibrated_version};
