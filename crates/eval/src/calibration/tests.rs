//! Unit tests of the calibration module: labels, refusals, recommendations, versions and the
//! document.

use super::*;
use crate::{Report, Row, test_support};
use jevjudge_judge::{Criterion, Definition, DefinitionFormat, Finding, Findings, Status, Verdict};
use jevjudge_stats::{Point, Thresholds};
use std::path::Path;
use std::time::Duration;

fn row(id: &str, expected_pass: bool, findings: &[(&str, f64, bool)]) -> Row {
    let findings = Findings::new(
        findings
            .iter()
            .map(|(criterion, p, expected)| {
                (
                    (*criterion).to_owned(),
                    Finding {
                        status: Status::Inconclusive,
                        yes_probability: *p,
                        expected_probability: if *expected { *p } else { 1.0 - *p },
                    },
                )
            })
            .collect(),
    );
    let verdict = Verdict {
        elapsed: Duration::from_millis(1),
        ..test_support::verdict("v1", Status::Inconclusive, findings)
    };
    test_support::row("s", id, expected_pass, verdict)
}

fn report(rows: Vec<Row>) -> Report {
    test_support::report("v1", rows)
}

/// `count` rows `{prefix}0`, `{prefix}1`, … expected to pass or not, each with one finding:
/// criterion `x` (expected to hold) at `p`.
fn x_rows(prefix: &str, count: usize, expected_pass: bool, p: f64) -> impl Iterator<Item = Row> {
    (0..count).map(move |i| row(&format!("{prefix}{i}"), expected_pass, &[("x", p, true)]))
}

/// The calibration of `report`'s inferred criteria with the default settings.
fn calibrate_default(report: &Report) -> Calibration {
    calibrate(
        report,
        &infer_criteria(report).unwrap(),
        &CalibrationSettings::default(),
    )
}

#[test]
fn one_criterion_labels_come_from_expected_pass_with_expected_taken_into_account() {
    let rows = vec![
        row("a", true, &[("risk", 0.1, false)]),
        row("b", false, &[("risk", 0.9, false)]),
    ];
    let specs = infer_criteria(&report(rows.clone())).unwrap();
    assert_eq!(specs.len(), 1);
    assert!(!specs[0].expected);
    let points = extract(&report(rows), &specs);
    // expected = false: a draft that should pass is one where the risk does NOT hold.
    let holds: Vec<bool> = points[0].points.iter().map(|p| p.holds).collect();
    assert_eq!(holds, [false, true]);
    assert_eq!(points[0].from_expected_pass, 2);
    // p′ = 1 − p and the expectation label flips back.
    let expectation = points[0].expectation_points();
    assert_eq!(expectation[0], Point::new(1.0 - 0.1, true));
}

#[test]
fn expected_findings_win_and_multi_criterion_rows_without_labels_are_left_out() {
    let mut labelled = row("a", true, &[("x", 0.8, true), ("y", 0.3, true)]);
    labelled.expected_findings = Some(vec![("x".into(), false)]);
    let mut error = row("e", true, &[]);
    error.verdict.status = Status::Error;
    let report = report(vec![labelled, error]);
    let specs = infer_criteria(&report).unwrap();
    let points = extract(&report, &specs);
    assert_eq!(points[0].points.len(), 1);
    assert!(!points[0].points[0].holds);
    assert_eq!(points[0].from_expected_findings, 1);
    assert_eq!(points[0].without_finding, 1);
    assert_eq!(points[1].points.len(), 0);
    assert_eq!(points[1].unlabelled, 1);
}

#[test]
fn inferring_expected_needs_a_telling_probability() {
    let all_half = report(vec![row("a", true, &[("x", 0.5, true)])]);
    assert!(matches!(
        infer_criteria(&all_half),
        Err(CalibrationError::ExpectedUnknown { .. })
    ));
    let mixed = report(vec![
        row("a", true, &[("x", 0.2, true)]),
        row("b", true, &[("x", 0.2, false)]),
    ]);
    assert!(infer_criteria(&mixed).is_err());
}

