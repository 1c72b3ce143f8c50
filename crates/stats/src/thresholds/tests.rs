use super::{
    choose::{distinct, shortest_within},
    *,
};
use crate::{SplitMix64, test_points::points_of};
use proptest::prelude::*;

const LOOSE: Targets = Targets {
    min_pass_precision: 0.5,
    min_fail_precision: 0.5,
    max_abstain: 1.0,
    z: 1.96,
};

fn repeat(p: f64, label: bool, count: usize) -> Vec<Point> {
    vec![Point::new(p, label); count]
}

#[test]
fn decide_matches_the_judge_boundaries() {
    let pair = Thresholds::new(0.2, 0.8).unwrap();
    assert_eq!(pair.decide(0.8), Decision::Pass);
    assert_eq!(pair.decide(0.2), Decision::Fail);
    assert_eq!(pair.decide(0.5), Decision::Abstain);
    // judge-contract rule 22: 1 − 0.7 = 0.30000000000000004 > 0.3
    let quirk = Thresholds::new(0.3, 0.8).unwrap();
    assert_eq!(quirk.decide(1.0 - 0.7), Decision::Abstain);
}

#[test]
fn thresholds_new_rejects_bad_pairs() {
    for (fail, pass) in [
        (0.5, 0.5),
        (0.6, 0.4),
        (-0.1, 0.5),
        (0.2, 1.1),
        (f64::NAN, 0.5),
    ] {
        assert_eq!(Thresholds::new(fail, pass), None, "{fail} {pass}");
    }
    assert!(Thresholds::new(0.0, 1.0).is_some());
}

// 3 passes (2 right), 2 fails (2 right), 1 abstained, by hand.
#[test]
fn tally_counts_by_hand() {
    let points = points_of(&[
        (0.9, true),
        (0.95, true),
        (0.8, false),
        (0.5, true),
        (0.2, false),
        (0.0, false),
        (f64::NAN, true),
    ]);
    let counts = tally(&points, Thresholds::new(0.2, 0.8).unwrap());
    assert_eq!(
        counts,
        Tally {
            total: 6,
            passes: 3,
            correct_passes: 2,
            fails: 2,
            correct_fails: 2
        }
    );
    assert_eq!(counts.pass_precision(), Some(2.0 / 3.0));
    assert_eq!(counts.fail_precision(), Some(1.0));
    assert_eq!(counts.abstain_rate(), Some(1.0 / 6.0));
    // Wilson 2/3 at 1.96: center = (2 + 1.9208) / 6.8416 = 0.573082,
    // half = 1.96 / 6.8416 · √(2·1/3 + 0.9604) = 0.286482 · 1.275565 = 0.365427.
    let lower = counts.pass_lower(1.96).unwrap();
    assert!((lower - 0.207_655).abs() < 1e-5, "{lower}");
}

#[test]
fn meets_observed_is_vacuous_without_decisions_of_a_kind() {
    let targets = Targets {
        min_pass_precision: 0.9,
        min_fail_precision: 0.9,
        max_abstain: 0.5,
        z: 1.96,
    };
    let only_passes = Tally {
        total: 4,
        passes: 4,
        correct_passes: 4,
        ..Tally::default()
    };
    assert!(only_passes.meets_observed(&targets));
    let all_abstain = Tally {
        total: 4,
        ..Tally::default()
    };
    assert!(!all_abstain.meets_observed(&targets));
    assert!(!Tally::default().meets_observed(&targets));
}

// Separable data: pass at the smallest yes value, fail at the largest no value.
#[test]
fn separable_points_need_no_abstention() {
    let mut points = repeat(0.7, true, 10);
    points.extend(repeat(0.9, true, 10));
    points.extend(repeat(0.3, false, 10));
    points.extend(repeat(0.1, false, 10));
    let choice = choose(&points, &LOOSE).unwrap();
    assert_eq!(choice.thresholds, Thresholds::new(0.3, 0.7).unwrap());
    assert_eq!(choice.tally.abstained(), 0);
}

