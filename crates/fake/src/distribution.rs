//! Probabilities as the live API shows them: softmax, 4-decimal rounding with the remainder on
//! the largest value, and the two confidence formulas of systemone-wire.md §6.

/// The logistic function.
pub(crate) fn sigmoid(logit: f64) -> f64 {
    1.0 / (1.0 + (-logit).exp())
}

/// Softmax of `logits` (empty in, empty out).
pub(crate) fn softmax(logits: &[f64]) -> Vec<f64> {
    let top = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exps: Vec<f64> = logits.iter().map(|x| (x - top).exp()).collect();
    let total: f64 = exps.iter().sum();
    exps.iter().map(|e| e / total).collect()
}

/// `value` rounded to `places` decimals.
pub(crate) fn round_to(value: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (value * scale).round() / scale
}

/// Each probability rounded to 4 decimals, with the rounding remainder added to the largest, so
/// the values still sum to 1 (within float error, far inside 5e-5·n).
pub(crate) fn rounded(probabilities: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = probabilities.iter().map(|p| round_to(*p, 4)).collect();
    if let Some(top) = argmax(&out) {
        let remainder = 1.0 - out.iter().sum::<f64>();
        out[top] = round_to(out[top] + remainder, 4).clamp(0.0, 1.0);
    }
    out
}

/// Index of the first largest value.
pub(crate) fn argmax(values: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (index, value) in values.iter().enumerate() {
        if best.is_none_or(|b| *value > values[b]) {
            best = Some(index);
        }
    }
    best
}

/// Choice confidence: `(max p − 1/n) / (1 − 1/n)`, 1.0 for one option; 2 decimals.
pub(crate) fn choice_confidence(probabilities: &[f64]) -> f64 {
    let n = probabilities.len() as f64;
    if probabilities.len() <= 1 {
        return 1.0;
    }
    let top = probabilities.iter().copied().fold(0.0, f64::max);
    round_to(((top - 1.0 / n) / (1.0 - 1.0 / n)).clamp(0.0, 1.0), 2)
}

/// Score confidence: `max(0, 1 − Σ pᵢ·|i − mode| / U(n))` with U(n) the mean of |i − (n−1)/2|;
/// 1.0 for one level; 2 decimals.
pub(crate) fn score_confidence(probabilities: &[f64]) -> f64 {
    let n = probabilities.len();
    let Some(mode) = argmax(probabilities).filter(|_| n > 1) else {
        return 1.0;
    };
    let centre = (n as f64 - 1.0) / 2.0;
    let uniform = (0..n).map(|i| (i as f64 - centre).abs()).sum::<f64>() / n as f64;
    let spread: f64 = probabilities
        .iter()
        .enumerate()
        .map(|(i, p)| p * (i as f64 - mode as f64).abs())
        .sum();
    round_to((1.0 - spread / uniform).clamp(0.0, 1.0), 2)
}

/// The expected level Σ i·pᵢ, 4 decimals.
pub(crate) fn expectation(probabilities: &[f64]) -> f64 {
    round_to(
        probabilities
            .iter()
            .enumerate()
            .map(|(i, p)| i as f64 * p)
            .sum(),
        4,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_the_sum_at_one() {
        let probabilities = softmax(&[0.1, 0.2, 0.3, -1.0, 2.5, 0.0, 0.7]);
        let shown = rounded(&probabilities);
        assert!((shown.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(shown.iter().all(|p| (p - round_to(*p, 4)).abs() < 1e-12));
        let thirds = rounded(&[1.0 / 3.0; 3]);
        assert!((thirds.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let many = rounded(&[1.0 / 255.0; 255]);
        assert!((many.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_documented_examples_reproduce() {
        // §6: score {0: 0.0, 1: 0.95, 2: 0.05} has confidence 0.925, shown 0.92 (or 0.93).
        let confidence = score_confidence(&[0.0, 0.95, 0.05]);
        assert!((confidence - 0.925).abs() <= 0.005 + 1e-9);
        assert!((expectation(&[0.0, 0.95, 0.05]) - 1.05).abs() < 1e-9);
        assert!((choice_confidence(&[0.88, 0.12, 0.0]) - 0.82).abs() < 1e-9);
    }

    #[test]
    fn single_option_and_level_are_certain() {
        assert_eq!(choice_confidence(&[1.0]), 1.0);
        assert_eq!(score_confidence(&[1.0]), 1.0);
        assert_eq!(rounded(&softmax(&[0.4])), vec![1.0]);
    }

    #[test]
    fn argmax_takes_the_first_of_equals() {
        assert_eq!(argmax(&[0.2, 0.4, 0.4]), Some(1));
        assert_eq!(argmax(&[]), None);
    }

    #[test]
    fn sigmoid_is_centred() {
        assert_eq!(sigmoid(0.0), 0.5);
        assert!(sigmoid(3.0) > 0.95);
    }
}
