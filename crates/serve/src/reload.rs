//! Reloading the definitions directory, and the reviewer list file, while serving
//! (`kill -HUP`).
//!
//! A reviewer list is read and checked whole too: a file that does not parse keeps the old
//! list (the log line names the entry, never a token). The new list is in use from the next
//! request; with a session secret only the reviewers whose token changed (or who left) are
//! signed out of the reviewer pages, without one everyone is.
//!
//! The new set is loaded and checked whole before anything changes; its questions are put in
//! the store (when there is one); only then is it swapped in. A request takes the set once
//! when it starts, so requests in flight finish on the old set and every later request sees
//! the new one. A bad set (a file that does not load, a repeated version, an empty directory)
//! or a store that cannot take the questions is refused with a log line, and the old set stays.

use std::path::Path;

use crate::{Definitions, ReviewerTokens, ServeState};

/// What a reload did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadOutcome {
    /// The new set is in use: its versions, in order.
    Reloaded {
        /// The versions now served.
        versions: Vec<String>,
    },
    /// The new set was refused and the old one kept; the reason names the file or the store.
    Refused {
        /// Why.
        reason: String,
    },
}

/// Loads `dir` and, if it is a good set, makes it the service's definitions (see the module
/// documentation). Logs the outcome either way.
pub async fn reload_definitions(state: &ServeState, dir: &Path) -> ReloadOutcome {
    let definitions = match Definitions::load_dir(dir) {
        Ok(definitions) => definitions,
        Err(error) => {
            let reason = error.to_string();
            tracing::warn!(%reason, "reload refused: the definitions did not load; the old set stays");
            return ReloadOutcome::Refused { reason };
        }
    };
    if let Some(log) = state.decision_log() {
        if let Err(error) = log.add_definitions(&definitions).await {
            let reason = format!("the store could not keep the new definitions: {error}");
            tracing::warn!(%reason, "reload refused; the old set stays");
            return ReloadOutcome::Refused { reason };
        }
    }
    let versions: Vec<String> = definitions
        .iter()
        .map(|definition| definition.version().to_owned())
        .collect();
    let old = state.replace_definitions(definitions);
    let old_versions: Vec<&str> = old.iter().map(|definition| definition.version()).collect();
    tracing::info!(definitions = ?versions, previous = ?old_versions, "definitions reloaded");
    ReloadOutcome::Reloaded { versions }
}

/// Reads the reviewer list file `path` and, if it parses, makes it the service's reviewers
/// (see the module documentation). Logs the outcome either way.
pub fn reload_reviewers(state: &ServeState, path: &Path) -> ReloadOutcome {
    let refused = |reason: String| {
        tracing::warn!(%reason, "reviewer reload refused; the old list stays");
        ReloadOutcome::Refused { reason }
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => return refused(format!("{}: {error}", path.display())),
    };
    let reviewers = match ReviewerTokens::parse_file(&text) {
        Ok(reviewers) => reviewers,
        Err(error) => return refused(format!("{}: {error}", path.display())),
    };
    let names: Vec<String> = reviewers.names().map(str::to_owned).collect();
    match state.replace_reviewers(reviewers) {
        Some(old) => {
            let previous: Vec<&str> = old.names().collect();
            tracing::info!(reviewers = ?names, previous = ?previous, "reviewers reloaded");
            ReloadOutcome::Reloaded { versions: names }
        }
        None => refused("the service has no review queue".to_owned()),
    }
}
