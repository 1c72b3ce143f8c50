//! Threshold advice: the recommendation (or the reason for refusing one) per criterion, and
//! its application to a definition.

use std::fmt;

use jevjudge_judge::{Criterion, Definition, DefinitionError};
use jevjudge_stats::{
    Certificate, Decision, NoCertificate, Point, Stability, Tally, Targets, Thresholds,
    WeightedProportion, certify, kish_effective_n, stability, tally, weighted_proportion,
};

use super::{
    CalibrationSettings, CriterionMetrics, CriterionPoints, CriterionSpec, extract, metrics,
};
use crate::Report;

/// A recommendation: the certified pair with its guarantee, and how stable the choice is under
/// resampling.
#[derive(Debug, Clone, PartialEq)]
pub struct Recommendation {
    /// The certified pair, what it decides on the rows, and the evidence for its guarantee.
    pub certificate: Certificate,
    /// The bootstrap stability figure (a description, not a guarantee; unweighted).
    pub stability: Stability,
    /// With unequal case weights (and not told to ignore them): the pair's weighted precisions
    /// and abstention rate, with Wilson intervals at the Kish effective n.
    pub weighted: Option<WeightedDecisions>,
}

/// What a pair decides on weighted points: Horvitz–Thompson precisions and abstention rate,
/// each with its Kish effective n and Wilson interval (see [`jevjudge_stats::weighted_proportion`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeightedDecisions {
    /// Right PASS decisions over PASS decisions, weighted; None without PASS decisions.
    pub pass_precision: Option<WeightedProportion>,
    /// Right FAIL decisions over FAIL decisions, weighted.
    pub fail_precision: Option<WeightedProportion>,
    /// Abstentions over all points, weighted.
    pub abstain_rate: Option<WeightedProportion>,
    /// The Kish effective n of all the points.
    pub effective_n: f64,
}

/// [`Report::set_prevalence`] for a run of `definition`; with several criteria, also each
/// criterion's precisions at that base rate ([`criteria_at_prevalence`]).
pub fn set_prevalence_of(report: &mut Report, prevalence: f64, definition: &Definition) {
    report.set_prevalence(prevalence);
    if definition.criteria().len() > 1 {
        let specs = CriterionSpec::from_definition(definition);
        report.overall.risk.at_prevalence_by_criterion =
            criteria_at_prevalence(report, &specs, prevalence);
    }
}

/// Per criterion of `specs` with known thresholds and labelled rows in `report`: the current
/// thresholds' PASS and FAIL precisions at `prevalence` (the share of production cases whose
/// expectation holds), weighted like [`Calibration::set_prevalence`] when the cases carry
/// unequal weights. What `eval --prevalence` adds per criterion for a definition with several.
pub fn criteria_at_prevalence(
    report: &Report,
    specs: &[CriterionSpec],
    prevalence: f64,
) -> Vec<(String, crate::prevalence::AtPrevalence)> {
    extract(report, specs)
        .into_iter()
        .filter_map(|points| {
            let thresholds = points.spec.thresholds?;
            let expectation = points.expectation_points();
            if expectation.is_empty() {
                return None;
            }
            let at = if points.unequal_weights() {
                weighted_at_prevalence(prevalence, &expectation, &points.weights(), thresholds)
            } else {
                let positives = expectation.iter().filter(|point| point.label).count() as u64;
                crate::prevalence::tally_at_prevalence(
                    prevalence,
                    &tally(&expectation, thresholds),
                    positives,
                )
            };
            Some((points.spec.id.clone(), at))
        })
        .collect()
}

