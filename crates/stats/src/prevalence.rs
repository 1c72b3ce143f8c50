//! Precision at a stated base rate: what share of one kind of verdict is right in production,
//! when the cases' own mix of labels is not production's.
//!
//! A verdict's precision depends on how common its class is. With `tpr` the share of cases of
//! the class that get the verdict, `fpr` the share of the other class that get it, and `P` the
//! class's share in production (Bayes' rule):
//!
//! ```text
//! precision(P) = P·tpr / (P·tpr + (1 − P)·fpr)
//! ```
//!
//! The interval is the delta method on the log-odds scale, where the three terms add:
//! `logit precision = logit P + ln tpr − ln fpr`, with `Var(ln p̂) = 1/x − 1/n` for `x` of `n`
//! (a count of 0 is taken as 0.5, Haldane's correction, so that the interval stays finite),
//! back-transformed and widened if needed to hold the point estimate. `P` is taken as known.

/// The precision at `prevalence` and its interval `(precision, low, high)` at the normal
/// quantile `z`. `hits` of `n` are the cases of the verdict's class that got the verdict;
/// `false_hits` of `n_other` the cases of the other class that got it (counts may be
/// fractional: effective numbers of cases). `None` when either class has no case, the verdict
/// was never given, `prevalence` is not inside `(0, 1)`, or a count is out of range.
///
/// ```
/// use jevjudge_stats::precision_at_prevalence;
/// // 58 of 75 good drafts pass, 0 of 75 bad ones: at 13.4 % good drafts, PASS precision is 1
/// // (no false PASS seen), and the interval says how far below 1 it may be.
/// let (precision, low, high) =
///     precision_at_prevalence(0.134, 58.0, 75.0, 0.0, 75.0, 1.96).unwrap();
/// assert_eq!(precision, 1.0);
/// assert!(low < 0.95 && high == 1.0);
/// ```
#[must_use]
pub fn precision_at_prevalence(
    prevalence: f64,
    hits: f64,
    n: f64,
    false_hits: f64,
    n_other: f64,
    z: f64,
) -> Option<(f64, f64, f64)> {
    let valid = prevalence > 0.0
        && prevalence < 1.0
        && n > 0.0
        && n_other > 0.0
        && (0.0..=n).contains(&hits)
        && (0.0..=n_other).contains(&false_hits)
        && hits + false_hits > 0.0
        && z.is_finite()
        && z >= 0.0;
    if !valid {
        return None;
    }
    let (tpr, fpr) = (hits / n, false_hits / n_other);
    let precision = prevalence * tpr / (prevalence * tpr + (1.0 - prevalence) * fpr);
    // Haldane's correction keeps both logarithms finite.
    let adjusted = |x: f64| if x == 0.0 { 0.5 } else { x };
    let (x1, x2) = (adjusted(hits), adjusted(false_hits));
    let center = (prevalence / (1.0 - prevalence)).ln() + (x1 / n).ln() - (x2 / n_other).ln();
    let variance = (1.0 / x1 - 1.0 / n).max(0.0) + (1.0 / x2 - 1.0 / n_other).max(0.0);
    let half = z * variance.sqrt();
    let expit = |t: f64| 1.0 / (1.0 + (-t).exp());
    let low = expit(center - half).min(precision);
    let high = expit(center + half).max(precision);
    Some((precision, low, high))
}