#[test]
fn check_criteria_names_the_row_and_the_criterion() {
    let report = report(vec![row("a", true, &[("x", 0.2, false)])]);
    let spec = CriterionSpec {
        id: "x".into(),
        expected: true,
        thresholds: None,
    };
    let error = check_criteria(&report, std::slice::from_ref(&spec)).unwrap_err();
    assert!(
        error.to_string().contains("row `a`, criterion `x`"),
        "{error}"
    );
    let other = CriterionSpec {
        id: "z".into(),
        ..spec
    };
    let error = check_criteria(&report, &[other]).unwrap_err();
    assert!(error.to_string().contains("criterion `x`"), "{error}");
}

#[test]
fn thin_evidence_is_refused_with_a_reason() {
    // 5 positives: too few.
    let rows = x_rows("y", 5, true, 0.9).chain(x_rows("n", 30, false, 0.1));
    let calibration = calibrate_default(&report(rows.collect()));
    let refusal = calibration.criteria[0].outcome.clone().unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "too few cases where the condition holds: 5 (at least 10 of each class are needed)"
    );
    let document = calibration.to_document();
    assert!(document.criteria[0].1.recommendation.is_none());
    // Probabilities that do not rank: AUROC 0.5.
    let rows: Vec<Row> = (0..40)
        .map(|i| row(&format!("r{i}"), i % 2 == 0, &[("x", 0.7, true)]))
        .collect();
    let calibration = calibrate_default(&report(rows));
    assert!(matches!(
        calibration.criteria[0].outcome,
        Err(Refusal::WeakRanking { auroc: Some(a), .. }) if a == 0.5
    ));
}

#[test]
fn a_clear_signal_gets_a_recommendation_that_applies_to_the_definition() {
    let mut rows: Vec<Row> = x_rows("y", 60, true, 0.95)
        .chain(x_rows("n", 60, false, 0.05))
        .collect();
    rows.extend((0..4).map(|i| row(&format!("m{i}"), i % 2 == 0, &[("x", 0.5, true)])));
    let calibration = calibrate_default(&report(rows));
    let recommendation = calibration.criteria[0].outcome.clone().unwrap();
    assert_eq!(
        recommendation.certificate.thresholds,
        Thresholds::new(0.05, 0.95).unwrap()
    );
    // The stability figure counts each distinct in-bag row once: about 38 of the 60 of a class,
    // fewer than the 54 decisions a PASS test at 0.9 needs, so no resample certifies a pair
    // (counting duplicates, most would).
    assert_eq!(recommendation.stability.resamples, RESAMPLES);
    assert_eq!(recommendation.stability.certified, 0);
    assert!(recommendation.certificate.pass_p_value <= DELTA / 2.0);
    let definition = Definition::new(
        "v1",
        vec![
            Criterion::new(
                "x",
                jevjudge_wire::NoulQuestion::new("Is it so?"),
                true,
                0.2,
                0.8,
            )
            .unwrap(),
        ],
    )
    .unwrap();
    let calibrated = calibration.apply(&definition, "v1+cal.1").unwrap();
    assert_eq!(calibrated.version(), "v1+cal.1");
    assert_eq!(calibrated.criteria()[0].fail_at_or_below(), 0.05);
    assert_eq!(calibrated.criteria()[0].pass_at_or_above(), 0.95);
}

#[test]
fn versions() {
    assert_eq!(calibrated_version("v", Some("v+cal.1")), "v+cal.2");
    assert_eq!(calibrated_version("v+cal.x", None), "v+cal.x+cal.1");
    assert_eq!(calibrated_version("v+cal.2", Some("v+cal.1")), "v+cal.3");
}

