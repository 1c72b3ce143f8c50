//! Seeded noise on the answers (`--noise SD --seed N`), imitating the live API's drift between
//! identical calls while staying reproducible.
//!
//! Each probability `p` of an answer moves to `p + SD·z`, clamped to [0, 1]; a choice's or a
//! score's probabilities are then scaled back to sum 1 (and rounded like every answer). `z` is a
//! standard normal draw (Box–Muller) made from a SHA-256 of (seed, k, the option's hash), where
//! k counts the identical requests (same requested model, state and questions, compared by their
//! canonical JSON) the fake has answered before this one. So the k-th repeat of a request gets
//! the same answer on every run with the same seed, whatever other requests are interleaved
//! and whatever the concurrency; only which of several simultaneous identical requests is
//! counted k-th depends on arrival order.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// How many distinct requests have their repeat count remembered; when more arrive, every
/// count starts again from 0 (a logged, documented reset that bounds memory at a few MiB).
const MAX_REMEMBERED: usize = 250_000;

/// The noise of one server: its standard deviation, seed and the repeat counts.
#[derive(Debug)]
pub(crate) struct NoiseSource {
    sd: f64,
    seed: u64,
    repeats: Mutex<HashMap<u128, u64>>,
}

impl NoiseSource {
    /// The noise `sd` asks for, or `None` when it is not a positive finite number.
    pub(crate) fn new(sd: Option<f64>, seed: u64) -> Option<NoiseSource> {
        let sd = sd.filter(|sd| sd.is_finite() && *sd > 0.0)?;
        Some(NoiseSource {
            sd,
            seed,
            repeats: Mutex::new(HashMap::new()),
        })
    }

    /// The draw for one request, identified by its canonical text; counts it as one more
    /// repeat of that request.
    pub(crate) fn draw(&self, canonical_request: &str) -> Draw {
        let digest = Sha256::digest(canonical_request.as_bytes());
        let mut id = [0u8; 16];
        id.copy_from_slice(&digest[..16]);
        let id = u128::from_be_bytes(id);
        let mut repeats = self
            .repeats
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if repeats.len() >= MAX_REMEMBERED && !repeats.contains_key(&id) {
            tracing::warn!(
                remembered = MAX_REMEMBERED,
                "fake server: noise repeat counts reset"
            );
            repeats.clear();
        }
        let counter = repeats.entry(id).or_insert(0);
        let repeat = *counter;
        *counter += 1;
        Draw {
            sd: self.sd,
            seed: self.seed,
            repeat,
        }
    }
}

/// The noise of one request: standard deviation, seed and which repeat it is (0 for the first).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Draw {
    sd: f64,
    seed: u64,
    repeat: u64,
}

impl Draw {
    /// `p` moved by this request's draw for the option whose hash is `option`, clamped to [0, 1].
    pub(crate) fn apply(&self, p: f64, option: &[u8; 32]) -> f64 {
        (p + self.sd * self.standard_normal(option)).clamp(0.0, 1.0)
    }

    /// Probabilities that sum to 1, each moved by its option's draw, clamped, then scaled back
    /// to sum 1; unchanged if every one was clamped to 0.
    pub(crate) fn apply_all(&self, probabilities: &[f64], options: &[[u8; 32]]) -> Vec<f64> {
        let moved: Vec<f64> = probabilities
            .iter()
            .zip(options)
            .map(|(p, option)| self.apply(*p, option))
            .collect();
        let total: f64 = moved.iter().sum();
        if total > 0.0 && total.is_finite() {
            moved.iter().map(|p| p / total).collect()
        } else {
            probabilities.to_vec()
        }
    }