/// The PASS and FAIL precisions of `thresholds` at `prevalence` on weighted points: each
/// class's verdict counts are its weighted sums scaled to the class's Kish effective n, so the
/// rates are Horvitz–Thompson and the interval is as wide as the weights make it.
fn weighted_at_prevalence(
    prevalence: f64,
    points: &[Point],
    weights: &[f64],
    thresholds: jevjudge_stats::Thresholds,
) -> crate::prevalence::AtPrevalence {
    // Per class: [Σw, Σw², Σw·PASS, Σw·FAIL].
    let mut classes = [[0.0_f64; 4]; 2];
    for (point, &w) in points.iter().zip(weights) {
        let class = &mut classes[usize::from(point.label)];
        class[0] += w;
        class[1] += w * w;
        match thresholds.decide(point.p) {
            Decision::Pass => class[2] += w,
            Decision::Fail => class[3] += w,
            Decision::Abstain => {}
        }
    }
    // Scaled to the Kish effective n of the class: (Σw)² / Σw² points, same rates.
    let scaled = |[sum, squares, pass, fail]: [f64; 4]| {
        let scale = if squares > 0.0 { sum / squares } else { 0.0 };
        (sum * scale, pass * scale, fail * scale)
    };
    let (positives, pass_hits, fail_false) = scaled(classes[1]);
    let (negatives, pass_false, fail_hits) = scaled(classes[0]);
    let mut at = crate::prevalence::precisions(
        prevalence,
        positives,
        negatives,
        (pass_hits, pass_false),
        (fail_hits, fail_false),
    );
    // The cases' own mix, weighted (what the stated rate replaces).
    let total = classes[0][0] + classes[1][0];
    at.cases_expected_pass_share = (total > 0.0).then(|| classes[1][0] / total);
    at.warning = at
        .cases_expected_pass_share
        .and_then(|share| crate::prevalence::far_warning(share, prevalence));
    at
}

/// The weighted decisions of `thresholds` on `points` (p′ against the expectation).
pub fn weighted_decisions(
    points: &[Point],
    weights: &[f64],
    thresholds: Thresholds,
    z: f64,
) -> WeightedDecisions {
    let mut pass = Vec::new();
    let mut fail = Vec::new();
    let mut abstain = Vec::new();
    for (point, &w) in points.iter().zip(weights) {
        match thresholds.decide(point.p) {
            Decision::Pass => {
                pass.push((point.label, w));
                abstain.push((false, w));
            }
            Decision::Fail => {
                fail.push((!point.label, w));
                abstain.push((false, w));
            }
            Decision::Abstain => abstain.push((true, w)),
        }
    }
    WeightedDecisions {
        pass_precision: weighted_proportion(&pass, z),
        fail_precision: weighted_proportion(&fail, z),
        abstain_rate: weighted_proportion(&abstain, z),
        effective_n: kish_effective_n(weights).unwrap_or(0.0),
    }
}

