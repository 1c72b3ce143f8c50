//! Exact and small-sample methods: Clopper–Pearson bounds, Newcombe's interval for a paired
//! difference of proportions, Fisher's exact test, and the Holm and Benjamini–Hochberg
//! corrections for testing many cases at once.
//!
//! Why Clopper–Pearson for the upper bound of a rare rate? Wilson's interval is good on
//! average, but near `p = 1/n` its coverage dips well below the nominal level (to about 0.84
//! at 95 %). The Clopper–Pearson bound inverts the binomial tail itself, so its coverage is at
//! least the nominal level for every `p`: when a report says "false PASS at most 0.039", that
//! holds with at least 95 % confidence whatever the true rate.
//!
//! The binomial tail is the regularized incomplete beta function `I_x(a, b)`
//! ([`crate::incomplete_beta`]); the bound is its root, found by Newton's method kept inside a
//! bracket, to about 1e-15. Counts may be fractional (an effective sample size).

use crate::incomplete_beta::{ln_gamma, regularized_beta};

/// The regularized incomplete beta function `I_x(a, b)` ([`regularized_beta`]); `None` outside
/// its domain (`a, b > 0`, `x` in `[0, 1]`).
#[must_use]
pub fn beta_regularized(x: f64, a: f64, b: f64) -> Option<f64> {
    let value = regularized_beta(x, a, b);
    (!value.is_nan()).then_some(value)
}

/// The `q` quantile of the Beta(a, b) distribution: the root of `I_x(a, b) = q` by Newton's
/// method on [`beta_regularized`] with the density as its slope, kept inside a bracket that
/// every step narrows (a step that would leave it bisects instead). It stops when a step moves
/// `x` by no more than a few units in the last place, or the bracket cannot be split.
fn beta_quantile(q: f64, a: f64, b: f64) -> Option<f64> {
    let ln_beta = ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b);
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    let mut x = a / (a + b);
    for _ in 0..200 {
        let excess = beta_regularized(x, a, b)? - q;
        if excess == 0.0 {
            return Some(x);
        }
        if excess < 0.0 {
            low = x;
        } else {
            high = x;
        }
        let density = ((a - 1.0) * x.ln() + (b - 1.0) * (-x).ln_1p() - ln_beta).exp();
        let newton = x - excess / density;
        let next = if newton > low && newton < high {
            newton
        } else {
            0.5 * (low + high)
        };
        if next <= low || next >= high || (next - x).abs() <= 4.0 * f64::EPSILON * x {
            return Some(next);
        }
        x = next;
    }
    Some(x)
}

fn valid_counts(successes: f64, n: f64, alpha: f64) -> bool {
    n.is_finite()
        && n > 0.0
        && successes.is_finite()
        && (0.0..=n).contains(&successes)
        && alpha > 0.0
        && alpha < 1.0
}

/// The one-sided Clopper–Pearson upper bound at confidence `1 − alpha` for `successes` out of
/// `n` trials: the largest rate under which seeing `successes` or fewer has probability at
/// least `alpha` (the `1 − alpha` quantile of Beta(s + 1, n − s); 1 when `s = n`). Counts may
/// be fractional (an effective sample size). `None` when `n` is not positive, `successes` is
/// outside `[0, n]`, or `alpha` is outside `(0, 1)`.
///
/// ```
/// use jevjudge_stats::clopper_pearson_upper;
/// // No false PASS in 75 cases: the rate is at most 1 − 0.05^(1/75) ≈ 0.0392 (95 %).
/// let upper = clopper_pearson_upper(0.0, 75.0, 0.05).unwrap();
/// assert!((upper - (1.0 - 0.05_f64.powf(1.0 / 75.0))).abs() < 1e-12);
/// ```
#[must_use]
pub fn clopper_pearson_upper(successes: f64, n: f64, alpha: f64) -> Option<f64> {
    if !valid_counts(successes, n, alpha) {
        return None;
    }
    if successes >= n {
        return Some(1.0);
    }
    beta_quantile(1.0 - alpha, successes + 1.0, n - successes)
}

