//! Definitions and criteria (judge-contract §2), checked when built.

use std::sync::Arc;

use jevjudge_wire::{NoulQuestion, Question, Questions};

/// One required condition: a noul question, whether a yes is expected, and two thresholds
/// that leave an uncertain band between them.
#[derive(Debug, Clone, PartialEq)]
pub struct Criterion {
    id: String,
    question: NoulQuestion,
    expected: bool,
    fail_at_or_below: f64,
    pass_at_or_above: f64,
}

/// Why a criterion or definition could not be built (rules 1–5).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// Rule 1: a blank criterion id.
    #[error("criterion id is required")]
    CriterionIdRequired,
    /// Rule 3: thresholds that are not finite with 0 <= fail < pass <= 1.
    #[error("criterion `{id}`: require 0 <= fail < pass <= 1")]
    Thresholds {
        /// The criterion id.
        id: String,
    },
    /// Rule 4: a blank version.
    #[error("version is required")]
    VersionRequired,
    /// Rule 5: no criteria.
    #[error("criteria must not be empty")]
    CriteriaEmpty,
    /// Rule 5: a repeated criterion id (compared as exact strings).
    #[error("duplicate criterion id `{id}`")]
    DuplicateCriterionId {
        /// The repeated id.
        id: String,
    },
}

/// Rule 3: both finite, `0 <= fail`, `pass <= 1`, `fail < pass`.
pub fn thresholds_valid(fail_at_or_below: f64, pass_at_or_above: f64) -> bool {
    fail_at_or_below.is_finite()
        && pass_at_or_above.is_finite()
        && 0.0 <= fail_at_or_below
        && pass_at_or_above <= 1.0
        && fail_at_or_below < pass_at_or_above
}

impl Criterion {
    /// Builds a criterion; `expected` says whether a yes is the good outcome.
    pub fn new(
        id: impl Into<String>,
        question: NoulQuestion,
        expected: bool,
        fail_at_or_below: f64,
        pass_at_or_above: f64,
    ) -> Result<Criterion, DefinitionError> {
        let id = id.into();
        if id.trim().is_empty() {
            return Err(DefinitionError::CriterionIdRequired);
        }
        if !thresholds_valid(fail_at_or_below, pass_at_or_above) {
            return Err(DefinitionError::Thresholds { id });
        }
        Ok(Criterion {
            id,
            question,
            expected,
            fail_at_or_below,
            pass_at_or_above,
        })
    }

    /// The criterion id (also the question id on the wire).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The noul question sent to the judge model.
    pub fn question(&self) -> &NoulQuestion {
        &self.question
    }

    /// Whether a yes is expected (`false` for "does the draft contain an unsupported promise?").
    pub fn expected(&self) -> bool {
        self.expected
    }

    /// p′ at or below this fails.
    pub fn fail_at_or_below(&self) -> f64 {
        self.fail_at_or_below
    }

    /// p′ at or above this passes.
    pub fn pass_at_or_above(&self) -> f64 {
        self.pass_at_or_above
    }
}

/// A versioned, ordered, non-empty list of required criteria. Immutable once built (rule 6)
/// and cheap to clone.
#[derive(Debug, Clone, PartialEq)]
pub struct Definition {
    inner: Arc<Inner>,
}

#[derive(Debug, PartialEq)]
struct Inner {
    version: String,
    criteria: Vec<Criterion>,
    questions: Questions,
}

