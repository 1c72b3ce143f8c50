//! Deterministic resampling for out-of-bag bootstrap.
//!
//! Why our own generator? A `calibrate` run must recommend the same thresholds every time it
//! reads the same report, on every platform and with every version of every dependency. A
//! seeded [`SplitMix64`] is ten lines, has a published reference output, and this crate keeps
//! its promise of no dependencies. It is a statistical generator, not a cryptographic one.

/// The SplitMix64 pseudo-random generator (Steele, Lea and Flood, 2014; the reference is
/// Vigna's `splitmix64.c`).
///
/// The state is one `u64` advanced by the golden-ratio increment `0x9E3779B97F4A7C15` and mixed
/// by a 64-bit finaliser. Every seed, including 0, gives a full-period (2⁶⁴) sequence, and the
/// same seed always gives the same sequence.
///
/// ```
/// use jevjudge_stats::SplitMix64;
/// let mut rng = SplitMix64::new(0);
/// assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF); // the reference's first output
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `[0, bound)`, without modulo bias (Lemire's multiply-and-reject
    /// method); `0` when `bound` is 0.
    ///
    /// ```
    /// use jevjudge_stats::SplitMix64;
    /// let mut rng = SplitMix64::new(7);
    /// assert!((0..100).all(|_| rng.below(6) < 6));
    /// ```
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            return 0;
        }
        let mut product = u128::from(self.next_u64()) * u128::from(bound);
        if (product as u64) < bound {
            // 2⁶⁴ mod bound: the low words below it would over-represent some results.
            let threshold = bound.wrapping_neg() % bound;
            while (product as u64) < threshold {
                product = u128::from(self.next_u64()) * u128::from(bound);
            }
        }
        (product >> 64) as u64
    }

    /// A uniform `f64` in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// One bootstrap resample of `n` rows: `(in_bag, out_of_bag)`.
///
/// `in_bag` holds `n` indices drawn uniformly from `0..n` with replacement, in draw order (so it
/// may repeat indices). `out_of_bag` holds, in ascending order, every index never drawn — about
/// `n / e ≈ 0.368 · n` of them — which is where a threshold chosen on the in-bag rows is honestly
/// scored. `n = 0` gives two empty vectors. The same generator state gives the same resample.
///
/// ```
/// use jevjudge_stats::{resample_indices, SplitMix64};
/// let mut rng = SplitMix64::new(42);
/// let (in_bag, out_of_bag) = resample_indices(10, &mut rng);
/// assert_eq!(in_bag.len(), 10);
/// assert!(out_of_bag.iter().all(|index| !in_bag.contains(index)));
/// ```
#[must_use]
pub fn resample_indices(n: usize, rng: &mut SplitMix64) -> (Vec<usize>, Vec<usize>) {
    let mut drawn = vec![false; n];
    let in_bag: Vec<usize> = (0..n)
        .map(|_| {
            // below(n) < n, so the conversion back to usize cannot fail.
            let index = usize::try_from(rng.below(n as u64)).unwrap_or(0);
            drawn[index] = true;
            index
        })
        .collect();
    let out_of_bag = drawn
        .iter()
        .enumerate()
        .filter(|(_, drawn)| !**drawn)
        .map(|(index, _)| index)
        .collect();
    (in_bag, out_of_bag)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Reference outputs of Vigna's splitmix64.c with x = 0 and x = 1234567.
    #[test]
    fn matches_the_reference_sequence() {
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(rng.next_u64(), 9_817_491_932_198_370_423);
    }

    #[test]
    fn same_seed_same_sequence_and_different_seeds_differ() {
        let mut a = SplitMix64::new(99);
        let mut b = SplitMix64::new(99);
        let mut c = SplitMix64::new(100);
        let first: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let second: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        let third: Vec<u64> = (0..5).map(|_| c.next_u64()).collect();
        assert_eq!(first, second);
        assert_ne!(first, third);
    }

    #[test]
    fn below_edge_bounds() {
        let mut rng = SplitMix64::new(1);
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.below(1), 0);
        assert!(rng.below(u64::MAX) < u64::MAX);
    }

    // A die rolled 60,000 times: each face within 5 % of 10,000 (≈ 5 standard deviations).
    #[test]
    fn below_is_roughly_uniform() {
        let mut rng = SplitMix64::new(2024);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[rng.below(6) as usize] += 1;
        }
        for count in counts {
            assert!((9_500..=10_500).contains(&count), "{counts:?}");
        }
    }

    #[test]
    fn next_f64_is_in_unit_interval() {
        let mut rng = SplitMix64::new(5);
        let draws: Vec<f64> = (0..10_000).map(|_| rng.next_f64()).collect();
        assert!(draws.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
    }

    #[test]
    fn empty_resample() {
        let mut rng = SplitMix64::new(3);
        assert_eq!(resample_indices(0, &mut rng), (vec![], vec![]));
    }

    #[test]
    fn single_row_is_always_in_bag() {
        let mut rng = SplitMix64::new(3);
        assert_eq!(resample_indices(1, &mut rng), (vec![0], vec![]));
    }

    // About 1/e of the rows are out of bag: 100 resamples of 1,000 rows.
    #[test]
    fn out_of_bag_fraction_is_about_one_over_e() {
        let mut rng = SplitMix64::new(11);
        let total: usize = (0..100)
            .map(|_| resample_indices(1_000, &mut rng).1.len())
            .sum();
        let fraction = total as f64 / 100_000.0;
        assert!((fraction - (-1.0f64).exp()).abs() < 0.01, "{fraction}");
    }

    #[test]
    fn same_seed_same_resample() {
        let first = resample_indices(50, &mut SplitMix64::new(8));
        let second = resample_indices(50, &mut SplitMix64::new(8));
        assert_eq!(first, second);
    }

    proptest! {
        #[test]
        fn resample_partitions_the_rows(n in 0usize..500, seed: u64) {
            let mut rng = SplitMix64::new(seed);
            let (in_bag, out_of_bag) = resample_indices(n, &mut rng);
            prop_assert_eq!(in_bag.len(), n);
            prop_assert!(in_bag.iter().all(|&index| index < n));
            prop_assert!(out_of_bag.windows(2).all(|pair| pair[0] < pair[1]));
            // Every row is either drawn or out of bag, never both.
            for index in 0..n {
                prop_assert_ne!(in_bag.contains(&index), out_of_bag.contains(&index));
            }
        }

        #[test]
        fn below_stays_below(bound in 1u64.., seed: u64) {
            let mut rng = SplitMix64::new(seed);
            for _ in 0..8 {
                prop_assert!(rng.below(bound) < bound);
            }
        }
    }
}
