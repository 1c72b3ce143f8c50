//! The calibrate statistics against scipy and statsmodels: the values in
//! `fixtures/calibrate_reference.json`, made by `scripts/reference/calibrate_reference.py`.

use jevjudge_stats::{binomial_upper_tail, clustered_wilson, effective_trials, student_t_quantile};
use serde_json::Value;

fn fixture() -> Value {
    serde_json::from_str(include_str!("fixtures/calibrate_reference.json")).unwrap()
}

fn f(value: &Value) -> f64 {
    value.as_f64().unwrap()
}

fn close(actual: f64, expected: f64, relative: f64) -> bool {
    (actual - expected).abs() <= relative * expected.abs().max(1e-300)
}

#[test]
fn binomial_tails_match_scipy() {
    let fixture = fixture();
    for case in fixture["binomial_upper_tail"].as_array().unwrap() {
        let (x, n, p, tail) = (
            f(&case["successes"]),
            f(&case["n"]),
            f(&case["p"]),
            f(&case["tail"]),
        );
        let ours = binomial_upper_tail(x, n, p);
        assert!(
            close(ours, tail, 1e-10),
            "{x} of {n} at {p}: {ours} vs scipy {tail}"
        );
    }
}

#[test]
fn t_quantiles_match_scipy() {
    let fixture = fixture();
    for case in fixture["student_t_quantile"].as_array().unwrap() {
        let (q, df, t) = (f(&case["probability"]), f(&case["df"]), f(&case["t"]));
        let ours = student_t_quantile(q, df);
        assert!(close(ours, t, 1e-9), "t({df}) at {q}: {ours} vs scipy {t}");
    }
}

#[test]
fn clustered_intervals_match_statsmodels_cluster_robust_variance() {
    let fixture = fixture();
    for case in fixture["clustered_wilson"].as_array().unwrap() {
        let clusters: Vec<(u64, u64)> = case["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| (pair[0].as_u64().unwrap(), pair[1].as_u64().unwrap()))
            .collect();
        let (_, n_eff) = effective_trials(&clusters).unwrap();
        assert!(
            close(n_eff, f(&case["n_eff"]), 1e-9),
            "{n_eff} vs {}",
            case["n_eff"]
        );
        let (lower, upper) = clustered_wilson(&clusters, 1.96).unwrap();
        assert!(
            close(lower, f(&case["lower"]), 1e-9),
            "{lower} vs {}",
            case["lower"]
        );
        assert!(
            close(upper, f(&case["upper"]), 1e-9),
            "{upper} vs {}",
            case["upper"]
        );
    }
}

fn fixture_points(fixture: &Value) -> Vec<jevjudge_stats::Point> {
    fixture["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| jevjudge_stats::Point::new(f(&pair[0]), pair[1].as_u64().unwrap() == 1))
        .collect()
}

#[test]
fn delong_matches_the_pairwise_definition() {
    let fixture = fixture();
    let points = fixture_points(&fixture);
    let reference = &fixture["delong"];
    let (auc, variance) = jevjudge_stats::auroc_delong(&points).unwrap();
    assert!(close(auc, f(&reference["auroc"]), 1e-12), "{auc}");
    assert!(
        close(variance, f(&reference["variance"]), 1e-9),
        "{variance}"
    );
    let (lower, upper) = jevjudge_stats::auroc_ci(&points, f(&reference["z"])).unwrap();
    assert!(close(lower, f(&reference["lower"]), 1e-9), "{lower}");
    assert!(close(upper, f(&reference["upper"]), 1e-9), "{upper}");
}

#[test]
fn expected_ece_under_perfect_calibration_matches_the_convolved_pmf() {
    let fixture = fixture();
    let points = fixture_points(&fixture);
    let reference = &fixture["ece_expected"];
    let ours = jevjudge_stats::ece_expected(&points, 10).unwrap();
    assert!(
        close(ours, f(&reference["value"]), 1e-10),
        "{ours} vs {}",
        reference["value"]
    );
}

// scipy's percentile bootstrap draws with another generator: the two intervals agree within
// Monte Carlo error (scipy 20,000 resamples, here 5,000; the ends' standard error is about
// 0.002).
#[test]
fn brier_and_ece_bootstrap_intervals_agree_with_scipy_within_monte_carlo_error() {
    let fixture = fixture();
    let points = fixture_points(&fixture);
    let resamples = 5_000;
    let checks = [
        (
            "brier_bootstrap",
            jevjudge_stats::brier_ci(&points, None, resamples, 7),
        ),
        (
            "ece_bootstrap",
            jevjudge_stats::ece_ci(&points, 10, None, resamples, 7),
        ),
    ];
    for (name, ours) in checks {
        let (lower, upper) = ours.unwrap();
        let reference = &fixture[name];
        assert!(
            (lower - f(&reference["lower"])).abs() < 0.006,
            "{name} lower {lower} vs {}",
            reference["lower"]
        );
        assert!(
            (upper - f(&reference["upper"])).abs() < 0.006,
            "{name} upper {upper} vs {}",
            reference["upper"]
        );
    }
}
