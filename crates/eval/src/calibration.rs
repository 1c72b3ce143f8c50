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
//!   [`jevjudge_stats::choose`] — the pair that abstains least while the Wilson lower bounds
//!   (z = [`Z`]) of the PASS and FAIL precisions reach the targets — checked by an out-of-bag
//!   bootstrap ([`jevjudge_stats::out_of_bag`], [`RESAMPLES`] seeded resamples).
//!
//! Why refuse instead of always printing a number? Advice fitted to a handful of cases, or to
//! probabilities that do not rank the classes, would look as precise as good advice. So a
//! criterion gets a [`Refusal`] with its reason when a class has fewer than [`MIN_CLASS`]
//! cases, when AUROC is below [`MIN_AUROC`], when no pair meets the targets, or when the
//! out-of-bag check meets them in fewer than [`MIN_OUT_OF_BAG_RATE`] of the resamples.
//!
//! # Labels
//!
//! A row's label for a criterion is its `expected_findings` entry. For a one-criterion
//! definition a row without one takes it from `expected_pass`, with `expected` taken into
//! account: the condition holds when `expected_pass == expected`. Rows without a finding
//! (ERROR verdicts) or without a label are counted and left out.

use std::fmt;

use jevjudge_judge::{Criterion, Definition, DefinitionError};
use jevjudge_stats::{
    Bin, Choice, NoChoice, OutOfBag, Point, Tally, Targets, Thresholds, auroc, brier, choose, ece,
    log_loss, mce, out_of_bag, reliability_equal_mass, reliability_equal_width, tally,
};
use serde::{Deserialize, Serialize};

use crate::Report;

/// Bins of each reliability table (equal-width and equal-mass).
pub const BINS: usize = 10;
/// The standard-normal quantile of the Wilson lower bounds: 1.96, a 95 % two-sided interval.
pub const Z: f64 = 1.96;
/// Out-of-bag bootstrap resamples.
pub const RESAMPLES: u32 = 200;
/// The seed of the out-of-bag resamples.
pub const SEED: u64 = 42;
/// The fewest cases of each class (condition holds / does not) a recommendation needs.
pub const MIN_CLASS: u64 = 10;
/// The lowest AUROC a recommendation needs.
pub const MIN_AUROC: f64 = 0.6;
/// The lowest out-of-bag rate a recommendation needs.
pub const MIN_OUT_OF_BAG_RATE: f64 = 0.8;

/// What `calibrate` needs to know of a criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionSpec {
    /// The criterion id.
    pub id: String,
    /// Whether a yes is expected (p′ = p), or a no (p′ = 1 − p).
    pub expected: bool,
    /// The criterion's current thresholds, when known (from a definition).
    pub thresholds: Option<Thresholds>,
}

impl CriterionSpec {
    /// The specs of a definition's criteria, in order.
    pub fn from_definition(definition: &Definition) -> Vec<CriterionSpec> {
        definition
            .criteria()
            .iter()
            .map(|criterion| CriterionSpec {
                id: criterion.id().to_owned(),
                expected: criterion.expected(),
                thresholds: Thresholds::new(
                    criterion.fail_at_or_below(),
                    criterion.pass_at_or_above(),
                ),
            })
            .collect()
    }

    /// p′ for a yes-probability, computed as the Judge computes it.
    pub fn expected_probability(&self, yes_probability: f64) -> f64 {
        if self.expected {
            yes_probability
        } else {
            1.0 - yes_probability
        }
    }
}

/// A report and a definition that do not belong together, or a report whose criteria cannot
/// be read without one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CalibrationError {
    /// A row has a finding for a criterion the definition lacks.
    #[error("row `{row}` has a finding for criterion `{criterion}`, which the definition lacks")]
    UnknownCriterion {
        /// The row's case id.
        row: String,
        /// The criterion id.
        criterion: String,
    },
    /// A finding's p′ is not what the definition's `expected` gives.
    #[error(
        "row `{row}`, criterion `{criterion}`: expected_probability {found} is not what expected = {expected} gives from yes_probability {yes_probability}; was the report made with another definition?"
    )]
    ExpectedMismatch {
        /// The row's case id.
        row: String,
        /// The criterion id.
        criterion: String,
        /// The definition's `expected`.
        expected: bool,
        /// The finding's p.
        yes_probability: f64,
        /// The finding's p′.
        found: f64,
    },
    /// The report alone does not say whether a criterion expects a yes.
    #[error(
        "criterion `{criterion}`: the report alone does not say whether a yes is expected ({why}); give --definition"
    )]
    ExpectedUnknown {
        /// The criterion id.
        criterion: String,
        /// Why not.
        why: String,
    },
}

