//! Tests of [`certify`](super::certify) and [`stability`](super::stability), with the
//! simulation of the guarantee's coverage.

use super::{Targets, Thresholds, certify, choose, entry_decisions, stability};
use crate::{NoCertificate, Point, SplitMix64};

const TARGETS: Targets = Targets {
    min_pass_precision: 0.9,
    min_fail_precision: 0.85,
    max_abstain: 0.25,
    z: 1.96,
};

/// A population of p′ on 25 grid values with a U-shaped mass, perfectly calibrated
/// (P(yes | p′ = v) = v), so every pair's true precisions are known exactly.
struct Population {
    values: Vec<f64>,
    mass: Vec<f64>,
}

impl Population {
    fn new() -> Population {
        let values: Vec<f64> = (0..25).map(|m| (f64::from(m) + 0.5) / 25.0).collect();
        let raw: Vec<f64> = values
            .iter()
            .map(|v| (-8.0 * v).exp() + (-8.0 * (1.0 - v)).exp())
            .collect();
        let total: f64 = raw.iter().sum();
        Population {
            values,
            mass: raw.iter().map(|m| m / total).collect(),
        }
    }

    fn draw(&self, n: usize, rng: &mut SplitMix64) -> Vec<Point> {
        (0..n)
            .map(|_| {
                let mut u = rng.next_f64();
                let mut index = self.values.len() - 1;
                for (m, mass) in self.mass.iter().enumerate() {
                    if u < *mass {
                        index = m;
                        break;
                    }
                    u -= mass;
                }
                let v = self.values[index];
                Point::new(v, rng.next_f64() < v)
            })
            .collect()
    }

    /// The true PASS and FAIL precisions of a pair.
    fn precisions(&self, thresholds: Thresholds) -> (f64, f64) {
        let (mut pass, mut pass_right, mut fail, mut fail_right) = (0.0, 0.0, 0.0, 0.0);
        for (v, mass) in self.values.iter().zip(&self.mass) {
            if *v >= thresholds.pass_at_or_above {
                pass += mass;
                pass_right += mass * v;
            } else if *v <= thresholds.fail_at_or_below {
                fail += mass;
                fail_right += mass * (1.0 - v);
            }
        }
        let share = |right: f64, all: f64| if all > 0.0 { right / all } else { 1.0 };
        (share(pass_right, pass), share(fail_right, fail))
    }

    fn holds(&self, thresholds: Thresholds, targets: &Targets) -> bool {
        let (pass, fail) = self.precisions(thresholds);
        pass >= targets.min_pass_precision && fail >= targets.min_fail_precision
    }
}

#[test]
fn certified_pairs_meet_their_targets_in_at_least_one_minus_delta_of_draws() {
    let population = Population::new();
    let targets = Targets {
        min_pass_precision: 0.8,
        min_fail_precision: 0.8,
        max_abstain: 0.5,
        z: 1.96,
    };
    let delta = 0.05;
    let draws = 2_000;
    let mut rng = SplitMix64::new(2026);
    let (mut certified, mut certified_wrong) = (0u32, 0u32);
    let (mut recommended, mut recommended_wrong, mut bound_missed) = (0u32, 0u32, 0u32);
    for _ in 0..draws {
        let points = population.draw(150, &mut rng);
        if let Ok(certificate) = certify(&points, None, None, &targets, delta) {
            certified += 1;
            certified_wrong += u32::from(!population.holds(certificate.thresholds, &targets));
        }
        if let Ok(choice) = choose(&points, &targets) {
            recommended += 1;
            recommended_wrong += u32::from(!population.holds(choice.thresholds, &targets));
            // The old claim: the printed Wilson lower bounds lie below the true precisions.
            let (pass, fail) = population.precisions(choice.thresholds);
            let covered = choice
                .tally
                .pass_lower(1.96)
                .is_none_or(|lower| lower <= pass)
                && choice
                    .tally
                    .fail_lower(1.96)
                    .is_none_or(|lower| lower <= fail);
            bound_missed += u32::from(!covered);
        }
    }
    let coverage = 1.0 - f64::from(certified_wrong) / f64::from(draws);
    let old_coverage = 1.0 - f64::from(recommended_wrong) / f64::from(draws);
    eprintln!(
        "Learn then Test: {certified} of {draws} draws certified a pair, {certified_wrong} wrongly: coverage {coverage:.4}; \
         Wilson choice: {recommended} recommended, {recommended_wrong} below the targets: coverage {old_coverage:.4}; \
         its printed Wilson lower bounds covered both true precisions in {} of {recommended} ({:.4})",
        recommended - bound_missed,
        1.0 - f64::from(bound_missed) / f64::from(recommended.max(1))
    );
    assert!(coverage >= 1.0 - delta, "coverage {coverage}");
    // The simulation has power: the procedure certifies a pair in most draws.
    assert!(certified > draws / 2, "only {certified} certified");
}

