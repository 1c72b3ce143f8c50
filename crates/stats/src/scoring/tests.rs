use super::*;
use crate::test_points::points_of;
use proptest::prelude::*;

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-12
}

fn sample() -> Vec<Point> {
    points_of(&[
        (0.1, false),
        (0.2, true),
        (0.3, false),
        (0.6, true),
        (0.9, true),
    ])
}

// (0.01 + 0.04) / 2 = 0.025
#[test]
fn brier_two_points() {
    let points = [Point::new(0.9, true), Point::new(0.2, false)];
    assert!(close(brier(&points).unwrap(), 0.025));
}

// (0.01 + 0.64 + 0.09 + 0.16 + 0.01) / 5 = 0.91 / 5 = 0.182
#[test]
fn brier_sample() {
    assert!(close(brier(&sample()).unwrap(), 0.182));
}

// Two points at the extremes, where the figures are exact: a certain verdict scores 0 when
// right and 1 when wrong; an area is 1 when every yes ranks above every no, 0 when below,
// and negative zero ties with zero (½).
#[test]
fn two_point_extremes_are_exact() {
    type Metric = fn(&[Point]) -> Option<f64>;
    for (name, metric, points, expected) in [
        (
            "brier, certain and right",
            brier as Metric,
            [(1.0, true), (0.0, false)],
            0.0,
        ),
        (
            "brier, certain and wrong",
            brier,
            [(0.0, true), (1.0, false)],
            1.0,
        ),
        ("auroc, perfect", auroc, [(0.9, true), (0.2, false)], 1.0),
        ("auroc, inverted", auroc, [(0.1, true), (0.2, false)], 0.0),
        (
            "auroc, yes at -0 and no at 0",
            auroc,
            [(-0.0, true), (0.0, false)],
            0.5,
        ),
        (
            "auroc, yes at 0 and no at -0",
            auroc,
            [(0.0, true), (-0.0, false)],
            0.5,
        ),
    ] {
        assert_eq!(metric(&points_of(&points)), Some(expected), "{name}");
    }
}

// (−ln 0.9 − ln 0.8) / 2 = (0.105360516 + 0.223143551) / 2 = 0.164252033
#[test]
fn log_loss_two_points() {
    let points = [Point::new(0.9, true), Point::new(0.2, false)];
    assert!((log_loss(&points).unwrap() - 0.164_252_033).abs() < 1e-9);
}

// A certain mistake costs −ln(1e-15) = 15 · ln 10 = 34.538776394910684, not infinity.
#[test]
fn log_loss_clamps_certain_mistakes() {
    let worst = 15.0 * std::f64::consts::LN_10;
    assert!((log_loss(&[Point::new(0.0, true)]).unwrap() - worst).abs() < 1e-12);
    assert!((log_loss(&[Point::new(1.0, false)]).unwrap() - worst).abs() < 1e-12);
    // A certain success costs −ln(1 − 1e-15) ≈ 1e-15.
    assert!(log_loss(&[Point::new(1.0, true)]).unwrap() < 2e-15);
    assert!(log_loss(&[Point::new(0.0, false)]).unwrap() < 2e-15);
}

// All tied: every pair counts ½.
#[test]
fn auroc_all_ties_is_one_half() {
    let points = points_of(&[(0.5, true), (0.5, false), (0.5, false)]);
    assert_eq!(auroc(&points), Some(0.5));
}

// Sample: yes at 0.2, 0.6, 0.9; no at 0.1, 0.3. Pairs won: 0.2 beats 0.1 (1); 0.6 and 0.9
// beat both (4): 5 of 6.
#[test]
fn auroc_sample() {
    assert!(close(auroc(&sample()).unwrap(), 5.0 / 6.0));
}

#[test]
fn auroc_needs_both_classes() {
    assert_eq!(auroc(&[Point::new(0.3, true), Point::new(0.9, true)]), None);
    assert_eq!(auroc(&[Point::new(0.3, false)]), None);
}