// cli-and-formats.md §1.5: one metrics type serves the calibration and the document; the
// document's criterion keys stay those of the spec, in its order, without the equal-mass table.
#[test]
fn the_document_writes_the_metrics_fields_in_the_spec_order_and_reads_them_back() {
    let rows = x_rows("y", 12, true, 0.8).chain(x_rows("n", 12, false, 0.3));
    let calibration = calibrate_default(&report(rows.collect()));
    let document = calibration.to_document();
    let json = serde_json::to_value(&document).unwrap();
    assert_eq!(
        crate::test_support::keys(&json["criteria"]["x"]).join(" "),
        "n positives brier brier_ci log_loss auroc auroc_ci ece_equal_width ece_ci ece_expected ece_equal_mass ece_equal_mass_bins mce reliability recommendation refusal"
    );
    assert_eq!(
        json["criteria"]["x"]["reliability"][0],
        serde_json::json!({
            "lower": 0.3,
            "upper": 0.4,
            "count": 12,
            "mean_probability": 0.3,
            "observed_rate": 0.0
        })
    );
    let text = serde_json::to_string_pretty(&document).unwrap();
    let parsed: CalibrationDocument = serde_json::from_str(&text).unwrap();
    let metrics = &calibration.criteria[0].metrics;
    assert!(!metrics.reliability_equal_mass.is_empty());
    // Everything but the equal-mass table, which the document does not carry, reads back.
    assert_eq!(
        parsed.criteria[0].1.metrics,
        CriterionMetrics {
            reliability_equal_mass: Vec::new(),
            ..metrics.clone()
        }
    );
    assert_eq!(serde_json::to_string_pretty(&parsed).unwrap(), text);
}

#[test]
fn settings_take_targets_within_zero_to_one_and_at_least_one_resample() {
    let set = CalibrationSettings::with_targets(0.95, 0.9, 0.1, 20, 7).unwrap();
    assert_eq!(set.targets.min_pass_precision, 0.95);
    assert_eq!(set.targets.min_fail_precision, 0.9);
    assert_eq!(set.targets.max_abstain, 0.1);
    assert_eq!(set.targets.z, Z);
    assert_eq!((set.resamples, set.seed, set.bins), (20, 7, BINS));
    assert_eq!(
        CalibrationSettings::with_targets(0.9, 0.9, 0.25, RESAMPLES, SEED).unwrap(),
        CalibrationSettings::default()
    );
    assert_eq!(
        CalibrationSettings::with_targets(0.9, 1.2, 0.25, 1, 1),
        Err(SettingsError::OutOfRange {
            target: Target::MinFailPrecision,
            value: 1.2
        })
    );
    assert!(matches!(
        CalibrationSettings::with_targets(0.9, 0.9, f64::NAN, 1, 1),
        Err(SettingsError::OutOfRange {
            target: Target::MaxAbstain,
            ..
        })
    ));
    assert_eq!(
        CalibrationSettings::with_targets(0.9, 0.9, 0.25, 0, 1),
        Err(SettingsError::NoResamples)
    );
}

#[test]
fn a_report_of_reviews_without_its_rows_cannot_be_calibrated() {
    let mut streamed = report(x_rows("y", 2, true, 0.9).collect());
    assert_eq!(check_rows(&streamed), Ok(()));
    streamed.rows.clear();
    assert_eq!(check_rows(&streamed), Err(NoRows));
    assert_eq!(check_rows(&report(Vec::new())), Ok(()));
}

#[test]
fn expectations_name_each_criterion_and_what_it_expects() {
    let rows = vec![row("a", true, &[("x", 0.9, true), ("risk", 0.1, false)])];
    let specs = infer_criteria(&report(rows)).unwrap();
    let text = expectations(&specs);
    assert!(text.contains("`x` expects yes"), "{text}");
    assert!(text.contains("`risk` expects no"), "{text}");
    assert_eq!(text.matches(", ").count(), 1, "{text}");
}