#[test]
fn unequal_weights_mark_the_guarantee_approximate_and_equal_ones_change_nothing() {
    let population = Population::new();
    let points = population.draw(400, &mut SplitMix64::new(9));
    let targets = Targets {
        min_pass_precision: 0.8,
        min_fail_precision: 0.8,
        max_abstain: 0.5,
        z: 1.96,
    };
    let plain = certify(&points, None, None, &targets, 0.05).unwrap();
    let ones = vec![2.0; points.len()];
    let equal = certify(&points, Some(&ones), None, &targets, 0.05).unwrap();
    assert!(!equal.approximate);
    assert_eq!(equal.thresholds, plain.thresholds);
    assert!((equal.pass_p_value - plain.pass_p_value).abs() < 1e-12);
    assert!((equal.pass_effective_n - plain.tally.passes as f64).abs() < 1e-9);
    let uneven: Vec<f64> = (0..points.len()).map(|i| 1.0 + (i % 3) as f64).collect();
    let weighted = certify(&points, Some(&uneven), None, &targets, 0.05).unwrap();
    assert!(weighted.approximate);
    assert!(weighted.pass_effective_n < weighted.tally.passes as f64);
}

#[test]
fn bad_weights_delta_or_points_are_refused() {
    let points = [Point::new(0.9, true), Point::new(0.1, false)];
    assert_eq!(
        certify(&points, Some(&[1.0]), None, &TARGETS, 0.05),
        Err(NoCertificate::InvalidInput)
    );
    assert_eq!(
        certify(&points, Some(&[1.0, 0.0]), None, &TARGETS, 0.05),
        Err(NoCertificate::InvalidInput)
    );
    assert_eq!(
        certify(&points, None, None, &TARGETS, 1.0),
        Err(NoCertificate::InvalidInput)
    );
    assert_eq!(
        certify(&[], None, None, &TARGETS, 0.05),
        Err(NoCertificate::Empty)
    );
}

#[test]
fn too_few_decisions_to_test_is_said_as_such() {
    let mut points = vec![Point::new(0.9, true); 20];
    points.extend(vec![Point::new(0.1, false); 30]);
    match certify(&points, None, None, &TARGETS, 0.05) {
        Err(NoCertificate::PassNotCertified {
            first_p_value: None,
            entry,
        }) => assert_eq!(entry, entry_decisions(0.9, 0.025)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_sequence_stops_at_its_first_failure() {
    // 60 correct PASS at 0.95, then 20 wrong at 0.9: the PASS threshold 0.9 fails its test, and
    // 0.8 (60 more right) below it is never tested, though on its own it would pass.
    let mut points = vec![Point::new(0.95, true); 60];
    points.extend(vec![Point::new(0.9, false); 20]);
    points.extend(vec![Point::new(0.8, true); 200]);
    points.extend(vec![Point::new(0.05, false); 100]);
    let targets = Targets {
        max_abstain: 1.0,
        ..TARGETS
    };
    let certificate = certify(&points, None, None, &targets, 0.05).unwrap();
    assert_eq!(certificate.thresholds.pass_at_or_above, 0.95);
}

#[test]
fn entry_decisions_is_the_least_count_certifying_one_error() {
    assert_eq!(entry_decisions(0.9, 0.025), 54);
    assert_eq!(entry_decisions(0.0, 0.025), 1);
    assert_eq!(entry_decisions(1.0, 0.025), u64::MAX);
}

#[test]
fn stability_counts_distinct_rows_once_and_is_seeded() {
    let population = Population::new();
    let points = population.draw(300, &mut SplitMix64::new(3));
    let targets = Targets {
        min_pass_precision: 0.8,
        min_fail_precision: 0.8,
        max_abstain: 0.5,
        z: 1.96,
    };
    let chosen = certify(&points, None, None, &targets, 0.05)
        .unwrap()
        .thresholds;
    let first = stability(&points, &targets, 0.05, None, 40, 11, chosen);
    let again = stability(&points, &targets, 0.05, None, 40, 11, chosen);
    assert_eq!(first, again);
    assert!(first.same_pair <= first.certified && first.certified <= 40);
    assert!(first.distinct_pairs >= 1);
    let (low, high) = first.pass_interval.unwrap();
    let pooled = first.pass_precision().unwrap();
    assert!(low <= pooled && pooled <= high);
}

#[test]
fn repeats_count_each_case_once_and_agreeing_repeats_change_no_decision() {
    let population = Population::new();
    let points = population.draw(300, &mut SplitMix64::new(5));
    let targets = Targets {
        min_pass_precision: 0.8,
        min_fail_precision: 0.8,
        max_abstain: 0.5,
        z: 1.96,
    };
    let once = certify(&points, None, None, &targets, 0.05).unwrap();
    // The same cases reviewed twice, both reviews alike: the same pair and p-values (the
    // effective n is the case count), stated as approximate.
    let twice: Vec<Point> = points.iter().flat_map(|point| [*point, *point]).collect();
    let cases: Vec<usize> = (0..points.len()).flat_map(|case| [case, case]).collect();
    let repeated = certify(&twice, None, Some(&cases), &targets, 0.05).unwrap();
    assert_eq!(repeated.thresholds, once.thresholds);
    assert!((repeated.pass_p_value - once.pass_p_value).abs() < 1e-12);
    assert!((repeated.pass_effective_n - once.tally.passes as f64).abs() < 1e-9);
    assert!(repeated.approximate && !once.approximate);
    // Counting the 600 reviews as independent claims at least as much (it decides at least as
    // many reviews).
    let naive = certify(&twice, None, None, &targets, 0.05).unwrap();
    let decided = |tally: super::Tally| tally.passes + tally.fails;
    assert!(decided(naive.tally) >= decided(repeated.tally));
    // The stability figure resamples cases with all their reviews.
    let figure = stability(
        &twice,
        &targets,
        0.05,
        Some(&cases),
        30,
        1,
        repeated.thresholds,
    );
    assert_eq!(figure.resamples, 30);
    assert!(figure.same_pair <= figure.certified);
}