#[test]
fn invalid_or_empty_input_gives_none() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.1, 1.1] {
        let points = [Point::new(0.5, true), Point::new(bad, false)];
        assert!(!points[1].is_valid());
        assert_eq!(brier(&points), None);
        assert_eq!(log_loss(&points), None);
        assert_eq!(auroc(&points), None);
        assert_eq!(reliability_equal_width(&points, 10), None);
        assert_eq!(reliability_equal_mass(&points, 10), None);
    }
    assert_eq!(brier(&[]), None);
    assert_eq!(log_loss(&[]), None);
    assert_eq!(auroc(&[]), None);
    assert_eq!(reliability_equal_width(&[], 10), None);
    assert_eq!(reliability_equal_mass(&[], 10), None);
    assert_eq!(reliability_equal_width(&sample(), 0), None);
    assert_eq!(reliability_equal_mass(&sample(), 0), None);
    assert_eq!(ece(&[]), None);
    assert_eq!(mce(&[]), None);
}

// Ten bins: 0.1 → bin 1, 0.2 → 2, 0.3 → 3 (0.3 · 10 = 3 exactly), 0.6 → 6, 0.9 → 9, and
// p = 1 joins the last bin.
#[test]
fn equal_width_leaves_out_empty_bins_and_closes_the_last() {
    let mut points = sample();
    points.push(Point::new(1.0, true));
    let table = reliability_equal_width(&points, 10).unwrap();
    let lowers: Vec<f64> = table.iter().map(|bin| bin.lower).collect();
    assert_eq!(lowers, [0.1, 0.2, 0.3, 0.6, 0.9]);
    assert_eq!(table[4].count, 2);
    assert_eq!(table[4].upper, 1.0);
    // One point per bin elsewhere: each gap is |p − label|.
    assert!(close(table[0].mean_probability, 0.1));
    assert_eq!(table[0].observed_rate, 0.0);
}

#[test]
fn equal_width_with_huge_bin_count_does_not_allocate_per_bin() {
    let table = reliability_equal_width(&sample(), usize::MAX).unwrap();
    assert_eq!(table.len(), 5);
    assert_eq!(table.iter().map(|bin| bin.count).sum::<usize>(), 5);
}

// Equal width, bins [0, 0.5) and [0.5, 1]: 0.1, 0.2, 0.3 → mean 0.2, observed 1/3; 0.6, 0.9 →
// mean 0.75, observed 1. ECE = (3 · 2/15 + 2 · 0.25) / 5 = (0.4 + 0.5) / 5 = 0.18; MCE = 0.25.
// Equal mass, n = 5: first cut after ⌊5/2⌋ = 2 points. [0.1, 0.2]: mean 0.15, observed 0.5,
// gap 0.35; [0.3, 0.6, 0.9]: mean 0.6, observed 2/3.
// ECE = (2 · 0.35 + 3 · 1/15) / 5 = (0.7 + 0.2) / 5 = 0.18; MCE = 0.35.
#[test]
fn two_bins_of_the_sample() {
    type Binning = fn(&[Point], usize) -> Option<Vec<Bin>>;
    for (name, binning, bins, expected_ece, expected_mce) in [
        (
            "equal width",
            reliability_equal_width as Binning,
            [(0.0, 0.5, 3, 0.2, 1.0 / 3.0), (0.5, 1.0, 2, 0.75, 1.0)],
            0.18,
            0.25,
        ),
        (
            "equal mass",
            reliability_equal_mass,
            [(0.1, 0.2, 2, 0.15, 0.5), (0.3, 0.9, 3, 0.6, 2.0 / 3.0)],
            0.18,
            0.35,
        ),
    ] {
        let table = binning(&sample(), 2).unwrap();
        assert_eq!(table.len(), 2, "{name}");
        for (bin, (lower, upper, count, mean, observed)) in table.iter().zip(bins) {
            // The observed rate is positives ÷ count, so exact.
            assert_eq!(
                (bin.lower, bin.upper, bin.count, bin.observed_rate),
                (lower, upper, count, observed),
                "{name}"
            );
            assert!(close(bin.mean_probability, mean), "{name}: {bin:?}");
        }
        assert!(close(ece(&table).unwrap(), expected_ece), "{name}");
        assert!(close(mce(&table).unwrap(), expected_mce), "{name}");
    }
}

