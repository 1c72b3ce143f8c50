//! The exact methods against scipy and statsmodels: every value in `tests/data/exact.txt` was
//! computed by `scripts/reference/exact.py` and is checked here to 1e-9 or better.

use jevjudge_stats::{
    PairedTable, benjamini_hochberg, clopper_pearson, clopper_pearson_upper, fisher_exact, holm,
    newcombe_paired,
};

const FIXTURE: &str = include_str!("data/exact.txt");

fn numbers(fields: &[&str]) -> Vec<f64> {
    fields.iter().map(|f| f.parse::<f64>().unwrap()).collect()
}

fn lines(kind: &str) -> Vec<Vec<&'static str>> {
    let found: Vec<Vec<&str>> = FIXTURE
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|fields| fields[0] == kind)
        .map(|fields| fields[1..].to_vec())
        .collect();
    assert!(!found.is_empty(), "the fixture has {kind} lines");
    found
}

fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance
}

fn z95() -> f64 {
    numbers(&lines("z95")[0])[0]
}

#[test]
fn one_sided_clopper_pearson_upper_bounds_match_scipy_beta_ppf() {
    for fields in lines("cp_upper") {
        let [x, n, alpha, expected] = numbers(&fields)[..] else {
            panic!("{fields:?}")
        };
        let upper = clopper_pearson_upper(x, n, alpha).unwrap();
        assert!(close(upper, expected, 1e-12), "{fields:?}: {upper}");
    }
}

#[test]
fn two_sided_clopper_pearson_matches_statsmodels_beta_method() {
    for fields in lines("cp_two_sided") {
        let [x, n, alpha, low, high] = numbers(&fields)[..] else {
            panic!("{fields:?}")
        };
        let (l, h) = clopper_pearson(x, n, alpha).unwrap();
        assert!(
            close(l, low, 1e-12) && close(h, high, 1e-12),
            "{fields:?}: {l} {h}"
        );
    }
}

#[test]
fn fisher_exact_matches_scipy() {
    for fields in lines("fisher") {
        let values = numbers(&fields);
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| values[i] as u64);
        let p = fisher_exact(a, b, c, d);
        assert!(close(p, values[4], 1e-12), "{fields:?}: {p}");
    }
}

#[test]
fn holm_and_benjamini_hochberg_match_statsmodels_multipletests() {
    for (kind, adjust) in [
        ("holm", holm as fn(&[f64]) -> Vec<f64>),
        ("bh", benjamini_hochberg),
    ] {
        let fields = &lines(kind)[0];
        let split = fields.iter().position(|f| *f == "|").unwrap();
        let raw = numbers(&fields[..split]);
        let expected = numbers(&fields[split + 1..]);
        let adjusted = adjust(&raw);
        for (a, e) in adjusted.iter().zip(&expected) {
            assert!(close(*a, *e, 1e-12), "{kind}: {adjusted:?} vs {expected:?}");
        }
    }
}

#[test]
fn newcombe_paired_interval_matches_the_statsmodels_wilson_construction() {
    for fields in lines("newcombe") {
        let values = numbers(&fields);
        let table = PairedTable {
            both: values[0] as u64,
            first_only: values[1] as u64,
            second_only: values[2] as u64,
            neither: values[3] as u64,
        };
        let (difference, low, high) = newcombe_paired(&table, z95()).unwrap();
        assert!(close(difference, values[4], 1e-12), "{fields:?}");
        assert!(close(low, values[5], 1e-12), "{fields:?}: {low}");
        assert!(close(high, values[6], 1e-12), "{fields:?}: {high}");
    }
}

#[test]
fn precision_at_prevalence_matches_the_python_delta_method() {
    for fields in lines("prevalence") {
        let v = numbers(&fields);
        let (precision, low, high) =
            jevjudge_stats::precision_at_prevalence(v[0], v[1], v[2], v[3], v[4], z95()).unwrap();
        assert!(close(precision, v[5], 1e-12), "{fields:?}: {precision}");
        assert!(close(low, v[6], 1e-12), "{fields:?}: {low}");
        assert!(close(high, v[7], 1e-12), "{fields:?}: {high}");
    }
}

#[test]
fn scott_pi_matches_statsmodels_fleiss_kappa_for_two_ratings_per_item() {
    for fields in lines("scott") {
        let v = numbers(&fields);
        let table = jevjudge_stats::AgreementTable {
            both_yes: v[0] as u64,
            yes_no: v[1] as u64,
            no_yes: v[2] as u64,
            both_no: v[3] as u64,
        };
        let pi = table.scott_pi().unwrap();
        assert!(close(pi, v[4], 1e-12), "{fields:?}: {pi}");
        // The bootstrap interval holds the estimate (every table here has at least the minimum of 20 items).
        let (low, high) = table.scott_pi_interval(2000, 7).unwrap();
        assert!(low <= pi && pi <= high, "{fields:?}: [{low}, {high}]");
    }
    let few = jevjudge_stats::AgreementTable {
        both_yes: 5,
        yes_no: 1,
        no_yes: 1,
        both_no: 5,
    };
    assert_eq!(
        few.scott_pi_interval(2000, 7),
        None,
        "below the minimum item count"
    );
}

/// The quantile by plain bisection on the regularized incomplete beta, to the last bit.
fn bisected_quantile(q: f64, a: f64, b: f64) -> f64 {
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    loop {
        let mid = 0.5 * (low + high);
        if mid <= low || mid >= high {
            return mid;
        }
        if jevjudge_stats::beta_regularized(mid, a, b).unwrap() < q {
            low = mid;
        } else {
            high = mid;
        }
    }
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Newton's steps inside a bracket land where bisection does, for whole and fractional
    /// counts from 1 trial to a million and confidence levels from 50 % to 99.99 %.
    #[test]
    fn clopper_pearson_bounds_are_the_roots_bisection_finds(
        n in prop_oneof![1.0..60.0_f64, 60.0..1e6_f64, (1..2000_u32).prop_map(f64::from)],
        share in prop_oneof![Just(0.0), 0.0..1.0_f64, Just(1.0)],
        alpha in prop_oneof![Just(0.05), Just(0.025), 1e-4..0.5_f64],
    ) {
        let successes = (share * n).floor().min(n);
        let upper = clopper_pearson_upper(successes, n, alpha).unwrap();
        let expected = if successes >= n {
            1.0
        } else {
            bisected_quantile(1.0 - alpha, successes + 1.0, n - successes)
        };
        prop_assert!(close(upper, expected, 1e-12), "{successes}/{n} at {alpha}: {upper} against {expected}");
        let (low, _) = clopper_pearson(successes, n, alpha).unwrap();
        let expected_low = if successes <= 0.0 {
            0.0
        } else {
            bisected_quantile(alpha / 2.0, successes, n - successes + 1.0)
        };
        prop_assert!(close(low, expected_low, 1e-12), "{successes}/{n} at {alpha}: {low} against {expected_low}");
    }
}
