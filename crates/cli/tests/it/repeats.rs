//! Issue 14 through the real `jevjudge` binary on the shipped sms-spam recording (150 real
//! answers of the hosted `jev-1.13.0`, replayed offline): intervals, risk and coverage, the
//! gates, `--repeat`, the repeat-replay rule and resuming a repeated run.

use std::{
    path::{Path, PathBuf},
    process::Output,
};

use serde_json::Value;

use jevjudge_test_support::{
    TEST_KEY, example, expect, read_json, run_blocking, stderr, stdout, temp_dir,
};
use tokio::process::Command;

use crate::{eval_cases, exits, fake_server, jevjudge};

/// `jevjudge eval` of the sms-spam example's definition and cases with `extra`.
fn eval_sms_cases(extra: &[&str]) -> Command {
    let mut command = eval_cases(
        &example("sms-spam/definition.toml"),
        &example("sms-spam/cases.jsonl"),
    );
    command.args(extra);
    command
}

/// `jevjudge eval` on the sms-spam cases with `recording`, writing `report`, which must exit
/// with `code` (a failure names `extra`): its output.
fn eval_sms(recording: &Path, report: &Path, extra: &[&str], code: i32) -> Output {
    let output = run_blocking(
        eval_sms_cases(&["--model", "jev-1.13.0"])
            .arg("--replay")
            .arg(recording)
            .arg("--report")
            .arg(report)
            .args(extra),
    );
    expect::exit_code_of(&format!("{extra:?}"), &output, code);
    output
}

fn close(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-12)
}

fn interval(value: &Value) -> (f64, f64) {
    let pair = value.as_array().expect("an interval is [low, high]");
    (pair[0].as_f64().unwrap(), pair[1].as_f64().unwrap())
}

