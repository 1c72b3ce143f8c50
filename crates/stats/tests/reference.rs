//! The public statistics against values computed independently (exact fractions and plain
//! formulas in Python, shown beside each value), and properties over random inputs: results
//! invariant to row order, scores in range, recommended thresholds valid and meeting the
//! targets on the data they were fitted on.

use jevjudge_stats::{
    Point, SplitMix64, Targets, Thresholds, auroc, brier, choose, ece, log_loss, mce,
    mcnemar_exact, out_of_bag, reliability_equal_mass, reliability_equal_width, tally, wilson,
};
use proptest::prelude::*;

#[path = "../src/test_points.rs"]
mod test_points;
use test_points::{informative_points, points_of};

fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance
}

/// Twelve hand-made points (p, condition holds).
fn twelve() -> Vec<Point> {
    points_of(&[
        (0.05, false),
        (0.1, false),
        (0.1, true),
        (0.2, false),
        (0.35, false),
        (0.4, true),
        (0.55, false),
        (0.6, true),
        (0.7, true),
        (0.7, false),
        (0.85, true),
        (0.95, true),
    ])
}

// Python: sum((p - y)**2 for p, y in pts) / 12 = 0.20104166666666667 and
// sum(-log(p if y else 1 - p)) / 12 = 0.5927707828711665
#[test]
fn brier_and_log_loss_of_twelve_points() {
    let brier = brier(&twelve()).unwrap();
    assert!(close(brier, 0.201_041_666_666_666_67, 1e-15), "{brier}");
    let log_loss = log_loss(&twelve()).unwrap();
    assert!(
        close(log_loss, 0.592_770_782_871_166_5, 1e-14),
        "{log_loss}"
    );
}

// 6 yes × 6 no = 36 pairs; the yes points win 28 (the tie at 0.7 counts ½): 28/36 = 7/9.
#[test]
fn auroc_of_twelve_points_is_seven_ninths() {
    assert!(close(auroc(&twelve()).unwrap(), 7.0 / 9.0, 1e-15));
}

// Ten equal-width bins: (count, mean p, observed) = (1, .05, 0) (2, .1, .5) (1, .2, 0)
// (1, .35, 0) (1, .4, 1) (1, .55, 0) (1, .6, 1) (2, .7, .5) (1, .85, 1) (1, .95, 1).
// ECE = Σ count·gap / 12 = 3.55 / 12 = 0.29583…, MCE = |0.4 − 1| = 0.6.
#[test]
fn equal_width_ece_and_mce_of_twelve_points() {
    let table = reliability_equal_width(&twelve(), 10).unwrap();
    assert_eq!(table.len(), 10);
    let counts: Vec<usize> = table.iter().map(|bin| bin.count).collect();
    assert_eq!(counts, [1, 2, 1, 1, 1, 1, 1, 2, 1, 1]);
    assert!(close(ece(&table).unwrap(), 0.295_833_333_333_333_3, 1e-12));
    assert!(close(mce(&table).unwrap(), 0.6, 1e-12));
}

// Four equal-mass bins: cuts after 3, 6, 9 points, but the cut after 9 would split the two
// 0.7s, so it moves to 10: groups of 3, 3, 4, 2. Gaps: |0.0833 − 1/3|, |0.3167 − 1/3|,
// |0.6375 − 0.5|, |0.9 − 1| → ECE = (0.75 + 0.05 + 0.55 + 0.2) / 12 = 1.55 / 12.
#[test]
fn equal_mass_ece_of_twelve_points_keeps_ties_together() {
    let table = reliability_equal_mass(&twelve(), 4).unwrap();
    let counts: Vec<usize> = table.iter().map(|bin| bin.count).collect();
    assert_eq!(counts, [3, 3, 4, 2]);
    assert!(close(ece(&table).unwrap(), 1.55 / 12.0, 1e-12));
}

// McNemar exact, two-sided: min(1, 2·Σ_{i ≤ min(b,c)} C(b+c, i) / 2^(b+c)), by Python's
// fractions.
#[test]
fn mcnemar_known_tables() {
    for (b, c, expected) in [
        (1, 7, 9.0 / 128.0),
        (3, 12, 9.0 / 256.0),
        (10, 25, 71_613_631.0 / 4_294_967_296.0),
        (7, 2, 23.0 / 128.0),
        (21, 0, 1.0 / 1_048_576.0),
        (0, 20, 1.0 / 524_288.0),
        (4, 4, 1.0),
    ] {
        let p = mcnemar_exact(b, c);
        // Relative error at most 1e-13 (the sum runs in log space).
        assert!(close(p, expected, 1e-13 * expected), "{b} {c}: {p}");
    }
}

