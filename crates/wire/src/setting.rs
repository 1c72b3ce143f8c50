//! The settings a caller chooses, as library errors name them. Each front end takes them its
//! own way — a flag on the command line (`--max-input-bytes`), a keyword in Python
//! (`max_input_bytes=`) — so an error that a setting causes or fixes says so through
//! [`Explain::explain`] with the front end's [`Namer`], and its `Display` names the setting
//! plainly (`the max input bytes setting`).

/// A setting an error can name: the input it read, the cap it ran into, the choice that fixes
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// The definition file.
    Definition,
    /// The labelled cases file.
    Cases,
    /// The `.jevl` recording answers are replayed from.
    Replay,
    /// The in-process fake backend.
    Fake,
    /// The model asked for.
    Model,
    /// The `.jevl` file successful exchanges are appended to.
    Record,
    /// The System One base URL.
    BaseUrl,
    /// The environment variable the API key is read from.
    ApiKeyEnv,
    /// The per-attempt timeout.
    Timeout,
    /// Allow plain `http://` to a host that is not loopback.
    AllowInsecureHttp,
    /// The longest line read.
    MaxLineBytes,
    /// The largest input read whole.
    MaxInputBytes,
    /// The most cases a run takes (above the default, rows are streamed).
    MaxCases,
    /// Reviews in flight at once.
    Concurrency,
    /// Reviews per case.
    Repeat,
    /// The price per million input tokens.
    PricePerMillionInput,
    /// The rows file of a run.
    Rows,
    /// The JSON report of a run.
    Report,
    /// Continue a run from its rows file.
    Resume,
    /// Replace a rows file that holds an earlier run.
    Overwrite,
    /// The directory an export is written to.
    Out,
    /// The definition version an export or listing is about.
    DefinitionVersion,
    /// A review's default budget (the service's).
    Budget,
    /// The largest budget a caller may ask for.
    MaxBudget,
    /// The decision log's store.
    Store,
    /// Keep each review's state text in the store.
    StoreState,
    /// The routes file.
    Routes,
    /// The statuses queued for people in full.
    QueueStatuses,
    /// The share of PASS reviews queued.
    SamplePass,
    /// The share of decided items given a second, blind review.
    SecondReview,
    /// The environment variable holding reviewers' tokens.
    ReviewerTokensEnv,
    /// The file holding reviewers' tokens.
    ReviewerTokensFile,
    /// The environment variable holding the key session cookies are signed with.
    SessionSecretEnv,
    /// How long a claimed item stays leased.
    Lease,
    /// The most items one reviewer may hold at once.
    MaxLeasesPerReviewer,
    /// Calibration's least precision of PASS decisions.
    MinPassPrecision,
    /// Calibration's least precision of FAIL decisions.
    MinFailPrecision,
    /// Calibration's largest share of INCONCLUSIVE decisions.
    MaxAbstain,
    /// Calibration's stability resamples.
    Resamples,
    /// Calibration's family-wise error bound.
    Delta,
    /// The production base rate.
    Prevalence,
    /// Where a calibrated definition is written.
    WriteDefinition,
    /// A calibrated definition's version.
    NewVersion,
}

impl Setting {
    /// The setting's key in snake case (`max_input_bytes`): a front end derives its own name
    /// from it (`--max-input-bytes`, `max_input_bytes=`).
    pub fn key(self) -> &'static str {
        match self {
            Setting::Definition => "definition",
            Setting::Cases => "cases",
            Setting::Replay => "replay",
            Setting::Fake => "fake",
            Setting::Model => "model",
            Setting::Record => "record",
            Setting::BaseUrl => "base_url",
            Setting::ApiKeyEnv => "api_key_env",
            Setting::Timeout => "timeout",
            Setting::AllowInsecureHttp => "allow_insecure_http",
            Setting::MaxLineBytes => "max_line_bytes",
            Setting::MaxInputBytes => "max_input_bytes",
            Setting::MaxCases => "max_cases",
            Setting::Concurrency => "concurrency",
            Setting::Repeat => "repeat",
            Setting::PricePerMillionInput => "price_per_million_input",
            Setting::Rows => "rows",
            Setting::Report => "report",
            Setting::Resume => "resume",
            Setting::Overwrite => "overwrite",
            Setting::Out => "out",
            Setting::DefinitionVersion => "definition_version",
            Setting::Budget => "budget",
            Setting::MaxBudget => "max_budget",
            Setting::Store => "store",
            Setting::StoreState => "store_state",
            Setting::Routes => "routes",
            Setting::QueueStatuses => "queue_statuses",
            Setting::SamplePass => "sample_pass",
            Setting::SecondReview => "second_review",
            Setting::ReviewerTokensEnv => "reviewer_tokens_env",
            Setting::ReviewerTokensFile => "reviewer_tokens_file",
            Setting::SessionSecretEnv => "session_secret_env",
            Setting::Lease => "lease",
            Setting::MaxLeasesPerReviewer => "max_leases_per_reviewer",
            Setting::MinPassPrecision => "min_pass_precision",
            Setting::MinFailPrecision => "min_fail_precision",
            Setting::MaxAbstain => "max_abstain",
            Setting::Resamples => "resamples",
            Setting::Delta => "delta",
            Setting::Prevalence => "prevalence",
            Setting::WriteDefinition => "write_definition",
            Setting::NewVersion => "new_version",
        }
    }
}

/// Names a setting the way a front end takes it.
pub type Namer<'a> = &'a dyn Fn(Setting) -> String;

/// The plain name of a setting, used by `Display`: `the max input bytes setting`.
pub fn plain(setting: Setting) -> String {
    format!("the {} setting", setting.key().replace('_', " "))
}

/// An error whose message names the settings that cause or fix it.
pub trait Explain: std::fmt::Display {
    /// The message, each setting named by `name`.
    fn explain(&self, name: Namer<'_>) -> String;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_snake_case_and_plain_names_read_as_words() {
        assert_eq!(
            Setting::PricePerMillionInput.key(),
            "price_per_million_input"
        );
        assert_eq!(plain(Setting::MaxInputBytes), "the max input bytes setting");
    }
}
