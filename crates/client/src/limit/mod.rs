//! Rate-limit awareness shared by every review of a process against one backend: adaptive
//! concurrency, pacing, the server's requested waits, a dead-key stop, a spending cap, and the
//! attempt counts reports show.
//!
//! A [`Limiter`] is made once per backend and shared (`Arc`) by whoever starts reviews (the
//! eval runner, `serve`, a `Judge` asked to) and by the [`crate::Client`] that sends them:
//!
//! - [`Limiter::acquire`] admits one review: a free slot under the current limit, the
//!   server's last `Retry-After` passed, the `--rate` and `--token-rate` pacers passed, and the
//!   input-token cap not at risk. A review's budget starts after it returns: waiting here is
//!   not review time. The slots are a shrinkable semaphore (tokio's fair semaphore plus a debt
//!   of slots to take back): a freed slot wakes one waiter, first come first served; a grown
//!   limit adds slots; a cut limit takes free slots back at once and busy ones as they are
//!   freed.
//! - The client reports every attempt ([`Limiter::record_attempt`]): a 429/529 cuts the limit
//!   ([`Aimd`]), a `Retry-After` becomes a floor for every next attempt, a 401/403 stops all
//!   admission, and the counts feed [`AttemptCounts`]. Retries wait for the floor and pacers
//!   too ([`Limiter::pace_retry`]), inside the review's budget.
//!
//! What the limiter refuses is a [`Stop`]: the caller reports those reviews as not run.

mod aimd;
mod pacer;

use std::{
    collections::BTreeMap,
    fmt,
    num::NonZeroU32,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use serde::{Deserialize, Serialize};
use tokio::{
    sync::{Notify, OwnedSemaphorePermit, Semaphore},
    time::Instant,
};

pub use aimd::{Aimd, AimdConfig};
pub use pacer::{Rate, TokioClock, parse_token_rate};

use crate::{AttemptOutcome, retry::MAX_SERVER_WAIT};
use pacer::Pacer;

/// How a [`Limiter`] behaves.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitConfig {
    /// The most reviews in flight (`--concurrency`); the adaptive limit stays within
    /// `1..=concurrency`.
    pub concurrency: usize,
    /// Adapt the limit to 429/529 (AIMD). When false the limit is `concurrency`, always.
    pub adaptive: bool,
    /// The controller's settings when adaptive (its ceiling is set from `concurrency`).
    pub aimd: Option<AimdConfig>,
    /// Keep requests under this rate (`--rate`).
    pub rate: Option<Rate>,
    /// Keep estimated input tokens under this many a second (`--token-rate`).
    pub token_rate: Option<NonZeroU32>,
    /// Start no review whose estimated input tokens could take the total past this cap.
    pub max_input_tokens: Option<u64>,
}

/// A spending cap in money that cannot become an input-token cap.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum CostCapError {
    /// The amount is negative or not a number.
    #[error("must be a non-negative amount, not {0}")]
    Amount(f64),
    /// The price per million input tokens is missing, zero, negative or not a number (0 when
    /// missing).
    #[error("needs a positive price per million input tokens, not {0}")]
    Price(f64),
}

/// The input-token cap that `amount` buys at `price_per_million` input tokens: `amount ÷ price ×
/// 1,000,000`, rounded down.
pub fn cost_cap(amount: f64, price_per_million: Option<f64>) -> Result<u64, CostCapError> {
    if !(amount.is_finite() && amount >= 0.0) {
        return Err(CostCapError::Amount(amount));
    }
    let price = price_per_million.unwrap_or(0.0);
    if !(price.is_finite() && price > 0.0) {
        return Err(CostCapError::Price(price));
    }
    Ok((amount / price * 1e6).floor().min(u64::MAX as f64) as u64)
}

impl LimitConfig {
    /// Lowers the input-token cap to `tokens` (the smaller cap holds).
    pub fn cap_input_tokens(mut self, tokens: u64) -> LimitConfig {
        self.max_input_tokens = Some(self.max_input_tokens.map_or(tokens, |cap| cap.min(tokens)));
        self
    }