/// Checks that every finding of the report names one of `specs` and that its p′ is what the
/// spec's `expected` gives (within 1e-12).
pub fn check_criteria(report: &Report, specs: &[CriterionSpec]) -> Result<(), CalibrationError> {
    for row in &report.rows {
        for (id, finding) in row.verdict.findings.iter() {
            let Some(spec) = specs.iter().find(|spec| spec.id == id) else {
                return Err(CalibrationError::UnknownCriterion {
                    row: row.id.clone(),
                    criterion: id.to_owned(),
                });
            };
            let computed = spec.expected_probability(finding.yes_probability);
            if (computed - finding.expected_probability).abs() > 1e-12 {
                return Err(CalibrationError::ExpectedMismatch {
                    row: row.id.clone(),
                    criterion: id.to_owned(),
                    expected: spec.expected,
                    yes_probability: finding.yes_probability,
                    found: finding.expected_probability,
                });
            }
        }
    }
    Ok(())
}

/// The criteria of a report without its definition: ids in first-seen order, and `expected`
/// read from the findings (p′ = p means a yes is expected, p′ = 1 − p a no). Thresholds are
/// unknown. Fails when a criterion's findings are all at p = 0.5 (either reading fits) or
/// disagree.
pub fn infer_criteria(report: &Report) -> Result<Vec<CriterionSpec>, CalibrationError> {
    // (id, votes for expected = true, votes for false)
    let mut seen: Vec<(String, u64, u64)> = Vec::new();
    for row in &report.rows {
        for (id, finding) in row.verdict.findings.iter() {
            let slot = match seen.iter().position(|(seen_id, ..)| seen_id == id) {
                Some(slot) => slot,
                None => {
                    seen.push((id.to_owned(), 0, 0));
                    seen.len() - 1
                }
            };
            let p = finding.yes_probability;
            let as_yes = (finding.expected_probability - p).abs() <= 1e-12;
            let as_no = (finding.expected_probability - (1.0 - p)).abs() <= 1e-12;
            match (as_yes, as_no) {
                (true, false) => seen[slot].1 += 1,
                (false, true) => seen[slot].2 += 1,
                (true, true) => {}
                (false, false) => {
                    return Err(CalibrationError::ExpectedUnknown {
                        criterion: id.to_owned(),
                        why: format!(
                            "row `{}` has expected_probability {} for yes_probability {p}",
                            row.id, finding.expected_probability
                        ),
                    });
                }
            }
        }
    }
    seen.into_iter()
        .map(|(id, yes, no)| match (yes, no) {
            (0, 0) => Err(CalibrationError::ExpectedUnknown {
                criterion: id,
                why: "every yes_probability is 0.5".into(),
            }),
            (_, 0) => Ok(CriterionSpec {
                id,
                expected: true,
                thresholds: None,
            }),
            (0, _) => Ok(CriterionSpec {
                id,
                expected: false,
                thresholds: None,
            }),
            _ => Err(CalibrationError::ExpectedUnknown {
                criterion: id,
                why: "its findings disagree".into(),
            }),
        })
        .collect()
}

/// One row's finding for a criterion, with its label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelledPoint {
    /// The row's position in the report.
    pub row: usize,
    /// p, the yes-probability.
    pub yes_probability: f64,
    /// p′, as the Judge computes it from p.
    pub expected_probability: f64,
    /// Whether the condition really holds.
    pub holds: bool,
}

/// Where a criterion's labelled points came from, and what was left out.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionPoints {
    /// The criterion.
    pub spec: CriterionSpec,
    /// The labelled points, in row order.
    pub points: Vec<LabelledPoint>,
    /// Labels taken from `expected_findings`.
    pub from_expected_findings: u64,
    /// Labels taken from `expected_pass` (one-criterion definitions only).
    pub from_expected_pass: u64,
    /// Rows with no finding for the criterion (ERROR verdicts).
    pub without_finding: u64,
    /// Rows with a finding but no label.
    pub unlabelled: u64,
    /// Findings whose p is not a number in `[0, 1]` (left out).
    pub invalid: u64,
}

