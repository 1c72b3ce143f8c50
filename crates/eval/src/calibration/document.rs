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

/// A recommendation in the calibrate document: the certified pair, its guarantee, what it
/// decides on the rows (observed precisions and abstention rate), and its stability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecommendationDocument {
    /// The recommended FAIL threshold on p′.
    pub fail_at_or_below: f64,
    /// The recommended PASS threshold on p′.
    pub pass_at_or_above: f64,
    /// What is guaranteed about the pair.
    pub guarantee: GuaranteeDocument,
    /// The observed precision of its PASS decisions.
    pub pass_precision: f64,
    /// The observed precision of its FAIL decisions.
    pub fail_precision: f64,
    /// The observed fraction of INCONCLUSIVE decisions.
    pub abstain_rate: f64,
    /// The bootstrap stability figure (a description, not a guarantee).
    pub stability: StabilityDocument,
    /// With unequal case weights: true, and the three rates above are weighted
    /// (Horvitz–Thompson); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weighted: Option<bool>,
    /// With weights: the Kish effective n of the labelled points; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effective_n: Option<f64>,
    /// With weights: the Kish effective n of the PASS decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_effective_n: Option<f64>,
    /// With weights: the Wilson interval of the weighted PASS precision at its effective n.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_precision_interval: Option<[f64; 2]>,
    /// With weights: the Kish effective n of the FAIL decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_effective_n: Option<f64>,
    /// With weights: the Wilson interval of the weighted FAIL precision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_precision_interval: Option<[f64; 2]>,
}

/// The guarantee of a certified pair (Learn then Test).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuaranteeDocument {
    /// The PASS line: "PASS precision ≥ 0.80 for this pair, with probability ≥ 0.95 over the
    /// draw of these cases, assuming they are exchangeable with production".
    pub pass: String,
    /// The FAIL line, likewise.
    pub fail: String,
    /// The family-wise error bound δ (both lines hold together with probability ≥ 1 − δ).
    pub delta: f64,
    /// The one-sided binomial p-value of "PASS precision < target" at this PASS threshold.
    pub pass_p_value: f64,
    /// The same for FAIL.
    pub fail_p_value: f64,
    /// Whether the guarantee is approximate (unequal case weights, Kish effective n).
    pub approximate: bool,
}

/// The stability figure: the certification redone on bootstrap resamples (distinct rows once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StabilityDocument {
    /// Resamples drawn.
    pub resamples: u32,
    /// Resamples that certified some pair.
    pub certified: u32,
    /// Resamples that certified this pair.
    pub same_pair: u32,
    /// Distinct pairs the resamples certified.
    pub distinct_pairs: u32,
    /// The pooled out-of-bag precision of the resamples' PASS decisions, or null.
    pub out_of_bag_pass_precision: Option<f64>,
    /// The 2.5th and 97.5th percentiles of the per-resample out-of-bag PASS precisions, or null.
    pub out_of_bag_pass_range: Option<[f64; 2]>,
    /// The pooled out-of-bag FAIL precision, or null.
    pub out_of_bag_fail_precision: Option<f64>,
    /// The range of the per-resample out-of-bag FAIL precisions, or null.
    pub out_of_bag_fail_range: Option<[f64; 2]>,
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
    /// With a stated production base rate: the current and recommended pairs' precisions at
    /// it (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_prevalence: Option<super::PairsAtPrevalence>,
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
                            let certificate = &recommendation.certificate;
                            let tally = certificate.tally;
                            let thresholds = certificate.thresholds;
                            let [pass, fail] = recommendation.guarantee(&self.settings.targets);
                            let figure = &recommendation.stability;
                            let weighted = recommendation.weighted;
                            let range = |range: Option<(f64, f64)>| range.map(|(a, b)| [a, b]);
                            (
                                Some(RecommendationDocument {
                                    fail_at_or_below: thresholds.fail_at_or_below,
                                    pass_at_or_above: thresholds.pass_at_or_above,
                                    guarantee: GuaranteeDocument {
                                        pass,
                                        fail,
                                        delta: certificate.delta,
                                        pass_p_value: certificate.pass_p_value,
                                        fail_p_value: certificate.fail_p_value,
                                        approximate: certificate.approximate,
                                    },
                                    pass_precision: match weighted {
                                        Some(w) => w.pass_precision.map_or(0.0, |r| r.estimate),
                                        None => tally.pass_precision().unwrap_or(0.0),
                                    },
                                    fail_precision: match weighted {
                                        Some(w) => w.fail_precision.map_or(0.0, |r| r.estimate),
                                        None => tally.fail_precision().unwrap_or(0.0),
                                    },
                                    abstain_rate: match weighted {
                                        Some(w) => w.abstain_rate.map_or(0.0, |r| r.estimate),
                                        None => tally.abstain_rate().unwrap_or(0.0),
                                    },
                                    weighted: weighted.map(|_| true),
                                    effective_n: weighted.map(|w| w.effective_n),
                                    pass_effective_n: weighted
                                        .and_then(|w| w.pass_precision)
                                        .map(|r| r.effective_n),
                                    pass_precision_interval: weighted
                                        .and_then(|w| w.pass_precision)
                                        .map(|r| [r.interval.0, r.interval.1]),
                                    fail_effective_n: weighted
                                        .and_then(|w| w.fail_precision)
                                        .map(|r| r.effective_n),
                                    fail_precision_interval: weighted
                                        .and_then(|w| w.fail_precision)
                                        .map(|r| [r.interval.0, r.interval.1]),
                                    stability: StabilityDocument {
                                        resamples: figure.resamples,
                                        certified: figure.certified,
                                        same_pair: figure.same_pair,
                                        distinct_pairs: figure.distinct_pairs,
                                        out_of_bag_pass_precision: figure.pass_precision(),
                                        out_of_bag_pass_range: range(figure.pass_interval),
                                        out_of_bag_fail_precision: figure.fail_precision(),
                                        out_of_bag_fail_range: range(figure.fail_interval),
                                    },
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
                            at_prevalence: criterion.at_prevalence.clone(),
                        },
                    )
                })
                .collect(),
        }
    }
}