    /// A fixed limit of `concurrency` (no adaptation), no pacing, no cap.
    pub fn fixed(concurrency: usize) -> LimitConfig {
        LimitConfig {
            adaptive: false,
            ..LimitConfig::new(concurrency)
        }
    }

    /// Adaptive concurrency up to `concurrency`, no pacing, no cap.
    pub fn new(concurrency: usize) -> LimitConfig {
        LimitConfig {
            concurrency,
            adaptive: true,
            aimd: None,
            rate: None,
            token_rate: None,
            max_input_tokens: None,
        }
    }
}

/// Why the limiter admits no more reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Stop {
    /// The server refused the key (401 or 403): every later request would be refused too.
    KeyRefused {
        /// The status that stopped the run.
        status: u16,
    },
    /// The next review could take the input tokens past the cap.
    InputTokenCap {
        /// The cap, in input tokens.
        cap: u64,
        /// Input tokens spent when the run stopped.
        spent: u64,
        /// The estimate of the review that was not started.
        next_estimate: u64,
    },
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::KeyRefused { status } => write!(
                f,
                "the API key was refused (HTTP {status}); no new review was started"
            ),
            Stop::InputTokenCap {
                cap,
                spent,
                next_estimate,
            } => write!(
                f,
                "the input-token cap of {cap} was reached: {spent} spent, and the next review \
                 (about {next_estimate} tokens) could pass it"
            ),
        }
    }
}

/// Attempts sent, by outcome (the report's `overall.attempts`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptCounts {
    /// Every attempt.
    pub total: u64,
    /// Attempts that were retries (attempt number 2 or more).
    pub retried: u64,
    /// Attempts answered with an HTTP status, by status.
    pub by_status: BTreeMap<u16, u64>,
    /// Attempts that failed before a response (connection failures).
    pub transport: u64,
    /// Attempts cut by the per-attempt timeout.
    pub timeout: u64,
    /// Attempts cut by the review's budget.
    #[serde(default)]
    pub deadline: u64,
}

impl AttemptCounts {
    /// Attempts answered 429 or 529.
    pub fn overloaded(&self) -> u64 {
        self.by_status.get(&429).copied().unwrap_or(0)
            + self.by_status.get(&529).copied().unwrap_or(0)
    }

    /// One line for people: `1234 attempts (12 retries): 200 ×1200, 429 ×34; 0 transport, 0 timeout`.
    pub fn text(&self) -> String {
        let statuses: Vec<String> = self
            .by_status
            .iter()
            .map(|(status, n)| format!("{status} ×{n}"))
            .collect();
        let statuses = if statuses.is_empty() {
            "no responses".to_owned()
        } else {
            statuses.join(", ")
        };
        let mut text = format!(
            "{} ({}): {statuses}; {} transport, {} timeout",
            jevjudge_wire::plural::count(self.total, "attempt"),
            match self.retried {
                1 => "1 retry".to_owned(),
                n => format!("{n} retries"),
            },
            self.transport,
            self.timeout
        );
        if self.deadline > 0 {
            text.push_str(&format!(", {} cut by the budget", self.deadline));
        }
        text
    }
}

/// A moment's view of a limiter, for progress lines and metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// How many reviews may be in flight now.
    pub limit: usize,
    /// The ceiling (`--concurrency`).
    pub ceiling: usize,
    /// Reviews in flight.
    pub in_flight: usize,
    /// Attempts so far.
    pub attempts: AttemptCounts,
    /// How many times the limit was cut.
    pub cuts: u64,
    /// Input tokens counted so far (see [`Limiter::record_input_tokens`]).
    pub input_tokens: u64,
    /// Why admission stopped, if it did.
    pub stop: Option<Stop>,
    /// Time since the limiter was made.
    pub age: Duration,
}