impl CriterionPoints {
    /// p against whether the condition holds (calibration metrics).
    pub fn condition_points(&self) -> Vec<Point> {
        self.points
            .iter()
            .map(|point| Point::new(point.yes_probability, point.holds))
            .collect()
    }

    /// p′ against whether the expectation holds (threshold advice).
    pub fn expectation_points(&self) -> Vec<Point> {
        self.points
            .iter()
            .map(|point| {
                Point::new(
                    point.expected_probability,
                    point.holds == self.spec.expected,
                )
            })
            .collect()
    }
}

/// The labelled points of each criterion, in the order of `specs` (see the module's
/// [labels](self#labels) rule).
pub fn extract(report: &Report, specs: &[CriterionSpec]) -> Vec<CriterionPoints> {
    let single = specs.len() == 1;
    specs
        .iter()
        .map(|spec| {
            let mut out = CriterionPoints {
                spec: spec.clone(),
                points: Vec::new(),
                from_expected_findings: 0,
                from_expected_pass: 0,
                without_finding: 0,
                unlabelled: 0,
                invalid: 0,
            };
            for (index, row) in report.rows.iter().enumerate() {
                let Some(finding) = row.verdict.findings.get(&spec.id) else {
                    out.without_finding += 1;
                    continue;
                };
                let p = finding.yes_probability;
                if !(0.0..=1.0).contains(&p) {
                    out.invalid += 1;
                    continue;
                }
                let labelled = row
                    .expected_findings
                    .iter()
                    .flatten()
                    .find(|(id, _)| *id == spec.id)
                    .map(|(_, holds)| *holds);
                let holds = match labelled {
                    Some(holds) => {
                        out.from_expected_findings += 1;
                        holds
                    }
                    None if single => {
                        out.from_expected_pass += 1;
                        row.expected_pass == spec.expected
                    }
                    None => {
                        out.unlabelled += 1;
                        continue;
                    }
                };
                out.points.push(LabelledPoint {
                    row: index,
                    yes_probability: p,
                    expected_probability: spec.expected_probability(p),
                    holds,
                });
            }
            out
        })
        .collect()
}

/// The calibration metrics of one criterion (p against whether the condition holds).
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// Labelled points.
    pub n: u64,
    /// Points where the condition holds.
    pub positives: u64,
    /// Brier score; `None` without points.
    pub brier: Option<f64>,
    /// Log loss (probabilities clamped to [1e-15, 1 − 1e-15]); `None` without points.
    pub log_loss: Option<f64>,
    /// AUROC; `None` unless both classes occur.
    pub auroc: Option<f64>,
    /// ECE over the equal-width bins.
    pub ece_equal_width: Option<f64>,
    /// ECE over the equal-mass bins.
    pub ece_equal_mass: Option<f64>,
    /// MCE over the equal-width bins.
    pub mce: Option<f64>,
    /// The equal-width reliability table (empty bins left out).
    pub reliability: Vec<Bin>,
    /// The equal-mass reliability table.
    pub reliability_equal_mass: Vec<Bin>,
}

/// The metrics of points (p, condition holds) with `bins` bins per table.
pub fn metrics(points: &[Point], bins: usize) -> Metrics {
    let width = reliability_equal_width(points, bins).unwrap_or_default();
    let mass = reliability_equal_mass(points, bins).unwrap_or_default();
    Metrics {
        n: points.len() as u64,
        positives: points.iter().filter(|point| point.label).count() as u64,
        brier: brier(points),
        log_loss: log_loss(points),
        auroc: auroc(points),
        ece_equal_width: ece(&width),
        ece_equal_mass: ece(&mass),
        mce: mce(&width),
        reliability: width,
        reliability_equal_mass: mass,
    }
}

/// The knobs of [`calibrate`]. `Default` is the documented behaviour: targets 0.9 / 0.9 /
/// 0.25, z = [`Z`], [`BINS`] bins, [`RESAMPLES`] resamples seeded with [`SEED`], and the
/// refusal limits [`MIN_CLASS`], [`MIN_AUROC`], [`MIN_OUT_OF_BAG_RATE`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibrationSettings {
    /// What the recommended pair must achieve.
    pub targets: Targets,
    /// Bins per reliability table.
    pub bins: usize,
    /// Out-of-bag resamples.
    pub resamples: u32,
    /// Their seed.
    pub seed: u64,
    /// The fewest cases of each class.
    pub min_class: u64,
    /// The lowest AUROC.
    pub min_auroc: f64,
    /// The lowest out-of-bag rate.
    pub min_out_of_bag_rate: f64,
}