impl Recommendation {
    /// The guarantee in words, one line per precision: "PASS precision ≥ 0.80 for this pair,
    /// with probability ≥ 0.95 over the draw of these cases, assuming they are exchangeable
    /// with production". With unequal weights the probability is stated as approximate, at the
    /// Kish effective sample size.
    pub fn guarantee(&self, targets: &Targets) -> [String; 2] {
        let certificate = &self.certificate;
        let confidence = 1.0 - certificate.delta;
        let line = |what: &str, target: f64, effective: f64| {
            let probability = if certificate.approximate {
                format!("approximately ≥ {confidence:.2} (at an effective n of {effective:.1})")
            } else {
                format!("≥ {confidence:.2}")
            };
            format!(
                "{what} precision ≥ {target:.2} for this pair, with probability {probability} over the draw of these cases, assuming they are exchangeable with production"
            )
        };
        [
            line(
                "PASS",
                targets.min_pass_precision,
                certificate.pass_effective_n,
            ),
            line(
                "FAIL",
                targets.min_fail_precision,
                certificate.fail_effective_n,
            ),
        ]
    }
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
    /// No pair is certified at the targets.
    NoPair {
        /// Why.
        why: NoCertificate,
        /// The targets.
        targets: Targets,
        /// The family-wise error bound δ.
        delta: f64,
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
            Refusal::NoPair {
                why,
                targets,
                delta,
            } => {
                let level = delta / 2.0;
                let first = |p: Option<f64>, entry: u64| match p {
                    Some(p) => format!(
                        "the widest threshold with at least {entry} decisions has p-value {p:.3}, above {level}"
                    ),
                    None => format!("no threshold makes the {entry} decisions a test needs"),
                };
                match why {
                    NoCertificate::PassNotCertified {
                        first_p_value,
                        entry,
                    } => write!(
                        f,
                        "no pass_at_or_above is certified at PASS precision {} ({})",
                        targets.min_pass_precision,
                        first(first_p_value, entry)
                    ),
                    NoCertificate::FailNotCertified {
                        first_p_value,
                        entry,
                    } => write!(
                        f,
                        "no fail_at_or_below is certified at FAIL precision {} ({})",
                        targets.min_fail_precision,
                        first(first_p_value, entry)
                    ),
                    NoCertificate::TooMuchAbstention { least, thresholds } => write!(
                        f,
                        "the least abstention of a certified pair is {least:.3} (fail_at_or_below {}, pass_at_or_above {}), above the abstention target {}",
                        thresholds.fail_at_or_below,
                        thresholds.pass_at_or_above,
                        targets.max_abstain
                    ),
                    other => write!(f, "no threshold pair is certified at the targets: {other}"),
                }
            }
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
    /// With unequal case weights (used): what the current thresholds decide, weighted.
    pub current_weighted: Option<WeightedDecisions>,
    /// The recommendation, or why there is none.
    pub outcome: Result<Recommendation, Refusal>,
    /// The current and recommended pairs' precisions at a stated production base rate
    /// ([`Calibration::set_prevalence`]); `None` unless one was given.
    pub at_prevalence: Option<PairsAtPrevalence>,
}

/// The PASS and FAIL precisions of the current and the recommended pair at a stated share of
/// production cases whose expectation holds (for a one-criterion definition: the share that
/// should pass), instead of the labelled cases' own mix.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairsAtPrevalence {
    /// The stated share.
    pub prevalence: f64,
    /// The current thresholds' precisions, when they are known.
    pub current: Option<crate::prevalence::AtPrevalence>,
    /// The recommended pair's precisions, when there is one.
    pub recommended: Option<crate::prevalence::AtPrevalence>,
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
            let cases = points.cases_of_points();
            let metrics = metrics(
                &points.condition_points(),
                &cases,
                settings.bins,
                settings.seed,
            );
            let expectation = points.expectation_points();
            let current = points
                .spec
                .thresholds
                .map(|thresholds| tally(&expectation, thresholds));
            // Case weights (1/π of sampled labels) make the certification and the decided
            // precisions estimates for the population the sample was drawn from. The
            // calibration metrics and the stability figure stay unweighted (documented).
            // A prevalence override (`--prevalence`) replaces this weighted class mix; it is
            // not applied on top of it.
            let weights =
                (!settings.unweighted && points.unequal_weights()).then(|| points.weights());
            let outcome = recommend(&metrics, &expectation, &cases, weights.as_deref(), settings);
            let current_weighted =
                weights
                    .as_deref()
                    .zip(points.spec.thresholds)
                    .map(|(weights, thresholds)| {
                        weighted_decisions(&expectation, weights, thresholds, settings.targets.z)
                    });
            CriterionCalibration {
                points,
                metrics,
                current,
                current_weighted,
                outcome,
                at_prevalence: None,
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
    cases: &[usize],
    weights: Option<&[f64]>,
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
    let delta = settings.delta;
    let certificate =
        certify(expectation, weights, Some(cases), &targets, delta).map_err(|why| {
            Refusal::NoPair {
                why,
                targets,
                delta,
            }
        })?;
    let stability = stability(
        expectation,
        &targets,
        delta,
        Some(cases),
        settings.resamples,
        settings.seed,
        certificate.thresholds,
    );
    let weighted = weights
        .map(|weights| weighted_decisions(expectation, weights, certificate.thresholds, targets.z));
    Ok(Recommendation {
        certificate,
        stability,
        weighted,
    })
}

impl Calibration {
    /// Whether some criterion's labelled points carry unequal case weights (whether or not
    /// they were used).
    pub fn unequal_weights(&self) -> bool {
        self.criteria
            .iter()
            .any(|criterion| criterion.points.unequal_weights())
    }

