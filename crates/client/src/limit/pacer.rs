//! Pacing with the GCRA of the `governor` crate, on tokio's clock (so paused-clock tests and
//! the runtime agree on time).

use std::{fmt, num::NonZeroU32, str::FromStr, time::Duration};

use governor::{
    Quota, RateLimiter,
    clock::Clock,
    middleware::NoOpMiddleware,
    state::{InMemoryState, NotKeyed},
};

/// A rate: `count` per `per`. Parsed from `200/s`, `1200/m`, `10/h`, or a bare `40` (per
/// second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// How many.
    pub count: NonZeroU32,
    /// Per how long.
    pub per: Duration,
}

impl Rate {
    /// `count` per second.
    pub fn per_second(count: NonZeroU32) -> Rate {
        Rate {
            count,
            per: Duration::from_secs(1),
        }
    }

    /// The rate in events per second.
    pub fn per_second_f64(self) -> f64 {
        f64::from(self.count.get()) / self.per.as_secs_f64()
    }
}

/// A token rate given as text — `100000/s`, `6000000/m` or `100000` — as whole tokens a second
/// (rounded up).
pub fn parse_token_rate(text: &str) -> Result<NonZeroU32, String> {
    let rate: Rate = text.parse()?;
    let per_second = rate.per_second_f64().ceil();
    if per_second > f64::from(u32::MAX) {
        return Err(format!("`{text}`: too large"));
    }
    NonZeroU32::new(per_second as u32).ok_or_else(|| format!("`{text}`: must be positive"))
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.per.as_secs() {
            1 if self.per.subsec_nanos() == 0 => write!(f, "{}/s", self.count),
            60 if self.per.subsec_nanos() == 0 => write!(f, "{}/m", self.count),
            _ => write!(f, "{}/{:?}", self.count, self.per),
        }
    }
}

impl FromStr for Rate {
    type Err = String;

    fn from_str(text: &str) -> Result<Rate, String> {
        let bad = || format!("`{text}` is not a rate like 40/s, 1200/m or 40");
        let (count, per) = match text.trim().split_once('/') {
            None => (text.trim(), Duration::from_secs(1)),
            Some((count, unit)) => {
                let per = match unit.trim() {
                    "s" | "sec" | "second" => Duration::from_secs(1),
                    "m" | "min" | "minute" => Duration::from_secs(60),
                    "h" | "hour" => Duration::from_secs(3600),
                    _ => return Err(bad()),
                };
                (count.trim(), per)
            }
        };
        let count: u32 = count.parse().map_err(|_| bad())?;
        let count = NonZeroU32::new(count).ok_or_else(|| format!("`{text}`: must be positive"))?;
        Ok(Rate { count, per })
    }
}

/// governor's clock, read from tokio's (paused in tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioClock;

impl Clock for TokioClock {
    type Instant = std::time::Instant;

    fn now(&self) -> std::time::Instant {
        tokio::time::Instant::now().into_std()
    }
}

/// One GCRA limiter: waits until `n` cells conform, then takes them.
pub(crate) struct Pacer {
    limiter: RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<std::time::Instant>>,
    burst: NonZeroU32,
}

impl Pacer {
    /// Requests: evenly spaced, `rate.count` per `rate.per`, a burst of one.
    pub(crate) fn requests(rate: Rate) -> Pacer {
        let interval = rate.per / rate.count.get();
        let quota = Quota::with_period(interval.max(Duration::from_nanos(1)))
            .expect("a positive interval")
            .allow_burst(NonZeroU32::MIN);
        Pacer::new(quota)
    }

    /// Tokens: `per_second` a second, a burst of one second's worth (a request larger than
    /// that waits for a full bucket).
    pub(crate) fn tokens(per_second: NonZeroU32) -> Pacer {
        Pacer::new(Quota::per_second(per_second))
    }

    fn new(quota: Quota) -> Pacer {
        Pacer {
            burst: quota.burst_size(),
            limiter: RateLimiter::direct_with_clock(quota, TokioClock),
        }
    }

    /// Waits until `n` cells (clamped to `1..=burst`) conform and takes them.
    pub(crate) async fn wait(&self, n: u64) {
        let n = NonZeroU32::new(n.clamp(1, u64::from(self.burst.get())) as u32)
            .unwrap_or(NonZeroU32::MIN);
        loop {
            match self.limiter.check_n(n) {
                Ok(Ok(())) | Err(_) => return,
                Ok(Err(not_until)) => {
                    let wait = not_until.wait_time_from(TokioClock.now());
                    tokio::time::sleep(wait.max(Duration::from_micros(1))).await;
                }
            }
        }
    }
}

impl fmt::Debug for Pacer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pacer").field("burst", &self.burst).finish()
    }
}

#[cfg(test)]
mod tests {
    use tokio::time::Instant;

    use super::*;

    #[test]
    fn rates_parse_from_per_second_per_minute_and_bare_counts() {
        let rate: Rate = "200/s".parse().unwrap();
        assert_eq!(rate.per_second_f64(), 200.0);
        let rate: Rate = "1200/m".parse().unwrap();
        assert_eq!(rate.per_second_f64(), 20.0);
        assert_eq!("1200/m".parse::<Rate>().unwrap().to_string(), "1200/m");
        let rate: Rate = "40".parse().unwrap();
        assert_eq!(rate.to_string(), "40/s");
        for bad in ["", "0/s", "-1/s", "x/s", "5/parsec", "5/"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn requests_are_spaced_evenly_at_the_rate() {
        let pacer = Pacer::requests("40/s".parse().unwrap());
        let start = Instant::now();
        for _ in 0..41 {
            pacer.wait(1).await;
        }
        // The first goes at once, then one every 25 ms.
        assert_eq!(start.elapsed(), Duration::from_millis(1000));
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_allow_one_seconds_burst_then_the_rate() {
        let pacer = Pacer::tokens(NonZeroU32::new(1000).unwrap());
        let start = Instant::now();
        pacer.wait(1000).await;
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "a full bucket at the start"
        );
        pacer.wait(500).await;
        assert_eq!(start.elapsed(), Duration::from_millis(500));
        // More than a burst is clamped to the burst: it waits for a full bucket, not forever.
        pacer.wait(5000).await;
        assert_eq!(start.elapsed(), Duration::from_millis(1500));
    }
}
