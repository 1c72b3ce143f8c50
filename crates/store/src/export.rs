//! The labelled-export rules: what the review queue's decisions make of one queued review — a
//! case carrying people's labels, or a reason it is left out — and the cases file line it
//! becomes. [`Store::export_labelled`](crate::Store::export_labelled) reads the reviews;
//! [`LabelledExport`] applies the rules to each in turn.
//!
//! A review is left out, and counted under the first reason that applies, when: retention
//! erased its state text before every copy was decided, closing the open copies (`expired`); a
//! queued copy is not decided yet (`undecided`); two reviewers answered a criterion differently
//! (`disagreement`, counted before can't-tell); a reviewer could not tell on a criterion
//! (`can't tell`); its state text was not kept (`state not kept`).
//!
//! One export holds one definition version ([`export_version`]): a store with reviews of
//! several versions exports only the one named.
//!
//! Each case carries `"weight": 1/π`, π being the chance its review was queued at all
//! ([`Inclusion`]): 1 for a status queued in full, `1/rate` for a PASS sampled at `rate`. A
//! review queued before π was recorded has weight 1 and is counted in
//! [`LabelledExport::unrecorded_inclusion`].

use std::collections::{BTreeMap, HashMap, HashSet};

use jevjudge_wire::record::Record;
use serde_json::Value;

use crate::{Findings, Inclusion, Labelled, ReviewId};

/// What the export rules make of one queued review's decisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Label {
    /// Every copy decided, every criterion answered, the reviewers agreeing: the labels.
    Case(BTreeMap<String, bool>),
    /// A copy is not decided yet.
    Undecided,
    /// Two reviewers gave different answers on a criterion (counted before can't-tell).
    Disagreement,
    /// A reviewer could not tell on a criterion.
    CantTell,
}

/// The export rules on a review's decisions (one per queued copy, in slot order).
pub fn label_of(decisions: &[Option<Findings>]) -> Label {
    if decisions.is_empty() || decisions.iter().any(Option::is_none) {
        return Label::Undecided;
    }
    let decided: Vec<&Findings> = decisions.iter().flatten().collect();
    let mut ids: Vec<&String> = decided.iter().flat_map(|d| d.keys()).collect();
    ids.sort();
    ids.dedup();
    let mut labels = BTreeMap::new();
    let mut cant_tell = false;
    for id in ids {
        let answers: Vec<Option<bool>> = decided
            .iter()
            .map(|d| d.get(id).copied().flatten())
            .collect();
        let known: Vec<bool> = answers.iter().flatten().copied().collect();
        if known.iter().any(|answer| *answer != known[0]) {
            return Label::Disagreement;
        }
        if known.len() < answers.len() {
            cant_tell = true;
        } else {
            labels.insert(id.clone(), known[0]);
        }
    }
    if cant_tell {
        Label::CantTell
    } else {
        Label::Case(labels)
    }
}

/// `expected_pass`: every criterion's label equals the definition's expected flag; `None` when
/// the labels and the flags name different criteria.
pub fn expected_pass(
    labels: &BTreeMap<String, bool>,
    expected: &BTreeMap<String, bool>,
) -> Option<bool> {
    if labels.len() != expected.len() {
        return None;
    }
    let mut pass = true;
    for (id, flag) in expected {
        pass &= *labels.get(id)? == *flag;
    }
    Some(pass)
}

/// Why queued reviews stay out of a labelled export, counted. Shown in the rules' order:
/// `left out: 0 expired, 1 undecided, 2 disagreement, 1 can't tell, 1 state not kept`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LeftOut {
    /// Retention erased the state text before every copy was decided (the open copies were
    /// closed as expired).
    pub expired: u64,
    /// A queued copy is not decided yet.
    pub undecided: u64,
    /// Two reviewers answered a criterion differently.
    pub disagreement: u64,
    /// A reviewer could not tell on a criterion.
    pub cant_tell: u64,
    /// The review's state text was not kept.
    pub state_not_kept: u64,
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "left out: {} expired, {} undecided, {} disagreement, {} can't tell, {} state not kept",
            self.expired, self.undecided, self.disagreement, self.cant_tell, self.state_not_kept
        )
    }
}