#[test]
fn a_calibrated_file_carries_the_recommendations_under_the_next_version() {
    let rows: Vec<Row> = x_rows("y", 60, true, 0.95)
        .chain(x_rows("n", 60, false, 0.05))
        .collect();
    let report = report(rows);
    let calibration = calibrate_default(&report);
    let question = jevjudge_wire::NoulQuestion::new("Is it so?");
    let criterion = Criterion::new("x", question, true, 0.2, 0.8).unwrap();
    let definition = Definition::new("v1", vec![criterion]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cal.json");
    let source = Path::new("r.json");
    let file = calibrated_file(&calibration, &definition, &out, None, &report, source)
        .unwrap()
        .unwrap();
    assert_eq!(file.version, "v1+cal.1");
    let written = Definition::from_str_as(&file.text, DefinitionFormat::Json).unwrap();
    assert_eq!(written.version(), "v1+cal.1");
    assert_eq!(written.criteria()[0].pass_at_or_above(), 0.95);

    let named = calibrated_file(&calibration, &definition, &out, Some("v2"), &report, source)
        .unwrap()
        .unwrap();
    assert_eq!(named.version, "v2");
    let yaml = dir.path().join("cal.yaml");
    assert!(matches!(
        calibrated_file(&calibration, &definition, &yaml, None, &report, source),
        Err(CalibratedFileError::Text(
            DefinitionTextError::UnknownFormat
        ))
    ));

    let muddle = report_of_one_class();
    let none = calibrate_default(&muddle);
    assert_eq!(
        calibrated_file(&none, &definition, &out, None, &muddle, source).unwrap(),
        None
    );
}

/// A report too small for any recommendation.
fn report_of_one_class() -> Report {
    report(x_rows("y", 3, true, 0.9).collect())
}

/// `rows` with every case reviewed twice: the second review's p′ moved by `shift` for the
/// cases `shifted` picks.
fn repeated(rows: Vec<Row>, shift: f64, shifted: impl Fn(usize) -> bool) -> Vec<Row> {
    rows.into_iter()
        .enumerate()
        .map(|(index, mut row)| {
            let mut second = row.verdict.clone();
            if shifted(index) {
                let findings: Vec<(String, Finding)> = second
                    .findings
                    .iter()
                    .map(|(id, finding)| {
                        let p = (finding.yes_probability + shift).clamp(0.0, 1.0);
                        (
                            id.to_owned(),
                            Finding {
                                yes_probability: p,
                                expected_probability: p,
                                ..*finding
                            },
                        )
                    })
                    .collect();
                second.findings = Findings::new(findings);
            }
            row.repeats = Some(crate::row::Repeats {
                verdicts: vec![row.verdict.clone(), second],
                pass_rate: 0.0,
            });
            row
        })
        .collect()
}

#[test]
fn a_repeated_report_uses_every_review_and_counts_cases() {
    let mut rows: Vec<Row> = x_rows("y", 70, true, 0.95)
        .chain(x_rows("n", 70, false, 0.05))
        .collect();
    rows.extend((0..10).map(|i| row(&format!("m{i}"), i % 2 == 0, &[("x", 0.5, true)])));
    let single = calibrate_default(&report(rows.clone()));
    let twice = calibrate_default(&report(repeated(rows.clone(), 0.0, |_| true)));
    let points = &twice.criteria[0].points;
    assert_eq!((points.points.len(), points.cases()), (300, 150));
    let (one, two) = (
        single.criteria[0].outcome.clone().unwrap(),
        twice.criteria[0].outcome.clone().unwrap(),
    );
    // Repeats that agree: the same pair and evidence as the cases once, stated as approximate.
    assert_eq!(one.certificate.thresholds, two.certificate.thresholds);
    assert!((one.certificate.pass_p_value - two.certificate.pass_p_value).abs() < 1e-12);
    assert!(two.certificate.approximate && !one.certificate.approximate);
    // Record order does not matter: the reviews of a case are all used, whichever comes first.
    let noisy = repeated(rows.clone(), 0.3, |index| index % 7 == 0);
    let swapped: Vec<Row> = noisy
        .iter()
        .cloned()
        .map(|mut row| {
            let repeats = row.repeats.as_mut().unwrap();
            repeats.verdicts.reverse();
            row.verdict = repeats.verdicts[0].clone();
            row
        })
        .collect();
    let a = calibrate_default(&report(noisy));
    let b = calibrate_default(&report(swapped));
    assert_eq!(a.criteria[0].metrics, b.criteria[0].metrics);
    assert_eq!(a.criteria[0].outcome, b.criteria[0].outcome);
}

// The shipped sms-spam recording as a population: 2,000 seeded draws of 150 cases with
// replacement, each calibrated at a few targets (PASS / FAIL precision, abstain ≤ 0.5); a claim
// is false when the pair's precision on the whole recording is below a target. The certified
// pair's claim holds in at least 1 − δ of the draws; the Wilson choice's is printed beside it.
#[tokio::test]
async fn on_the_sms_recording_the_certified_claim_holds_in_at_least_95_percent_of_draws() {
    use jevjudge_stats::{SplitMix64, Targets, certify, choose, tally};
    let report = test_support::sms_spam_replay("definition.toml", 1).await;
    let definition = Definition::from_path(test_support::sms_spam("definition.toml")).unwrap();
    let specs = CriterionSpec::from_definition(&definition);
    let population = extract(&report, &specs)[0].expectation_points();
    for (pass, fail) in [(0.9, 0.85), (0.9, 0.9), (0.93, 0.93), (0.95, 0.92)] {
        let targets = Targets {
            min_pass_precision: pass,
            min_fail_precision: fail,
            max_abstain: 0.5,
            z: Z,
        };
        let holds = |thresholds| {
            let counts = tally(&population, thresholds);
            counts.pass_precision().is_none_or(|p| p >= pass)
                && counts.fail_precision().is_none_or(|p| p >= fail)
        };
        let mut rng = SplitMix64::new(150);
        let draws = 2_000u32;
        let (mut certified, mut certified_false, mut chosen, mut chosen_false) = (0, 0, 0, 0);
        let mut bound_missed = 0u32;
        for _ in 0..draws {
            let sample: Vec<Point> = (0..population.len())
                .map(|_| population[rng.below(population.len() as u64) as usize])
                .collect();
            if let Ok(certificate) = certify(&sample, None, None, &targets, DELTA) {
                certified += 1;
                certified_false += u32::from(!holds(certificate.thresholds));
            }
            if let Ok(choice) = choose(&sample, &targets) {
                chosen += 1;
                chosen_false += u32::from(!holds(choice.thresholds));
                // The old printed claim: its Wilson lower bounds lie below the true precisions.
                let truth = tally(&population, choice.thresholds);
                let covered = |lower: Option<f64>, true_precision: Option<f64>| {
                    lower.is_none_or(|lower| true_precision.is_none_or(|p| lower <= p))
                };
                let both = covered(choice.tally.pass_lower(Z), truth.pass_precision())
                    && covered(choice.tally.fail_lower(Z), truth.fail_precision());
                bound_missed += u32::from(!both);
            }
        }
        let coverage = 1.0 - f64::from(certified_false) / f64::from(draws);
        let old = 1.0 - f64::from(chosen_false) / f64::from(draws);
        eprintln!(
            "sms-spam draws at {pass}/{fail}: Learn then Test certified {certified} of {draws}, {certified_false} falsely (coverage {coverage:.4}); \
             Wilson choice recommended {chosen}, {chosen_false} falsely (coverage {old:.4}), its printed Wilson bounds \
             below both true precisions in {} of {chosen}",
            chosen - bound_missed
        );
        assert!(coverage >= 1.0 - DELTA, "{pass}/{fail}: {coverage}");
    }
}

#[test]
fn weighted_decisions_equal_the_counts_of_the_expanded_points() {
    // Integer weights: a point of weight w is the same point written w times.
    let points = [
        Point::new(0.95, true),
        Point::new(0.95, false),
        Point::new(0.5, true),
        Point::new(0.05, false),
        Point::new(0.05, true),
    ];
    let weights = [1.0, 3.0, 2.0, 4.0, 1.0];
    let thresholds = Thresholds::new(0.1, 0.9).unwrap();
    let weighted = weighted_decisions(&points, &weights, thresholds, 1.96);
    let expanded: Vec<Point> = points
        .iter()
        .zip(weights)
        .flat_map(|(point, w)| std::iter::repeat_n(*point, w as usize))
        .collect();
    let counts = jevjudge_stats::tally(&expanded, thresholds);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(
        weighted.pass_precision.unwrap().estimate,
        counts.pass_precision().unwrap()
    ));
    assert!(close(
        weighted.fail_precision.unwrap().estimate,
        counts.fail_precision().unwrap()
    ));
    assert!(close(
        weighted.abstain_rate.unwrap().estimate,
        counts.abstain_rate().unwrap()
    ));
    // The effective n is Kish's, (Σw)²/Σw² = 121/31, not the expanded 11.
    assert!(close(weighted.effective_n, 121.0 / 31.0));
}

