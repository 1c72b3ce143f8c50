//! The evidence for a shadow version: how a route's live version and one of its shadows
//! judged the same live traffic ([`Store::shadow_pairs`]), and — on the reviews people
//! labelled in the review queue — which of the two was right more often.
//!
//! Over every shadowed review: how many, how often the two agree (same overall status), the
//! flips by transition (`PASS->INCONCLUSIVE`, …) and each side's coverage (PASS or FAIL ÷
//! reviews). On the labelled reviews, the labels are read exactly as the labelled export reads
//! them ([`LabelledExport`]: a review left out of the export is left out here, counted by
//! reason), and the two sides are compared with [`crate::compare::compare`]: the figures
//! (accuracy, false PASS, false FAIL with their intervals, McNemar's exact test) are the cells
//! `jevjudge compare` shows for `eval` reports of both versions on the exported cases.

use std::{
    collections::{BTreeSet, HashMap},
    time::SystemTime,
};

use jevjudge_judge::{BackendKind, Status, Verdict};
use jevjudge_store::{
    Review, ShadowPair, Store, StoreError,
    export::{ExportError, LabelledExport, LeftOut},
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::{
    Report, Row,
    compare::{CompareDocument, CompareError, CompareOptions, Comparison, compare, transition},
    summarize,
};

/// The z of a two-sided 95 % interval.
const Z95: f64 = 1.959_963_984_540_054;

/// Why there is no evidence to show.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShadowError {
    /// The store holds no route of that name.
    #[error("no route `{0}`")]
    UnknownRoute(String),
    /// No version was named and the route has no shadow.
    #[error("route `{0}` has no shadow version; name the version to report on")]
    NoShadow(String),
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The labelled export rules refused a queued review.
    #[error(transparent)]
    Labels(#[from] ExportError),
    /// The labelled reviews could not be compared.
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// A stored review could not be read as a verdict.
    #[error("review {0} holds a verdict this version cannot read")]
    Verdict(String),
}

/// A rate with its 95 % Wilson interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    /// The part.
    pub count: u64,
    /// The whole.
    pub of: u64,
    /// `count ÷ of`; absent when `of` is 0.
    pub rate: Option<f64>,
    /// The 95 % Wilson interval of `rate`.
    pub ci: Option<[f64; 2]>,
}

impl Rate {
    fn of(count: u64, of: u64) -> Rate {
        Rate {
            count,
            of,
            rate: (of > 0).then(|| count as f64 / of as f64),
            ci: jevjudge_stats::wilson(count, of, Z95).map(|(low, high)| [low, high]),
        }
    }
}

/// A route's live version(s) against one shadow version.
#[derive(Debug, Clone)]
pub struct ShadowEvidence {
    /// The route.
    pub route: String,
    /// The shadow version reported on.
    pub shadow: String,
    /// The live versions that judged the shadowed reviews, in first-seen order (one unless
    /// the route was promoted within the window).
    pub live: Vec<String>,
    /// Shadowed reviews from this time on (`None`: all).
    pub since: Option<SystemTime>,
    /// Shadowed reviews seen.
    pub reviews: u64,
    /// Reviews both sides gave the same overall status.
    pub agreement: Rate,
    /// Changed statuses, live → shadow, in compare's order (PASS, FAIL, INCONCLUSIVE, ERROR
    /// for each side), only those that occur.
    pub transitions: Vec<(String, u64)>,
    /// The live side's PASS or FAIL verdicts ÷ reviews.
    pub live_coverage: Rate,
    /// The shadow side's PASS or FAIL verdicts ÷ reviews.
    pub shadow_coverage: Rate,
    /// Input tokens the shadow's reviews spent (0 when computed from the live answers).
    pub shadow_input_tokens: u64,
    /// Labelled shadowed reviews: live (base) vs shadow (candidate), `None` when no shadowed
    /// review has a label.
    pub labelled: Option<Comparison>,
    /// Shadowed reviews queued but left out of the labelled comparison, by the export's
    /// reasons.
    pub left_out: LeftOut,
}