/// The bootstrap resamples and seed of an agreement interval (fixed: the figure is
/// reproducible).
const AGREEMENT_RESAMPLES: u32 = 2000;
const AGREEMENT_SEED: u64 = 20;

/// Agreement of the two reviewers of items decided twice, on one criterion of one definition
/// version. The two slots are exchangeable (whoever claims first fills slot 1), so the
/// chance-corrected figure is Scott's π (Fleiss' κ for two raters), not Cohen's κ.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AgreementFigure {
    /// The definition version.
    pub definition_version: String,
    /// The criterion id.
    pub criterion: String,
    /// Items decided twice where both reviewers answered this criterion.
    pub items: u64,
    /// The share of those where both gave the same answer; `None` without items.
    pub observed: Option<f64>,
    /// Scott's π; `None` when undefined.
    pub scott_pi: Option<f64>,
    /// Its 95 % bootstrap interval; `None` below the minimum item count
    /// ([`jevjudge_stats::MIN_AGREEMENT_ITEMS`]).
    pub scott_pi_ci: Option<[f64; 2]>,
    /// Decisions of the items decided twice (two per item, can't-tells included).
    pub decisions: u64,
    /// Of those, the decisions that could not tell on this criterion.
    pub cant_tell: u64,
    /// cant_tell ÷ those decisions; `None` without decisions.
    pub cant_tell_rate: Option<f64>,
}

impl std::fmt::Display for AgreementFigure {
    /// `agreement sms-v1/spam: 42 items decided twice, observed 0.905, Scott's π 0.801
    /// [0.620, 0.930], can't tell 3/90 = 0.033`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let figure = |x: Option<f64>| x.map_or_else(|| "n/a".to_owned(), |x| format!("{x:.3}"));
        let ci = self.scott_pi_ci.map_or_else(
            || {
                format!(
                    " (no interval below {} items)",
                    jevjudge_stats::MIN_AGREEMENT_ITEMS
                )
            },
            |[low, high]| format!(" [{low:.3}, {high:.3}]"),
        );
        write!(
            f,
            "agreement {}/{}: {} items decided twice, observed {}, Scott's π {}{ci}, can't tell {}/{} = {}",
            self.definition_version,
            self.criterion,
            self.items,
            figure(self.observed),
            figure(self.scott_pi),
            self.cant_tell,
            self.decisions,
            figure(self.cant_tell_rate),
        )
    }
}

/// Agreement tables by (definition version, criterion), with can't-tell counts.
#[derive(Debug, Default, Clone)]
struct AgreementTally {
    tables: BTreeMap<(String, String), (jevjudge_stats::AgreementTable, u64, u64)>,
}

impl AgreementTally {
    /// Counts a review's decisions when two copies are decided.
    fn add(&mut self, version: &str, decisions: &[Option<Findings>]) {
        let [Some(first), Some(second), ..] = decisions else {
            return;
        };
        let mut ids: Vec<&String> = first.keys().chain(second.keys()).collect();
        ids.sort();
        ids.dedup();
        for id in ids {
            let entry = self
                .tables
                .entry((version.to_owned(), id.clone()))
                .or_default();
            let answers = [first, second].map(|d| d.get(id).copied().flatten());
            entry.2 += 2;
            entry.1 += answers.iter().filter(|a| a.is_none()).count() as u64;
            if let [Some(a), Some(b)] = answers {
                entry.0.add(a, b);
            }
        }
    }

    fn figures(&self) -> Vec<AgreementFigure> {
        self.tables
            .iter()
            .map(
                |((version, criterion), (table, cant_tell, decisions))| AgreementFigure {
                    definition_version: version.clone(),
                    criterion: criterion.clone(),
                    items: table.total(),
                    observed: table.observed(),
                    scott_pi: table.scott_pi(),
                    scott_pi_ci: table
                        .scott_pi_interval(AGREEMENT_RESAMPLES, AGREEMENT_SEED)
                        .map(|(low, high)| [low, high]),
                    decisions: *decisions,
                    cant_tell: *cant_tell,
                    cant_tell_rate: (*decisions > 0).then(|| *cant_tell as f64 / *decisions as f64),
                },
            )
            .collect()
    }
}