impl Default for CalibrationSettings {
    fn default() -> Self {
        CalibrationSettings {
            targets: Targets {
                min_pass_precision: 0.9,
                min_fail_precision: 0.9,
                max_abstain: 0.25,
                z: Z,
            },
            bins: BINS,
            resamples: RESAMPLES,
            seed: SEED,
            min_class: MIN_CLASS,
            min_auroc: MIN_AUROC,
            min_out_of_bag_rate: MIN_OUT_OF_BAG_RATE,
        }
    }
}

/// A recommendation: the chosen pair and its out-of-bag check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Recommendation {
    /// The pair and what it decides on the rows it was fitted on.
    pub choice: Choice,
    /// How often the choice procedure met the targets on out-of-bag rows.
    pub out_of_bag: OutOfBag,
}

/// Why a criterion gets no recommendation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Refusal {
    /// Fewer than the minimum of one class.
    TooFewCases {
        /// Cases where the condition holds.
        holds: u64,
        /// Cases where it does not.
        does_not_hold: u64,
        /// The minimum of each.
        min: u64,
    },
    /// AUROC below the minimum (or undefined).
    WeakRanking {
        /// The AUROC.
        auroc: Option<f64>,
        /// The minimum.
        min: f64,
    },
    /// No pair meets the targets on the data.
    NoPair {
        /// Why.
        why: NoChoice,
        /// The targets.
        targets: Targets,
    },
    /// A pair met the targets on the data, but too rarely out of bag.
    OutOfBag {
        /// The pair found on all the data.
        choice: Choice,
        /// The check.
        out_of_bag: OutOfBag,
        /// The minimum rate.
        min_rate: f64,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::TooFewCases {
                holds,
                does_not_hold,
                min,
            } => {
                if holds + does_not_hold == 0 {
                    return write!(
                        f,
                        "no labelled rows: cases need `expected_findings` for this criterion"
                    );
                }
                let (what, count) = if holds < does_not_hold {
                    ("the condition holds", holds)
                } else {
                    ("the condition does not hold", does_not_hold)
                };
                write!(
                    f,
                    "too few cases where {what}: {count} (at least {min} of each class are needed)"
                )
            }
            Refusal::WeakRanking { auroc, min } => match auroc {
                Some(auroc) => write!(
                    f,
                    "AUROC {auroc:.3} is below {min}: the probabilities barely separate the cases where the condition holds from the others"
                ),
                None => write!(f, "AUROC is undefined: only one class occurs"),
            },
            Refusal::NoPair { why, targets } => match why {
                NoChoice::PassPrecisionUnreachable { best_lower } => write!(
                    f,
                    "no pass_at_or_above reaches the PASS precision target {} (best Wilson lower bound {best_lower:.3})",
                    targets.min_pass_precision
                ),
                NoChoice::FailPrecisionUnreachable { best_lower } => write!(
                    f,
                    "no fail_at_or_below reaches the FAIL precision target {} (best Wilson lower bound {best_lower:.3})",
                    targets.min_fail_precision
                ),
                NoChoice::TooMuchAbstention { least, thresholds } => write!(
                    f,
                    "the least abstention meeting both precision targets is {least:.3} (fail_at_or_below {}, pass_at_or_above {}), above --max-abstain {}",
                    thresholds.fail_at_or_below, thresholds.pass_at_or_above, targets.max_abstain
                ),
                other => write!(f, "no threshold pair meets the targets: {other}"),
            },
            Refusal::OutOfBag {
                choice,
                out_of_bag,
                min_rate,
            } => write!(
                f,
                "the targets held out of bag in only {} of {} bootstrap resamples ({:.0} %, at least {:.0} % needed); the pair found on all rows was fail_at_or_below {}, pass_at_or_above {}",
                out_of_bag.met,
                out_of_bag.resamples,
                out_of_bag.rate().unwrap_or(0.0) * 100.0,
                min_rate * 100.0,
                choice.thresholds.fail_at_or_below,
                choice.thresholds.pass_at_or_above
            ),
        }
    }
}