/// The statuses in compare's transition order.
const STATUSES: [Status; 4] = [
    Status::Pass,
    Status::Fail,
    Status::Inconclusive,
    Status::Error,
];

/// The evidence for `version` (default: the route's first shadow) on `route`'s reviews
/// shadowed at or after `since`.
pub async fn shadow_evidence(
    store: &Store,
    route: &str,
    version: Option<&str>,
    since: Option<SystemTime>,
) -> Result<ShadowEvidence, ShadowError> {
    let held = store
        .route(route)
        .await?
        .ok_or_else(|| ShadowError::UnknownRoute(route.to_owned()))?;
    let shadow = match version {
        Some(version) => version.to_owned(),
        None => held
            .shadows
            .first()
            .cloned()
            .ok_or_else(|| ShadowError::NoShadow(route.to_owned()))?,
    };
    let pairs = store.shadow_pairs(route, &shadow, since).await?;
    let mut live: Vec<String> = Vec::new();
    for pair in &pairs {
        if !live.contains(&pair.live.definition_version) {
            live.push(pair.live.definition_version.clone());
        }
    }
    let mut counts: HashMap<(Status, Status), u64> = HashMap::new();
    let (mut agreed, mut live_decided, mut shadow_decided, mut tokens) = (0, 0, 0, 0);
    let decided = |status: Status| matches!(status, Status::Pass | Status::Fail);
    let mut verdicts = Vec::with_capacity(pairs.len());
    for pair in &pairs {
        let (before, after) = (verdict_of(&pair.live)?, verdict_of(&pair.shadow)?);
        if before.status == after.status {
            agreed += 1;
        } else {
            *counts.entry((before.status, after.status)).or_default() += 1;
        }
        live_decided += u64::from(decided(before.status));
        shadow_decided += u64::from(decided(after.status));
        tokens += after.usage.map_or(0, |usage| usage.input_tokens);
        verdicts.push((before, after));
    }
    let transitions = STATUSES
        .iter()
        .flat_map(|from| STATUSES.iter().map(move |to| (*from, *to)))
        .filter_map(|key| counts.get(&key).map(|n| (transition(key.0, key.1), *n)))
        .collect();
    let (labelled, left_out) =
        labelled_comparison(store, &pairs, &verdicts, &live, &shadow).await?;
    let seen = pairs.len() as u64;
    Ok(ShadowEvidence {
        route: route.to_owned(),
        shadow,
        live,
        since,
        reviews: seen,
        agreement: Rate::of(agreed, seen),
        transitions,
        live_coverage: Rate::of(live_decided, seen),
        shadow_coverage: Rate::of(shadow_decided, seen),
        shadow_input_tokens: tokens,
        labelled,
        left_out,
    })
}

/// A case the labelled export makes of a shadowed live review.
struct Label {
    expected_pass: bool,
    expected_findings: Vec<(String, bool)>,
    weight: f64,
}

