//! The review queue on `jevjudge serve`: which reviews go to people, the reviewers' tokens,
//! the lease.

use std::time::Duration;

use jevjudge_judge::Status;
use jevjudge_serve::{QueuePolicy, QueueSettings, ReviewersSource};
use jevjudge_wire::setting::Explain as _;

use crate::exit::Failure;

/// The review-queue options of `jevjudge serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct QueueArgs {
    /// Queue reviews with these statuses for people: INCONCLUSIVE, FAIL, or both
    /// (comma-separated). Needs --store, --store-state and --reviewer-tokens-env.
    #[arg(long, value_name = "STATUSES", value_delimiter = ',', value_parser = parse_queued_status)]
    pub queue_statuses: Vec<Status>,

    /// Also queue this share of PASS reviews (0 to 1), drawn from the review id and
    /// --sample-seed, so PASS precision is measured too.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub sample_pass: Option<f64>,

    /// The seed of the --sample-pass and --second-review draws (same seed, same draws).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub sample_seed: u64,

    /// The share of queued reviews (0 to 1) that a second reviewer decides too; their
    /// agreement is in GET /v1/queue/stats.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub second_review: Option<f64>,

    /// The environment variable holding the reviewers: comma-separated name:token pairs, or
    /// name:token:lead for a lead (adjudicates disagreements, reads the decisions). Reviewers
    /// send `Authorization: Bearer TOKEN` to /v1/queue/*; names are what the store and the
    /// stats show. Tokens are never accepted as flag values and never logged.
    #[arg(long, value_name = "VAR", conflicts_with = "reviewer_tokens_file")]
    pub reviewer_tokens_env: Option<String>,

    /// A file holding the reviewers instead (the same entries, one or more a line; lines
    /// starting with # are comments). SIGHUP reads it again: reviewers are added, removed or
    /// given new tokens without a restart.
    #[arg(long, value_name = "PATH")]
    pub reviewer_tokens_file: Option<std::path::PathBuf>,

    /// The environment variable holding a secret (at least 32 bytes, the same on every
    /// replica) that keys each reviewer's page sessions apart: a new token for one reviewer
    /// signs out that reviewer only. Without it the key comes from the whole reviewer list,
    /// so any change to the list signs every reviewer out.
    #[arg(long, value_name = "VAR")]
    pub session_secret_env: Option<String>,

    /// How long a claimed item stays with its reviewer, in seconds; after it, the item goes
    /// back to the queue.
    #[arg(long, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=7 * 24 * 3600))]
    pub lease: Option<u64>,

    /// The most items one reviewer may hold under live leases at once (default 5); a claim
    /// past it is refused with 409 `too_many_leases`, listing the held items, so one reviewer
    /// cannot lock everyone else out of the queue.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_leases_per_reviewer: Option<u32>,
}

/// Parses INCONCLUSIVE or FAIL (any case).
fn parse_queued_status(text: &str) -> Result<Status, String> {
    match text.trim().to_ascii_uppercase().as_str() {
        "INCONCLUSIVE" => Ok(Status::Inconclusive),
        "FAIL" => Ok(Status::Fail),
        "PASS" => Err("PASS is not queued by status; use --sample-pass RATE".to_owned()),
        _ => Err(format!("`{text}` is not INCONCLUSIVE or FAIL")),
    }
}

/// Parses a share between 0 and 1.
fn parse_rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "`{text}` is not a share between 0 and 1 (like 0.05)"
        )),
    }
}

impl QueueArgs {
    /// Whether any queue option was given.
    fn any(&self) -> bool {
        !self.queue_statuses.is_empty()
            || self.sample_pass.is_some()
            || self.second_review.is_some()
            || self.reviewer_tokens_env.is_some()
            || self.reviewer_tokens_file.is_some()
            || self.session_secret_env.is_some()
            || self.lease.is_some()
            || self.max_leases_per_reviewer.is_some()
    }

    /// The policy, or `None` when no queue option was given. The reviewers' variable or file
    /// is read here (a missing or bad one is exit 2 naming it, never a token); whether the
    /// policy can work with the store flags is checked by the service's builder.
    pub fn policy(&self) -> Result<Option<QueuePolicy>, Failure> {
        if !self.any() {
            return Ok(None);
        }
        let reviewers = match (&self.reviewer_tokens_env, &self.reviewer_tokens_file) {
            (Some(name), _) => Some(ReviewersSource::Env(name.clone())),
            (None, Some(path)) => Some(ReviewersSource::File(path.clone())),
            (None, None) => None,
        };
        let settings = QueueSettings {
            statuses: self.queue_statuses.clone(),
            sample_pass: self.sample_pass,
            second_review: self.second_review,
            seed: self.sample_seed,
            reviewers,
            session_secret_env: self.session_secret_env.clone(),
            lease: self.lease.map(Duration::from_secs),
            max_leases_per_reviewer: self.max_leases_per_reviewer,
        };
        (settings.policy().map(Some)).map_err(|e| Failure::Input(e.explain(&crate::inputs::flag)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy_of(args: &[&str]) -> Result<Option<QueuePolicy>, String> {
        let flags: QueueArgs =
            crate::flags_test::parse("serve", args).map_err(|e| e.to_string())?;
        flags.policy().map_err(|e| e.to_string())
    }

    #[test]
    fn max_leases_per_reviewer_defaults_to_5_and_takes_1_or_more() {
        let policy = policy_of(&["--queue-statuses", "INCONCLUSIVE"])
            .unwrap()
            .expect("a policy");
        assert_eq!(policy.max_leases_per_reviewer, 5);
        let policy = policy_of(&[
            "--queue-statuses",
            "FAIL",
            "--max-leases-per-reviewer",
            "12",
        ])
        .unwrap()
        .expect("a policy");
        assert_eq!(policy.max_leases_per_reviewer, 12);
        for bad in ["0", "x", "1000001"] {
            let error = policy_of(&["--queue-statuses", "FAIL", "--max-leases-per-reviewer", bad])
                .unwrap_err();
            assert!(error.contains("--max-leases-per-reviewer"), "{error}");
        }
        // The flag alone asks for a queue (the builder then names what is missing).
        assert!(
            policy_of(&["--max-leases-per-reviewer", "3"])
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn statuses_and_rates_are_checked() {
        assert_eq!(
            parse_queued_status("inconclusive"),
            Ok(Status::Inconclusive)
        );
        assert_eq!(parse_queued_status("FAIL"), Ok(Status::Fail));
        assert!(
            parse_queued_status("PASS")
                .unwrap_err()
                .contains("--sample-pass")
        );
        assert!(parse_queued_status("ERROR").is_err());
        assert_eq!(parse_rate("0.05"), Ok(0.05));
        assert_eq!(parse_rate("1"), Ok(1.0));
        for bad in ["-0.1", "1.01", "NaN", "x", ""] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }
}