// Issue 14 item 4, pinned: on sms-spam under the pack's floors, coverage 125/150, decided
// accuracy 123/125, 0 false PASS, 2 false FAIL — and item 3: every rate has its Wilson
// interval. References computed independently with Python 3 (statistics.NormalDist for
// z = 1.9599639845400536 and the Wilson formula typed by hand):
//   123/150 → (0.7507767216820398, 0.873242321922391)
//   125/150 → (0.7655341358309921, 0.884485701256957)
//   123/125 → (0.9435374990695339, 0.9956011998208062)
//     0/125 → (0.0, 0.02981539370832644)
//     2/125 → (0.004398800179193869, 0.05646250093046612)
#[test]
fn sms_spam_risk_coverage_and_intervals_are_pinned() {
    let dir = temp_dir("repeats-pinned");
    let report = dir.join("base.json");
    let output = eval_sms(&example("sms-spam/recordings.jevl"), &report, &[], 0);
    let document = read_json(&report);
    for summary in [&document["overall"], &document["scenarios"]["sms-spam"]] {
        assert_eq!(summary["total"], 150);
        assert_eq!(summary["decided"], 125);
        assert!(close(&summary["coverage"], 125.0 / 150.0));
        assert!(close(&summary["decided_accuracy"], 123.0 / 125.0));
        assert_eq!(summary["false_pass"], 0);
        assert_eq!(summary["false_fail"], 2);
        assert!(close(&summary["false_pass_rate"], 0.0));
        assert!(close(&summary["false_fail_rate"], 2.0 / 125.0));
        assert_eq!(summary["repeats"], 1);
        assert!(summary.get("flip_rate").is_none());
        let references = [
            (
                "accuracy_ci",
                (0.750_776_721_682_039_8, 0.873_242_321_922_391),
            ),
            (
                "coverage_ci",
                (0.765_534_135_830_992_1, 0.884_485_701_256_957),
            ),
            (
                "decided_accuracy_ci",
                (0.943_537_499_069_533_9, 0.995_601_199_820_806_2),
            ),
            ("false_pass_rate_ci", (0.0, 0.029_815_393_708_326_44)),
            (
                "false_fail_rate_ci",
                (0.004_398_800_179_193_869, 0.056_462_500_930_466_12),
            ),
        ];
        for (key, (low, high)) in references {
            let (l, h) = interval(&summary[key]);
            assert!(
                (l - low).abs() < 1e-12 && (h - high).abs() < 1e-12,
                "{key}: {l} {h}"
            );
        }
    }
    let out = stdout(&output);
    // The main table is unchanged; the risk table follows it.
    assert!(
        out.contains("overall      150     123         2        25      0   0.8200"),
        "{out}"
    );
    assert!(
        out.contains("[0.751, 0.873]    0.833 [0.766, 0.884]   0.984 [0.944, 0.996]   0 0.000 [0.000, 0.030]    2 0.016 [0.004, 0.056]"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// The gates of items 3 and 4: exit 1 when one fails, every gate line printed.
#[test]
fn accuracy_lower_false_pass_and_coverage_gates() {
    let dir = temp_dir("repeats-gates");
    let report = dir.join("gates.json");
    let recording = example("sms-spam/recordings.jevl");
    let held = eval_sms(
        &recording,
        &report,
        &[
            "--min-accuracy-lower",
            "0.75",
            "--max-false-pass",
            "0",
            "--min-coverage",
            "0.8",
        ],
        0,
    );
    let out = stdout(&held);
    for line in [
        "gate min-accuracy-lower 0.75: held (accuracy 95% CI lower bound 0.7508)",
        "gate max-false-pass 0: held (0 false PASS)",
        "gate min-coverage 0.8: held (coverage 0.8333)",
    ] {
        expect::contains(&out, line);
    }
    for failing in [["--min-accuracy-lower", "0.76"], ["--min-coverage", "0.9"]] {
        let output = eval_sms(
            &recording,
            &report,
            &[failing[0], failing[1], "--overwrite"],
            1,
        );
        expect::contains_of(&format!("{failing:?}"), &stdout(&output), ": FAILED (");
    }
    let bad = eval_sms(&recording, &report, &["--min-coverage", "1.5"], 2);
    expect::contains(&stderr(&bad), "--min-coverage must be within 0..=1");
    let _ = std::fs::remove_dir_all(&dir);
}

// Issue 14 "Show": `--repeat 3` on the published recording, which holds one answer per
// request, so every repeat replays the same answer: flip rate 0, the same figures each repeat,
// and every review counted.
#[test]
fn sms_spam_repeat_3_replay_has_flip_rate_0() {
    let dir = temp_dir("repeats-repeat3");
    let report = dir.join("repeat3.json");
    let junit = dir.join("repeat3.xml");
    let output = eval_sms(
        &example("sms-spam/recordings.jevl"),
        &report,
        &[
            "--repeat",
            "3",
            "--concurrency",
            "8",
            "--junit",
            junit.to_str().unwrap(),
        ],
        0,
    );
    let document = read_json(&report);
    let overall = &document["overall"];
    assert_eq!(overall["repeats"], 3);
    assert_eq!(overall["total"], 450);
    assert_eq!(overall["correct"], 369);
    assert_eq!(overall["false_fail"], 6);
    assert!(close(&overall["accuracy"], 0.82));
    assert_eq!(overall["flipped"], 0);
    assert!(close(&overall["flip_rate"], 0.0));
    assert_eq!(
        overall["accuracy_by_repeat"],
        serde_json::json!([0.82, 0.82, 0.82])
    );
    assert!(close(&overall["probability_sd"]["spam"], 0.0));
    // Identical repeats do not narrow the interval: it is the single run's Wilson interval.
    let (low, high) = interval(&overall["accuracy_ci"]);
    assert!((low - 0.750_776_721_682_039_8).abs() < 1e-12, "{low}");
    assert!((high - 0.873_242_321_922_391).abs() < 1e-12, "{high}");
    let rows = document["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 150);
    for row in rows {
        assert_eq!(row["repeats"]["verdicts"].as_array().unwrap().len(), 3);
    }
    let out = stdout(&output);
    assert!(out.contains("flip rate"), "{out}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase").count(), 150);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sms-spam recording with a second record of every request whose yes-probability is
/// `1 − p`, appended after all the originals; and, per state, its records' probabilities in
/// file order.
fn doubled_recording(dir: &Path) -> (PathBuf, Vec<(Value, Vec<f64>)>) {
    let text = std::fs::read_to_string(example("sms-spam/recordings.jevl")).unwrap();
    let mut out = String::new();
    let mut seconds = String::new();
    let mut series: Vec<(Value, Vec<f64>)> = Vec::new();
    let mut later: Vec<(Value, f64)> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut record: Value = serde_json::from_str(line).unwrap();
        out.push_str(line);
        out.push('\n');
        let p = record["answers"]["spam"]["noul"].as_f64().unwrap();
        let state = record["request"]["state"].clone();
        match series.iter_mut().find(|(s, _)| *s == state) {
            Some((_, ps)) => ps.push(p),
            None => series.push((state.clone(), vec![p])),
        }
        record["answers"]["spam"]["noul"] = serde_json::json!(1.0 - p);
        later.push((state, 1.0 - p));
        seconds.push_str(&record.to_string());
        seconds.push('\n');
    }
    for (state, p) in later {
        if let Some((_, ps)) = series.iter_mut().find(|(s, _)| *s == state) {
            ps.push(p);
        }
    }
    out.push_str(&seconds);
    let path = dir.join("doubled.jevl");
    std::fs::write(&path, out).unwrap();
    (path, series)
}

/// Case id → state, from the sms-spam cases (state form).
fn case_states() -> Vec<(String, Value)> {
    std::fs::read_to_string(example("sms-spam/cases.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let case: Value = serde_json::from_str(line).unwrap();
            (
                case["id"].as_str().unwrap().to_owned(),
                case["state"].clone(),
            )
        })
        .collect()
}

// Issue 14 item 2 through the binary: repeat k gets the k-th record (cycling: p, 1 − p, p),
// at concurrency 32 with the reviews of a case running side by side.
#[test]
fn repeated_replay_serves_the_kth_record_to_the_kth_repeat() {
    let dir = temp_dir("repeats-kth");
    let (recording, series) = doubled_recording(&dir);
    let states = case_states();
    let report = dir.join("kth.json");
    eval_sms(
        &recording,
        &report,
        &["--repeat", "3", "--concurrency", "32"],
        0,
    );
    let document = read_json(&report);
    let status = |p: f64| {
        if p >= 0.9 {
            "PASS"
        } else if p <= 0.1 {
            "FAIL"
        } else {
            "INCONCLUSIVE"
        }
    };
    let mut flipped = 0;
    for row in document["rows"].as_array().unwrap() {
        let verdicts = row["repeats"]["verdicts"].as_array().unwrap();
        let ps: Vec<f64> = verdicts
            .iter()
            .map(|v| v["findings"]["spam"]["yes_probability"].as_f64().unwrap())
            .collect();
        // The records of this case's request, in file order: [p, 1 − p] (or, for the one
        // message two cases share, [p, p, 1 − p, 1 − p]); repeat k gets record k mod m.
        let id = row["id"].as_str().unwrap();
        let state = &states.iter().find(|(i, _)| i == id).unwrap().1;
        let records = &series.iter().find(|(s, _)| s == state).unwrap().1;
        let expected: Vec<f64> = (0..3).map(|k| records[k % records.len()]).collect();
        assert_eq!(ps, expected, "{id}");
        if ps.iter().any(|p| status(*p) != status(ps[0])) {
            flipped += 1;
        }
    }
    assert!(flipped > 100, "{flipped}");
    assert_eq!(document["overall"]["flipped"], flipped);
    assert!(close(
        &document["overall"]["flip_rate"],
        f64::from(flipped) / 150.0
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

// Resume knows repeats: a rows file of --repeat 2 cannot be resumed with --repeat 3, and a
// cut-short repeated run resumes to the same figures as an uninterrupted one.
#[test]
fn repeated_runs_resume_only_with_the_same_repeats() {
    let dir = temp_dir("repeats-resume");
    let (recording, _) = doubled_recording(&dir);
    let (full, cut) = (dir.join("full.json"), dir.join("cut.json"));
    for report in [&full, &cut] {
        eval_sms(&recording, report, &["--repeat", "2"], 0);
    }
    let rows_file = dir.join("cut.rows.jsonl");
    let text = std::fs::read_to_string(&rows_file).unwrap();
    let kept: Vec<&str> = text.lines().take(1 + 90).collect();
    std::fs::write(&rows_file, kept.join("\n") + "\n").unwrap();

    let refused = eval_sms(&recording, &cut, &["--repeat", "3", "--resume"], 2);
    expect::contains(
        &stderr(&refused),
        "it was run with 2 repeats of each case, not 3",
    );

    eval_sms(&recording, &cut, &["--repeat", "2", "--resume"], 0);
    let a = read_json(&full);
    let b = read_json(&cut);
    for key in [
        "total",
        "correct",
        "flipped",
        "flip_rate",
        "accuracy_by_repeat",
        "accuracy_ci",
        "coverage",
    ] {
        assert_eq!(a["overall"][key], b["overall"][key], "{key}");
    }
    assert_eq!(b["overall"]["total"], 300);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn repeat_outside_one_to_ten_is_refused() {
    let dir = temp_dir("repeats-bad");
    for n in ["0", "11"] {
        let output = eval_sms(
            &example("sms-spam/recordings.jevl"),
            &dir.join("x.json"),
            &["--repeat", n],
            2,
        );
        expect::contains(
            &stderr(&output),
            &format!("--repeat: repeats must be within 1..=10, not {n}"),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Φ(x), the standard normal CDF (Abramowitz & Stegun 7.1.26 for erf, |error| < 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * (x.abs() / std::f64::consts::SQRT_2));
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-(x * x) / 2.0).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// `eval` of the sms-spam cases against a fake server, through the real binary over HTTP,
/// which must succeed.
async fn eval_fake(url: &str, report: &Path, repeat: &str) {
    let mut command = eval_sms_cases(&["--base-url", url, "--concurrency", "8", "--budget", "10s"]);
    command
        .env("TYPESAFE_API_KEY", TEST_KEY)
        .args(["--repeat", repeat, "--report"])
        .arg(report);
    exits(&mut command, 0).await;
}

fn spam_probabilities(row: &Value) -> Vec<f64> {
    match row["repeats"]["verdicts"].as_array() {
        Some(verdicts) => verdicts
            .iter()
            .map(|v| v["findings"]["spam"]["yes_probability"].as_f64().unwrap())
            .collect(),
        None => vec![
            row["verdict"]["findings"]["spam"]["yes_probability"]
                .as_f64()
                .unwrap(),
        ],
    }
}

// Issue 14 "Show": a noisy fake (seeded Gaussian noise of SD σ on every probability) makes
// repeats flip, at the rate that noise implies. From the fake's noiseless answer pᵢ of each
// case, a review is PASS with probability 1 − Φ((0.9 − pᵢ)/σ) and FAIL with Φ((0.1 − pᵢ)/σ)
// (clamping to [0, 1] moves no value across 0.1 or 0.9); three repeats all agree with
// probability q_P³ + q_F³ + q_I³. The observed flip rate must lie within 4 standard errors of
// the mean of 1 − that over the cases, and the same seed must give the same answers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noisy_fake_flip_rate_matches_the_noise_given() {
    use jevjudge_fake::Config;
    let dir = temp_dir("repeats-noisy");
    let sigma = 0.05;
    let quiet = fake_server(Config::default()).await;
    let base = dir.join("base.json");
    eval_fake(&quiet.url(), &base, "1").await;
    let base = read_json(&base);
    let noiseless: Vec<f64> = base["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| spam_probabilities(row)[0])
        .collect();

    let mut reports = Vec::new();
    for run in 0..2 {
        let noisy = fake_server(Config {
            noise: Some(sigma),
            seed: 7,
            ..Config::default()
        })
        .await;
        let path = dir.join(format!("noisy-{run}.json"));
        eval_fake(&noisy.url(), &path, "3").await;
        reports.push(read_json(&path));
    }
    let overall = &reports[0]["overall"];
    let flip_rate = overall["flip_rate"].as_f64().unwrap();
    let (mut expected, mut variance) = (0.0, 0.0);
    for p in &noiseless {
        let pass = 1.0 - normal_cdf((0.9 - p) / sigma);
        let fail = normal_cdf((0.1 - p) / sigma);
        let inconclusive = (1.0 - pass - fail).max(0.0);
        let flips = 1.0 - (pass.powi(3) + fail.powi(3) + inconclusive.powi(3));
        expected += flips;
        variance += flips * (1.0 - flips);
    }
    let n = noiseless.len() as f64;
    let (expected, standard_error) = (expected / n, variance.sqrt() / n);
    eprintln!(
        "noise SD {sigma}: flip rate {flip_rate:.4} (expected {expected:.4} ± {standard_error:.4}), mean per-case probability SD {}",
        overall["probability_sd"]["spam"]
    );
    assert!(
        expected > 0.02,
        "the noise must be able to flip something: {expected}"
    );
    assert!(
        (flip_rate - expected).abs() <= 4.0 * standard_error + 1e-9,
        "flip rate {flip_rate} vs expected {expected} ± {standard_error}"
    );
    // The probabilities really vary, by about σ (a sample SD of 3 draws averages 0.886 σ;
    // clamping near 0 and 1 only lowers it).
    let sd = overall["probability_sd"]["spam"].as_f64().unwrap();
    assert!(sd > 0.3 * sigma && sd < 1.1 * sigma, "{sd}");
    // Seeded: a fresh server with the same seed gives each case the same answers. The fake
    // keys its noise by the arrival order of identical requests, which concurrency may permute
    // between a case's repeats, so the answers are compared as sets; the figures, which do not
    // depend on the order of a case's repeats, are equal.
    let answers = |report: &Value| -> Vec<Vec<f64>> {
        report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                let mut ps = spam_probabilities(row);
                ps.sort_by(f64::total_cmp);
                ps
            })
            .collect()
    };
    assert_eq!(answers(&reports[0]), answers(&reports[1]));
    for key in ["flipped", "probability_sd", "total", "correct", "decided"] {
        assert_eq!(
            reports[0]["overall"][key], reports[1]["overall"][key],
            "{key}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// Repeated reports compare by an exact test per case (Fisher on the repeat counts, Holm across
// cases), and the output shows each run's flip rate with its interval beside the counts. BASE
// replays one answer per request (no noise); CANDIDATE replays p, 1 − p, p, so most cases
// flip, and a case that falls from 3/3 to 2/3 correct is no evidence of a change.
#[test]
fn compare_of_repeated_runs_shows_the_noise() {
    let dir = temp_dir("repeats-compare");
    let (recording, _) = doubled_recording(&dir);
    let base = dir.join("base.json");
    let candidate = dir.join("candidate.json");
    let published = example("sms-spam/recordings.jevl");
    for (recording, report) in [(&published, &base), (&recording, &candidate)] {
        eval_sms(recording, report, &["--repeat", "3"], 0);
    }
    let output = run_blocking(jevjudge().arg("compare").arg(&base).arg(&candidate));
    let out = stdout(&output);
    assert!(
        out.contains(
            "noise: base 3 repeats, flip rate 0.0000 [0.0000, 0.0250] · candidate 3 repeats, flip rate 0.8333 [0.7655, 0.8845]"
        ),
        "{out}"
    );
    assert!(out.contains("regressions (correct rate fell): 0"), "{out}");
    assert!(
        out.contains("new false PASS (false PASS rate rose): 0"),
        "{out}"
    );
    let output = run_blocking(
        jevjudge()
            .arg("compare")
            .arg(&base)
            .arg(&candidate)
            .arg("--json"),
    );
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["noise"]["base_repeats"], 3);
    assert!(close(
        &document["noise"]["candidate_flip_rate"],
        125.0 / 150.0
    ));
    assert_eq!(document["regressions"], 0);
    assert_eq!(document["noise"]["regressions"], serde_json::json!([]));
    assert_eq!(document["noise"]["test"], "fisher_exact");
    assert_eq!(document["noise"]["correction"], "holm");
    let _ = std::fs::remove_dir_all(&dir);
}