/// The labelled pairs compared: the labels read by the labelled export's rules from each live
/// version's queued reviews; rows in live review order, scenario = the live version (as the
/// export names it).
async fn labelled_comparison(
    store: &Store,
    pairs: &[ShadowPair],
    verdicts: &[(Verdict, Verdict)],
    live_versions: &[String],
    shadow: &str,
) -> Result<(Option<Comparison>, LeftOut), ShadowError> {
    let shadowed: BTreeSet<String> = pairs
        .iter()
        .map(|pair| pair.live.review_id.to_string())
        .collect();
    let mut export = LabelledExport::new(HashMap::new());
    let mut labels: HashMap<String, Label> = HashMap::new();
    let mut refused: Option<ExportError> = None;
    for version in live_versions {
        store
            .export_labelled_of(Some(version), |labelled| {
                if !shadowed.contains(&labelled.review_id.to_string()) || refused.is_some() {
                    return Ok(());
                }
                match export.admit(labelled) {
                    Ok(Some(case)) => {
                        if let Some((id, label)) = label_of_line(&case.line) {
                            labels.insert(id, label);
                        }
                    }
                    Ok(None) => {}
                    Err(error) => refused = Some(error),
                }
                Ok(())
            })
            .await?;
    }
    if let Some(error) = refused {
        return Err(error.into());
    }
    let mut base = Vec::new();
    let mut candidate = Vec::new();
    for (pair, (before, after)) in pairs.iter().zip(verdicts) {
        let id = pair.live.review_id.to_string();
        let Some(label) = labels.get(&id) else {
            continue;
        };
        let scenario = pair.live.definition_version.clone();
        base.push(row(&scenario, &id, label, before.clone()));
        candidate.push(row(&scenario, &id, label, after.clone()));
    }
    if base.is_empty() {
        return Ok((None, export.left_out));
    }
    let live_version = live_versions.join(", ");
    let comparison = compare(
        &report(live_version, base),
        &report(shadow.to_owned(), candidate),
        CompareOptions::default(),
    )?;
    Ok((Some(comparison), export.left_out))
}

/// The id, label, labels and weight of a labelled export's cases line.
fn label_of_line(line: &str) -> Option<(String, Label)> {
    let case: Value = serde_json::from_str(line).ok()?;
    let id = case.get("id")?.as_str()?.to_owned();
    let expected_findings = case
        .get("expected_findings")?
        .as_object()?
        .iter()
        .map(|(id, flag)| Some((id.clone(), flag.as_bool()?)))
        .collect::<Option<Vec<_>>>()?;
    Some((
        id,
        Label {
            expected_pass: case.get("expected_pass")?.as_bool()?,
            expected_findings,
            weight: case.get("weight").and_then(Value::as_f64).unwrap_or(1.0),
        },
    ))
}

/// A row as `eval` writes it for this case and verdict (rule 40's pass and score).
fn row(scenario: &str, id: &str, label: &Label, verdict: Verdict) -> Row {
    let criteria = verdict.findings.len();
    let response = crate::respond(id.to_owned(), verdict, criteria);
    Row {
        scenario: scenario.to_owned(),
        id: id.to_owned(),
        expected_pass: label.expected_pass,
        pass: response.pass,
        score: response.score,
        verdict: response.verdict,
        expected_findings: Some(label.expected_findings.clone()),
        repeats: None,
        weight: label.weight,
    }
}

fn report(version: String, rows: Vec<Row>) -> Report {
    let (overall, scenarios) = summarize(&rows, None);
    Report {
        format: crate::REPORT_FORMAT.to_owned(),
        definition_version: version,
        backend: BackendKind::Injected,
        complete: true,
        wall_millis: None,
        stopped: None,
        overall,
        scenarios,
        rows,
    }
}

/// The verdict a stored review holds.
pub fn verdict_of(review: &Review) -> Result<Verdict, ShadowError> {
    let value = json!({
        "definition_version": review.definition_version,
        "status": review.status,
        "error": review.error,
        "detail": review.detail,
        "findings": review.findings,
        "model": review.model,
        "usage": review.usage,
        "elapsed_millis": review.elapsed_millis,
    });
    serde_json::from_value(value).map_err(|_| ShadowError::Verdict(review.review_id.to_string()))
}

/// The JSON document of `GET /v1/routes/{route}/shadow` and `jevjudge routes shadow --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShadowDocument {
    /// The route.
    pub route: String,
    /// The shadow version.
    pub shadow: String,
    /// The live versions that judged the shadowed reviews.
    pub live: Vec<String>,
    /// RFC 3339 UTC, when given.
    pub since: Option<String>,
    /// Shadowed reviews seen.
    pub reviews: u64,
    /// Same overall status on both sides.
    pub agreement: Rate,
    /// Changed statuses, live → shadow.
    #[serde(with = "crate::ordered_map")]
    pub transitions: Vec<(String, u64)>,
    /// Coverage of each side.
    pub coverage: Coverage,
    /// Input tokens the shadow spent.
    pub shadow_input_tokens: u64,
    /// The labelled comparison.
    pub labelled: LabelledDocument,
}

