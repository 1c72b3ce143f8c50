//! The wait before each retry when the server asks for none (systemone-wire.md §9).
//!
//! The default is the official SDK's schedule: before retry k, `min(0.5 · 2^(k−1), 5.0)`
//! seconds with up to 25 % *subtracted* jitter, rounded to whole milliseconds:
//!
//! | retry | 1 | 2 | 3 | 4 | 5 and later |
//! |---|---|---|---|---|---|
//! | wait (s) | 0.375–0.5 | 0.75–1.0 | 1.5–2.0 | 3.0–4.0 | 3.75–5.0 |
//!
//! Why subtracted jitter: the schedule's upper bound stays a hard bound, which is what a
//! deadline check needs, while concurrent clients still spread out.
//!
//! The jitter source is created per call ([`Backoff::jitter`]), so a shared client needs no
//! lock; [`Backoff::with_seed`] makes it deterministic for tests.

use std::time::Duration;

use rand::{Rng, SeedableRng, rngs::SmallRng};

/// A backoff schedule: how long to wait before retry k (k = 1, 2, …).
///
/// ```
/// use std::time::Duration;
/// use jevjudge_client::Backoff;
///
/// let sdk = Backoff::default();
/// assert_eq!(sdk.delay(1, 0.0), Duration::from_millis(500));
/// assert_eq!(sdk.delay(1, 0.999_999), Duration::from_millis(375));
/// assert_eq!(sdk.delay(9, 0.0), Duration::from_secs(5));
/// assert_eq!(Backoff::fixed(Duration::from_secs(1)).delay(3, 0.5), Duration::from_secs(1));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Backoff {
    schedule: Schedule,
    seed: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
enum Schedule {
    /// `min(initial · 2^(k−1), max) · (1 − jitter · U)`.
    Exponential {
        initial: Duration,
        max: Duration,
        jitter: f64,
    },
    /// The same wait before every retry, no jitter.
    Fixed(Duration),
}

/// The SDK's first wait, in seconds.
const SDK_INITIAL: Duration = Duration::from_millis(500);
/// The SDK's longest wait, in seconds.
const SDK_MAX: Duration = Duration::from_secs(5);
/// The SDK's jitter: up to 25 % subtracted.
const SDK_JITTER: f64 = 0.25;

impl Default for Backoff {
    /// The official SDK's schedule ([`Backoff::sdk`]).
    fn default() -> Backoff {
        Backoff::sdk()
    }
}

impl Backoff {
    /// The official SDK's schedule: `min(0.5 · 2^(k−1), 5.0)` s × `(1 − 0.25·U)`, whole ms.
    pub fn sdk() -> Backoff {
        Backoff {
            schedule: Schedule::Exponential {
                initial: SDK_INITIAL,
                max: SDK_MAX,
                jitter: SDK_JITTER,
            },
            seed: None,
        }
    }

    /// An exponential schedule `min(initial · 2^(k−1), max) · (1 − jitter·U)`, U uniform in
    /// [0, 1), rounded to whole milliseconds.
    ///
    /// `jitter` is the largest fraction of the wait taken off, so it must be a number in
    /// [0, 1]; anything else (NaN, a negative number, more than 1, infinity) is refused with
    /// [`InvalidJitter`] rather than quietly replaced by a value the caller did not ask for.
    ///
    /// ```
    /// use std::time::Duration;
    /// use jevjudge_client::Backoff;
    ///
    /// let second = Duration::from_secs(1);
    /// assert!(Backoff::exponential(second, 10 * second, 0.1).is_ok());
    /// let refused = Backoff::exponential(second, 10 * second, f64::NAN).unwrap_err();
    /// assert_eq!(refused.to_string(), "backoff jitter must be a number in [0, 1], not NaN");
    /// ```
    pub fn exponential(
        initial: Duration,
        max: Duration,
        jitter: f64,
    ) -> Result<Backoff, InvalidJitter> {
        if !(0.0..=1.0).contains(&jitter) {
            return Err(InvalidJitter(jitter));
        }
        Ok(Backoff {
            schedule: Schedule::Exponential {
                initial,
                max,
                jitter,
            },
            seed: None,
        })
    }

    /// The same wait before every retry, without jitter (tests, or a known upstream).
    pub fn fixed(wait: Duration) -> Backoff {
        Backoff {
            schedule: Schedule::Fixed(wait),
            seed: None,
        }
    }

    /// Seeds the jitter so every call sees the same sequence of waits (tests).
    pub fn with_seed(mut self, seed: u64) -> Backoff {
        self.seed = Some(seed);
        self
    }

    /// The wait before retry `retry` (1-based; 0 is treated as 1) for a jitter draw `unit` in
    /// [0, 1). Out-of-range draws are clamped. This is the pure schedule; calls draw `unit`
    /// from [`Backoff::jitter`].
    pub fn delay(&self, retry: u32, unit: f64) -> Duration {
        match &self.schedule {
            Schedule::Fixed(wait) => *wait,
            Schedule::Exponential {
                initial,
                max,
                jitter,
            } => {
                let unit = if unit.is_nan() {
                    0.0
                } else {
                    unit.clamp(0.0, 1.0)
                };
                let doublings = retry.saturating_sub(1).min(1023) as i32;
                let base = (initial.as_secs_f64() * 2f64.powi(doublings)).min(max.as_secs_f64());
                let millis = (base * (1.0 - jitter * unit) * 1000.0).round();
                // `base` is finite and at most `max`; rounding may overshoot `max` by a hair for
                // huge values, hence the final `min`. The fallback only guards a NaN.
                Duration::try_from_secs_f64(millis / 1000.0)
                    .unwrap_or(*max)
                    .min(*max)
            }
        }
    }