impl Snapshot {
    /// Attempts per second over the interval since `previous`, or since the limiter was made
    /// without one (or when `previous` is not older).
    pub fn requests_per_second_since(&self, previous: Option<&Snapshot>) -> f64 {
        match previous {
            Some(before) if self.age > before.age => {
                (self.attempts.total - before.attempts.total) as f64
                    / (self.age - before.age).as_secs_f64()
            }
            _ => self.requests_per_second(),
        }
    }

    /// `concurrency 6/32 · 183 req/s · 429s 12 · 45210 tokens in`: the request rate is over the
    /// interval since `previous` (see [`Snapshot::requests_per_second_since`]).
    pub fn progress_line(&self, previous: Option<&Snapshot>) -> String {
        let rate = self.requests_per_second_since(previous);
        format!(
            "concurrency {}/{} · {rate:.0} req/s · 429s {} · {} tokens in",
            self.limit,
            self.ceiling,
            self.attempts.overloaded(),
            self.input_tokens
        )
    }

    /// Attempts per second since the limiter was made.
    pub fn requests_per_second(&self) -> f64 {
        let secs = self.age.as_secs_f64();
        if secs <= 0.0 {
            0.0
        } else {
            self.attempts.total as f64 / secs
        }
    }
}

struct State {
    aimd: Option<Aimd>,
    ceiling: usize,
    /// Admitted reviews whose permits are not dropped yet.
    in_flight: usize,
    /// The limit the semaphore was last sized to.
    sized_to: usize,
    /// Slots to take back from the semaphore as they are freed (a cut below the busy slots).
    debt: usize,
    /// No attempt goes out before this (the last Retry-After).
    not_before: Option<Instant>,
    stop: Option<Stop>,
    cap: Option<u64>,
    /// Input tokens of finished reviews.
    spent: u64,
    /// Estimates of reviews in flight.
    reserved: u64,
    attempts: AttemptCounts,
}

impl State {
    fn limit(&self) -> usize {
        self.aimd.as_ref().map_or(self.ceiling, Aimd::limit)
    }

    /// Brings the semaphore to the limit: adds slots when it grew (paying the debt first), takes
    /// free ones back when it shrank and owes the rest.
    fn resize(&mut self, slots: &Semaphore) {
        let limit = self.limit();
        if limit > self.sized_to {
            let grown = limit - self.sized_to;
            let paid = grown.min(self.debt);
            self.debt -= paid;
            slots.add_permits(grown - paid);
        } else if limit < self.sized_to {
            let cut = self.sized_to - limit;
            self.debt += cut - slots.forget_permits(cut);
        }
        self.sized_to = limit;
    }
}

/// Adaptive concurrency, pacing and stops for one backend; see the module docs.
pub struct Limiter {
    state: Mutex<State>,
    /// One permit per slot under the limit.
    slots: Arc<Semaphore>,
    /// Wakes reviews waiting for the input-token cap (they hold a slot already).
    changed: Notify,
    requests: Option<Pacer>,
    tokens: Option<Pacer>,
    created: Instant,
}

/// One admitted review. Dropping it frees the slot.
#[must_use = "the review's slot is freed when the permit is dropped"]
pub struct Permit {
    slot: Slot,
    estimate: u64,
}

/// A slot of the semaphore; dropping it returns the slot, or pays the debt of a cut.
struct Slot {
    limiter: Arc<Limiter>,
    permit: Option<OwnedSemaphorePermit>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let Some(permit) = self.permit.take() else {
            return;
        };
        let mut state = self.limiter.lock();
        if state.debt > 0 {
            // The limit was cut below the busy slots: this one is taken back.
            state.debt -= 1;
            permit.forget();
        }
        // Otherwise dropping the permit hands the slot to the first waiter, and only to it.
    }
}