#[test]
fn equal_mass_sizes_differ_by_at_most_one() {
    let points: Vec<Point> = (0..10)
        .map(|i| Point::new(f64::from(i) / 10.0, i % 2 == 0))
        .collect();
    let sizes: Vec<usize> = reliability_equal_mass(&points, 3)
        .unwrap()
        .iter()
        .map(|bin| bin.count)
        .collect();
    // cuts after ⌊10/3⌋ = 3 and ⌊20/3⌋ = 6
    assert_eq!(sizes, [3, 3, 4]);
}

#[test]
fn equal_mass_never_splits_ties() {
    let points = points_of(&[(0.2, true), (0.2, false), (0.2, true), (0.8, false)]);
    let table = reliability_equal_mass(&points, 2).unwrap();
    assert_eq!(table.len(), 2);
    assert_eq!(
        (table[0].lower, table[0].upper, table[0].count),
        (0.2, 0.2, 3)
    );
    assert!(close(table[0].observed_rate, 2.0 / 3.0));
    assert_eq!(table[1].count, 1);

    let all_tied = [Point::new(0.4, true), Point::new(0.4, false)];
    let table = reliability_equal_mass(&all_tied, 10).unwrap();
    assert_eq!(table.len(), 1);
    assert_eq!(table[0].count, 2);
    assert_eq!(table[0].observed_rate, 0.5);
}

#[test]
fn equal_mass_with_more_bins_than_points() {
    let table = reliability_equal_mass(&sample(), usize::MAX).unwrap();
    assert_eq!(table.len(), 5);
    assert!(
        table
            .iter()
            .all(|bin| bin.count == 1 && bin.lower == bin.upper)
    );
}

#[test]
fn ece_and_mce_ignore_empty_bins_and_reject_nan() {
    let empty = Bin {
        lower: 0.0,
        upper: 0.1,
        count: 0,
        mean_probability: f64::NAN,
        observed_rate: f64::NAN,
    };
    let full = Bin {
        lower: 0.1,
        upper: 0.2,
        count: 4,
        mean_probability: 0.15,
        observed_rate: 0.25,
    };
    assert!(close(ece(&[empty.clone(), full.clone()]).unwrap(), 0.1));
    assert!(close(mce(&[empty.clone(), full.clone()]).unwrap(), 0.1));
    assert_eq!(ece(std::slice::from_ref(&empty)), None);
    let broken = Bin { count: 1, ..empty };
    assert_eq!(ece(&[broken.clone(), full.clone()]), None);
    assert_eq!(mce(&[broken, full]), None);
}

/// Probabilities on a grid (many ties, exact 0 and 1) or anywhere in [0, 1].
fn probability() -> impl Strategy<Value = f64> {
    prop_oneof![(0u32..=20).prop_map(|i| f64::from(i) / 20.0), 0.0f64..=1.0,]
}

fn points(max: usize) -> impl Strategy<Value = Vec<Point>> {
    prop::collection::vec(
        (probability(), any::<bool>()).prop_map(|(p, label)| Point::new(p, label)),
        1..max,
    )
}

/// Every metric, for comparing two inputs bit for bit.
fn all_metrics(points: &[Point], bins: usize) -> impl PartialEq + std::fmt::Debug {
    let width = reliability_equal_width(points, bins);
    let mass = reliability_equal_mass(points, bins);
    (
        brier(points).map(f64::to_bits),
        log_loss(points).map(f64::to_bits),
        auroc(points).map(f64::to_bits),
        width.as_deref().and_then(ece).map(f64::to_bits),
        mass.as_deref().and_then(ece).map(f64::to_bits),
        width,
        mass,
    )
}