/// Why a labelled export cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// No expected flags for a version: neither stored nor given by the caller.
    #[error(
        "the store keeps no expected flags for definition version {version} (its reviews were \
         logged before the review queue)"
    )]
    NoExpectedFlags {
        /// The definition version.
        version: String,
    },
    /// A review's decisions answer other criteria than the version's expected flags name.
    #[error(
        "the decisions of review {review_id} answer criteria {labels:?}, but definition version \
         {version} has {expected:?}"
    )]
    CriteriaDiffer {
        /// The review.
        review_id: ReviewId,
        /// The definition version.
        version: String,
        /// The criteria the decisions answer.
        labels: Vec<String>,
        /// The criteria of the expected flags.
        expected: Vec<String>,
    },
}

/// Why no definition version can be chosen for a labelled export.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// The store holds reviews of several versions and none was named.
    #[error(
        "the store holds reviews of {} definition versions and a labelled export takes one: {}",
        versions.len(),
        list_versions(versions)
    )]
    Several {
        /// Each version with its count of reviews.
        versions: Vec<(String, u64)>,
    },
    /// The version named has no reviews in the store.
    #[error(
        "the store holds no reviews of definition version {version}; it holds {}",
        if versions.is_empty() { "none".to_owned() } else { list_versions(versions) }
    )]
    Unknown {
        /// The version named.
        version: String,
        /// Each version the store holds, with its count of reviews.
        versions: Vec<(String, u64)>,
    },
}