    /// A fresh jitter source for one call: seeded when [`Backoff::with_seed`] was used, else
    /// random.
    pub fn jitter(&self) -> Jitter {
        Jitter(match self.seed {
            Some(seed) => SmallRng::seed_from_u64(seed),
            None => SmallRng::from_rng(&mut rand::rng()),
        })
    }

    /// The wait before retry `retry`, drawing the jitter from `jitter`.
    pub fn next_delay(&self, retry: u32, jitter: &mut Jitter) -> Duration {
        match self.schedule {
            Schedule::Fixed(wait) => wait,
            Schedule::Exponential { .. } => self.delay(retry, jitter.0.random::<f64>()),
        }
    }
}

/// A jitter given to [`Backoff::exponential`] that is not a number in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("backoff jitter must be a number in [0, 1], not {0}")]
pub struct InvalidJitter(pub f64);

/// The random draws of one call's backoff (see [`Backoff::jitter`]).
#[derive(Debug, Clone)]
pub struct Jitter(SmallRng);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// The table of systemone-wire.md §9, in milliseconds, inclusive.
    fn table_range(retry: u32) -> (Duration, Duration) {
        match retry {
            1 => (ms(375), ms(500)),
            2 => (ms(750), ms(1000)),
            3 => (ms(1500), ms(2000)),
            4 => (ms(3000), ms(4000)),
            _ => (ms(3750), ms(5000)),
        }
    }

    #[test]
    fn sdk_schedule_ends_of_each_range() {
        let sdk = Backoff::sdk();
        for retry in 1..=8 {
            let (low, high) = table_range(retry);
            assert_eq!(sdk.delay(retry, 0.0), high, "retry {retry}");
            // U < 1, so the low end is approached; 0.999_9 rounds to it at whole ms.
            assert_eq!(sdk.delay(retry, 0.999_9), low, "retry {retry}");
        }
        assert_eq!(sdk.delay(0, 0.0), ms(500));
        assert_eq!(sdk.delay(u32::MAX, 0.5), ms(4375));
    }

    #[test]
    fn waits_are_whole_milliseconds() {
        let sdk = Backoff::sdk();
        assert_eq!(sdk.delay(1, 0.123_456), ms(485));
        assert_eq!(sdk.delay(2, 0.5), ms(875));
    }

    #[test]
    fn odd_draws_are_clamped() {
        let sdk = Backoff::sdk();
        assert_eq!(sdk.delay(1, f64::NAN), ms(500));
        assert_eq!(sdk.delay(1, -3.0), ms(500));
        assert_eq!(sdk.delay(1, 7.0), ms(375));
        let full = Backoff::exponential(ms(100), ms(100), 1.0).unwrap();
        assert_eq!(full.delay(1, 1.0), Duration::ZERO);
        let none = Backoff::exponential(ms(100), ms(1000), 0.0).unwrap();
        assert_eq!(none.delay(2, 0.9), ms(200));
    }

    #[test]
    fn a_jitter_outside_zero_to_one_is_refused_not_clamped() {
        for jitter in [f64::NAN, -0.1, 1.000_001, f64::INFINITY, f64::NEG_INFINITY] {
            let refused = Backoff::exponential(ms(100), ms(1000), jitter).unwrap_err();
            assert!(
                refused.0.to_bits() == jitter.to_bits(),
                "{jitter}: {refused}"
            );
        }
        assert_eq!(
            Backoff::exponential(ms(100), ms(1000), -0.5)
                .unwrap_err()
                .to_string(),
            "backoff jitter must be a number in [0, 1], not -0.5"
        );
        assert!(Backoff::exponential(ms(100), ms(1000), 0.25).is_ok());
    }

    #[test]
    fn fixed_ignores_retry_and_jitter() {
        let fixed = Backoff::fixed(ms(1000)).with_seed(3);
        let mut jitter = fixed.jitter();
        for retry in 1..5 {
            assert_eq!(fixed.next_delay(retry, &mut jitter), ms(1000));
        }
    }

    #[test]
    fn a_seed_makes_every_call_see_the_same_waits() {
        let backoff = Backoff::sdk().with_seed(42);
        let draw = || {
            let mut jitter = backoff.jitter();
            (1..=5)
                .map(|k| backoff.next_delay(k, &mut jitter))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(), draw());
    }

    proptest! {
        #[test]
        fn every_wait_is_within_the_tables_range(seed in any::<u64>(), retries in 1u32..12) {
            let backoff = Backoff::sdk().with_seed(seed);
            let mut jitter = backoff.jitter();
            for retry in 1..=retries {
                let wait = backoff.next_delay(retry, &mut jitter);
                let (low, high) = table_range(retry);
                prop_assert!(low <= wait && wait <= high, "retry {} waited {:?}", retry, wait);
                prop_assert_eq!(wait.subsec_nanos() % 1_000_000, 0);
            }
        }

        #[test]
        fn delay_never_panics(retry in any::<u32>(), unit in any::<f64>(),
                              initial in any::<u64>(), max in any::<u64>(),
                              jitter in prop_oneof![0.0f64..=1.0, any::<f64>()]) {
            match Backoff::exponential(ms(initial), ms(max), jitter) {
                Ok(backoff) => {
                    prop_assert!((0.0..=1.0).contains(&jitter));
                    let wait = backoff.delay(retry, unit);
                    prop_assert!(wait <= ms(max));
                }
                Err(refused) => prop_assert!(!(0.0..=1.0).contains(&refused.0)),
            }
        }
    }
}
