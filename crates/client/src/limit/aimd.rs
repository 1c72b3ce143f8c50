//! The AIMD controller: how many reviews may be in flight against one backend.
//!
//! - **Start high.** The limit starts at [`AimdConfig::initial`], the ceiling by default.
//! - **Growth only when used.** The limit grows only in a window in which it was *reached*: the
//!   caller reports each time every slot under the limit is taken ([`Aimd::on_limit_reached`]).
//!   A window is as many successes as the limit was when it started (about one round trip when
//!   the limit is used); a window in which the limit was never reached ends without growth, so
//!   a lightly loaded backend never drifts up to the ceiling.
//! - **Slow start.** Until the first overload, each success in a window where the limit was
//!   reached adds one (so a saturated limit doubles every round trip).
//! - **Multiplicative cut.** A 429 or 529 multiplies the limit by [`AimdConfig::backoff`]
//!   (never below 1) and ends slow start.
//! - **Debounce.** An overload answer to an attempt *sent before the last cut* is part of the
//!   burst that caused that cut and does not cut again: one burst cuts once.
//! - **Additive increase.** After a cut, the limit grows by one per clean window: `limit`
//!   successes with no cut, lasting at least [`AimdConfig::min_window`], in which the limit was
//!   reached.
//! - **Bounds.** The limit stays within `1..=ceiling`.
//!
//! The controller is a plain state machine; time comes in as arguments, so its tests run on
//! tokio's paused clock.

use std::time::Duration;

use tokio::time::Instant;

/// The controller's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AimdConfig {
    /// The largest limit (`--concurrency`), at least 1.
    pub ceiling: usize,
    /// The limit at the start (clamped to `1..=ceiling`).
    pub initial: usize,
    /// The factor of a cut, within (0, 1).
    pub backoff: f64,
    /// The shortest clean window after which the limit grows by one (after slow start).
    pub min_window: Duration,
}

impl AimdConfig {
    /// The defaults for a ceiling: start at it, cut to 70 %, windows of at least 250 ms.
    pub fn new(ceiling: usize) -> AimdConfig {
        let ceiling = ceiling.max(1);
        AimdConfig {
            ceiling,
            initial: ceiling,
            backoff: 0.7,
            min_window: Duration::from_millis(250),
        }
    }
}

/// Additive increase, multiplicative decrease of a concurrency limit.
#[derive(Debug, Clone)]
pub struct Aimd {
    config: AimdConfig,
    /// The limit as a real number; the usable limit is its floor.
    limit: f64,
    slow_start: bool,
    last_cut: Option<Instant>,
    window_start: Instant,
    window_successes: usize,
    /// The successes that end the window: the limit when it started.
    window_target: usize,
    /// Whether every slot under the limit was taken since the window started.
    reached_limit: bool,
    cuts: u64,
}

impl Aimd {
    /// A controller in slow start at `now`.
    pub fn new(config: AimdConfig, now: Instant) -> Aimd {
        let ceiling = config.ceiling.max(1);
        let backoff = if config.backoff > 0.0 && config.backoff < 1.0 {
            config.backoff
        } else {
            0.5
        };
        let config = AimdConfig {
            ceiling,
            initial: config.initial.clamp(1, ceiling),
            backoff,
            ..config
        };
        Aimd {
            limit: config.initial as f64,
            config,
            slow_start: true,
            last_cut: None,
            window_start: now,
            window_successes: 0,
            window_target: config.initial,
            reached_limit: false,
            cuts: 0,
        }
    }

    /// How many may be in flight now, within `1..=ceiling`.
    pub fn limit(&self) -> usize {
        (self.limit.floor() as usize).clamp(1, self.config.ceiling)
    }

    /// The ceiling.
    pub fn ceiling(&self) -> usize {
        self.config.ceiling
    }

    /// Whether the controller is still in slow start.
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    /// How many cuts happened.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// Every slot under the limit is taken (an admission took the last one or found none).
    pub fn on_limit_reached(&mut self) {
        self.reached_limit = true;
    }

    /// Whether the limit was reached since the window started.
    pub fn reached_limit(&self) -> bool {
        self.reached_limit
    }

