//! The documented constants of `calibrate` and the settings built from them.

use jevjudge_stats::Targets;

/// Bins of each reliability table (equal-width and equal-mass).
pub const BINS: usize = 10;
/// The standard-normal quantile of the Wilson lower bounds: 1.96, a 95 % two-sided interval.
pub const Z: f64 = 1.96;
/// The family-wise error bound δ of the certified thresholds: the guarantee holds with
/// probability at least 1 − δ.
pub const DELTA: f64 = 0.05;
/// Bootstrap resamples of the stability figure.
pub const RESAMPLES: u32 = 200;
/// The seed of the stability resamples.
pub const SEED: u64 = 42;
/// The fewest cases of each class (condition holds / does not) a recommendation needs.
pub const MIN_CLASS: u64 = 10;
/// The lowest AUROC a recommendation needs.
pub const MIN_AUROC: f64 = 0.6;

/// The knobs of [`calibrate`](super::calibrate). `Default` is the documented behaviour: targets 0.9 / 0.9 /
/// 0.25, δ = [`DELTA`], z = [`Z`] (for the printed Wilson bounds), [`BINS`] bins, [`RESAMPLES`]
/// stability resamples seeded with [`SEED`], and the refusal limits [`MIN_CLASS`], [`MIN_AUROC`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibrationSettings {
    /// What the recommended pair must achieve.
    pub targets: Targets,
    /// Bins per reliability table.
    pub bins: usize,
    /// The family-wise error bound δ of the certification.
    pub delta: f64,
    /// Stability resamples.
    pub resamples: u32,
    /// Their seed.
    pub seed: u64,
    /// The fewest cases of each class.
    pub min_class: u64,
    /// The lowest AUROC.
    pub min_auroc: f64,
    /// Whether case weights are ignored (every case counts once). By default they are used:
    /// the certification, the decided precisions and their intervals are weighted.
    pub unweighted: bool,
}

impl Default for CalibrationSettings {
    fn default() -> Self {
        CalibrationSettings {
            targets: Targets {
                min_pass_precision: 0.9,
                min_fail_precision: 0.9,
                max_abstain: 0.25,
                z: Z,
            },
            bins: BINS,
            delta: DELTA,
            resamples: RESAMPLES,
            seed: SEED,
            min_class: MIN_CLASS,
            min_auroc: MIN_AUROC,
            unweighted: false,
        }
    }
}
