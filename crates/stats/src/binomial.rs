//! Binomial proportions: the Wilson score interval and McNemar's exact test.
//!
//! Why Wilson and not the normal ("Wald") interval? With the small counts a calibration run
//! produces (a threshold that passes 12 cases, all correct), the Wald interval collapses to a
//! zero-width `[1, 1]`; Wilson stays inside `[0, 1]` and still says how little 12 cases prove.
//!
//! Why the exact McNemar test? `compare` pairs two runs case by case, and the discordant pairs
//! (correct in exactly one run) are often a handful; the χ² approximation is poor there, while
//! the exact two-sided binomial test is cheap. It is evaluated in log space, so it neither
//! overflows nor underflows for large counts.

/// The Wilson score interval `(lower, upper)` for `successes` out of `n` trials.
///
/// `z` is the standard-normal quantile of the desired confidence (1.96 for 95 %, 1.645 for
/// 90 %); `z = 0` gives the point estimate, and a `z` whose square overflows gives `[0, 1]`.
/// Returns `None` when `n` is 0, when `successes > n`, or when `z` is negative or not finite.
///
/// Both bounds lie in `[0, 1]`, and `lower ≤ successes / n ≤ upper` always holds: the bounds are
/// clamped to the point estimate and to `[0, 1]`, which only ever corrects floating-point
/// rounding (the exact interval has these properties).
///
/// ```
/// use jevjudge_stats::wilson;
/// let (lower, upper) = wilson(8, 10, 1.96).unwrap();
/// assert!((lower - 0.4902).abs() < 1e-4 && (upper - 0.9433).abs() < 1e-4);
/// assert_eq!(wilson(0, 0, 1.96), None);
/// ```
#[must_use]
pub fn wilson(successes: u64, n: u64, z: f64) -> Option<(f64, f64)> {
    if n == 0 || successes > n || !z.is_finite() || z < 0.0 {
        return None;
    }
    let trials = n as f64;
    let hits = successes as f64;
    let misses = (n - successes) as f64;
    let estimate = hits / trials;
    let z2 = z * z;
    if z2.is_infinite() {
        // The limit of the interval as z grows without bound.
        return Some((0.0, 1.0));
    }
    // center = (s + z²/2) / (n + z²)
    // half   = z / (n + z²) · sqrt(s·(n − s)/n + z²/4)
    let denominator = trials + z2;
    let center = (hits + z2 / 2.0) / denominator;
    let half = z / denominator * (hits * (misses / trials) + z2 / 4.0).sqrt();
    let lower = (center - half).clamp(0.0, estimate);
    let upper = (center + half).clamp(estimate, 1.0);
    Some((lower, upper))
}

/// The lower bound of the [`wilson`] interval: a conservative estimate of a success rate.
///
/// Returns `None` in the same cases as [`wilson`].
///
/// ```
/// use jevjudge_stats::wilson_lower;
/// // 12 out of 12 correct proves a rate of at least ~0.76 at 95 % confidence.
/// let lower = wilson_lower(12, 12, 1.96).unwrap();
/// assert!((lower - 0.7575).abs() < 1e-4);
/// ```
#[must_use]
pub fn wilson_lower(successes: u64, n: u64, z: f64) -> Option<f64> {
    wilson(successes, n, z).map(|(lower, _)| lower)
}

/// Above this many discordant pairs, [`mcnemar_exact`] switches from the exact sum to the
/// continuity-corrected normal approximation (2⁴⁰ ≈ 1.1·10¹²).
const EXACT_LIMIT: u128 = 1 << 40;

