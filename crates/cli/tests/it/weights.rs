//! Case weights through the real binary: the sms-spam example with 20 cases weighted 2.5 (as a
//! labelled export writes `1/π` for PASS sampled at 40 %) makes `eval` say the report is
//! weighted, with the Kish effective n beside the total, and `calibrate` use the weights unless
//! told `--unweighted` (then it warns).

use jevjudge_test_support::{
    example, read_json, run_blocking as run, stderr, stdout_json, temp_dir,
};

use crate::jevjudge;

#[test]
fn a_report_of_weighted_cases_says_weighted_with_the_kish_effective_n() {
    let dir = temp_dir("weights-eval");
    let cases: String = std::fs::read_to_string(example("sms-spam/cases.jsonl"))
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let mut case: serde_json::Value = serde_json::from_str(line).unwrap();
            if i < 20 {
                case["weight"] = serde_json::json!(2.5);
            }
            format!("{case}\n")
        })
        .collect();
    let weighted_cases = dir.join("cases.jsonl");
    std::fs::write(&weighted_cases, cases).unwrap();
    let report = dir.join("weighted.json");
    let output = run(jevjudge()
        .args(["eval", "--definition"])
        .arg(example("sms-spam/definition.toml"))
        .arg("--cases")
        .arg(&weighted_cases)
        .arg("--replay")
        .arg(example("sms-spam/recordings.jevl"))
        .args(["--model", "jev-1.13.0", "--report"])
        .arg(&report));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("weighted (effective n 127.1)"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let document = read_json(&report);
    // (Σw)² / Σw² = (20 · 2.5 + 130)² / (20 · 6.25 + 130) = 180² / 255.
    let effective_n = 180.0 * 180.0 / 255.0;
    let overall = &document["overall"];
    let keys: Vec<&str> = overall
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .take(3)
        .collect();
    assert_eq!(keys, ["total", "weighted", "effective_n"]);
    assert_eq!(overall["total"], 150);
    assert_eq!(overall["weighted"], true);
    assert!((overall["effective_n"].as_f64().unwrap() - effective_n).abs() < 1e-9);
    let scenario = &document["scenarios"]["sms-spam"];
    assert_eq!(scenario["weighted"], true);
    assert!((scenario["effective_n"].as_f64().unwrap() - effective_n).abs() < 1e-9);

    let calibrate = |extra: &[&str]| {
        run(jevjudge()
            .args(["calibrate", "--json", "--report"])
            .arg(&report)
            .arg("--definition")
            .arg(example("sms-spam/definition.toml"))
            .args(["--min-pass-precision", "0.8", "--min-fail-precision", "0.8"])
            .args(extra))
    };
    let used = calibrate(&[]);
    assert_eq!(used.status.code(), Some(0), "{}", stderr(&used));
    let recommendation = &stdout_json(&used)["criteria"]["spam"]["recommendation"];
    assert_eq!(recommendation["weighted"], true, "{recommendation}");
    assert_eq!(recommendation["guarantee"]["approximate"], true);
    assert!(!stderr(&used).contains("warning"), "{}", stderr(&used));
    let ignored = calibrate(&["--unweighted"]);
    assert_eq!(ignored.status.code(), Some(0), "{}", stderr(&ignored));
    let recommendation = &stdout_json(&ignored)["criteria"]["spam"]["recommendation"];
    assert!(recommendation.get("weighted").is_none(), "{recommendation}");
    assert!(
        stderr(&ignored).contains("the cases carry unequal weights"),
        "{}",
        stderr(&ignored)
    );
}