// Hand-checked: yes at 0.9 ×20, no at 0.1 ×20, a muddle of 2 yes + 2 no at 0.5.
// Passing at 0.5 gives 22/24 (Wilson lower 0.742) < 0.8; passing at 0.9 gives 20/20
// (lower 20/23.8416 = 0.8389) ≥ 0.8. Symmetrically for FAIL. So 4 abstain.
#[test]
fn wilson_lower_bound_keeps_a_muddle_out() {
    let mut points = repeat(0.9, true, 20);
    points.extend(repeat(0.1, false, 20));
    points.extend([
        Point::new(0.5, true),
        Point::new(0.5, false),
        Point::new(0.5, true),
        Point::new(0.5, false),
    ]);
    let targets = Targets {
        min_pass_precision: 0.8,
        min_fail_precision: 0.8,
        max_abstain: 0.2,
        z: 1.96,
    };
    let choice = choose(&points, &targets).unwrap();
    assert_eq!(choice.thresholds, Thresholds::new(0.1, 0.9).unwrap());
    assert_eq!(choice.tally.abstained(), 4);
    // With z = 0 (observed precision), 22/24 = 0.917 ≥ 0.8 and passing at 0.5 is allowed;
    // FAIL then stops below 0.5, and nothing abstains.
    let observed = Targets { z: 0.0, ..targets };
    let choice = choose(&points, &observed).unwrap();
    assert_eq!(choice.thresholds, Thresholds::new(0.1, 0.5).unwrap());
    assert_eq!(choice.tally.abstained(), 0);
    // Too strict about abstention: refused, naming the least achievable.
    let strict = Targets {
        max_abstain: 0.05,
        ..targets
    };
    match choose(&points, &strict) {
        Err(NoChoice::TooMuchAbstention { least, .. }) => {
            assert!((least - 4.0 / 44.0).abs() < 1e-12);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unreachable_precision_is_refused() {
    // 9 of 10 right at best: Wilson lower of 9/10 is 0.596 < 0.9.
    let mut points = repeat(0.9, true, 9);
    points.push(Point::new(0.9, false));
    points.extend(repeat(0.1, false, 10));
    let targets = Targets {
        min_pass_precision: 0.9,
        ..LOOSE
    };
    match choose(&points, &targets) {
        Err(NoChoice::PassPrecisionUnreachable { best_lower }) => {
            // the best PASS candidate is 0.9: 9/10
            assert!((best_lower - wilson_lower(9, 10, 1.96).unwrap()).abs() < 1e-12);
        }
        other => panic!("{other:?}"),
    }
    let flipped: Vec<Point> = points
        .iter()
        .map(|point| Point::new(1.0 - point.p, !point.label))
        .collect();
    let targets = Targets {
        min_pass_precision: 0.5,
        min_fail_precision: 0.9,
        ..targets
    };
    assert!(matches!(
        choose(&flipped, &targets),
        Err(NoChoice::FailPrecisionUnreachable { .. })
    ));
}

#[test]
fn inverted_points_have_no_ordered_pair() {
    // Yes below, no above: PASS is only precise at the very bottom, FAIL only at the top.
    let mut points = repeat(0.1, true, 30);
    points.extend(repeat(0.9, false, 30));
    let targets = Targets { z: 0.0, ..LOOSE };
    // PASS at 0.1 takes everything (30/60 = 0.5 ok), FAIL at 0.9 takes everything too:
    // no FAIL threshold lies below an admissible PASS threshold except none.
    assert_eq!(choose(&points, &targets), Err(NoChoice::NoOrderedPair));
}

#[test]
fn bad_input_is_refused() {
    assert_eq!(choose(&[], &LOOSE), Err(NoChoice::Empty));
    assert_eq!(
        choose(&[Point::new(1.5, true)], &LOOSE),
        Err(NoChoice::InvalidInput)
    );
    let bad = Targets {
        z: f64::NAN,
        ..LOOSE
    };
    assert_eq!(
        choose(&[Point::new(0.5, true)], &bad),
        Err(NoChoice::InvalidInput)
    );
    // One distinct value: no FAIL threshold can lie below a PASS threshold.
    assert!(choose(&repeat(0.5, true, 10), &LOOSE).is_err());
}

// p′ = 1 − p values carry binary noise; the written thresholds are the short decimals.
#[test]
fn thresholds_are_written_as_short_decimals() {
    let mut points: Vec<Point> = repeat(1.0 - 0.93, false, 15); // 0.06999999999999995
    points.extend(repeat(1.0 - 0.6, false, 3)); // 0.4
    points.extend(repeat(1.0 - 0.6, true, 3));
    points.extend(repeat(1.0 - 0.04, true, 15)); // 0.96
    let choice = choose(&points, &LOOSE).unwrap();
    let Thresholds {
        fail_at_or_below,
        pass_at_or_above,
    } = choice.thresholds;
    assert!(
        fail_at_or_below.to_string().len() <= 4 && pass_at_or_above.to_string().len() <= 4,
        "{fail_at_or_below} {pass_at_or_above}"
    );
    assert_eq!(tally(&points, choice.thresholds), choice.tally);
}

#[test]
fn shortest_within_keeps_decisions() {
    // 0.9299999999999999 (= 1 − 0.07) cannot become 0.93 as a PASS threshold: 0.93 would
    // leave that point undecided (rule 22).
    let value = 1.0 - 0.07;
    let x = shortest_within(value, 0.92, value, true, false);
    assert!(x <= value && x > 0.92 && (x - value).abs() <= 1e-9);
    assert_eq!(shortest_within(0.25, 0.2, 0.3, true, false), 0.25);
    // 0.06999999999999995 as a FAIL threshold below 0.4 becomes 0.07.
    assert_eq!(
        shortest_within(1.0 - 0.93, 1.0 - 0.93, 0.4, false, true),
        0.07
    );
}

#[test]
fn out_of_bag_is_deterministic_and_fails_on_noise() {
    let mut rng = SplitMix64::new(1);
    let noise: Vec<Point> = (0..200)
        .map(|_| Point::new(rng.next_f64(), rng.below(2) == 1))
        .collect();
    let targets = Targets {
        min_pass_precision: 0.9,
        min_fail_precision: 0.9,
        max_abstain: 0.3,
        z: 1.96,
    };
    let first = out_of_bag(&noise, &targets, 40, 3);
    assert_eq!(first, out_of_bag(&noise, &targets, 40, 3));
    assert_eq!(first.resamples, 40);
    assert!(first.rate().unwrap() < 0.2, "{first:?}");
    assert_eq!(out_of_bag(&noise, &targets, 0, 3).rate(), None);
}

fn arbitrary_points() -> impl Strategy<Value = Vec<Point>> {
    prop::collection::vec(
        (0u32..=100, any::<bool>(), any::<bool>()).prop_map(|(hundredths, label, flip)| {
            let p = f64::from(hundredths) / 100.0;
            // Half the points as an expected-false criterion computes p′ (binary noise).
            Point::new(if flip { 1.0 - p } else { p }, label)
        }),
        0..120,
    )
}

fn informative_points() -> impl Strategy<Value = Vec<Point>> {
    crate::test_points::informative_points(100, 20..200)
}

proptest! {
    #[test]
    fn chosen_thresholds_are_valid_and_meet_the_targets_they_were_fit_on(
        points in prop_oneof![arbitrary_points(), informative_points()],
        pass in 0.3f64..0.99,
        fail in 0.3f64..0.99,
        abstain in 0.0f64..1.0,
    ) {
        let targets = Targets { min_pass_precision: pass, min_fail_precision: fail, max_abstain: abstain, z: 1.96 };
        if let Ok(choice) = choose(&points, &targets) {
            let Thresholds { fail_at_or_below, pass_at_or_above } = choice.thresholds;
            prop_assert!(0.0 <= fail_at_or_below && fail_at_or_below < pass_at_or_above && pass_at_or_above <= 1.0);
            let counts = tally(&points, choice.thresholds);
            prop_assert_eq!(counts, choice.tally);
            prop_assert!(counts.pass_lower(1.96).unwrap() >= pass);
            prop_assert!(counts.fail_lower(1.96).unwrap() >= fail);
            prop_assert!(counts.abstain_rate().unwrap() <= abstain);
            prop_assert!(counts.pass_precision().unwrap() >= pass);
            prop_assert!(counts.fail_precision().unwrap() >= fail);
        }
    }

    #[test]
    fn the_choice_abstains_least_among_observed_pairs(points in informative_points()) {
        let targets = Targets { min_pass_precision: 0.7, min_fail_precision: 0.7, ..LOOSE };
        if let Ok(choice) = choose(&points, &targets) {
            let values = distinct(&points);
            for (j, (fail, ..)) in values.iter().enumerate() {
                for (pass, ..) in &values[j + 1..] {
                    let counts = tally(&points, Thresholds::new(*fail, *pass).unwrap());
                    if counts.pass_lower(1.96).is_some_and(|l| l >= 0.7)
                        && counts.fail_lower(1.96).is_some_and(|l| l >= 0.7)
                    {
                        prop_assert!(counts.abstained() >= choice.tally.abstained());
                    }
                }
            }
        }
    }

    #[test]
    fn the_choice_does_not_depend_on_row_order(points in arbitrary_points(), seed: u64) {
        let mut shuffled = points.clone();
        let mut rng = SplitMix64::new(seed);
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.below(i as u64 + 1) as usize);
        }
        prop_assert_eq!(choose(&points, &LOOSE), choose(&shuffled, &LOOSE));
    }
}
