//! Shadow reviews' figures: `jevjudge_shadow_reviews_total{route,version,outcome}` and
//! `jevjudge_shadow_agreement{route,version}`. Labels are route names and definition versions
//! the store's routes name (both operator-chosen, never caller text); every outcome of a
//! (route, version) pair is shown once the pair has a shadow review.

use std::{collections::BTreeMap, fmt, sync::Mutex};

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric},
    metrics::{MetricType, counter::ConstCounter, gauge::ConstGauge},
};

/// How one shadow review ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShadowOutcome {
    /// The shadow's overall status equals the live one.
    Agree,
    /// The shadow's overall status differs from the live one.
    Flip,
    /// The shadow's verdict is an ERROR, its version is not loaded, or its row could not be
    /// written.
    Error,
    /// Not run: the shadows' concurrency share was full, or the service stopped first.
    Shed,
}

const OUTCOMES: [(ShadowOutcome, &str); 4] = [
    (ShadowOutcome::Agree, "agree"),
    (ShadowOutcome::Flip, "flip"),
    (ShadowOutcome::Error, "error"),
    (ShadowOutcome::Shed, "shed"),
];

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OutcomeLabels {
    route: String,
    version: String,
    outcome: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PairLabels {
    route: String,
    version: String,
}

/// Counts per (route, shadow version), in the order agree, flip, error, shed.
#[derive(Debug, Default)]
pub(crate) struct ShadowFigures {
    counts: Mutex<BTreeMap<(String, String), [u64; 4]>>,
}

impl ShadowFigures {
    /// Counts one shadow review of `version` on `route`.
    pub(crate) fn record(&self, route: &str, version: &str, outcome: ShadowOutcome) {
        let index = OUTCOMES
            .iter()
            .position(|(known, _)| *known == outcome)
            .unwrap_or(2);
        let mut counts = match self.counts.lock() {
            Ok(counts) => counts,
            Err(poisoned) => poisoned.into_inner(),
        };
        counts
            .entry((super::escaped(route), super::escaped(version)))
            .or_default()[index] += 1;
    }

    /// The counts of (route, version): agree, flip, error, shed.
    #[cfg(test)]
    pub(crate) fn counts(&self, route: &str, version: &str) -> [u64; 4] {
        let counts = match self.counts.lock() {
            Ok(counts) => counts,
            Err(poisoned) => poisoned.into_inner(),
        };
        counts
            .get(&(route.to_owned(), version.to_owned()))
            .copied()
            .unwrap_or_default()
    }
}

impl Collector for ShadowFigures {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let counts = match self.counts.lock() {
            Ok(counts) => counts.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        if counts.is_empty() {
            return Ok(());
        }
        // A counter's family is named without its `_total` sample suffix.
        let mut family = encoder.encode_descriptor(
            "jevjudge_shadow_reviews",
            "Shadow reviews by route, shadow version and outcome: agree or flip (the overall \
             status equal to the live one or not), error, or shed (not run: the shadows' \
             concurrency share was full, or the service stopped first).",
            None,
            MetricType::Counter,
        )?;
        for ((route, version), values) in &counts {
            for ((_, outcome), value) in OUTCOMES.iter().zip(values) {
                let labels = OutcomeLabels {
                    route: route.clone(),
                    version: version.clone(),
                    outcome,
                };
                ConstCounter::new(*value).encode(family.encode_family(&labels)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "jevjudge_shadow_agreement",
            "Share of this process's shadow reviews (agree or flip) whose overall status equals \
             the live one, by route and shadow version.",
            None,
            MetricType::Gauge,
        )?;
        for ((route, version), [agree, flip, ..]) in &counts {
            let judged = agree + flip;
            if judged == 0 {
                continue;
            }
            let labels = PairLabels {
                route: route.clone(),
                version: version.clone(),
            };
            ConstGauge::new(*agree as f64 / judged as f64)
                .encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}