impl Definition {
    /// Builds a definition (rules 4 and 5), keeping the order of the criteria.
    pub fn new(
        version: impl Into<String>,
        criteria: Vec<Criterion>,
    ) -> Result<Definition, DefinitionError> {
        let version = version.into();
        if version.trim().is_empty() {
            return Err(DefinitionError::VersionRequired);
        }
        if criteria.is_empty() {
            return Err(DefinitionError::CriteriaEmpty);
        }
        let mut seen = std::collections::HashSet::with_capacity(criteria.len());
        for criterion in &criteria {
            if !seen.insert(criterion.id.as_str()) {
                return Err(DefinitionError::DuplicateCriterionId {
                    id: criterion.id.clone(),
                });
            }
        }
        let questions = criteria
            .iter()
            .map(|c| (c.id.clone(), Question::Noul(c.question.clone())))
            .collect::<Vec<_>>();
        Ok(Definition {
            inner: Arc::new(Inner {
                version,
                criteria,
                questions: Questions::new(questions),
            }),
        })
    }

    /// The version, for example `refund-answer-v1`.
    pub fn version(&self) -> &str {
        &self.inner.version
    }

    /// The criteria in definition order.
    pub fn criteria(&self) -> &[Criterion] {
        &self.inner.criteria
    }

    /// The criterion with this id.
    pub fn criterion(&self, id: &str) -> Option<&Criterion> {
        self.inner.criteria.iter().find(|c| c.id == id)
    }

    /// The questions one review sends: each criterion's noul question under its id, in order.
    pub fn questions(&self) -> &Questions {
        &self.inner.questions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn criterion(id: &str, fail: f64, pass: f64) -> Result<Criterion, DefinitionError> {
        Criterion::new(id, NoulQuestion::new("Is it so?"), true, fail, pass)
    }

    #[test]
    fn rule_1_blank_ids_are_rejected() {
        assert_eq!(
            criterion("", 0.2, 0.8),
            Err(DefinitionError::CriterionIdRequired)
        );
        assert_eq!(
            criterion(" \t", 0.2, 0.8),
            Err(DefinitionError::CriterionIdRequired)
        );
        assert_eq!(
            DefinitionError::CriterionIdRequired.to_string(),
            "criterion id is required"
        );
    }

    #[test]
    fn rule_3_threshold_examples() {
        assert!(criterion("c", 0.2, 0.8).is_ok());
        assert!(criterion("c", 0.0, 1.0).is_ok());
        for (fail, pass) in [
            (0.8, 0.2),
            (0.5, 0.5),
            (0.0, f64::NAN),
            (-0.1, 0.8),
            (0.2, 1.1),
            (0.0, f64::INFINITY),
            (f64::NEG_INFINITY, 0.5),
        ] {
            let error = criterion("c", fail, pass).unwrap_err();
            assert_eq!(error, DefinitionError::Thresholds { id: "c".into() });
            assert!(error.to_string().ends_with("require 0 <= fail < pass <= 1"));
        }
    }

    #[test]
    fn rules_4_and_5_version_emptiness_and_duplicates() {
        let c = criterion("c", 0.2, 0.8).unwrap();
        assert_eq!(
            Definition::new(" ", vec![c.clone()]),
            Err(DefinitionError::VersionRequired)
        );
        assert_eq!(
            Definition::new("v1", vec![]),
            Err(DefinitionError::CriteriaEmpty)
        );
        assert_eq!(
            Definition::new("v1", vec![c.clone(), c.clone()]),
            Err(DefinitionError::DuplicateCriterionId { id: "c".into() })
        );
        // Exact-string comparison: "c" and "C" are different ids.
        let upper = criterion("C", 0.2, 0.8).unwrap();
        assert!(Definition::new("v1", vec![c, upper]).is_ok());
    }

    #[test]
    fn rule_6_order_is_kept() {
        let ids = ["zeta", "alpha", "mid"];
        let definition = Definition::new(
            "v1",
            ids.iter()
                .map(|id| criterion(id, 0.2, 0.8).unwrap())
                .collect(),
        )
        .unwrap();
        let order: Vec<_> = definition.criteria().iter().map(Criterion::id).collect();
        assert_eq!(order, ids);
        let wire: Vec<_> = definition.questions().iter().map(|(id, _)| id).collect();
        assert_eq!(wire, ids);
    }
}