    /// Adds, per criterion, the current and recommended pairs' precisions at `prevalence`
    /// (checked by [`crate::prevalence::check`]), by Bayes' rule from each class's verdict
    /// rates on the labelled points.
    ///
    /// A stated prevalence replaces the class mix of the (weighted) labelled points; it is not
    /// applied on top of the weights. Seam: the per-class verdict rates used here are still the
    /// unweighted counts, which sampling by verdict biases too; weighting them is the next step.
    ///
    /// With unequal case weights (used, as for the recommendation), each class's verdict
    /// rates are weighted (Horvitz–Thompson) and their counts taken at the class's Kish
    /// effective n: the stated rate replaces the weighted class mix, it is not applied on top.
    pub fn set_prevalence(&mut self, prevalence: f64) {
        let weighted = !self.settings.unweighted;
        for criterion in &mut self.criteria {
            let points = criterion.points.expectation_points();
            // The points whose expectation holds (for `expected = false`, the condition fails).
            let positives = points.iter().filter(|point| point.label).count() as u64;
            let weights = (weighted && criterion.points.unequal_weights())
                .then(|| criterion.points.weights());
            let at = |tally: &Tally, thresholds: jevjudge_stats::Thresholds| match &weights {
                Some(weights) => weighted_at_prevalence(prevalence, &points, weights, thresholds),
                None => crate::prevalence::tally_at_prevalence(prevalence, tally, positives),
            };
            let current = criterion
                .current
                .as_ref()
                .zip(criterion.points.spec.thresholds)
                .map(|(tally, thresholds)| at(tally, thresholds));
            let recommended = criterion.outcome.as_ref().ok().map(|recommendation| {
                let certificate = &recommendation.certificate;
                at(&certificate.tally, certificate.thresholds)
            });
            criterion.at_prevalence = Some(PairsAtPrevalence {
                prevalence,
                current,
                recommended,
            });
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
                        recommendation.certificate.thresholds.fail_at_or_below,
                        recommendation.certificate.thresholds.pass_at_or_above,
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

#[cfg(test)]
mod prevalence_tests {
    use super::*;

    #[test]
    fn weighted_precisions_at_a_prevalence_are_those_of_the_cases_repeated_weight_times() {
        let thresholds = jevjudge_stats::Thresholds::new(0.3, 0.7).expect("a pair");
        let cases: [(f64, bool, usize); 8] = [
            (0.9, true, 3),
            (0.8, false, 1),
            (0.75, false, 2),
            (0.1, false, 2),
            (0.2, true, 1),
            (0.5, true, 1),
            (0.95, true, 1),
            (0.05, false, 3),
        ];
        let points: Vec<Point> = cases.iter().map(|&(p, l, _)| Point::new(p, l)).collect();
        let weights: Vec<f64> = cases.iter().map(|&(.., w)| w as f64).collect();
        let expanded: Vec<Point> = cases
            .iter()
            .flat_map(|&(p, l, w)| std::iter::repeat_n(Point::new(p, l), w))
            .collect();
        let positives = expanded.iter().filter(|p| p.label).count() as u64;
        let plain =
            crate::prevalence::tally_at_prevalence(0.2, &tally(&expanded, thresholds), positives);
        let weighted = weighted_at_prevalence(0.2, &points, &weights, thresholds);
        let close = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs() < 1e-12;
        assert!(close(weighted.pass_precision, plain.pass_precision));
        assert!(close(weighted.fail_precision, plain.fail_precision));
        assert!(close(
            weighted.cases_expected_pass_share,
            plain.cases_expected_pass_share
        ));
        // Unequal weights count for fewer cases than their sum: a wider interval.
        let width = |at: &crate::prevalence::AtPrevalence| {
            let [low, high] = at.pass_precision_ci.unwrap();
            high - low
        };
        assert!(width(&weighted) > width(&plain));
    }
}
