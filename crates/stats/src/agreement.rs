//! Agreement between two raters on yes/no questions: observed agreement and Cohen's kappa.
//!
//! Each pair is `(first rater's answer, second rater's answer)`. With `n` pairs, `a` both yes,
//! `d` both no, the first rater saying yes `r₁` times and the second `r₂` times:
//!
//! - observed agreement `pₒ = (a + d) / n`;
//! - chance agreement `pₑ = (r₁ / n)(r₂ / n) + (1 − r₁ / n)(1 − r₂ / n)`;
//! - Cohen's kappa `κ = (pₒ − pₑ) / (1 − pₑ)`, undefined (`None`) when `pₑ = 1` (both raters
//!   gave one and the same answer every time) or there are no pairs.
//!
//! Cohen's kappa treats the first and second rater as two fixed people with their own rates of
//! yes. A review queue's two slots are not: whoever claims an item first fills slot 1, so the
//! slots are exchangeable, and the right chance correction pools both slots' answers —
//! **Scott's π** (for two raters the same as Fleiss' κ):
//!
//! - pooled yes share `q = (2a + b + c) / 2n` (b, c the two kinds of disagreement);
//! - chance agreement `pₑ = q² + (1 − q)²`; `π = (pₒ − pₑ) / (1 − pₑ)`.
//!
//! Its 95 % interval is a seeded percentile bootstrap over the items
//! ([`AgreementTable::scott_pi_interval`]), given only from [`MIN_AGREEMENT_ITEMS`] items up:
//! below that a bootstrap of a handful of items says little and would be read as more.

/// Counts of a 2 × 2 agreement table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgreementTable {
    /// Both said yes.
    pub both_yes: u64,
    /// The first said yes, the second no.
    pub yes_no: u64,
    /// The first said no, the second yes.
    pub no_yes: u64,
    /// Both said no.
    pub both_no: u64,
}

impl AgreementTable {
    /// The table of these pairs.
    pub fn of(pairs: &[(bool, bool)]) -> AgreementTable {
        let mut table = AgreementTable::default();
        for &(first, second) in pairs {
            table.add(first, second);
        }
        table
    }

    /// Counts one pair.
    pub fn add(&mut self, first: bool, second: bool) {
        match (first, second) {
            (true, true) => self.both_yes += 1,
            (true, false) => self.yes_no += 1,
            (false, true) => self.no_yes += 1,
            (false, false) => self.both_no += 1,
        }
    }

    /// How many pairs.
    pub fn total(&self) -> u64 {
        self.both_yes + self.yes_no + self.no_yes + self.both_no
    }

    /// Observed agreement `pₒ`; `None` without pairs.
    pub fn observed(&self) -> Option<f64> {
        let n = self.total();
        (n > 0).then(|| (self.both_yes + self.both_no) as f64 / n as f64)
    }

    /// Cohen's kappa; `None` without pairs or when chance agreement is 1.
    pub fn kappa(&self) -> Option<f64> {
        let n = self.total() as f64;
        let observed = self.observed()?;
        let first_yes = (self.both_yes + self.yes_no) as f64 / n;
        let second_yes = (self.both_yes + self.no_yes) as f64 / n;
        let chance = first_yes * second_yes + (1.0 - first_yes) * (1.0 - second_yes);
        if (1.0 - chance).abs() < 1e-12 {
            return None;
        }
        Some((observed - chance) / (1.0 - chance))
    }
}

/// The fewest items an agreement interval is given for.
pub const MIN_AGREEMENT_ITEMS: u64 = 20;

impl AgreementTable {
    /// Scott's π (Fleiss' κ for two raters): the chance correction with both raters' answers
    /// pooled; `None` without pairs or when chance agreement is 1 (every answer the same).
    ///
    /// ```
    /// use jevjudge_stats::AgreementTable;
    /// // 20 both yes, 5 + 10 disagreements, 15 both no: q = 55/100, pₑ = 0.505,
    /// // π = (0.7 − 0.505) / 0.495.
    /// let table = AgreementTable { both_yes: 20, yes_no: 5, no_yes: 10, both_no: 15 };
    /// assert!((table.scott_pi().unwrap() - 0.195 / 0.495).abs() < 1e-12);
    /// ```
    pub fn scott_pi(&self) -> Option<f64> {
        let n = self.total() as f64;
        let observed = self.observed()?;
        let yes = (2 * self.both_yes + self.yes_no + self.no_yes) as f64 / (2.0 * n);
        let chance = yes * yes + (1.0 - yes) * (1.0 - yes);
        if (1.0 - chance).abs() < 1e-12 {
            return None;
        }
        Some((observed - chance) / (1.0 - chance))
    }