/// The one-sided Clopper–Pearson lower bound at confidence `1 − alpha` (the `alpha` quantile
/// of Beta(s, n − s + 1); 0 when `s = 0`). `None` in the same cases as
/// [`clopper_pearson_upper`].
#[must_use]
pub fn clopper_pearson_lower(successes: f64, n: f64, alpha: f64) -> Option<f64> {
    if !valid_counts(successes, n, alpha) {
        return None;
    }
    if successes <= 0.0 {
        return Some(0.0);
    }
    beta_quantile(alpha, successes, n - successes + 1.0)
}

/// The two-sided Clopper–Pearson interval at confidence `1 − alpha` (each side at `alpha/2`).
#[must_use]
pub fn clopper_pearson(successes: f64, n: f64, alpha: f64) -> Option<(f64, f64)> {
    Some((
        clopper_pearson_lower(successes, n, alpha / 2.0)?,
        clopper_pearson_upper(successes, n, alpha / 2.0)?,
    ))
}

/// A paired 2×2 table of two runs on the same cases: `both` successes in both, `first_only`
/// in the first run only, `second_only` in the second only, `neither` in neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PairedTable {
    /// Success in both runs.
    pub both: u64,
    /// Success in the first run only.
    pub first_only: u64,
    /// Success in the second run only.
    pub second_only: u64,
    /// Success in neither.
    pub neither: u64,
}

impl PairedTable {
    /// The pairs.
    pub fn total(&self) -> u64 {
        self.both + self.first_only + self.second_only + self.neither
    }
}

/// Newcombe's hybrid score interval (1998, method 10) for the paired difference
/// `p₂ − p₁` (second run minus first), from the Wilson intervals of each run's rate and the
/// phi correlation of the table, at the normal quantile `z`. Returns `(difference, low,
/// high)`, or `None` without pairs.
///
/// ```text
/// p₁ = (both + first_only)/n, p₂ = (both + second_only)/n, (lᵢ, uᵢ) = Wilson(pᵢ)
/// φ  = (A·D − B·C)/√(row and column totals), A·D − B·C reduced by n/2 when positive (0 if a
///      total is 0)
/// δ  = √((p₂ − l₂)² − 2φ(p₂ − l₂)(u₁ − p₁) + (u₁ − p₁)²)
/// ε  = √((u₂ − p₂)² − 2φ(u₂ − p₂)(p₁ − l₁) + (p₁ − l₁)²)
/// interval = [p₂ − p₁ − δ, p₂ − p₁ + ε]
/// ```
///
/// ```
/// use jevjudge_stats::{PairedTable, newcombe_paired};
/// let table = PairedTable { both: 140, first_only: 3, second_only: 2, neither: 5 };
/// let (difference, low, high) = newcombe_paired(&table, 1.96).unwrap();
/// assert!((difference + 1.0 / 150.0).abs() < 1e-12 && low < difference && difference < high);
/// ```
#[must_use]
pub fn newcombe_paired(table: &PairedTable, z: f64) -> Option<(f64, f64, f64)> {
    let n = table.total();
    if n == 0 {
        return None;
    }
    let a = table.both as f64;
    let b = table.first_only as f64;
    let c = table.second_only as f64;
    let d = table.neither as f64;
    let total = n as f64;
    let first = table.both + table.first_only;
    let second = table.both + table.second_only;
    let (p1, p2) = (first as f64 / total, second as f64 / total);
    let (l1, u1) = crate::wilson(first, n, z)?;
    let (l2, u2) = crate::wilson(second, n, z)?;
    let margins = (a + b) * (c + d) * (a + c) * (b + d);
    let phi = if margins == 0.0 {
        0.0
    } else {
        let cross = a * d - b * c;
        let cross = if cross > 0.0 {
            (cross - total / 2.0).max(0.0)
        } else {
            cross
        };
        cross / margins.sqrt()
    };
    Some(hybrid_interval((p1, l1, u1), (p2, l2, u2), phi))
}