/// Everything `calibrate` found about one criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionCalibration {
    /// The labelled points and what was left out.
    pub points: CriterionPoints,
    /// Calibration metrics of p against the label.
    pub metrics: Metrics,
    /// What the criterion's current thresholds decide (when known).
    pub current: Option<Tally>,
    /// The recommendation, or why there is none.
    pub outcome: Result<Recommendation, Refusal>,
}

/// The calibration of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// The report's definition version.
    pub definition_version: String,
    /// The settings used.
    pub settings: CalibrationSettings,
    /// Per criterion, in the order of the specs.
    pub criteria: Vec<CriterionCalibration>,
}

/// Calibrates each criterion of `specs` on `report`'s rows.
pub fn calibrate(
    report: &Report,
    specs: &[CriterionSpec],
    settings: &CalibrationSettings,
) -> Calibration {
    let criteria = extract(report, specs)
        .into_iter()
        .map(|points| {
            let metrics = metrics(&points.condition_points(), settings.bins);
            let expectation = points.expectation_points();
            let current = points
                .spec
                .thresholds
                .map(|thresholds| tally(&expectation, thresholds));
            let outcome = recommend(&metrics, &expectation, settings);
            CriterionCalibration {
                points,
                metrics,
                current,
                outcome,
            }
        })
        .collect();
    Calibration {
        definition_version: report.definition_version.clone(),
        settings: *settings,
        criteria,
    }
}

fn recommend(
    metrics: &Metrics,
    expectation: &[Point],
    settings: &CalibrationSettings,
) -> Result<Recommendation, Refusal> {
    let holds = metrics.positives;
    let does_not_hold = metrics.n - metrics.positives;
    if holds < settings.min_class.max(1) || does_not_hold < settings.min_class.max(1) {
        return Err(Refusal::TooFewCases {
            holds,
            does_not_hold,
            min: settings.min_class,
        });
    }
    if metrics.auroc.is_none_or(|auroc| auroc < settings.min_auroc) {
        return Err(Refusal::WeakRanking {
            auroc: metrics.auroc,
            min: settings.min_auroc,
        });
    }
    let targets = settings.targets;
    let choice = choose(expectation, &targets).map_err(|why| Refusal::NoPair { why, targets })?;
    let check = out_of_bag(expectation, &targets, settings.resamples, settings.seed);
    if check
        .rate()
        .is_none_or(|rate| rate < settings.min_out_of_bag_rate)
    {
        return Err(Refusal::OutOfBag {
            choice,
            out_of_bag: check,
            min_rate: settings.min_out_of_bag_rate,
        });
    }
    Ok(Recommendation {
        choice,
        out_of_bag: check,
    })
}

/// One row of a reliability table in the calibrate document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityBin {
    /// The bin's lower edge.
    pub lower: f64,
    /// The bin's upper edge.
    pub upper: f64,
    /// Points in the bin.
    pub count: u64,
    /// Their mean yes-probability.
    pub mean_probability: f64,
    /// The fraction of them where the condition holds.
    pub observed_rate: f64,
}

impl From<&Bin> for ReliabilityBin {
    fn from(bin: &Bin) -> Self {
        ReliabilityBin {
            lower: bin.lower,
            upper: bin.upper,
            count: bin.count as u64,
            mean_probability: bin.mean_probability,
            observed_rate: bin.observed_rate,
        }
    }
}

/// A recommendation in the calibrate document: the pair and what it decides on the rows it
/// was fitted on (observed precisions and abstention rate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecommendationDocument {
    /// The recommended FAIL threshold on p′.
    pub fail_at_or_below: f64,
    /// The recommended PASS threshold on p′.
    pub pass_at_or_above: f64,
    /// The observed precision of its PASS decisions.
    pub pass_precision: f64,
    /// The observed precision of its FAIL decisions.
    pub fail_precision: f64,
    /// The observed fraction of INCONCLUSIVE decisions.
    pub abstain_rate: f64,
}

