//! Inclusion probabilities: the chance π that a review was queued at all. A status queued in
//! full has π = 1; a PASS drawn by a sampling rate has π = that rate. Each queued item keeps
//! its review's π (column `queue_items.inclusion`), and a labelled export weighs each case by
//! 1/π (Horvitz–Thompson), so rates estimated from the labels describe the whole traffic, not
//! the queued mix.

use super::*;

/// The chance π, in (0, 1], that a review was queued: 1 for a status queued in full, the
/// sampling rate for a sampled PASS.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inclusion(f64);

/// A probability that cannot be an inclusion probability: not in (0, 1] (or not a number).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("an inclusion probability must be a number greater than 0 and at most 1, not {0}")]
pub struct InclusionError(pub f64);

impl Inclusion {
    /// π = 1: every review of this kind is queued.
    pub const FULL: Inclusion = Inclusion(1.0);

    /// π = `probability`, which must be in (0, 1].
    pub fn new(probability: f64) -> Result<Inclusion, InclusionError> {
        if probability > 0.0 && probability <= 1.0 {
            Ok(Inclusion(probability))
        } else {
            Err(InclusionError(probability))
        }
    }

    /// π.
    pub fn probability(self) -> f64 {
        self.0
    }

    /// The case weight 1/π: how many reviews of the traffic each queued one stands for.
    pub fn weight(self) -> f64 {
        1.0 / self.0
    }

    /// The stored text: the shortest decimal that reads back as the same number.
    pub(crate) fn to_text(self) -> String {
        self.0.to_string()
    }

    /// The stored text read back; `None` for NULL (an item queued before π was recorded).
    pub(crate) fn from_text(text: Option<&str>) -> Result<Option<Inclusion>, StoreError> {
        text.map(|text| {
            text.parse::<f64>()
                .ok()
                .and_then(|p| Inclusion::new(p).ok())
                .ok_or_else(|| corrupt("queue_items.inclusion"))
        })
        .transpose()
    }
}

impl Store {
    /// [`Store::insert_queued`], recording `inclusion` as the review's π on each of its items
    /// (the sampling rate of a sampled PASS; [`Inclusion::FULL`] for a status queued in full).
    /// [`Store::insert_queued`] itself records π = 1 for [`QueueReason::Status`] and nothing
    /// for [`QueueReason::SampledPass`] (it does not know the rate).
    pub async fn insert_queued_with(
        &self,
        review: &NewReview,
        enqueue: Option<&Enqueue>,
        inclusion: Inclusion,
    ) -> Result<Vec<QueueItemId>, StoreError> {
        self.write_queued(review, enqueue, Some(inclusion)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inclusion_is_a_probability_above_zero_and_its_weight_is_the_inverse() {
        assert_eq!(Inclusion::new(0.3).unwrap().weight(), 1.0 / 0.3);
        assert_eq!(Inclusion::FULL.weight(), 1.0);
        for bad in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
            assert!(Inclusion::new(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn stored_text_reads_back_as_the_same_number_and_null_as_unrecorded() {
        for p in [1.0, 0.3, 0.05, 1.0 / 3.0] {
            let inclusion = Inclusion::new(p).unwrap();
            assert_eq!(
                Inclusion::from_text(Some(&inclusion.to_text())).unwrap(),
                Some(inclusion)
            );
        }
        assert_eq!(Inclusion::FULL.to_text(), "1");
        assert_eq!(Inclusion::new(0.3).unwrap().to_text(), "0.3");
        assert_eq!(Inclusion::from_text(None).unwrap(), None);
        assert!(Inclusion::from_text(Some("0")).is_err());
        assert!(Inclusion::from_text(Some("many")).is_err());
    }
}