/// McNemar's exact test: the two-sided p-value that `b` and `c` discordant pairs are equally
/// likely.
///
/// `b` counts the pairs correct only in the first run and `c` those correct only in the second.
/// The p-value is the exact two-sided binomial test of `min(b, c)` successes in `b + c` trials
/// with probability ½:
///
/// `p = min(1, 2 · Σ_{i=0}^{min(b,c)} C(b+c, i) · 0.5^(b+c))`, and `1.0` when `b + c = 0`.
///
/// The largest term is computed in log space with Loader's saddle-point formula and the others
/// as ratios of it, so the result keeps full relative precision with no overflow and only
/// underflows to 0 when the true value is below `f64`'s smallest number. The sum stops once the
/// remaining terms cannot change it, so it costs `O(√(b + c))` steps at worst. Above 2⁴⁰
/// discordant pairs (far beyond any evaluation), the continuity-corrected normal approximation is
/// used instead; its absolute error there is below 10⁻⁹.
///
/// The result is in `[0, 1]` and symmetric in `b` and `c`.
///
/// ```
/// use jevjudge_stats::mcnemar_exact;
/// assert_eq!(mcnemar_exact(0, 5), 0.0625); // 2 · 1/32
/// assert_eq!(mcnemar_exact(5, 5), 1.0);
/// assert_eq!(mcnemar_exact(0, 0), 1.0);
/// ```
#[must_use]
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = u128::from(b) + u128::from(c);
    let m = b.min(c);
    if b == c {
        // The lower tail up to the median already holds at least half the mass.
        return 1.0;
    }
    if n > EXACT_LIMIT {
        return two_sided_normal(m as f64, n as f64);
    }
    // Here n ≤ 2⁴⁰, so n and m are exact in f64, and m < n / 2.
    let n = n as f64;
    let m = m as f64;
    let log_top = log_binomial_half(m, n);
    // Σ_{i ≤ m} term(i) / term(m), walking down from i = m with
    // term(i − 1) / term(i) = i / (n − i + 1) < 1 (the ratio shrinks as i falls).
    let mut sum = 1.0_f64;
    let mut term = 1.0_f64;
    let mut i = m;
    while i >= 1.0 {
        let ratio = i / (n - i + 1.0);
        term *= ratio;
        sum += term;
        // Every later term is at most ratio times the previous one, so what remains is below
        // term · ratio / (1 − ratio).
        if term * ratio / (1.0 - ratio) <= sum * f64::EPSILON / 16.0 {
            break;
        }
        i -= 1.0;
    }
    let log_p = std::f64::consts::LN_2 + log_top + sum.ln();
    log_p.exp().clamp(0.0, 1.0)
}

/// `ln(C(n, x) · 0.5ⁿ)` for integers `0 ≤ x ≤ n` (given as exact f64), by Loader's saddle-point
/// expansion (as R's `dbinom`), accurate to a few ulps in the probability.
fn log_binomial_half(x: f64, n: f64) -> f64 {
    if x == 0.0 || x == n {
        return -n * std::f64::consts::LN_2;
    }
    let half = n / 2.0;
    let log_coefficient = stirling_error(n)
        - stirling_error(x)
        - stirling_error(n - x)
        - deviance(x, half)
        - deviance(n - x, half);
    // ln(2π · x · (n − x) / n)
    let log_scale = (2.0 * std::f64::consts::PI).ln() + x.ln() + (-x / n).ln_1p();
    log_coefficient - 0.5 * log_scale
}

/// `ln(n!) − ((n + ½)·ln n − n + ½·ln 2π)`, the error of Stirling's formula, for integer `n ≥ 1`.
fn stirling_error(n: f64) -> f64 {
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15.0 {
        // n! is exact in f64 up to 22!, so ln(n!) is correctly rounded here.
        let mut factorial = 1.0_f64;
        let mut i = 2.0;
        while i <= n {
            factorial *= i;
            i += 1.0;
        }
        let half_ln_2pi = 0.5 * (2.0 * std::f64::consts::PI).ln();
        return factorial.ln() - ((n + 0.5) * n.ln() - n + half_ln_2pi);
    }
    let nn = n * n;
    (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
}

/// `x·ln(x / np) + np − x`, computed without cancellation when `x` is close to `np` (Loader).
fn deviance(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let v = (x - np) / (x + np);
        let v2 = v * v;
        let mut sum = (x - np) * v;
        let mut power = 2.0 * x * v;
        let mut j = 1.0;
        // |v| < 0.1, so each step shrinks by 100×; 1000 steps is never reached.
        while j < 1000.0 {
            power *= v2;
            let next = sum + power / (2.0 * j + 1.0);
            if next == sum {
                return next;
            }
            sum = next;
            j += 1.0;
        }
        return sum;
    }
    x * (x / np).ln() + np - x
}

/// `2·P(X ≤ m)` for `X ~ Binomial(n, ½)`, by the continuity-corrected normal approximation.
fn two_sided_normal(m: f64, n: f64) -> f64 {
    let z = (n / 2.0 - (m + 0.5)) / (n / 4.0).sqrt();
    // 2·Φ(−z) = erfc(z / √2)
    erfc(z / std::f64::consts::SQRT_2).clamp(0.0, 1.0)
}