/// Coverage of each side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Coverage {
    /// The live side.
    pub live: Rate,
    /// The shadow side.
    pub shadow: Rate,
}

/// The labelled part of the document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelledDocument {
    /// Labelled shadowed reviews compared.
    pub cases: u64,
    /// Queued shadowed reviews left out, by reason.
    pub left_out: LeftOutDocument,
    /// `compare --json` of live (base) vs shadow (candidate) on them; absent with no case.
    pub compare: Option<CompareDocument>,
}

/// [`LeftOut`] as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LeftOutDocument {
    /// Retention erased the state before every copy was decided.
    pub expired: u64,
    /// A copy is not decided yet.
    pub undecided: u64,
    /// The reviewers disagreed.
    pub disagreement: u64,
    /// A reviewer could not tell.
    pub cant_tell: u64,
    /// The state text was not kept.
    pub state_not_kept: u64,
}

impl ShadowEvidence {
    /// The JSON document.
    pub fn to_document(&self) -> ShadowDocument {
        let l = self.left_out;
        ShadowDocument {
            route: self.route.clone(),
            shadow: self.shadow.clone(),
            live: self.live.clone(),
            since: self
                .since
                .map(|time| humantime::format_rfc3339_millis(time).to_string()),
            reviews: self.reviews,
            agreement: self.agreement,
            transitions: self.transitions.clone(),
            coverage: Coverage {
                live: self.live_coverage,
                shadow: self.shadow_coverage,
            },
            shadow_input_tokens: self.shadow_input_tokens,
            labelled: LabelledDocument {
                cases: self.labelled.as_ref().map_or(0, |c| c.pairs),
                left_out: LeftOutDocument {
                    expired: l.expired,
                    undecided: l.undecided,
                    disagreement: l.disagreement,
                    cant_tell: l.cant_tell,
                    state_not_kept: l.state_not_kept,
                },
                compare: self.labelled.as_ref().map(Comparison::to_document),
            },
        }
    }
}