// Wilson score interval (z = 1.96), Python: c = (p̂ + z²/2n)/(1 + z²/n),
// h = z·√(p̂(1 − p̂)/n + z²/4n²)/(1 + z²/n).
#[test]
fn wilson_known_intervals() {
    for (successes, n, lower, upper) in [
        (8, 10, 0.490_156_846_720_723_35, 0.943_319_052_019_306_7),
        (72, 73, 0.926_400_867_308_726_7, 0.997_577_810_907_239_3),
        (65, 67, 0.897_532_499_581_169_8, 0.991_775_477_652_546),
        (1, 3, 0.061_490_315_276_160_5, 0.792_345_044_873_512_1),
        (45, 50, 0.786_395_096_652_116_2, 0.956_524_876_008_429),
    ] {
        let (l, u) = wilson(successes, n, 1.96).unwrap();
        assert!(
            close(l, lower, 1e-12) && close(u, upper, 1e-12),
            "{successes}/{n}: {l} {u}"
        );
    }
}

// Fail at 0.2, pass at 0.6 on the twelve points: PASS 0.6T 0.7T 0.7F 0.85T 0.95T (4 of 5
// right), FAIL 0.05F 0.1F 0.1T 0.2F (3 of 4 right), abstain 0.35 0.4 0.55.
#[test]
fn tally_of_twelve_points_by_hand() {
    let counts = tally(&twelve(), Thresholds::new(0.2, 0.6).unwrap());
    assert_eq!(
        (
            counts.passes,
            counts.correct_passes,
            counts.fails,
            counts.correct_fails,
            counts.abstained()
        ),
        (5, 4, 4, 3, 3)
    );
}

fn shuffled(points: &[Point], seed: u64) -> Vec<Point> {
    let mut out = points.to_vec();
    let mut rng = SplitMix64::new(seed);
    for i in (1..out.len()).rev() {
        out.swap(i, rng.below(i as u64 + 1) as usize);
    }
    out
}

fn points() -> impl Strategy<Value = Vec<Point>> {
    informative_points(1000, 1..150)
}

proptest! {
    #[test]
    fn every_metric_is_invariant_to_row_order(points in points(), seed: u64) {
        let other = shuffled(&points, seed);
        prop_assert_eq!(brier(&points), brier(&other));
        prop_assert_eq!(log_loss(&points), log_loss(&other));
        prop_assert_eq!(auroc(&points), auroc(&other));
        prop_assert_eq!(reliability_equal_width(&points, 10), reliability_equal_width(&other, 10));
        prop_assert_eq!(reliability_equal_mass(&points, 10), reliability_equal_mass(&other, 10));
        let targets = Targets { min_pass_precision: 0.8, min_fail_precision: 0.8, max_abstain: 0.5, z: 1.96 };
        prop_assert_eq!(choose(&points, &targets), choose(&other, &targets));
    }

    #[test]
    fn scores_stay_in_range(points in points()) {
        let b = brier(&points).unwrap();
        prop_assert!((0.0..=1.0).contains(&b));
        prop_assert!(log_loss(&points).unwrap() >= 0.0);
        if let Some(area) = auroc(&points) {
            prop_assert!((0.0..=1.0).contains(&area));
        }
        let table = reliability_equal_width(&points, 10).unwrap();
        let e = ece(&table).unwrap();
        prop_assert!((0.0..=1.0).contains(&e) && e <= mce(&table).unwrap());
    }

    #[test]
    fn recommended_thresholds_are_valid_and_meet_the_targets_on_their_data(
        points in points(),
        pass in 0.5f64..0.95,
        fail in 0.5f64..0.95,
        abstain in 0.0f64..0.8,
    ) {
        let targets = Targets { min_pass_precision: pass, min_fail_precision: fail, max_abstain: abstain, z: 1.96 };
        if let Ok(choice) = choose(&points, &targets) {
            let t = choice.thresholds;
            prop_assert!(0.0 <= t.fail_at_or_below && t.fail_at_or_below < t.pass_at_or_above && t.pass_at_or_above <= 1.0);
            let counts = tally(&points, t);
            prop_assert_eq!(counts, choice.tally);
            prop_assert!(counts.pass_lower(1.96).unwrap() >= pass);
            prop_assert!(counts.fail_lower(1.96).unwrap() >= fail);
            prop_assert!(counts.abstain_rate().unwrap() <= abstain);
        }
    }

    #[test]
    fn out_of_bag_is_reproducible_and_bounded(points in points(), seed: u64) {
        let targets = Targets { min_pass_precision: 0.7, min_fail_precision: 0.7, max_abstain: 0.5, z: 1.96 };
        let check = out_of_bag(&points, &targets, 20, seed);
        prop_assert_eq!(check, out_of_bag(&points, &targets, 20, seed));
        prop_assert!(check.met <= check.fitted && check.fitted <= check.resamples);
        prop_assert!((0.0..=1.0).contains(&check.rate().unwrap()));
    }
}