impl Limiter {
    /// A limiter; `concurrency` is clamped to at least 1.
    pub fn new(config: LimitConfig) -> Arc<Limiter> {
        let ceiling = config.concurrency.max(1);
        let now = Instant::now();
        let aimd = config.adaptive.then(|| {
            let settings = config.aimd.unwrap_or_else(|| AimdConfig::new(ceiling));
            Aimd::new(
                AimdConfig {
                    ceiling,
                    ..settings
                },
                now,
            )
        });
        let limit = aimd.as_ref().map_or(ceiling, Aimd::limit);
        Arc::new(Limiter {
            state: Mutex::new(State {
                aimd,
                ceiling,
                in_flight: 0,
                sized_to: limit,
                debt: 0,
                not_before: None,
                stop: None,
                cap: config.max_input_tokens,
                spent: 0,
                reserved: 0,
                attempts: AttemptCounts::default(),
            }),
            slots: Arc::new(Semaphore::new(limit)),
            changed: Notify::new(),
            requests: config.rate.map(Pacer::requests),
            tokens: config.token_rate.map(Pacer::tokens),
            created: now,
        })
    }

    /// Tells the controller that every slot under the limit is taken.
    fn limit_reached(&self) {
        if let Some(aimd) = &mut self.lock().aimd {
            aimd.on_limit_reached();
        }
    }

