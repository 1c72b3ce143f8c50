//! Which reviews go to people: the review queue's policy.
//!
//! A review is queued when its status is one of `--queue-statuses` (INCONCLUSIVE, FAIL), or,
//! for a PASS, when it falls in the seeded `--sample-pass` share (so PASS precision is
//! measured too). A queued review gets a second copy for a second reviewer in the seeded
//! `--second-review` share. Both draws are a hash of the seed and the review id: the same
//! seed and id always give the same answer, on any replica, with no shared state.

use std::time::Duration;

use jevjudge_judge::Status;

use crate::reviewers::ReviewerTokens;

/// The default lease of a claimed item (600 s).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(600);

/// The default most items one reviewer may hold under live leases at once.
pub const DEFAULT_MAX_LEASES_PER_REVIEWER: u32 = 5;

/// Why a review was queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Its status is one of the queued statuses.
    Status,
    /// A PASS drawn into the sample.
    SampledPass,
}

/// What the policy decided for one review: queue it, for one reviewer or two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queueing {
    /// Why.
    pub reason: Reason,
    /// 1, or 2 when a second reviewer decides it too.
    pub copies: u8,
}

/// The review queue's settings: what is queued, the reviewers, the lease.
///
/// `Debug` shows the reviewers' names, never their tokens ([`ReviewerTokens`]).
#[derive(Clone, Debug)]
pub struct QueuePolicy {
    /// Statuses whose reviews are queued (INCONCLUSIVE and/or FAIL).
    pub statuses: Vec<Status>,
    /// The share of PASS reviews queued, in [0, 1].
    pub sample_pass: f64,
    /// The share of queued reviews that a second reviewer decides too, in [0, 1].
    pub second_review: f64,
    /// The seed of both draws.
    pub seed: u64,
    /// How long a claim holds its item.
    pub lease: Duration,
    /// The most items one reviewer may hold under live leases at once (a claim past it is
    /// refused with 409 `too_many_leases`), so one reviewer cannot lock the queue.
    pub max_leases_per_reviewer: u32,
    /// The reviewers and their tokens (the list at start; a reload replaces it in the
    /// service's state).
    pub reviewers: ReviewerTokens,
    /// With a secret, the reviewer pages key each reviewer's sessions apart (replacing one
    /// token signs out that reviewer only); without, one key from the whole list.
    pub session_secret: Option<crate::session::SessionSecret>,
    /// The file the reviewer list was read from, when it was: SIGHUP reads it again.
    pub reviewers_file: Option<std::path::PathBuf>,
}

/// A policy that cannot work.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum QueuePolicyError {
    /// A rate outside [0, 1].
    #[error("{setting} must be a share between 0 and 1, not {value}")]
    Rate {
        /// `sample_pass` or `second_review`.
        setting: &'static str,
        /// The value.
        value: f64,
    },
    /// PASS or ERROR among the queued statuses.
    #[error("only INCONCLUSIVE and FAIL can be queued by status (PASS reviews are sampled)")]
    Status,
    /// A zero lease.
    #[error("the lease must be positive")]
    ZeroLease,
    /// A zero cap of leases per reviewer.
    #[error("the most leases per reviewer must be at least 1")]
    ZeroMaxLeases,
    /// Nothing would ever be queued.
    #[error("nothing would be queued: no status is queued and the PASS sample is 0")]
    Nothing,
}

impl QueuePolicy {
    /// A policy queueing `statuses`, with no sampling, no second review, the default lease.
    pub fn new(statuses: impl IntoIterator<Item = Status>, reviewers: ReviewerTokens) -> Self {
        QueuePolicy {
            statuses: {
                let mut queued: Vec<Status> = Vec::new();
                for status in statuses {
                    if !queued.contains(&status) {
                        queued.push(status);
                    }
                }
                queued
            },
            sample_pass: 0.0,
            second_review: 0.0,
            seed: 0,
            lease: DEFAULT_LEASE,
            max_leases_per_reviewer: DEFAULT_MAX_LEASES_PER_REVIEWER,
            reviewers,
            session_secret: None,
            reviewers_file: None,
        }
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), QueuePolicyError> {
        for (setting, value) in [
            ("sample_pass", self.sample_pass),
            ("second_review", self.second_review),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(QueuePolicyError::Rate { setting, value });
            }
        }
        if self
            .statuses
            .iter()
            .any(|s| !matches!(s, Status::Inconclusive | Status::Fail))
        {
            return Err(QueuePolicyError::Status);
        }
        if self.lease.is_zero() {
            return Err(QueuePolicyError::ZeroLease);
        }
        if self.max_leases_per_reviewer == 0 {
            return Err(QueuePolicyError::ZeroMaxLeases);
        }
        if self.statuses.is_empty() && self.sample_pass == 0.0 {
            return Err(QueuePolicyError::Nothing);
        }
        Ok(())
    }

    /// Whether (and how) the review `review_id` with this status is queued.
    pub fn decide(&self, review_id: &str, status: Status) -> Option<Queueing> {
        let reason = if self.statuses.contains(&status) {
            Reason::Status
        } else if status == Status::Pass
            && draw(self.seed, "sample-pass", review_id) < self.sample_pass
        {
            Reason::SampledPass
        } else {
            return None;
        };
        let copies = if draw(self.seed, "second-review", review_id) < self.second_review {
            2
        } else {
            1
        };
        Some(Queueing { reason, copies })
    }
}

