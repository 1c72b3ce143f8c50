//! The `calibrate --json` document (cli-and-formats.md §1.5).

use jevjudge_stats::Bin;
use serde::{Deserialize, Serialize};

use super::{Calibration, CriterionMetrics};

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

/// A table of [`Bin`]s written and read as [`ReliabilityBin`] rows.
pub(super) mod reliability_rows {
    use jevjudge_stats::Bin;
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    use super::ReliabilityBin;

    pub(crate) fn serialize<S: Serializer>(bins: &[Bin], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(bins.iter().map(ReliabilityBin::from))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Bin>, D::Error> {
        Vec::<ReliabilityBin>::deserialize(deserializer)?
            .into_iter()
            .map(|row| {
                Ok(Bin {
                    lower: row.lower,
                    upper: row.upper,
                    count: usize::try_from(row.count).map_err(|_| {
                        D::Error::custom(format!("reliability count {} is too large", row.count))
                    })?,
                    mean_probability: row.mean_probability,
                    observed_rate: row.observed_rate,
                })
            })
            .collect()
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

/// One criterion in the calibrate document: its metrics (the fields `n` … `reliability`, see
/// [`CriterionMetrics`]), then the recommendation or the refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionDocument {
    /// The calibration metrics, written as the document's first fields.
    #[serde(flatten)]
    pub metrics: CriterionMetrics,
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
                            metrics: criterion.metrics.clone(),
                            recommendation,
                            refusal,
                        },
                    )
                })
                .collect(),
        }
    }
}