    /// An attempt succeeded at `now`.
    pub fn on_success(&mut self, now: Instant) {
        let ceiling = self.config.ceiling as f64;
        self.window_successes += 1;
        if self.slow_start {
            if self.reached_limit {
                self.limit = (self.limit + 1.0).min(ceiling);
            }
            if self.window_successes >= self.window_target {
                self.next_window(now);
            }
            return;
        }
        if self.window_successes >= self.window_target
            && now.saturating_duration_since(self.window_start) >= self.config.min_window
        {
            if self.reached_limit {
                self.limit = (self.limit + 1.0).min(ceiling);
            }
            self.next_window(now);
        }
    }

    fn next_window(&mut self, now: Instant) {
        self.window_start = now;
        self.window_successes = 0;
        self.window_target = self.limit();
        self.reached_limit = false;
    }

    /// An attempt sent at `sent_at` was answered 429/529 at `now`. Returns whether the limit
    /// was cut (false when debounced: the attempt left before the last cut).
    pub fn on_overload(&mut self, sent_at: Instant, now: Instant) -> bool {
        if self.last_cut.is_some_and(|cut| sent_at < cut) {
            return false;
        }
        self.limit = (self.limit() as f64 * self.config.backoff).max(1.0);
        self.slow_start = false;
        self.last_cut = Some(now);
        self.next_window(now);
        self.cuts += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A controller that starts at 1, so that a test can grow it to any limit.
    fn controller(ceiling: usize) -> Aimd {
        Aimd::new(
            AimdConfig {
                initial: 1,
                ..AimdConfig::new(ceiling)
            },
            Instant::now(),
        )
    }

    /// A success while every slot is taken (a saturated backend).
    fn saturated_success(aimd: &mut Aimd) {
        aimd.on_limit_reached();
        aimd.on_success(Instant::now());
    }

    /// A [`controller`] after `successes` saturated successes at once (in slow start, each adds
    /// one).
    fn grown(ceiling: usize, successes: usize) -> Aimd {
        let mut aimd = controller(ceiling);
        for _ in 0..successes {
            saturated_success(&mut aimd);
        }
        aimd
    }

    /// `n` saturated successes, each `gap` after the one before.
    async fn successes(aimd: &mut Aimd, n: usize, gap: Duration) {
        for _ in 0..n {
            tokio::time::advance(gap).await;
            saturated_success(aimd);
        }
    }

    /// `n` successes 10 ms apart while some slot stays free.
    async fn successes_unsaturated(aimd: &mut Aimd, n: usize) {
        for _ in 0..n {
            tokio::time::advance(ms(10)).await;
            aimd.on_success(Instant::now());
        }
    }

    /// An attempt sent now and refused 20 ms later: whether it cut the limit.
    async fn refused_after_20_ms(aimd: &mut Aimd) -> bool {
        let sent = Instant::now();
        tokio::time::advance(ms(20)).await;
        aimd.on_overload(sent, Instant::now())
    }

    #[test]
    fn the_default_start_is_the_ceiling() {
        let start = |ceiling| Aimd::new(AimdConfig::new(ceiling), Instant::now()).limit();
        assert_eq!(start(32), 32);
        assert_eq!(start(5), 5);
        assert_eq!(start(0), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn slow_start_grows_by_one_per_saturated_success_up_to_the_ceiling() {
        let mut aimd = controller(8);
        assert_eq!(aimd.limit(), 1);
        for expected in 2..=8 {
            saturated_success(&mut aimd);
            assert_eq!(aimd.limit(), expected);
        }
        for _ in 0..100 {
            saturated_success(&mut aimd);
        }
        assert_eq!(aimd.limit(), 8, "never above the ceiling");
        assert!(aimd.in_slow_start());
    }

    #[tokio::test(start_paused = true)]
    async fn a_saturated_limit_doubles_per_round_trip() {
        let mut aimd = Aimd::new(
            AimdConfig {
                initial: 32,
                ..AimdConfig::new(64)
            },
            Instant::now(),
        );
        assert_eq!(aimd.limit(), 32);
        // All 32 slots are taken; their 32 answers come back: one round trip.
        aimd.on_limit_reached();
        for _ in 0..32 {
            aimd.on_success(Instant::now());
        }
        assert_eq!(aimd.limit(), 64);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lightly_loaded_limit_never_grows() {
        // In slow start: 16 slots of 32, never all taken.
        let mut aimd = Aimd::new(
            AimdConfig {
                initial: 16,
                ..AimdConfig::new(32)
            },
            Instant::now(),
        );
        successes_unsaturated(&mut aimd, 10_000).await;
        assert_eq!(aimd.limit(), 16);
        // After a cut: clean windows, but the limit is never reached.
        aimd.on_overload(Instant::now(), Instant::now());
        assert_eq!(aimd.limit(), 11);
        successes_unsaturated(&mut aimd, 10_000).await;
        assert_eq!(aimd.limit(), 11);
        assert!(!aimd.reached_limit());
    }

    #[tokio::test(start_paused = true)]
    async fn one_burst_that_reached_the_limit_grows_it_for_one_window_only() {
        let mut aimd = Aimd::new(
            AimdConfig {
                initial: 10,
                ..AimdConfig::new(100)
            },
            Instant::now(),
        );
        aimd.on_limit_reached();
        // The burst's window is 10 successes, each adds one; later windows never reach 20.
        successes_unsaturated(&mut aimd, 1000).await;
        assert_eq!(aimd.limit(), 20);
    }

    #[tokio::test(start_paused = true)]
    async fn an_overload_cuts_multiplicatively_and_ends_slow_start() {
        let mut aimd = grown(32, 19);
        assert_eq!(aimd.limit(), 20);
        assert!(refused_after_20_ms(&mut aimd).await);
        assert_eq!(aimd.limit(), 14, "20 × 0.7");
        assert!(!aimd.in_slow_start());
        assert_eq!(aimd.cuts(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn one_burst_cuts_once() {
        let mut aimd = grown(32, 31);
        // 32 attempts leave together and all come back 429.
        let sent = Instant::now();
        tokio::time::advance(ms(20)).await;
        let cuts = (0..32)
            .filter(|_| aimd.on_overload(sent, Instant::now()))
            .count();
        assert_eq!(cuts, 1);
        assert_eq!(aimd.limit(), 22, "32 × 0.7, once");
        // Late answers from the same burst still do not cut.
        tokio::time::advance(ms(500)).await;
        assert!(!aimd.on_overload(sent, Instant::now()));
        assert_eq!(aimd.limit(), 22);
        // An attempt sent after the cut that is refused again is a new signal.
        assert!(refused_after_20_ms(&mut aimd).await);
        assert_eq!(aimd.limit(), 15);
    }

    #[tokio::test(start_paused = true)]
    async fn cuts_never_go_below_one() {
        let mut aimd = controller(4);
        for _ in 0..10 {
            let sent = Instant::now();
            tokio::time::advance(ms(1)).await;
            aimd.on_overload(sent, Instant::now());
            assert!(aimd.limit() >= 1);
        }
        assert_eq!(aimd.limit(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn recovery_adds_one_per_clean_window_of_limit_successes() {
        let mut aimd = grown(32, 9);
        let sent = Instant::now();
        aimd.on_overload(sent, Instant::now());
        assert_eq!(aimd.limit(), 7);
        // (successes, the wait before each, the limit after them)
        for (n, gap, limit) in [
            // 7 successes in less than the minimum window: no increase yet.
            (7, ms(20), 7),
            // Once the window has lasted 250 ms, the next success raises the limit by one.
            (1, ms(200), 8),
            // The next window needs 8 successes.
            (7, ms(50), 8),
            (1, ms(50), 9),
        ] {
            successes(&mut aimd, n, gap).await;
            assert_eq!(aimd.limit(), limit, "after {n} more, {gap:?} apart");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn recovery_stops_at_the_ceiling() {
        let mut aimd = grown(3, 2);
        aimd.on_overload(Instant::now(), Instant::now());
        assert_eq!(aimd.limit(), 2);
        successes(&mut aimd, 1000, ms(100)).await;
        assert_eq!(aimd.limit(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_ceiling_of_zero_is_one_and_an_invalid_backoff_halves() {
        let mut aimd = Aimd::new(
            AimdConfig {
                ceiling: 0,
                initial: 0,
                backoff: 1.5,
                min_window: Duration::ZERO,
            },
            Instant::now(),
        );
        assert_eq!(aimd.limit(), 1);
        assert_eq!(aimd.ceiling(), 1);
        let mut wide = Aimd::new(
            AimdConfig {
                backoff: 1.5,
                initial: 16,
                ..AimdConfig::new(16)
            },
            Instant::now(),
        );
        wide.on_overload(Instant::now(), Instant::now());
        assert_eq!(wide.limit(), 8);
        aimd.on_success(Instant::now());
        assert_eq!(aimd.limit(), 1);
    }
}
