//! Points for the tests, shared by the unit tests and `tests/reference.rs` (which includes this
//! file): written as `(p, label)` pairs, or drawn by proptest.

use std::ops::Range;

use proptest::prelude::*;

use super::Point;

/// The points of `(p, label)` pairs, in order.
pub fn points_of(pairs: &[(f64, bool)]) -> Vec<Point> {
    pairs
        .iter()
        .map(|&(p, label)| Point::new(p, label))
        .collect()
}

/// `sizes` points with p on a grid of `1 / steps` and informative labels: yes with
/// probability p.
pub fn informative_points(steps: u32, sizes: Range<usize>) -> impl Strategy<Value = Vec<Point>> {
    prop::collection::vec(
        (0..=steps, 0..steps).prop_map(move |(step, draw)| {
            let p = f64::from(step) / f64::from(steps);
            Point::new(p, f64::from(draw) / f64::from(steps) < p)
        }),
        sizes,
    )
}