/// One criterion in the calibrate document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionDocument {
    /// Labelled rows.
    pub n: u64,
    /// Rows where the condition holds.
    pub positives: u64,
    /// Brier score (null without rows).
    pub brier: Option<f64>,
    /// Log loss (null without rows).
    pub log_loss: Option<f64>,
    /// AUROC (null unless both classes occur).
    pub auroc: Option<f64>,
    /// ECE over 10 equal-width bins.
    pub ece_equal_width: Option<f64>,
    /// ECE over 10 equal-mass bins.
    pub ece_equal_mass: Option<f64>,
    /// MCE over the equal-width bins.
    pub mce: Option<f64>,
    /// The equal-width reliability table, empty bins left out.
    pub reliability: Vec<ReliabilityBin>,
    /// The recommendation, or null.
    pub recommendation: Option<RecommendationDocument>,
    /// Why there is no recommendation, or null.
    pub refusal: Option<String>,
}

/// The `calibrate --json` document (cli-and-formats.md §1.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationDocument {
    /// The report's definition version.
    pub definition_version: String,
    /// Per criterion, in definition order.
    #[serde(with = "crate::ordered_map")]
    pub criteria: Vec<(String, CriterionDocument)>,
}

impl Calibration {
    /// The `--json` document.
    pub fn to_document(&self) -> CalibrationDocument {
        CalibrationDocument {
            definition_version: self.definition_version.clone(),
            criteria: self
                .criteria
                .iter()
                .map(|criterion| {
                    let m = &criterion.metrics;
                    let (recommendation, refusal) = match &criterion.outcome {
                        Ok(recommendation) => {
                            let tally = recommendation.choice.tally;
                            let thresholds = recommendation.choice.thresholds;
                            (
                                Some(RecommendationDocument {
                                    fail_at_or_below: thresholds.fail_at_or_below,
                                    pass_at_or_above: thresholds.pass_at_or_above,
                                    pass_precision: tally.pass_precision().unwrap_or(0.0),
                                    fail_precision: tally.fail_precision().unwrap_or(0.0),
                                    abstain_rate: tally.abstain_rate().unwrap_or(0.0),
                                }),
                                None,
                            )
                        }
                        Err(refusal) => (None, Some(refusal.to_string())),
                    };
                    (
                        criterion.points.spec.id.clone(),
                        CriterionDocument {
                            n: m.n,
                            positives: m.positives,
                            brier: m.brier,
                            log_loss: m.log_loss,
                            auroc: m.auroc,
                            ece_equal_width: m.ece_equal_width,
                            ece_equal_mass: m.ece_equal_mass,
                            mce: m.mce,
                            reliability: m.reliability.iter().map(ReliabilityBin::from).collect(),
                            recommendation,
                            refusal,
                        },
                    )
                })
                .collect(),
        }
    }

    /// Whether at least one criterion has a recommendation.
    pub fn has_recommendation(&self) -> bool {
        self.criteria
            .iter()
            .any(|criterion| criterion.outcome.is_ok())
    }