proptest! {
    #[test]
    fn metrics_are_invariant_to_row_order(
        (original, shuffled) in points(60).prop_flat_map(|points| {
            (Just(points.clone()), Just(points).prop_shuffle())
        }),
        bins in 1usize..15,
    ) {
        prop_assert_eq!(all_metrics(&original, bins), all_metrics(&shuffled, bins));
    }

    #[test]
    fn brier_and_log_loss_are_bounded(points in points(60)) {
        let score = brier(&points).unwrap();
        prop_assert!((0.0..=1.0).contains(&score));
        let loss = log_loss(&points).unwrap();
        prop_assert!((0.0..=15.0 * std::f64::consts::LN_10 + 1e-9).contains(&loss));
    }

    #[test]
    fn ece_and_mce_are_bounded_and_ordered(points in points(80), bins in 1usize..25) {
        for table in [
            reliability_equal_width(&points, bins).unwrap(),
            reliability_equal_mass(&points, bins).unwrap(),
        ] {
            prop_assert!(!table.is_empty() && table.len() <= bins);
            prop_assert_eq!(table.iter().map(|bin| bin.count).sum::<usize>(), points.len());
            let expected = ece(&table).unwrap();
            let maximum = mce(&table).unwrap();
            prop_assert!((0.0..=1.0).contains(&expected));
            prop_assert!((0.0..=1.0).contains(&maximum));
            prop_assert!(expected <= maximum);
            for bin in &table {
                prop_assert!(bin.count > 0);
                prop_assert!((0.0..=1.0).contains(&bin.mean_probability));
                prop_assert!((0.0..=1.0).contains(&bin.observed_rate));
            }
            // Bins are ordered and do not overlap.
            for pair in table.windows(2) {
                prop_assert!(pair[0].upper <= pair[1].lower);
            }
        }
    }

    #[test]
    fn equal_mass_bins_have_disjoint_probabilities(points in points(80), bins in 1usize..25) {
        let table = reliability_equal_mass(&points, bins).unwrap();
        for pair in table.windows(2) {
            prop_assert!(pair[0].upper < pair[1].lower, "a tie was split: {:?}", pair);
        }
    }

    #[test]
    fn auroc_is_bounded_and_flips_with_the_probabilities(points in points(60)) {
        // For arbitrary floats 1 − p can merge distinct probabilities into a tie (1 − 1e-17
        // = 1 − 0), which changes the area; on a grid of twentieths it cannot.
        let grid: Vec<Point> = points
            .iter()
            .map(|point| Point::new((point.p * 20.0).round() / 20.0, point.label))
            .collect();
        let flipped: Vec<Point> = grid
            .iter()
            .map(|point| Point::new(1.0 - point.p, point.label))
            .collect();
        match (auroc(&grid), auroc(&flipped)) {
            (Some(area), Some(flipped_area)) => {
                prop_assert!((0.0..=1.0).contains(&area));
                prop_assert!((area - (1.0 - flipped_area)).abs() < 1e-12);
            }
            (None, None) => {
                prop_assert!(grid.iter().all(|point| point.label == grid[0].label));
            }
            other => prop_assert!(false, "one side undefined: {:?}", other),
        }
    }

    #[test]
    fn auroc_matches_the_pairwise_definition(points in points(40)) {
        let mut wins = 0.0;
        let mut pairs = 0.0;
        for yes in points.iter().filter(|point| point.label) {
            for no in points.iter().filter(|point| !point.label) {
                pairs += 1.0;
                wins += if yes.p > no.p { 1.0 } else if yes.p == no.p { 0.5 } else { 0.0 };
            }
        }
        match auroc(&points) {
            Some(area) => prop_assert!((area - wins / pairs).abs() < 1e-12),
            None => prop_assert_eq!(pairs, 0.0),
        }
    }

    #[test]
    fn ece_is_the_weighted_mean_of_gaps(points in points(60), bins in 1usize..12) {
        let table = reliability_equal_width(&points, bins).unwrap();
        let n = points.len() as f64;
        let direct: f64 = table.iter().map(|bin| bin.count as f64 / n * bin.gap()).sum();
        prop_assert!((ece(&table).unwrap() - direct).abs() < 1e-12);
    }
}