    /// One N(0, 1) draw from a hash of (seed, repeat, option): Box–Muller on two 53-bit uniforms.
    fn standard_normal(&self, option: &[u8; 32]) -> f64 {
        let mut hasher = Sha256::new();
        hasher.update(b"jevjudge-fake-noise\0");
        hasher.update(self.seed.to_be_bytes());
        hasher.update(self.repeat.to_be_bytes());
        hasher.update(option);
        let digest = hasher.finalize();
        let unit = |bytes: &[u8]| {
            let mut word = [0u8; 8];
            word.copy_from_slice(bytes);
            (u64::from_be_bytes(word) >> 11) as f64 / (1u64 << 53) as f64
        };
        // u1 in (0, 1], so ln(u1) is finite.
        let u1 = 1.0 - unit(&digest[..8]);
        let u2 = unit(&digest[8..16]);
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// The identity of a request for counting repeats: the `.jevl` digest of its requested model,
/// state and questions ([`jevjudge_wire::canonical::request_digest`]); a request without a
/// canonical form (impossible for a parsed body) falls back to its serde_json text.
pub(crate) fn request_identity(model: &str, state: &Value, questions: &Value) -> String {
    jevjudge_wire::canonical::request_digest(Some(model), state, questions).unwrap_or_else(|_| {
        Value::Array(vec![Value::from(model), state.clone(), questions.clone()]).to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(sd: f64, seed: u64) -> NoiseSource {
        NoiseSource::new(Some(sd), seed).unwrap_or_else(|| panic!("noise {sd}"))
    }

    #[test]
    fn no_noise_without_a_positive_finite_sd() {
        for sd in [
            None,
            Some(0.0),
            Some(-0.1),
            Some(f64::NAN),
            Some(f64::INFINITY),
        ] {
            assert!(NoiseSource::new(sd, 1).is_none(), "{sd:?}");
        }
    }

    #[test]
    fn repeats_are_counted_per_request() {
        let noise = source(0.1, 7);
        let a = [
            noise.draw("a"),
            noise.draw("b"),
            noise.draw("a"),
            noise.draw("a"),
        ];
        let repeats: Vec<u64> = a.iter().map(|draw| draw.repeat).collect();
        assert_eq!(repeats, [0, 0, 1, 2]);
    }

    #[test]
    fn the_same_seed_and_repeat_give_the_same_draw() {
        let option = [3u8; 32];
        let first = source(0.1, 7).draw("a");
        let again = source(0.1, 7).draw("a");
        assert_eq!(first.apply(0.5, &option), again.apply(0.5, &option));
        let other_seed = source(0.1, 8).draw("a");
        assert_ne!(first.apply(0.5, &option), other_seed.apply(0.5, &option));
    }

    #[test]
    fn draws_are_standard_normal() {
        // 20 000 draws: mean within 0.03 of 0 and standard deviation within 0.03 of 1
        // (both about 4 standard errors), and clamping keeps every value in [0, 1].
        let noise = source(1.0, 42);
        let draws: Vec<f64> = (0..20_000u32)
            .map(|n| {
                let mut option = [0u8; 32];
                option[..4].copy_from_slice(&n.to_be_bytes());
                noise.draw("x").standard_normal(&option)
            })
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let variance =
            draws.iter().map(|z| (z - mean).powi(2)).sum::<f64>() / (draws.len() - 1) as f64;
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((variance.sqrt() - 1.0).abs() < 0.03, "{}", variance.sqrt());
        assert!(draws.iter().all(|z| z.is_finite()));
    }

    #[test]
    fn noised_distributions_stay_distributions() {
        let noise = source(0.5, 1);
        let options = [[1u8; 32], [2u8; 32], [3u8; 32]];
        for n in 0..200 {
            let draw = noise.draw(&n.to_string());
            let moved = draw.apply_all(&[0.2, 0.3, 0.5], &options);
            assert!(moved.iter().all(|p| (0.0..=1.0).contains(p)));
            assert!((moved.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            let p = draw.apply(0.97, &options[0]);
            assert!((0.0..=1.0).contains(&p));
        }
    }

    #[test]
    fn memory_is_bounded() {
        let noise = source(0.1, 0);
        for n in 0..MAX_REMEMBERED + 1 {
            noise.draw(&n.to_string());
        }
        let remembered = noise
            .repeats
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len();
        assert_eq!(remembered, 1);
    }
}