    /// `definition` with every recommended pair applied (criteria without a recommendation
    /// keep their thresholds) under a new `version`.
    pub fn apply(
        &self,
        definition: &Definition,
        version: &str,
    ) -> Result<Definition, DefinitionError> {
        let criteria = definition
            .criteria()
            .iter()
            .map(|criterion| {
                let recommended = self
                    .criteria
                    .iter()
                    .find(|c| c.points.spec.id == criterion.id())
                    .and_then(|c| c.outcome.as_ref().ok());
                let (fail, pass) = match recommended {
                    Some(recommendation) => (
                        recommendation.choice.thresholds.fail_at_or_below,
                        recommendation.choice.thresholds.pass_at_or_above,
                    ),
                    None => (criterion.fail_at_or_below(), criterion.pass_at_or_above()),
                };
                Criterion::new(
                    criterion.id(),
                    criterion.question().clone(),
                    criterion.expected(),
                    fail,
                    pass,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        Definition::new(version, criteria)
    }
}

/// The version of a calibrated definition: `<old>+cal.<n>`.
///
/// `n` is 1, or one more than the `+cal.<k>` suffix `old` already carries (so calibrating
/// `v1+cal.1` gives `v1+cal.2`, not `v1+cal.1+cal.1`); when the output file already holds a
/// definition of the same base with `+cal.<m>`, `m ≥ n`, the result is `+cal.<m + 1>`, so a new
/// calibration never reuses a version that named other thresholds.
///
/// ```
/// use jevjudge_eval::calibration::calibrated_version;
/// assert_eq!(calibrated_version("sms-spam-0.1.0", None), "sms-spam-0.1.0+cal.1");
/// assert_eq!(calibrated_version("v1+cal.1", None), "v1+cal.2");
/// assert_eq!(calibrated_version("v1", Some("v1+cal.3")), "v1+cal.4");
/// assert_eq!(calibrated_version("v1", Some("other+cal.9")), "v1+cal.1");
/// ```
pub fn calibrated_version(old: &str, existing: Option<&str>) -> String {
    let split = |version: &str| -> Option<(String, u64)> {
        let (base, suffix) = version.rsplit_once("+cal.")?;
        let k: u64 = suffix.parse().ok()?;
        Some((base.to_owned(), k))
    };
    let (base, mut n) = match split(old) {
        Some((base, k)) => (base, k.saturating_add(1)),
        None => (old.to_owned(), 1),
    };
    if let Some((existing_base, m)) = existing.and_then(split) {
        if existing_base == base && m >= n {
            n = m.saturating_add(1);
        }
    }
    format!("{base}+cal.{n}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Row, summarize};
    use jevjudge_judge::{BackendKind, ErrorCode, Finding, Findings, Status, Verdict};
    use std::time::Duration;

    fn row(id: &str, expected_pass: bool, findings: &[(&str, f64, bool)]) -> Row {
        let findings = Findings::new(
            findings
                .iter()
                .map(|(criterion, p, expected)| {
                    (
                        (*criterion).to_owned(),
                        Finding {
                            status: Status::Inconclusive,
                            yes_probability: *p,
                            expected_probability: if *expected { *p } else { 1.0 - *p },
                        },
                    )
                })
                .collect(),
        );
        Row {
            repeats: None,
            scenario: "s".into(),
            id: id.into(),
            expected_pass,
            pass: false,
            score: 0.0,
            verdict: Verdict {
                definition_version: "v1".into(),
                status: Status::Inconclusive,
                error: ErrorCode::None,
                detail: None,
                findings,
                model: None,
                usage: None,
                elapsed: Duration::from_millis(1),
            },
            expected_findings: None,
        }
    }

    fn report(rows: Vec<Row>) -> Report {
        let (overall, scenarios) = summarize(&rows, None);
        Report {
            format: crate::REPORT_FORMAT.into(),
            definition_version: "v1".into(),
            backend: BackendKind::Replay,
            complete: true,
            wall_millis: None,
            stopped: None,
            overall,
            scenarios,
            rows,
        }
    }

    #[test]
    fn one_criterion_labels_come_from_expected_pass_with_expected_taken_into_account() {
        let rows = vec![
            row("a", true, &[("risk", 0.1, false)]),
            row("b", false, &[("risk", 0.9, false)]),
        ];
        let specs = infer_criteria(&report(rows.clone())).unwrap();
        assert_eq!(specs.len(), 1);
        assert!(!specs[0].expected);
        let points = extract(&report(rows), &specs);
        // expected = false: a draft that should pass is one where the risk does NOT hold.
        let holds: Vec<bool> = points[0].points.iter().map(|p| p.holds).collect();
        assert_eq!(holds, [false, true]);
        assert_eq!(points[0].from_expected_pass, 2);
        // p′ = 1 − p and the expectation label flips back.
        let expectation = points[0].expectation_points();
        assert_eq!(expectation[0], Point::new(1.0 - 0.1, true));
    }

    #[test]
    fn expected_findings_win_and_multi_criterion_rows_without_labels_are_left_out() {
        let mut labelled = row("a", true, &[("x", 0.8, true), ("y", 0.3, true)]);
        labelled.expected_findings = Some(vec![("x".into(), false)]);
        let mut error = row("e", true, &[]);
        error.verdict.status = Status::Error;
        let report = report(vec![labelled, error]);
        let specs = infer_criteria(&report).unwrap();
        let points = extract(&report, &specs);
        assert_eq!(points[0].points.len(), 1);
        assert!(!points[0].points[0].holds);
        assert_eq!(points[0].from_expected_findings, 1);
        assert_eq!(points[0].without_finding, 1);
        assert_eq!(points[1].points.len(), 0);
        assert_eq!(points[1].unlabelled, 1);
    }

    #[test]
    fn inferring_expected_needs_a_telling_probability() {
        let all_half = report(vec![row("a", true, &[("x", 0.5, true)])]);
        assert!(matches!(
            infer_criteria(&all_half),
            Err(CalibrationError::ExpectedUnknown { .. })
        ));
        let mixed = report(vec![
            row("a", true, &[("x", 0.2, true)]),
            row("b", true, &[("x", 0.2, false)]),
        ]);
        assert!(infer_criteria(&mixed).is_err());
    }

    #[test]
    fn check_criteria_names_the_row_and_the_criterion() {
        let report = report(vec![row("a", true, &[("x", 0.2, false)])]);
        let spec = CriterionSpec {
            id: "x".into(),
            expected: true,
            thresholds: None,
        };
        let error = check_criteria(&report, std::slice::from_ref(&spec)).unwrap_err();
        assert!(
            error.to_string().contains("row `a`, criterion `x`"),
            "{error}"
        );
        let other = CriterionSpec {
            id: "z".into(),
            ..spec
        };
        let error = check_criteria(&report, &[other]).unwrap_err();
        assert!(error.to_string().contains("criterion `x`"), "{error}");
    }

    #[test]
    fn thin_evidence_is_refused_with_a_reason() {
        // 5 positives: too few.
        let mut rows: Vec<Row> = (0..5)
            .map(|i| row(&format!("y{i}"), true, &[("x", 0.9, true)]))
            .collect();
        rows.extend((0..30).map(|i| row(&format!("n{i}"), false, &[("x", 0.1, true)])));
        let report_ = report(rows);
        let specs = infer_criteria(&report_).unwrap();
        let calibration = calibrate(&report_, &specs, &CalibrationSettings::default());
        let refusal = calibration.criteria[0].outcome.unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "too few cases where the condition holds: 5 (at least 10 of each class are needed)"
        );
        let document = calibration.to_document();
        assert!(document.criteria[0].1.recommendation.is_none());
        // Probabilities that do not rank: AUROC 0.5.
        let rows: Vec<Row> = (0..40)
            .map(|i| row(&format!("r{i}"), i % 2 == 0, &[("x", 0.7, true)]))
            .collect();
        let report_ = report(rows);
        let calibration = calibrate(
            &report_,
            &infer_criteria(&report_).unwrap(),
            &CalibrationSettings::default(),
        );
        assert!(matches!(
            calibration.criteria[0].outcome,
            Err(Refusal::WeakRanking { auroc: Some(a), .. }) if a == 0.5
        ));
    }

    #[test]
    fn a_clear_signal_gets_a_recommendation_that_applies_to_the_definition() {
        let mut rows: Vec<Row> = (0..60)
            .map(|i| row(&format!("y{i}"), true, &[("x", 0.95, true)]))
            .collect();
        rows.extend((0..60).map(|i| row(&format!("n{i}"), false, &[("x", 0.05, true)])));
        rows.extend((0..4).map(|i| row(&format!("m{i}"), i % 2 == 0, &[("x", 0.5, true)])));
        let report = report(rows);
        let specs = infer_criteria(&report).unwrap();
        let calibration = calibrate(&report, &specs, &CalibrationSettings::default());
        let recommendation = calibration.criteria[0].outcome.unwrap();
        assert_eq!(
            recommendation.choice.thresholds,
            Thresholds::new(0.05, 0.95).unwrap()
        );
        // A resample whose in-bag muddle is all yes may pass at 0.5 and meet a no out of bag.
        assert!(recommendation.out_of_bag.met >= RESAMPLES * 9 / 10);
        assert_eq!(recommendation.out_of_bag.resamples, RESAMPLES);
        let definition = Definition::new(
            "v1",
            vec![
                Criterion::new(
                    "x",
                    jevjudge_wire::NoulQuestion::new("Is it so?"),
                    true,
                    0.2,
                    0.8,
                )
                .unwrap(),
            ],
        )
        .unwrap();
        let calibrated = calibration.apply(&definition, "v1+cal.1").unwrap();
        assert_eq!(calibrated.version(), "v1+cal.1");
        assert_eq!(calibrated.criteria()[0].fail_at_or_below(), 0.05);
        assert_eq!(calibrated.criteria()[0].pass_at_or_above(), 0.95);
    }

    #[test]
    fn versions() {
        assert_eq!(calibrated_version("v", Some("v+cal.1")), "v+cal.2");
        assert_eq!(calibrated_version("v+cal.x", None), "v+cal.x+cal.1");
        assert_eq!(calibrated_version("v+cal.2", Some("v+cal.1")), "v+cal.3");
    }
}
