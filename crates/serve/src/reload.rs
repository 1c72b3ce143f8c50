//! Reloading the definitions directory while serving (`kill -HUP`, issue 13).
//!
//! The new set is loaded and checked whole before anything changes; its questions are put in
//! the store (when there is one); only then is it swapped in. A request takes the set once
//! when it starts, so requests in flight finish on the old set and every later request sees
//! the new one. A bad set (a file that does not load, a repeated version, an empty directory)
//! or a store that cannot take the questions is refused with a log line, and the old set stays.

use std::path::Path;

use crate::{Definitions, ServeState};

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