    /// The 95 % percentile bootstrap interval of [`AgreementTable::scott_pi`]: `resamples`
    /// resamples of the items with replacement from the seeded [`crate::SplitMix64`]
    /// (resamples where π is undefined are left out). `None` below [`MIN_AGREEMENT_ITEMS`]
    /// items, or when π is undefined in most resamples.
    pub fn scott_pi_interval(&self, resamples: u32, seed: u64) -> Option<(f64, f64)> {
        let n = self.total();
        if n < MIN_AGREEMENT_ITEMS || resamples == 0 {
            return None;
        }
        let cells = [self.both_yes, self.yes_no, self.no_yes, self.both_no];
        let mut rng = crate::SplitMix64::new(seed);
        let mut values = Vec::with_capacity(resamples as usize);
        for _ in 0..resamples {
            let mut counts = [0u64; 4];
            for _ in 0..n {
                let mut draw = rng.below(n);
                let mut cell = 0;
                while draw >= cells[cell] {
                    draw -= cells[cell];
                    cell += 1;
                }
                counts[cell] += 1;
            }
            let table = AgreementTable {
                both_yes: counts[0],
                yes_no: counts[1],
                no_yes: counts[2],
                both_no: counts[3],
            };
            if let Some(pi) = table.scott_pi() {
                values.push(pi);
            }
        }
        if values.len() * 2 < resamples as usize {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let at =
            |q: f64| values[((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
        Some((at(0.025), at(0.975)))
    }
}

/// Cohen's kappa of these pairs (see [`AgreementTable::kappa`]).
pub fn cohen_kappa(pairs: &[(bool, bool)]) -> Option<f64> {
    AgreementTable::of(pairs).kappa()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(both_yes: usize, yes_no: usize, no_yes: usize, both_no: usize) -> Vec<(bool, bool)> {
        let mut pairs = Vec::new();
        pairs.extend(std::iter::repeat_n((true, true), both_yes));
        pairs.extend(std::iter::repeat_n((true, false), yes_no));
        pairs.extend(std::iter::repeat_n((false, true), no_yes));
        pairs.extend(std::iter::repeat_n((false, false), both_no));
        pairs
    }

    #[test]
    fn kappa_of_the_textbook_table() {
        // Wikipedia's example: 20 both yes, 5 yes/no, 10 no/yes, 15 both no (n = 50).
        // pₒ = 35/50 = 0.7; first yes 25/50 = 0.5, second yes 30/50 = 0.6;
        // pₑ = 0.5·0.6 + 0.5·0.4 = 0.5; κ = (0.7 − 0.5) / 0.5 = 0.4.
        let table = AgreementTable::of(&pairs(20, 5, 10, 15));
        assert_eq!(table.total(), 50);
        assert!((table.observed().unwrap() - 0.7).abs() < 1e-12);
        assert!((table.kappa().unwrap() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn kappa_of_a_second_hand_computed_table() {
        // 45 both yes, 15 yes/no, 25 no/yes, 15 both no (n = 100): pₒ = 0.6;
        // first yes 0.6, second yes 0.7; pₑ = 0.42 + 0.12 = 0.54; κ = 0.06 / 0.46.
        let kappa = cohen_kappa(&pairs(45, 15, 25, 15)).unwrap();
        assert!((kappa - 0.06 / 0.46).abs() < 1e-12, "{kappa}");
    }

    #[test]
    fn perfect_agreement_is_one_and_systematic_disagreement_is_minus_one() {
        assert_eq!(cohen_kappa(&pairs(3, 0, 0, 2)), Some(1.0));
        // Always opposite with balanced answers: pₒ = 0, pₑ = 0.5, κ = −1.
        assert_eq!(cohen_kappa(&pairs(0, 2, 2, 0)), Some(-1.0));
    }

    #[test]
    fn agreement_no_better_than_chance_is_zero() {
        // Independent raters: every cell 1 → pₒ = 0.5 = pₑ.
        assert_eq!(cohen_kappa(&pairs(1, 1, 1, 1)), Some(0.0));
    }

    #[test]
    fn kappa_is_undefined_without_pairs_or_when_chance_agreement_is_one() {
        assert_eq!(cohen_kappa(&[]), None);
        assert_eq!(AgreementTable::default().observed(), None);
        // Both always yes: pₑ = 1, κ undefined, observed agreement still 1.
        let table = AgreementTable::of(&pairs(4, 0, 0, 0));
        assert_eq!(table.kappa(), None);
        assert_eq!(table.observed(), Some(1.0));
        assert_eq!(cohen_kappa(&pairs(0, 0, 0, 3)), None);
    }

    proptest::proptest! {
        #[test]
        fn kappa_is_bounded_symmetric_and_one_only_for_full_agreement(
            pairs in proptest::collection::vec((proptest::bool::ANY, proptest::bool::ANY), 0..200)
        ) {
            let table = AgreementTable::of(&pairs);
            let swapped: Vec<(bool, bool)> = pairs.iter().map(|&(a, b)| (b, a)).collect();
            let observed = table.observed();
            proptest::prop_assert_eq!(observed.is_some(), !pairs.is_empty());
            if let Some(observed) = observed {
                proptest::prop_assert!((0.0..=1.0).contains(&observed));
            }
            let kappa = table.kappa();
            proptest::prop_assert_eq!(kappa, cohen_kappa(&swapped), "raters are symmetric");
            if let Some(kappa) = kappa {
                proptest::prop_assert!((-1.0 - 1e-12..=1.0 + 1e-12).contains(&kappa));
                let agree = pairs.iter().all(|(a, b)| a == b);
                proptest::prop_assert_eq!((kappa - 1.0).abs() < 1e-12, agree);
            }
        }
    }
}