impl ShadowEvidence {
    /// The report as Markdown: the shadowed reviews' agreement, flips and coverage, then on the
    /// labelled ones the risk cells of both sides (as `eval`'s Markdown report writes them)
    /// and McNemar's exact test.
    pub fn to_markdown(&self) -> String {
        use std::fmt::Write as _;
        let code = crate::markdown::code_span;
        let mut out = String::new();
        let live = if self.live.is_empty() {
            "(no shadowed review)".to_owned()
        } else {
            self.live
                .iter()
                .map(|v| code(v))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "## Shadow {} on route {}\n\nLive: {live}. {} shadowed{}; the shadow spent {} input \
             tokens.\n",
            code(&self.shadow),
            code(&self.route),
            crate::plural::count(self.reviews, "review"),
            self.since.map_or(String::new(), |since| format!(
                " since {}",
                humantime::format_rfc3339_millis(since)
            )),
            self.shadow_input_tokens,
        );
        let share = |rate: &Rate| {
            format!(
                "{}/{} = {}",
                rate.count,
                rate.of,
                crate::cells::rate(rate.rate, rate.ci, 4)
            )
        };
        let _ = writeln!(out, "| figure | live | shadow |\n|---|---|---|");
        let _ = writeln!(
            out,
            "| coverage | {} | {} |",
            share(&self.live_coverage),
            share(&self.shadow_coverage)
        );
        let _ = writeln!(
            out,
            "\nAgreement (same overall status): {}.\n",
            share(&self.agreement)
        );
        if self.transitions.is_empty() {
            let _ = writeln!(out, "No flips.");
        } else {
            let _ = writeln!(out, "| flip (live->shadow) | reviews |\n|---|---:|");
            for (transition, count) in &self.transitions {
                let _ = writeln!(out, "| {} | {count} |", code(transition));
            }
        }
        let l = self.left_out;
        let _ = writeln!(
            out,
            "\n### Labelled in the review queue\n\nLeft out: {} expired, {} undecided, {} \
             disagreement, {} can't tell, {} state not kept.\n",
            l.expired, l.undecided, l.disagreement, l.cant_tell, l.state_not_kept
        );
        let Some(comparison) = &self.labelled else {
            let _ = writeln!(out, "No shadowed review has a label yet.");
            return out;
        };
        let _ = writeln!(
            out,
            "{} labelled.\n\n| side | accuracy | coverage | decided accuracy | false PASS | \
             false FAIL |\n|---|---|---|---|---|---|",
            crate::plural::count(comparison.pairs, "review")
        );
        for (side, figures) in [
            ("live", &comparison.base),
            ("shadow", &comparison.candidate),
        ] {
            let cells = crate::cells::risk_cells(&figures.summary);
            let _ = writeln!(out, "| {side} | {} |", cells.join(" | "));
        }
        let p = comparison.mcnemar_p;
        let p = if p >= 1e-4 {
            format!("{p:.4}")
        } else {
            format!("{p:.1e}")
        };
        let _ = writeln!(
            out,
            "\nRegressions (correct live, not in the shadow) {}, fixes {}; McNemar's exact \
             p = {p}.",
            comparison.regressions, comparison.fixes
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_labelled_export_line_gives_its_id_label_labels_and_weight() {
        let line = r#"{"scenario":"v1","id":"019a","state":{"m":"x"},"expected_pass":false,"expected_findings":{"spam":true},"weight":2.0}"#;
        let (id, label) = label_of_line(line).unwrap();
        assert_eq!(id, "019a");
        assert!(!label.expected_pass);
        assert_eq!(label.expected_findings, [("spam".to_owned(), true)]);
        assert_eq!(label.weight, 2.0);
        assert!(label_of_line("not json").is_none());
    }

    #[test]
    fn a_rate_carries_its_wilson_interval_and_none_of_nothing() {
        let rate = Rate::of(125, 150);
        assert_eq!(rate.rate, Some(125.0 / 150.0));
        let [low, high] = rate.ci.unwrap();
        assert!((low - 0.765_534).abs() < 1e-6 && (high - 0.884_486).abs() < 1e-6);
        let none = Rate::of(0, 0);
        assert_eq!((none.rate, none.ci), (None, None));
    }

    #[test]
    fn a_stored_review_reads_back_as_its_verdict() {
        let review = Review {
            review_id: jevjudge_store::ReviewId::new(),
            received_at: "2026-12-07T00:00:00.000Z".to_owned(),
            definition_version: "v+cal.1".to_owned(),
            definition_digest: "sha256:d".to_owned(),
            state_digest: "sha256:s".to_owned(),
            reference: None,
            status: "PASS".to_owned(),
            error: "NONE".to_owned(),
            detail: None,
            findings: json!({"spam": {"status": "PASS", "yes_probability": 0.5,
                                      "expected_probability": 0.5}}),
            model: Some("jev-1.13.0".to_owned()),
            usage: None,
            elapsed_millis: 0.0,
            request_id: "r".to_owned(),
            backend: "replay".to_owned(),
            state_kept: false,
            state_erased_at: None,
            shadow_of: None,
            route: Some("sms-spam".to_owned()),
        };
        let verdict = verdict_of(&review).unwrap();
        assert_eq!(verdict.status, Status::Pass);
        assert_eq!(verdict.findings.get("spam").unwrap().yes_probability, 0.5);
        let broken = Review {
            status: "MAYBE".to_owned(),
            ..review
        };
        assert!(matches!(verdict_of(&broken), Err(ShadowError::Verdict(_))));
    }
}
