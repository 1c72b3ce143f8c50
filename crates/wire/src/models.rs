//! `GET /v1/models` (systemone-wire.md §11).

use serde::{Deserialize, Serialize};

/// The model aliases an account may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelList {
    /// The listed models.
    pub models: Vec<ModelInfo>,
}

/// One listed model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The alias, for example `jev-latest`.
    pub name: String,
    /// TypeSafe's description.
    #[serde(default)]
    pub description: Option<String>,
    /// Kept as text: the live API sends an ISO-8601 timestamp where its spec says a date.
    #[serde(default)]
    pub release_date: Option<String>,
}
