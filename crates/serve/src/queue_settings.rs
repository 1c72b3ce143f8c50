//! The review queue's settings as a front end takes them (statuses, shares, the names of the
//! variables and the file holding the reviewers and the session secret), turned into a
//! [`QueuePolicy`]: the variables and the file are read here, and every error names the setting
//! it comes from, never a token.

use std::{path::PathBuf, time::Duration};

use jevjudge_judge::Status;
use jevjudge_wire::setting::{Explain, Namer, Setting};

use crate::{QueuePolicy, ReviewerTokens, ReviewerTokensError, SessionSecret, SessionSecretError};

/// Where the reviewers and their tokens are read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewersSource {
    /// An environment variable of comma-separated `name:token[:lead]` entries.
    Env(String),
    /// A file of the same entries, one or more a line (read again on SIGHUP).
    File(PathBuf),
}

/// The review queue's settings; [`QueueSettings::policy`] reads what they name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueueSettings {
    /// Statuses queued in full (INCONCLUSIVE, FAIL).
    pub statuses: Vec<Status>,
    /// The share of PASS reviews queued [default 0].
    pub sample_pass: Option<f64>,
    /// The share of queued reviews a second reviewer decides too [default 0].
    pub second_review: Option<f64>,
    /// The seed of both draws.
    pub seed: u64,
    /// The reviewers (none: the service's builder refuses the queue).
    pub reviewers: Option<ReviewersSource>,
    /// The environment variable holding the session secret.
    pub session_secret_env: Option<String>,
    /// How long a claim holds its item [default [`crate::DEFAULT_LEASE`]].
    pub lease: Option<Duration>,
    /// The most items one reviewer may hold at once [default
    /// [`crate::DEFAULT_MAX_LEASES_PER_REVIEWER`]].
    pub max_leases_per_reviewer: Option<u32>,
}

/// A variable or file the settings name that cannot be read or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueueSettingsError {
    /// The variable is not set.
    #[error("the variable {name} is not set")]
    Unset {
        /// The setting that names it.
        setting: Setting,
        /// The variable.
        name: String,
    },
    /// The variable is not Unicode.
    #[error("the variable {name} is not valid Unicode")]
    NotUnicode {
        /// The setting that names it.
        setting: Setting,
        /// The variable.
        name: String,
    },
    /// The reviewers file cannot be read.
    #[error("{}: {error}", path.display())]
    ReviewersFile {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The reviewer entries are not valid (named by variable or file, never a token).
    #[error("{source_name}: {error}")]
    Reviewers {
        /// The setting they came through.
        setting: Setting,
        /// The variable or the file.
        source_name: String,
        /// Why.
        error: ReviewerTokensError,
    },
    /// The session secret is too short.
    #[error("{name}: {error}")]
    Secret {
        /// The variable.
        name: String,
        /// Why.
        error: SessionSecretError,
    },
}

impl Explain for QueueSettingsError {
    /// The error after the setting it comes from: `--reviewer-tokens-env: the variable R is
    /// not set`.
    fn explain(&self, name: Namer<'_>) -> String {
        let setting = match self {
            QueueSettingsError::Unset { setting, .. }
            | QueueSettingsError::NotUnicode { setting, .. }
            | QueueSettingsError::Reviewers { setting, .. } => *setting,
            QueueSettingsError::ReviewersFile { .. } => Setting::ReviewerTokensFile,
            QueueSettingsError::Secret { .. } => Setting::SessionSecretEnv,
        };
        format!("{}: {self}", name(setting))
    }
}

fn env_var(setting: Setting, name: &str) -> Result<String, QueueSettingsError> {
    let name = name.to_owned();
    std::env::var(&name).map_err(|e| match e {
        std::env::VarError::NotPresent => QueueSettingsError::Unset { setting, name },
        std::env::VarError::NotUnicode(_) => QueueSettingsError::NotUnicode { setting, name },
    })
}