/// The complementary error function, to about 1e-15 absolute error (relative in the tail).
pub(crate) fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 3.0 {
        // erf(x) = 2/√π · e^{−x²} · Σ_k (2x²)^k · x / (1·3·5···(2k+1)); all terms positive.
        let two_x2 = 2.0 * x * x;
        let mut term = x;
        let mut sum = x;
        let mut k = 1.0;
        while k < 500.0 {
            term *= two_x2 / (2.0 * k + 1.0);
            sum += term;
            if term <= sum * f64::EPSILON / 4.0 {
                break;
            }
            k += 1.0;
        }
        let erf = 2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp() * sum;
        return 1.0 - erf;
    }
    // erfc(x) = e^{−x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + …))))),
    // evaluated by the modified Lentz method.
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    let mut k = 1.0;
    while k < 500.0 {
        let a = k / 2.0;
        d = x + a * d;
        if d.abs() < tiny {
            d = tiny;
        }
        c = x + a / c;
        if c.abs() < tiny {
            c = tiny;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() <= f64::EPSILON {
            break;
        }
        k += 1.0;
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(actual: f64, expected: f64, relative: f64) -> bool {
        (actual - expected).abs() <= relative * expected.abs().max(f64::MIN_POSITIVE)
    }

    /// The exact p-value as a correctly rounded f64, from exact integer arithmetic (n ≤ 60,
    /// so every C(n, i) and their sum fit in u128 and 2ⁿ is a power of two).
    fn exact_rational(b: u64, c: u64) -> f64 {
        let n = b + c;
        if n == 0 {
            return 1.0;
        }
        let m = b.min(c);
        let mut binomial: u128 = 1; // C(n, 0)
        let mut sum: u128 = 0;
        for i in 0..=m {
            if i > 0 {
                binomial = binomial * u128::from(n - i + 1) / u128::from(i);
            }
            sum += binomial;
        }
        let numerator = 2 * sum;
        let denominator = 1u128 << n;
        if numerator >= denominator {
            1.0
        } else {
            // One rounding (u128 → f64); dividing by a power of two is exact.
            numerator as f64 / denominator as f64
        }
    }

    // 2 · C(5,0) / 2⁵ = 2/32
    #[test]
    fn mcnemar_zero_of_five() {
        assert_eq!(mcnemar_exact(0, 5), 0.0625);
        assert_eq!(mcnemar_exact(5, 0), 0.0625);
    }

    // 2 · (C(10,0) + C(10,1)) / 2¹⁰ = 2 · 11 / 1024 = 0.021484375
    #[test]
    fn mcnemar_one_of_ten() {
        assert!(close(mcnemar_exact(1, 9), 0.021_484_375, 1e-14));
    }

    // 2 · (1 + 10 + 45) / 1024 = 112 / 1024 = 0.109375
    #[test]
    fn mcnemar_two_of_ten() {
        assert!(close(mcnemar_exact(2, 8), 0.109_375, 1e-14));
    }

    // 2 · (1 + 10 + 45 + 120 + 210 + 252) / 1024 = 1276 / 1024 > 1, capped at 1
    #[test]
    fn mcnemar_balanced_is_one() {
        assert_eq!(mcnemar_exact(5, 5), 1.0);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(u64::MAX, u64::MAX), 1.0);
    }

    // 2 · (1 + 1) / 4 = 1: one discordant pair each way cannot be significant.
    #[test]
    fn mcnemar_zero_of_one_is_one() {
        assert_eq!(mcnemar_exact(0, 1), 1.0);
        assert_eq!(mcnemar_exact(0, 2), 0.5); // 2 · 1/4
    }

    // scipy.stats.binomtest(3, 20).pvalue = 2 · (1 + 20 + 190 + 1140) / 2²⁰ = 2702 / 1048576
    #[test]
    fn mcnemar_matches_scipy_binomtest_3_of_20() {
        assert!(close(mcnemar_exact(3, 17), 2702.0 / 1_048_576.0, 1e-13));
    }

    #[test]
    fn mcnemar_matches_exact_rational_arithmetic_up_to_60() {
        for n in 0..=60u64 {
            for b in 0..=n {
                let c = n - b;
                let expected = exact_rational(b, c);
                let actual = mcnemar_exact(b, c);
                assert!(
                    close(actual, expected, 1e-13),
                    "b = {b}, c = {c}: {actual} vs {expected}"
                );
            }
        }
    }

    // References from exact big-integer arithmetic (Python: 2·Σ C(n, i) / 2ⁿ as a Fraction,
    // then float()), which rounds correctly.
    #[test]
    fn mcnemar_matches_big_integer_references() {
        let references = [
            (450, 1000, 0.001_730_536_084_976_317_6),
            (480, 1000, 0.217_448_293_204_140_94),
            (49_000, 100_000, 2.588_716_038_346_898e-10),
            (49_800, 100_000, 0.207_038_971_764_224_84),
            (499_000, 1_000_000, 0.045_608_299_865_382_08),
        ];
        for (m, n, expected) in references {
            let actual = mcnemar_exact(m, n - m);
            assert!(close(actual, expected, 1e-12), "m = {m}, n = {n}: {actual}");
        }
        // 2·C(3000, ≤100) / 2³⁰⁰⁰ ≈ 2^-2367: below f64, so 0.
        assert_eq!(mcnemar_exact(100, 2_900), 0.0);
    }

    // 2 · 0.5^1_000_000 underflows f64 (≈ 10^-301030): the answer is 0, not NaN.
    #[test]
    fn mcnemar_large_counts_do_not_overflow() {
        assert_eq!(mcnemar_exact(0, 1_000_000), 0.0);
        let p = mcnemar_exact(499_000, 501_000);
        assert!(p > 0.0 && p < 1.0, "{p}");
        // Normal approximation cross-check: z = (1000 − 0.5) / 500 = 1.999, 2·Φ(−1.999) ≈ 0.0456
        assert!((p - 0.0456).abs() < 1e-3, "{p}");
        assert_eq!(mcnemar_exact(500_000, 500_000), 1.0);
        // Deep tail but representable: 2 · 0.5^1000 = 2^-999.
        assert!(close(mcnemar_exact(0, 1000), 2f64.powi(-999), 1e-13));
    }

    // Near 2⁴⁰ the normal approximation and the exact sum agree.
    #[test]
    fn normal_approximation_agrees_with_exact_sum_near_the_limit() {
        let n = 1u64 << 40;
        let sd = ((n / 4) as f64).sqrt() as u64; // 2¹⁹
        for offset in [1, sd / 2, sd, 2 * sd, 4 * sd] {
            let b = n / 2 - offset;
            let c = n - b;
            let exact = mcnemar_exact(b, c);
            let approximate = two_sided_normal(b as f64, n as f64);
            assert!(
                (exact - approximate).abs() < 1e-9,
                "offset {offset}: {exact} vs {approximate}"
            );
        }
        // Above the limit the approximation is used and stays well defined.
        let p = mcnemar_exact(u64::MAX / 2, u64::MAX);
        assert_eq!(p, 0.0);
        let p = mcnemar_exact(u64::MAX - 1, u64::MAX);
        assert!(p > 0.99 && p <= 1.0, "{p}");
    }

    #[test]
    fn erfc_known_values() {
        // erfc(0) = 1, erfc(1) = 0.157299207050285…, erfc(3) = 2.209049699858544e-5,
        // erfc(5) = 1.5374597944280349e-12
        assert!(close(erfc(0.0), 1.0, 1e-15));
        assert!(close(erfc(1.0), 0.157_299_207_050_285_13, 1e-14));
        assert!(close(erfc(3.0), 2.209_049_699_858_544e-5, 1e-12));
        assert!(close(erfc(5.0), 1.537_459_794_428_035e-12, 1e-12));
        assert!(close(erfc(-1.0), 1.842_700_792_949_715, 1e-14));
    }

    #[test]
    fn stirling_error_is_continuous_across_the_series_switch() {
        // ln(16!) computed directly against the series branch.
        let ln_16_factorial = 20_922_789_888_000f64.ln();
        let direct =
            ln_16_factorial - (16.5 * 16f64.ln() - 16.0 + 0.5 * (2.0 * std::f64::consts::PI).ln());
        assert!((stirling_error(16.0) - direct).abs() < 1e-13);
    }

    // Wilson for 8 / 10 at z = 1.96, by hand:
    // center = (8 + 1.9208) / 13.8416 = 0.716738…
    // half   = 1.96 / 13.8416 · √(8·2/10 + 0.9604) = 0.141602… · 1.600125… = 0.226581…
    // so (0.490157, 0.943319)
    #[test]
    fn wilson_eight_of_ten() {
        let (lower, upper) = wilson(8, 10, 1.96).unwrap();
        assert!((lower - 0.490_157).abs() < 1e-6, "{lower}");
        assert!((upper - 0.943_319).abs() < 1e-6, "{upper}");
    }

    // 0 of n: lower is exactly 0, upper = z² / (n + z²) = 3.8416 / 13.8416 = 0.277540…
    #[test]
    fn wilson_zero_successes() {
        let (lower, upper) = wilson(0, 10, 1.96).unwrap();
        assert_eq!(lower, 0.0);
        assert!((upper - 3.8416 / 13.8416).abs() < 1e-12);
        let (lower, upper) = wilson(10, 10, 1.96).unwrap();
        assert_eq!(upper, 1.0);
        assert!((lower - 10.0 / 13.8416).abs() < 1e-12);
    }

    // 12 / 12 at 1.96: lower = 12 / 15.8416 = 0.757499…
    #[test]
    fn wilson_lower_twelve_of_twelve() {
        assert!((wilson_lower(12, 12, 1.96).unwrap() - 12.0 / 15.8416).abs() < 1e-12);
    }

    #[test]
    fn wilson_rejects_bad_input() {
        assert_eq!(wilson(0, 0, 1.96), None);
        assert_eq!(wilson(11, 10, 1.96), None);
        assert_eq!(wilson(5, 10, f64::NAN), None);
        assert_eq!(wilson(5, 10, f64::INFINITY), None);
        assert_eq!(wilson(5, 10, -1.0), None);
        assert_eq!(wilson_lower(0, 0, 1.96), None);
    }

    #[test]
    fn wilson_with_zero_z_is_the_point_estimate() {
        assert_eq!(wilson(3, 4, 0.0), Some((0.75, 0.75)));
    }

    #[test]
    fn wilson_extreme_counts() {
        let (lower, upper) = wilson(u64::MAX / 2, u64::MAX, 1.96).unwrap();
        assert!(lower <= 0.5 && upper >= 0.5 && upper - lower < 1e-8);
        let (lower, upper) = wilson(1, 1, f64::MAX).unwrap();
        assert!((0.0..=1.0).contains(&lower) && upper == 1.0);
    }

    proptest! {
        #[test]
        fn wilson_bounds_are_in_unit_interval_and_contain_the_estimate(
            n in 1u64..=u64::MAX,
            fraction in 0.0f64..=1.0,
            z in 0.0f64..10.0,
        ) {
            let successes = ((n as f64) * fraction) as u64;
            let successes = successes.min(n);
            let (lower, upper) = wilson(successes, n, z).unwrap();
            let estimate = successes as f64 / n as f64;
            prop_assert!((0.0..=1.0).contains(&lower));
            prop_assert!((0.0..=1.0).contains(&upper));
            prop_assert!(lower <= estimate && estimate <= upper);
        }

        #[test]
        fn wilson_small_counts(n in 1u64..500, successes in 0u64..500, z in 0.0f64..5.0) {
            let successes = successes % (n + 1);
            let (lower, upper) = wilson(successes, n, z).unwrap();
            let estimate = successes as f64 / n as f64;
            prop_assert!(0.0 <= lower && lower <= estimate && estimate <= upper && upper <= 1.0);
            // A wider z gives a wider interval.
            let (wide_lower, wide_upper) = wilson(successes, n, z + 1.0).unwrap();
            prop_assert!(wide_lower <= lower + 1e-15 && wide_upper >= upper - 1e-15);
        }

        #[test]
        fn mcnemar_is_symmetric_and_in_unit_interval(b in 0u64..200_000, c in 0u64..200_000) {
            let p = mcnemar_exact(b, c);
            prop_assert!((0.0..=1.0).contains(&p));
            prop_assert_eq!(p, mcnemar_exact(c, b));
        }

        #[test]
        fn mcnemar_any_u64_is_in_unit_interval(b: u64, c: u64) {
            let p = mcnemar_exact(b, c);
            prop_assert!((0.0..=1.0).contains(&p));
            prop_assert_eq!(p, mcnemar_exact(c, b));
        }

        #[test]
        fn mcnemar_matches_exact_rational(n in 0u64..=60, split in 0.0f64..=1.0) {
            let b = (((n as f64) * split) as u64).min(n);
            let c = n - b;
            prop_assert!(close(mcnemar_exact(b, c), exact_rational(b, c), 1e-13));
        }

        #[test]
        fn mcnemar_more_imbalance_is_more_significant(n in 2u64..5_000, m in 0u64..2_500) {
            let m = m % (n / 2);
            // Moving one pair from the minority to the majority never raises p.
            if m > 0 {
                prop_assert!(mcnemar_exact(m - 1, n - m + 1) <= mcnemar_exact(m, n - m) * (1.0 + 1e-12));
            }
        }
    }
}