#[test]
fn unequal_weights_are_used_unless_calibrate_is_told_to_ignore_them() {
    let mut rows: Vec<Row> = x_rows("y", 60, true, 0.95)
        .chain(x_rows("n", 60, false, 0.05))
        .collect();
    // Sampled PASS: the right ones at weight 3 (1/π for π = 1/3).
    for row in rows.iter_mut().take(60) {
        row.weight = 3.0;
    }
    rows.extend((0..4).map(|i| row(&format!("m{i}"), i % 2 == 0, &[("x", 0.5, true)])));
    let report = report(rows);
    let weighted = calibrate_default(&report);
    assert!(weighted.unequal_weights());
    let recommendation = weighted.criteria[0].outcome.clone().unwrap();
    let decided = recommendation.weighted.unwrap();
    assert!(recommendation.certificate.approximate);
    assert!((decided.effective_n - (244.0 * 244.0 / 604.0)).abs() < 1e-9);
    let document = serde_json::to_value(weighted.to_document()).unwrap();
    assert_eq!(
        document["criteria"]["x"]["recommendation"]["weighted"],
        serde_json::json!(true)
    );
    let settings = CalibrationSettings {
        unweighted: true,
        ..CalibrationSettings::default()
    };
    let unweighted = calibrate(&report, &infer_criteria(&report).unwrap(), &settings);
    let recommendation = unweighted.criteria[0].outcome.clone().unwrap();
    assert_eq!(recommendation.weighted, None);
    assert!(!recommendation.certificate.approximate);
    let document = serde_json::to_value(unweighted.to_document()).unwrap();
    assert!(
        document["criteria"]["x"]["recommendation"]
            .get("weighted")
            .is_none()
    );
}

