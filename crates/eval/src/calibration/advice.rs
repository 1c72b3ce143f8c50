//! Threshold advice: the recommendation (or the reason for refusing one) per criterion, and
//! its application to a definition.

use std::fmt;

use jevjudge_judge::{Criterion, Definition, DefinitionError};
use jevjudge_stats::{
    Choice, NoChoice, OutOfBag, Point, Tally, Targets, choose, out_of_bag, tally,
};

use super::{
    CalibrationSettings, CriterionMetrics, CriterionPoints, CriterionSpec, extract, metrics,
};
use crate::Report;

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
                    "the least abstention meeting both precision targets is {least:.3} (fail_at_or_below {}, pass_at_or_above {}), above the abstention limit {}",
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
    pub metrics: CriterionMetrics,
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
    metrics: &CriterionMetrics,
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

impl Calibration {
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