impl QueuePolicy {
    /// The inclusion probability π of a review queued for `reason`: 1 for a status queued in
    /// full, the PASS sampling rate for a sampled PASS (never 0: a rate of 0 samples nothing).
    pub fn inclusion(&self, reason: Reason) -> f64 {
        match reason {
            Reason::Status => 1.0,
            Reason::SampledPass => self.sample_pass,
        }
    }
}

/// A number in [0, 1) from the seed, a purpose and a review id: FNV-1a over the bytes, then
/// SplitMix64's finaliser (stable across platforms and releases; not a secret).
pub fn draw(seed: u64, purpose: &str, review_id: &str) -> f64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in seed
        .to_le_bytes()
        .iter()
        .chain(purpose.as_bytes())
        .chain([0u8].iter())
        .chain(review_id.as_bytes())
    {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut z = hash.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> QueuePolicy {
        QueuePolicy::new([Status::Inconclusive], ReviewerTokens::default())
    }

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("0190-review-{i}")).collect()
    }

    #[test]
    fn inclusion_is_one_for_statuses_and_the_sampling_rate_for_sampled_passes() {
        let policy = QueuePolicy {
            sample_pass: 0.3,
            ..policy()
        };
        assert_eq!(policy.inclusion(Reason::Status), 1.0);
        assert_eq!(policy.inclusion(Reason::SampledPass), 0.3);
    }

    #[test]
    fn queued_statuses_are_always_queued_and_others_never_without_sampling() {
        let policy = policy();
        for id in ids(200) {
            assert_eq!(
                policy.decide(&id, Status::Inconclusive),
                Some(Queueing {
                    reason: Reason::Status,
                    copies: 1
                })
            );
            for status in [Status::Pass, Status::Fail, Status::Error] {
                assert_eq!(policy.decide(&id, status), None);
            }
        }
    }

    #[test]
    fn sample_pass_queues_a_seeded_reproducible_share_of_passes() {
        let policy = QueuePolicy {
            sample_pass: 0.1,
            seed: 7,
            ..policy()
        };
        let ids = ids(20_000);
        let sampled: Vec<&String> = ids
            .iter()
            .filter(|id| policy.decide(id, Status::Pass).is_some())
            .collect();
        let share = sampled.len() as f64 / ids.len() as f64;
        assert!((share - 0.1).abs() < 0.01, "{share}");
        // Same seed, same ids: the same sample; another seed: another sample.
        let again: Vec<&String> = ids
            .iter()
            .filter(|id| policy.decide(id, Status::Pass).is_some())
            .collect();
        assert_eq!(sampled, again);
        let other = QueuePolicy {
            seed: 8,
            ..policy.clone()
        };
        let others: Vec<&String> = ids
            .iter()
            .filter(|id| other.decide(id, Status::Pass).is_some())
            .collect();
        assert_ne!(sampled, others);
        assert_eq!(
            policy.decide(sampled[0], Status::Pass).map(|q| q.reason),
            Some(Reason::SampledPass)
        );
        // ERROR is never sampled.
        assert!(
            ids.iter()
                .all(|id| policy.decide(id, Status::Error).is_none())
        );
    }

    #[test]
    fn second_review_doubles_a_seeded_share_and_rates_zero_and_one_are_exact() {
        let ids = ids(10_000);
        let half = QueuePolicy {
            second_review: 0.5,
            ..policy()
        };
        let doubled = ids
            .iter()
            .filter(|id| half.decide(id, Status::Inconclusive).unwrap().copies == 2)
            .count();
        assert!((4_700..5_300).contains(&doubled), "{doubled}");
        let all = QueuePolicy {
            second_review: 1.0,
            sample_pass: 1.0,
            ..policy()
        };
        assert!(
            ids.iter()
                .all(|id| all.decide(id, Status::Inconclusive).unwrap().copies == 2)
        );
        assert!(ids.iter().all(|id| all.decide(id, Status::Pass).is_some()));
    }

    #[test]
    fn impossible_policies_are_refused() {
        assert_eq!(policy().validate(), Ok(()));
        let bad = [
            (
                QueuePolicy {
                    sample_pass: 1.5,
                    ..policy()
                },
                "sample_pass must be",
            ),
            (
                QueuePolicy {
                    second_review: -0.1,
                    ..policy()
                },
                "second_review must be",
            ),
            (
                QueuePolicy::new([Status::Pass], ReviewerTokens::default()),
                "only INCONCLUSIVE",
            ),
            (
                QueuePolicy {
                    lease: Duration::ZERO,
                    ..policy()
                },
                "lease",
            ),
            (
                QueuePolicy {
                    max_leases_per_reviewer: 0,
                    ..policy()
                },
                "the most leases per reviewer must be at least 1",
            ),
            (
                QueuePolicy::new([], ReviewerTokens::default()),
                "nothing would be queued",
            ),
        ];
        for (policy, message) in bad {
            let error = policy.validate().unwrap_err().to_string();
            assert!(error.contains(message), "{error}");
        }
        let sampled_only = QueuePolicy {
            sample_pass: 0.05,
            ..QueuePolicy::new([], ReviewerTokens::default())
        };
        assert_eq!(sampled_only.validate(), Ok(()));
    }

    #[test]
    fn draws_are_in_the_unit_interval() {
        for id in ids(1000) {
            let x = draw(u64::MAX, "p", &id);
            assert!((0.0..1.0).contains(&x));
        }
    }
}
