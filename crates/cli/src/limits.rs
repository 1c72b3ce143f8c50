//! The rate-limit options of `eval`, the shared limiter they build, and its progress line.

use std::{num::NonZeroU32, sync::Arc, time::Duration};

use jevjudge_client::limit::{self, CostCapError, LimitConfig, Limiter, Rate, Snapshot};

/// How a run stays under the API's limits and the user's budget.
#[derive(Debug, Clone, clap::Args)]
pub struct LimitArgs {
    /// Keep exactly --concurrency reviews in flight. By default the concurrency adapts: it
    /// starts at --concurrency, is cut on 429/529 and grows back only while it is used (never
    /// above --concurrency).
    #[arg(long)]
    pub fixed_concurrency: bool,

    /// Pace requests (retries included) under RATE, like `40/s` or `1200/m`.
    #[arg(long, value_name = "RATE")]
    pub rate: Option<Rate>,

    /// Pace estimated input tokens (request bytes ÷ 4) under TOKENS a second, like `100000/s`.
    #[arg(long, value_name = "TOKENS/s", value_parser = limit::parse_token_rate)]
    pub token_rate: Option<NonZeroU32>,

    /// Spending cap: start no review whose estimated input tokens (request bytes ÷ 4) could take
    /// the run's input tokens past N. Rows of a resumed run count. The run then stops (exit 7);
    /// --resume continues.
    #[arg(long, value_name = "N")]
    pub max_input_tokens: Option<u64>,

    /// Spending cap in money: like --max-input-tokens with N = AMOUNT ÷ --price-per-million-input
    /// × 1,000,000.
    #[arg(long, value_name = "AMOUNT", requires = "price_per_million_input")]
    pub max_cost: Option<f64>,
}

impl LimitArgs {
    /// The limiter's configuration; `price` is --price-per-million-input.
    pub fn config(&self, concurrency: usize, price: Option<f64>) -> anyhow::Result<LimitConfig> {
        let config = LimitConfig {
            adaptive: !self.fixed_concurrency,
            rate: self.rate,
            token_rate: self.token_rate,
            max_input_tokens: self.max_input_tokens,
            ..LimitConfig::new(concurrency)
        };
        let Some(amount) = self.max_cost else {
            return Ok(config);
        };
        match limit::cost_cap(amount, price) {
            Ok(tokens) => Ok(config.cap_input_tokens(tokens)),
            Err(CostCapError::Amount(amount)) => {
                anyhow::bail!("--max-cost must be a non-negative amount, not {amount}")
            }
            Err(CostCapError::Price(price)) => {
                anyhow::bail!("--max-cost needs a positive --price-per-million-input, not {price}")
            }
        }
    }
}

/// Keeps the progress bar's message on the limiter's figures until aborted.
pub fn watch(
    progress: &indicatif::ProgressBar,
    limiter: Arc<Limiter>,
) -> tokio::task::JoinHandle<()> {
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} {bar:32} {pos}/{len} reviews · {elapsed_precise} elapsed · eta {eta} · {msg}",
    ) {
        progress.set_style(style);
    }
    let progress = progress.clone();
    tokio::spawn(async move {
        let mut previous: Option<Snapshot> = None;
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        loop {
            tick.tick().await;
            let now = limiter.snapshot();
            progress.set_message(now.progress_line(previous.as_ref()));
            previous = Some(now);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> LimitArgs {
        LimitArgs {
            fixed_concurrency: false,
            rate: None,
            token_rate: None,
            max_input_tokens: None,
            max_cost: None,
        }
    }

    #[test]
    fn max_cost_becomes_an_input_token_cap_at_the_price() {
        let config = LimitArgs {
            max_cost: Some(2.5),
            ..args()
        }
        .config(8, Some(0.5))
        .unwrap();
        assert_eq!(config.max_input_tokens, Some(5_000_000));
        let both = LimitArgs {
            max_cost: Some(2.5),
            max_input_tokens: Some(1000),
            ..args()
        }
        .config(8, Some(0.5))
        .unwrap();
        assert_eq!(both.max_input_tokens, Some(1000), "the smaller cap holds");
        for (amount, price) in [(-1.0, Some(1.0)), (1.0, Some(0.0)), (f64::NAN, Some(1.0))] {
            let result = LimitArgs {
                max_cost: Some(amount),
                ..args()
            }
            .config(8, price);
            assert!(result.is_err(), "{amount} at {price:?}");
        }
    }

    #[test]
    fn adaptation_is_on_unless_fixed() {
        assert!(args().config(8, None).unwrap().adaptive);
        let fixed = LimitArgs {
            fixed_concurrency: true,
            ..args()
        };
        assert!(!fixed.config(8, None).unwrap().adaptive);
    }
}