/// `v1 (120 reviews), v2 (1 review)`.
fn list_versions(versions: &[(String, u64)]) -> String {
    versions
        .iter()
        .map(|(version, count)| {
            let noun = if *count == 1 { "review" } else { "reviews" };
            format!("{version} ({count} {noun})")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The definition version a labelled export holds, from the versions the store holds reviews
/// of (of any status, with their counts: [`Store::review_versions`](crate::Store::review_versions))
/// and the one named, if any: the named one when the store holds it; else the only one
/// (`None` for an empty store); several and none named is an error listing them.
pub fn export_version(
    versions: &[(String, u64)],
    named: Option<&str>,
) -> Result<Option<String>, VersionError> {
    match named {
        Some(named) if versions.iter().any(|(version, _)| version == named) => {
            Ok(Some(named.to_owned()))
        }
        Some(named) => Err(VersionError::Unknown {
            version: named.to_owned(),
            versions: versions.to_vec(),
        }),
        None => match versions {
            [] => Ok(None),
            [(only, _)] => Ok(Some(only.clone())),
            several => Err(VersionError::Several {
                versions: several.to_vec(),
            }),
        },
    }
}

/// One exported case: a line of the cases file and, the first time its record appears, the
/// record for the record file.
#[derive(Debug, Clone)]
pub struct LabelledCase {
    /// The cases file line (state form, `id` = the review id), ending in a newline.
    pub line: String,
    /// The review's replayable record, unless an earlier case already carried it.
    pub record: Option<Record>,
}

/// The export rules applied to queued reviews one at a time, with the left-out counts.
#[derive(Debug, Default)]
pub struct LabelledExport {
    flags: HashMap<String, BTreeMap<String, bool>>,
    records: HashSet<String>,
    /// The reviews left out so far, by reason.
    pub left_out: LeftOut,
    /// The cases exported so far.
    pub cases: u64,
    agreement: AgreementTally,
    /// The cases exported so far whose review was queued before its inclusion probability
    /// was recorded (weight 1; a PASS sampled then stands for more reviews than that).
    pub unrecorded_inclusion: u64,
}

impl LabelledExport {
    /// The rules, with expected flags by definition version that take precedence over the
    /// store's own (for versions logged before the store kept them).
    pub fn new(flags: HashMap<String, BTreeMap<String, bool>>) -> LabelledExport {
        LabelledExport {
            flags,
            ..LabelledExport::default()
        }
    }

    /// The records exported so far (each record once).
    pub fn records(&self) -> usize {
        self.records.len()
    }

    /// Agreement of the two reviewers per definition version and criterion, over the reviews
    /// seen so far that were decided twice (exported or left out).
    pub fn agreement(&self) -> Vec<AgreementFigure> {
        self.agreement.figures()
    }

    /// The case `labelled` becomes, or `None` when it is left out (and counted).
    pub fn admit(&mut self, labelled: Labelled) -> Result<Option<LabelledCase>, ExportError> {
        self.agreement
            .add(&labelled.definition_version, &labelled.decisions);
        if labelled.expired {
            return Ok(self.leave_out(|l| &mut l.expired));
        }
        let labels = match label_of(&labelled.decisions) {
            Label::Undecided => return Ok(self.leave_out(|l| &mut l.undecided)),
            Label::Disagreement => return Ok(self.leave_out(|l| &mut l.disagreement)),
            Label::CantTell => return Ok(self.leave_out(|l| &mut l.cant_tell)),
            Label::Case(labels) => labels,
        };
        let (Some(state), Some(record)) = (labelled.state, labelled.record) else {
            return Ok(self.leave_out(|l| &mut l.state_not_kept));
        };
        let version = labelled.definition_version;
        let flags = match (self.flags.get(&version), &labelled.expected) {
            (Some(flags), _) | (None, Some(flags)) => flags,
            (None, None) => return Err(ExportError::NoExpectedFlags { version }),
        };
        let Some(pass) = expected_pass(&labels, flags) else {
            return Err(ExportError::CriteriaDiffer {
                review_id: labelled.review_id,
                labels: labels.keys().cloned().collect(),
                expected: flags.keys().cloned().collect(),
                version,
            });
        };
        let inclusion = labelled.inclusion.unwrap_or_else(|| {
            self.unrecorded_inclusion += 1;
            Inclusion::FULL
        });
        let case = serde_json::json!({
            "scenario": version,
            "id": labelled.review_id.to_string(),
            "state": state,
            "expected_pass": pass,
            "expected_findings": labels,
            "weight": inclusion.weight(),
        });
        self.cases += 1;
        let record = self.records.insert(record.id.clone()).then_some(record);
        Ok(Some(LabelledCase {
            line: Value::to_string(&case) + "\n",
            record,
        }))
    }

    fn leave_out(&mut self, reason: impl FnOnce(&mut LeftOut) -> &mut u64) -> Option<LabelledCase> {
        *reason(&mut self.left_out) += 1;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Items decided twice count toward agreement whether exported or left out; can't-tell
    // answers are counted beside it, per definition version and criterion.
    #[test]
    fn agreement_is_scotts_pi_per_version_and_criterion_with_cant_tell_beside_it() {
        let mut tally = AgreementTally::default();
        let yes = findings(&[("spam", Some(true))]);
        let no = findings(&[("spam", Some(false))]);
        let unsure = findings(&[("spam", None)]);
        // 20 both yes, 5 yes/no, 10 no/yes, 15 both no, and 2 with a can't-tell.
        for (n, pair) in [
            (20, [yes.clone(), yes.clone()]),
            (5, [yes.clone(), no.clone()]),
            (10, [no.clone(), yes.clone()]),
            (15, [no.clone(), no.clone()]),
            (2, [unsure.clone(), yes.clone()]),
        ] {
            for _ in 0..n {
                tally.add("v1", &pair);
            }
        }
        tally.add("v1", std::slice::from_ref(&yes)); // decided once: not counted
        tally.add("v2", &[yes.clone(), yes]);
        let figures = tally.figures();
        assert_eq!(figures.len(), 2);
        let v1 = &figures[0];
        assert_eq!((v1.definition_version.as_str(), v1.items), ("v1", 50));
        // statsmodels fleiss_kappa of this table: 0.3939393939393937.
        assert!((v1.scott_pi.unwrap() - 0.393_939_393_939_393_7).abs() < 1e-12);
        assert!(v1.scott_pi_ci.is_some());
        assert_eq!(v1.cant_tell, 2);
        assert_eq!(v1.cant_tell_rate, Some(2.0 / 104.0));
        assert!(v1.to_string().contains("can't tell 2/104 = 0.019"), "{v1}");
        // One item: π undefined, and no interval below the minimum.
        assert_eq!((figures[1].items, figures[1].scott_pi_ci), (1, None));
    }

    fn findings(pairs: &[(&str, Option<bool>)]) -> Option<Findings> {
        Some(pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
    }

    #[test]
    fn a_single_decision_with_every_answer_is_a_case() {
        let label = label_of(&[findings(&[("a", Some(true)), ("b", Some(false))])]);
        assert_eq!(
            label,
            Label::Case(BTreeMap::from([("a".into(), true), ("b".into(), false)]))
        );
    }

    #[test]
    fn undecided_copies_are_left_out() {
        assert_eq!(label_of(&[]), Label::Undecided);
        assert_eq!(
            label_of(&[findings(&[("a", Some(true))]), None]),
            Label::Undecided
        );
    }

    #[test]
    fn two_reviewers_count_only_where_both_agree() {
        let yes = findings(&[("a", Some(true)), ("b", Some(true))]);
        assert_eq!(
            label_of(&[yes.clone(), yes.clone()]),
            Label::Case(BTreeMap::from([("a".into(), true), ("b".into(), true)]))
        );
        let split = findings(&[("a", Some(true)), ("b", Some(false))]);
        assert_eq!(label_of(&[yes.clone(), split]), Label::Disagreement);
        // A disagreement counts before a can't-tell.
        let unsure = findings(&[("a", None), ("b", Some(false))]);
        assert_eq!(label_of(&[yes, unsure.clone()]), Label::Disagreement);
        assert_eq!(label_of(&[unsure]), Label::CantTell);
    }

    #[test]
    fn expected_pass_needs_every_criterion_as_expected() {
        let expected = BTreeMap::from([("spam".into(), true), ("rude".into(), false)]);
        let labels = |spam, rude| BTreeMap::from([("spam".into(), spam), ("rude".into(), rude)]);
        assert_eq!(expected_pass(&labels(true, false), &expected), Some(true));
        assert_eq!(expected_pass(&labels(true, true), &expected), Some(false));
        assert_eq!(expected_pass(&labels(false, false), &expected), Some(false));
        let other = BTreeMap::from([("spam".into(), true)]);
        assert_eq!(expected_pass(&other, &expected), None);
    }

    fn record(id: &str) -> Record {
        jevjudge_wire::record::parse_line(&format!(
            r#"{{"v":1,"id":"{id}","ts":"2026-01-01T00:00:00Z","model":"jev-1","request":{{"state":"s","questions":{{}}}},"answers":{{}},"usage":null}}"#
        ))
        .unwrap()
    }

    fn labelled(decisions: Vec<Option<Findings>>, kept: bool) -> Labelled {
        Labelled {
            expired: false,
            inclusion: Some(Inclusion::FULL),
            review_id: ReviewId::new(),
            definition_version: "v1".into(),
            expected: Some(BTreeMap::from([("spam".into(), true)])),
            criteria: None,
            state: kept.then(|| Value::from("a message")),
            record: kept.then(|| record(&format!("sha256:{}", "0".repeat(64)))),
            decisions,
        }
    }

    #[test]
    fn left_out_reviews_are_counted_in_the_rules_order() {
        let mut export = LabelledExport::default();
        let yes = findings(&[("spam", Some(true))]);
        let no = findings(&[("spam", Some(false))]);
        let unsure = findings(&[("spam", None)]);
        let left = [
            labelled(vec![yes.clone(), None], true),
            labelled(vec![yes.clone(), no.clone()], true),
            labelled(vec![yes.clone(), no], true),
            labelled(vec![unsure], true),
            labelled(vec![yes.clone()], false),
            // One copy decided, the other closed when retention erased the state: expired,
            // not undecided.
            Labelled {
                expired: true,
                ..labelled(vec![yes.clone(), None], false)
            },
        ];
        for review in left {
            assert!(export.admit(review).unwrap().is_none());
        }
        assert_eq!(
            export.left_out.to_string(),
            "left out: 1 expired, 1 undecided, 2 disagreement, 1 can't tell, 1 state not kept"
        );
        // Two cases sharing one record: the record is exported once.
        let first = export.admit(labelled(vec![yes.clone()], true)).unwrap();
        let second = export.admit(labelled(vec![yes], true)).unwrap();
        let (first, second) = (first.unwrap(), second.unwrap());
        assert!(first.record.is_some() && second.record.is_none());
        let line: Value = serde_json::from_str(&first.line).unwrap();
        assert_eq!(line["expected_pass"], true);
        assert_eq!(line["expected_findings"]["spam"], true);
        assert_eq!(line["state"], "a message");
        assert_eq!((export.cases, export.records()), (2, 1));
    }

    #[test]
    fn one_version_is_exported_and_several_unnamed_are_listed_with_counts() {
        let versions = vec![("v1".to_owned(), 120), ("v2".to_owned(), 1)];
        assert_eq!(
            export_version(&versions, Some("v2")).unwrap(),
            Some("v2".into())
        );
        let several = export_version(&versions, None).unwrap_err();
        assert_eq!(
            several.to_string(),
            "the store holds reviews of 2 definition versions and a labelled export takes \
             one: v1 (120 reviews), v2 (1 review)"
        );
        assert_eq!(
            export_version(&versions, Some("v3"))
                .unwrap_err()
                .to_string(),
            "the store holds no reviews of definition version v3; it holds v1 (120 reviews), \
             v2 (1 review)"
        );
        assert_eq!(
            export_version(&versions[..1], None).unwrap(),
            Some("v1".into())
        );
        assert_eq!(export_version(&[], None).unwrap(), None);
        assert!(matches!(
            export_version(&[], Some("v1")),
            Err(VersionError::Unknown { .. })
        ));
    }

    #[test]
    fn each_case_weighs_one_over_its_inclusion_probability() {
        let yes = findings(&[("spam", Some(true))]);
        let mut export = LabelledExport::default();
        let weight = |export: &mut LabelledExport, inclusion| {
            let case = export
                .admit(Labelled {
                    inclusion,
                    ..labelled(vec![yes.clone()], true)
                })
                .unwrap()
                .unwrap();
            serde_json::from_str::<Value>(&case.line).unwrap()["weight"].clone()
        };
        assert_eq!(weight(&mut export, Some(Inclusion::FULL)), 1.0);
        let sampled = Inclusion::new(0.3).unwrap();
        assert_eq!(weight(&mut export, Some(sampled)), 1.0 / 0.3);
        assert_eq!(export.unrecorded_inclusion, 0);
        // Queued before π was recorded: weight 1, counted.
        assert_eq!(weight(&mut export, None), 1.0);
        assert_eq!((export.cases, export.unrecorded_inclusion), (3, 1));
    }

    #[test]
    fn flags_given_by_the_caller_win_and_missing_flags_refuse() {
        let yes = findings(&[("spam", Some(true))]);
        let mut given = LabelledExport::new(HashMap::from([(
            "v1".to_owned(),
            BTreeMap::from([("spam".to_owned(), false)]),
        )]));
        let case = given.admit(labelled(vec![yes.clone()], true)).unwrap();
        let line: Value = serde_json::from_str(&case.unwrap().line).unwrap();
        assert_eq!(
            line["expected_pass"], false,
            "the given flag expects no spam"
        );
        let mut unflagged = labelled(vec![yes.clone()], true);
        unflagged.expected = None;
        assert_eq!(
            LabelledExport::default().admit(unflagged).unwrap_err(),
            ExportError::NoExpectedFlags {
                version: "v1".into()
            }
        );
        let mut other = labelled(vec![yes], true);
        other.expected = Some(BTreeMap::from([("rude".into(), false)]));
        assert!(matches!(
            LabelledExport::default().admit(other).unwrap_err(),
            ExportError::CriteriaDiffer { .. }
        ));
    }
}