impl QueueSettings {
    /// The policy: the reviewers read from their variable or file, the session secret from
    /// its variable. Whether the policy can work with the store is checked by the service's
    /// builder.
    pub fn policy(&self) -> Result<QueuePolicy, QueueSettingsError> {
        let reviewers = match &self.reviewers {
            Some(ReviewersSource::Env(name)) => {
                let setting = Setting::ReviewerTokensEnv;
                ReviewerTokens::parse(&env_var(setting, name)?).map_err(|error| {
                    QueueSettingsError::Reviewers {
                        setting,
                        source_name: name.clone(),
                        error,
                    }
                })?
            }
            Some(ReviewersSource::File(path)) => {
                let text = std::fs::read_to_string(path).map_err(|error| {
                    QueueSettingsError::ReviewersFile {
                        path: path.clone(),
                        error,
                    }
                })?;
                ReviewerTokens::parse_file(&text).map_err(|error| {
                    QueueSettingsError::Reviewers {
                        setting: Setting::ReviewerTokensFile,
                        source_name: path.display().to_string(),
                        error,
                    }
                })?
            }
            None => ReviewerTokens::default(),
        };
        let mut policy = QueuePolicy::new(self.statuses.iter().copied(), reviewers);
        if let Some(ReviewersSource::File(path)) = &self.reviewers {
            policy.reviewers_file = Some(path.clone());
        }
        if let Some(name) = &self.session_secret_env {
            let value = env_var(Setting::SessionSecretEnv, name)?;
            let secret =
                SessionSecret::new(&value).map_err(|error| QueueSettingsError::Secret {
                    name: name.clone(),
                    error,
                })?;
            policy.session_secret = Some(secret);
        }
        policy.sample_pass = self.sample_pass.unwrap_or(0.0);
        policy.second_review = self.second_review.unwrap_or(0.0);
        policy.seed = self.seed;
        policy.lease = self.lease.unwrap_or(policy.lease);
        policy.max_leases_per_reviewer =
            (self.max_leases_per_reviewer).unwrap_or(policy.max_leases_per_reviewer);
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flag(setting: Setting) -> String {
        format!("--{}", setting.key().replace('_', "-"))
    }

    #[test]
    fn the_reviewers_and_the_secret_are_read_from_what_the_settings_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("reviewers");
        std::fs::write(&file, "# the team\nana:token-of-ana-1234567890\n").unwrap();
        let settings = QueueSettings {
            statuses: vec![Status::Fail],
            reviewers: Some(ReviewersSource::File(file.clone())),
            lease: Some(Duration::from_secs(60)),
            ..QueueSettings::default()
        };
        let policy = settings.policy().unwrap();
        assert_eq!(policy.reviewers_file.as_deref(), Some(file.as_path()));
        assert_eq!(policy.lease, Duration::from_secs(60));
        assert_eq!(
            policy.max_leases_per_reviewer,
            crate::DEFAULT_MAX_LEASES_PER_REVIEWER
        );
        assert_eq!((policy.sample_pass, policy.second_review), (0.0, 0.0));
    }

    #[test]
    fn an_unreadable_source_is_named_by_its_setting_and_never_shows_a_token() {
        let unset = QueueSettings {
            reviewers: Some(ReviewersSource::Env(
                "JEVJUDGE_TEST_SURELY_UNSET_VARIABLE".into(),
            )),
            ..QueueSettings::default()
        };
        assert_eq!(
            unset.policy().unwrap_err().explain(&flag),
            "--reviewer-tokens-env: the variable JEVJUDGE_TEST_SURELY_UNSET_VARIABLE is not set"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("reviewers");
        std::fs::write(&file, "ana-without-a-token-secret123\n").unwrap();
        let bad = QueueSettings {
            reviewers: Some(ReviewersSource::File(file.clone())),
            ..QueueSettings::default()
        };
        let message = bad.policy().unwrap_err().explain(&flag);
        assert!(
            message.starts_with(&format!("--reviewer-tokens-file: {}: ", file.display())),
            "{message}"
        );
        assert!(!message.contains("secret123"), "{message}");
        let missing = QueueSettings {
            reviewers: Some(ReviewersSource::File(dir.path().join("none"))),
            ..QueueSettings::default()
        };
        assert!(
            missing
                .policy()
                .unwrap_err()
                .explain(&flag)
                .starts_with("--reviewer-tokens-file: ")
        );
    }
}