// Precisions at a prevalence per criterion count, for an `expected = false` criterion, the
// rows whose expectation holds (the condition fails) as its positives.
#[test]
fn each_criterion_at_a_prevalence_counts_the_rows_whose_expectation_holds() {
    let labelled = |id: &str, x: (f64, bool), y: (f64, bool)| {
        let mut row = row(id, true, &[("x", x.0, true), ("y", y.0, false)]);
        row.expected_findings = Some(vec![("x".into(), x.1), ("y".into(), y.1)]);
        row
    };
    let report = report(vec![
        labelled("r1", (0.9, true), (0.1, false)),
        labelled("r2", (0.1, false), (0.9, true)),
        labelled("r3", (0.95, false), (0.2, false)),
        labelled("r4", (0.05, true), (0.85, true)),
    ]);
    let thresholds = Thresholds::new(0.3, 0.7);
    let specs = [("x", true), ("y", false)].map(|(id, expected)| CriterionSpec {
        id: id.to_owned(),
        expected,
        thresholds,
    });
    let at = criteria_at_prevalence(&report, &specs, 0.2);
    assert_eq!(at.len(), 2);
    // x: PASS on 1 of the 2 rows that should hold and on 1 of the 2 that should not:
    // 0.2·0.5 / (0.2·0.5 + 0.8·0.5) = 0.2.
    assert_eq!(at[0].0, "x");
    assert!((at[0].1.pass_precision.unwrap() - 0.2).abs() < 1e-12);
    // y (a yes is not expected): PASS on both rows where it does not hold, on neither where it
    // does: every PASS is right at any prevalence.
    assert_eq!(at[1].0, "y");
    assert_eq!(at[1].1.pass_precision, Some(1.0));
    assert_eq!(at[1].1.fail_precision, Some(1.0));
}