    /// Stops admission: every waiter returns `stop` at once.
    fn stop_with(&self, mut state: MutexGuard<'_, State>, stop: Stop) {
        state.stop = Some(stop);
        drop(state);
        self.slots.close();
        self.changed.notify_waiters();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves only counters behind: keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether admission reads a review's estimated input tokens: only a token rate or an
    /// input-token cap does. Otherwise any estimate (0) will do, and callers need not compute
    /// one.
    pub fn counts_tokens(&self) -> bool {
        self.tokens.is_some() || self.lock().cap.is_some()
    }

    /// Admits one review whose request is estimated at `estimate` input tokens (bytes ÷ 4):
    /// waits for a slot, the server's floor and the pacers, and checks the cap. Returns the
    /// [`Stop`] instead when admission has stopped (now or while waiting).
    pub async fn acquire(self: &Arc<Self>, estimate: u64) -> Result<Permit, Stop> {
        if let Some(stop) = self.lock().stop {
            return Err(stop);
        }
        let permit = match Arc::clone(&self.slots).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                self.limit_reached();
                match Arc::clone(&self.slots).acquire_owned().await {
                    Ok(permit) => permit,
                    // Closed: admission stopped (the stop is set before the semaphore closes).
                    Err(_) => return Err(self.lock().stop.expect("closed with a stop")),
                }
            }
        };
        if self.slots.available_permits() == 0 {
            self.limit_reached();
        }
        let mut slot = Some(Slot {
            limiter: Arc::clone(self),
            permit: Some(permit),
        });
        let permit = loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            {
                let mut state = self.lock();
                if let Some(stop) = state.stop {
                    return Err(stop);
                }
                match state.cap {
                    Some(cap)
                        if (state.spent.saturating_add(state.reserved))
                            .saturating_add(estimate)
                            > cap =>
                    {
                        if state.in_flight == 0 {
                            let stop = Stop::InputTokenCap {
                                cap,
                                spent: state.spent,
                                next_estimate: estimate,
                            };
                            self.stop_with(state, stop);
                            return Err(stop);
                        }
                        // Reviews in flight may spend less than estimated: decide after them.
                    }
                    cap => {
                        let estimate = if cap.is_some() { estimate } else { 0 };
                        state.in_flight += 1;
                        state.reserved += estimate;
                        break Permit {
                            slot: slot.take().expect("taken once"),
                            estimate,
                        };
                    }
                }
            }
            changed.await;
        };
        self.pace(estimate).await;
        match self.lock().stop {
            Some(stop) => Err(stop),
            None => Ok(permit),
        }
    }

    /// Waits for the server's floor and the pacers before a retry of a request estimated at
    /// `estimate` tokens. Returns false when the key was refused meanwhile (a retry would be
    /// refused too); a cap stop lets reviews in flight finish.
    pub async fn pace_retry(&self, estimate: u64) -> bool {
        self.pace(estimate).await;
        !matches!(self.lock().stop, Some(Stop::KeyRefused { .. }))
    }

    async fn pace(&self, estimate: u64) {
        loop {
            let floor = self.lock().not_before;
            match floor {
                Some(at) if at > Instant::now() => tokio::time::sleep_until(at).await,
                _ => break,
            }
        }
        if let Some(requests) = &self.requests {
            requests.wait(1).await;
        }
        if let Some(tokens) = &self.tokens {
            tokens.wait(estimate).await;
        }
    }

    /// The wait the server asked of every next attempt, from `now` (zero when none).
    pub fn floor_from(&self, now: Instant) -> Duration {
        self.lock()
            .not_before
            .map_or(Duration::ZERO, |at| at.saturating_duration_since(now))
    }

    /// Reports one finished attempt: sent at `sent_at`, attempt number `attempt` (from 1),
    /// with the server's requested wait when it gave one.
    pub fn record_attempt(
        &self,
        outcome: AttemptOutcome,
        attempt: u32,
        sent_at: Instant,
        retry_after: Option<Duration>,
    ) {
        let now = Instant::now();
        let mut state = self.lock();
        let mut stop = None;
        let counts = &mut state.attempts;
        counts.total += 1;
        if attempt > 1 {
            counts.retried += 1;
        }
        match outcome {
            AttemptOutcome::Status(status) => {
                *counts.by_status.entry(status).or_insert(0) += 1;
                match status {
                    200..=299 => {
                        if let Some(aimd) = &mut state.aimd {
                            aimd.on_success(now);
                        }
                    }
                    429 | 529 => {
                        if let Some(aimd) = &mut state.aimd {
                            aimd.on_overload(sent_at, now);
                        }
                    }
                    401 | 403 if state.stop.is_none() => {
                        stop = Some(Stop::KeyRefused { status });
                    }
                    _ => {}
                }
            }
            AttemptOutcome::Transport(_) => counts.transport += 1,
            AttemptOutcome::TimedOut => counts.timeout += 1,
            AttemptOutcome::DeadlineElapsed => counts.deadline += 1,
        }
        if let Some(wait) = retry_after.filter(|wait| *wait <= MAX_SERVER_WAIT) {
            let at = now + wait;
            if state.not_before.is_none_or(|floor| floor < at) {
                state.not_before = Some(at);
            }
        }
        state.resize(&self.slots);
        if let Some(stop) = stop {
            self.stop_with(state, stop);
        }
    }

    /// Counts input tokens spent (a finished review's usage), toward the cap.
    pub fn record_input_tokens(&self, tokens: u64) {
        let mut state = self.lock();
        state.spent = state.spent.saturating_add(tokens);
    }

    /// Why admission stopped, if it did.
    pub fn stop(&self) -> Option<Stop> {
        self.lock().stop
    }

    /// The limit now.
    pub fn limit(&self) -> usize {
        self.lock().limit()
    }

    /// A view of the counters.
    pub fn snapshot(&self) -> Snapshot {
        let state = self.lock();
        Snapshot {
            limit: state.limit(),
            ceiling: state.ceiling,
            in_flight: state.in_flight,
            attempts: state.attempts.clone(),
            cuts: state.aimd.as_ref().map_or(0, Aimd::cuts),
            input_tokens: state.spent,
            stop: state.stop,
            age: self.created.elapsed(),
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let limiter = &self.slot.limiter;
        let mut state = limiter.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        state.reserved = state.reserved.saturating_sub(self.estimate);
        let cap_waiters = state.cap.is_some();
        drop(state);
        if cap_waiters {
            // Reviews waiting for the input-token cap decide again on what this one spent.
            limiter.changed.notify_waiters();
        }
        // The slot itself is freed when `self.slot` drops, after this.
    }
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("Limiter")
            .field("limit", &state.limit())
            .field("ceiling", &state.ceiling)
            .field("in_flight", &state.in_flight)
            .field("stop", &state.stop)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("estimate", &self.estimate)
            .finish()
    }
}

/// Estimated input tokens of a request body: bytes ÷ 4, rounded up.
pub fn estimate_tokens(body_bytes: usize) -> u64 {
    (body_bytes as u64).div_ceil(4)
}

#[cfg(test)]
mod tests;
