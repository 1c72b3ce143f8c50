//! Which criteria a report has, and each row's label for them (the rule is in the
//! [module documentation](super#labels)).

use jevjudge_judge::Definition;
use jevjudge_stats::{Point, Thresholds};

use crate::Report;

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
        "criterion `{criterion}`: the report alone does not say whether a yes is expected ({why}); the definition the report was made with says"
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

/// One review's finding for a criterion, with its label (a repeated case gives one per repeat).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelledPoint {
    /// The row's position in the report: the case, which all its repeats share.
    pub row: usize,
    /// p, the yes-probability.
    pub yes_probability: f64,
    /// p′, as the Judge computes it from p.
    pub expected_probability: f64,
    /// Whether the condition really holds.
    pub holds: bool,
    /// The case's weight (`1/π` of a sampled label; 1 by default).
    pub weight: f64,
}

/// Where a criterion's labelled points came from, and what was left out.
#[derive(Debug, Clone, PartialEq)]
pub struct CriterionPoints {
    /// The criterion.
    pub spec: CriterionSpec,
    /// The labelled points, one per review, in row order (a repeated case's repeats in order).
    pub points: Vec<LabelledPoint>,
    /// Reviews whose label came from `expected_findings`.
    pub from_expected_findings: u64,
    /// Reviews whose label came from `expected_pass` (one-criterion definitions only).
    pub from_expected_pass: u64,
    /// Reviews with no finding for the criterion (ERROR verdicts).
    pub without_finding: u64,
    /// Reviews with a finding but no label.
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

    /// Each point's case (its row's position), in point order.
    pub fn cases_of_points(&self) -> Vec<usize> {
        self.points.iter().map(|point| point.row).collect()
    }

    /// Each point's case weight, in point order.
    pub fn weights(&self) -> Vec<f64> {
        self.points.iter().map(|point| point.weight).collect()
    }

    /// Whether the points carry unequal weights.
    pub fn unequal_weights(&self) -> bool {
        self.points
            .first()
            .is_some_and(|first| self.points.iter().any(|p| p.weight != first.weight))
    }

    /// Distinct cases behind the points.
    pub fn cases(&self) -> usize {
        let mut rows: Vec<usize> = self.cases_of_points();
        rows.dedup();
        rows.len()
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
/// [labels](super#labels) rule).
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
                let labelled = row
                    .expected_findings
                    .iter()
                    .flatten()
                    .find(|(id, _)| *id == spec.id)
                    .map(|(_, holds)| *holds);
                // Every review of the case: each repeat counts, the case is its cluster.
                for verdict in row.verdicts() {
                    let Some(finding) = verdict.findings.get(&spec.id) else {
                        out.without_finding += 1;
                        continue;
                    };
                    let p = finding.yes_probability;
                    if !(0.0..=1.0).contains(&p) {
                        out.invalid += 1;
                        continue;
                    }
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
                        weight: row.weight,
                    });
                }
            }
            out
        })
        .collect()
}