/// The square-and-add interval for `p₂ − p₁` from each rate's own interval and their
/// correlation `phi` (0 for independent samples): `(difference, low, high)`.
#[must_use]
pub fn hybrid_interval(
    first: (f64, f64, f64),
    second: (f64, f64, f64),
    phi: f64,
) -> (f64, f64, f64) {
    let (p1, l1, u1) = first;
    let (p2, l2, u2) = second;
    let difference = p2 - p1;
    let delta = ((p2 - l2).powi(2) - 2.0 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1).powi(2))
        .max(0.0)
        .sqrt();
    let epsilon = ((u2 - p2).powi(2) - 2.0 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1).powi(2))
        .max(0.0)
        .sqrt();
    (
        difference,
        (difference - delta).max(-1.0),
        (difference + epsilon).min(1.0),
    )
}

/// Fisher's exact two-sided test of a 2×2 table `[[a, b], [c, d]]` (rows: the two runs;
/// columns: success, failure): the probability, with the margins fixed, of a table at most as
/// likely as the one observed (as `scipy.stats.fisher_exact`, with its relative tolerance of
/// 1e-7 for ties). 1 when a margin is 0.
///
/// ```
/// use jevjudge_stats::fisher_exact;
/// // 3 of 3 correct before, 0 of 3 after: p = 2 / C(6, 3) = 0.1.
/// assert!((fisher_exact(3, 0, 0, 3) - 0.1).abs() < 1e-12);
/// ```
#[must_use]
pub fn fisher_exact(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let row1 = a + b;
    let col1 = a + c;
    let total = a + b + c + d;
    if row1 == 0 || col1 == 0 || row1 == total || col1 == total {
        return 1.0;
    }
    let ln_choose = |n: u64, k: u64| {
        ln_gamma(n as f64 + 1.0) - ln_gamma(k as f64 + 1.0) - ln_gamma((n - k) as f64 + 1.0)
    };
    let row2 = total - row1;
    let ln_pmf = |x: u64| ln_choose(row1, x) + ln_choose(row2, col1 - x) - ln_choose(total, col1);
    let low = col1.saturating_sub(row2);
    let high = row1.min(col1);
    let observed = ln_pmf(a);
    let cutoff = observed + (1.0 + 1e-7_f64).ln();
    let p: f64 = (low..=high)
        .map(ln_pmf)
        .filter(|&value| value <= cutoff)
        .map(f64::exp)
        .sum();
    p.clamp(0.0, 1.0)
}

/// Holm's step-down adjusted p-values (family-wise error control), in the input's order:
/// sorted ascending, `p̃₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1)·p₍ⱼ₎)`.
///
/// ```
/// use jevjudge_stats::holm;
/// assert_eq!(holm(&[0.01, 0.04, 0.03]), vec![0.03, 0.06, 0.06]);
/// ```
#[must_use]
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0_f64;
    for (rank, &index) in order.iter().enumerate() {
        let value = ((m - rank) as f64 * p_values[index]).min(1.0);
        running = running.max(value);
        adjusted[index] = running;
    }
    adjusted
}

/// Benjamini–Hochberg adjusted p-values (false discovery rate control), in the input's order:
/// sorted ascending, `p̃₍ᵢ₎ = min_{j ≥ i} min(1, m·p₍ⱼ₎ / j)`.
///
/// ```
/// use jevjudge_stats::benjamini_hochberg;
/// assert_eq!(benjamini_hochberg(&[0.01, 0.04, 0.03]), vec![0.03, 0.04, 0.04]);
/// ```
#[must_use]
pub fn benjamini_hochberg(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let mut adjusted = vec![0.0; m];
    let mut running = 1.0_f64;
    for (rank, &index) in order.iter().enumerate().rev() {
        let value = (m as f64 * p_values[index] / (rank + 1) as f64).min(1.0);
        running = running.min(value);
        adjusted[index] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clopper_pearson_with_no_success_has_a_closed_form() {
        for n in [1.0, 7.0, 75.0, 1000.0] {
            let upper = clopper_pearson_upper(0.0, n, 0.05).unwrap();
            assert!(
                (upper - (1.0 - 0.05_f64.powf(1.0 / n))).abs() < 1e-12,
                "{n}"
            );
        }
        assert_eq!(clopper_pearson_upper(5.0, 5.0, 0.05), Some(1.0));
        assert_eq!(clopper_pearson_lower(0.0, 5.0, 0.05), Some(0.0));
        assert_eq!(clopper_pearson_upper(1.0, 0.0, 0.05), None);
    }
}
