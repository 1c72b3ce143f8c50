//! What `calibrate` checks before it calibrates and what it writes after: the settings of the
//! caller's targets, whether a report holds what calibration needs, and the calibrated
//! definition's file.

use std::path::Path;

use jevjudge_judge::{Definition, DefinitionError, DefinitionFormat};
use jevjudge_stats::Targets;
use jevjudge_wire::setting::{Explain, Namer, Setting};

use super::{
    Calibration, CalibrationSettings, CriterionSpec, DefinitionTextError, Z,
    calibrated_definition_text, calibrated_version,
};
use crate::Report;

/// One of the targets a recommendation must reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The least precision of PASS decisions.
    MinPassPrecision,
    /// The least precision of FAIL decisions.
    MinFailPrecision,
    /// The largest fraction of INCONCLUSIVE decisions.
    MaxAbstain,
}

/// Settings that cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// A target outside 0..=1 (or NaN).
    #[error("{target:?} must be within 0..=1, not {value}")]
    OutOfRange {
        /// Which target.
        target: Target,
        /// Its value.
        value: f64,
    },
    /// No stability resample.
    #[error("at least one resample is needed")]
    NoResamples,
}

impl Explain for SettingsError {
    /// The setting out of range, named.
    fn explain(&self, name: Namer<'_>) -> String {
        match *self {
            SettingsError::OutOfRange { target, value } => {
                let setting = match target {
                    Target::MinPassPrecision => Setting::MinPassPrecision,
                    Target::MinFailPrecision => Setting::MinFailPrecision,
                    Target::MaxAbstain => Setting::MaxAbstain,
                };
                format!("{} must be within 0..=1, not {value}", name(setting))
            }
            SettingsError::NoResamples => {
                format!("{} must be at least 1", name(Setting::Resamples))
            }
        }
    }
}

impl Explain for DeltaOutOfRange {
    /// The bound out of range, named.
    fn explain(&self, name: Namer<'_>) -> String {
        format!(
            "{} must be within (0, 1), not {}",
            name(Setting::Delta),
            self.0
        )
    }
}

/// A family-wise error bound δ outside (0, 1) (or NaN).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("delta must be within (0, 1), not {0}")]
pub struct DeltaOutOfRange(pub f64);

impl CalibrationSettings {
    /// The documented settings with these targets, resamples and seed: each target within
    /// 0..=1 and at least one resample.
    pub fn with_targets(
        min_pass_precision: f64,
        min_fail_precision: f64,
        max_abstain: f64,
        resamples: u32,
        seed: u64,
    ) -> Result<CalibrationSettings, SettingsError> {
        for (target, value) in [
            (Target::MinPassPrecision, min_pass_precision),
            (Target::MinFailPrecision, min_fail_precision),
            (Target::MaxAbstain, max_abstain),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(SettingsError::OutOfRange { target, value });
            }
        }
        if resamples == 0 {
            return Err(SettingsError::NoResamples);
        }
        Ok(CalibrationSettings {
            targets: Targets {
                min_pass_precision,
                min_fail_precision,
                max_abstain,
                z: Z,
            },
            resamples,
            seed,
            ..CalibrationSettings::default()
        })
    }
}

impl CalibrationSettings {
    /// These settings with the family-wise error bound `delta`, which must be within (0, 1).
    pub fn with_delta(self, delta: f64) -> Result<CalibrationSettings, DeltaOutOfRange> {
        if delta > 0.0 && delta < 1.0 {
            Ok(CalibrationSettings { delta, ..self })
        } else {
            Err(DeltaOutOfRange(delta))
        }
    }
}

/// A report without its rows (a streaming run keeps them in its rows file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("holds no rows (a streaming run keeps them in its rows file): calibrate needs the rows")]
pub struct NoRows;

/// Checks that `report` holds the rows of its run (an empty run has none to hold).
pub fn check_rows(report: &Report) -> Result<(), NoRows> {
    if report.rows.is_empty() && report.overall.total > 0 {
        Err(NoRows)
    } else {
        Ok(())
    }
}

/// What each criterion expects, for a person: "`a` expects yes, `b` expects no".
pub fn expectations(specs: &[CriterionSpec]) -> String {
    specs
        .iter()
        .map(|spec| {
            format!(
                "`{}` expects {}",
                spec.id,
                if spec.expected { "yes" } else { "no" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A calibrated definition's file: its text and version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalibratedFile {
    /// The file text.
    pub text: String,
    /// The calibrated definition's version.
    pub version: String,
}

/// Why a calibrated definition's file cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum CalibratedFileError {
    /// The calibrated definition is not valid under its version.
    #[error(transparent)]
    Version(DefinitionError),
    /// It cannot be written as the file's format.
    #[error(transparent)]
    Text(DefinitionTextError),
}

impl Explain for CalibratedFileError {
    /// The error with the setting that names the version or the file.
    fn explain(&self, name: Namer<'_>) -> String {
        match self {
            CalibratedFileError::Version(e) => format!("{}: {e}", name(Setting::NewVersion)),
            CalibratedFileError::Text(e) => format!("{}: {e}", name(Setting::WriteDefinition)),
        }
    }
}

/// The file `out` of `definition` with the recommendations of `calibration` (from the report
/// at `report_path`), under `version` [default: [`calibrated_version`], counting on from a
/// definition already at `out`]; `None` when no criterion has a recommendation.
pub fn calibrated_file(
    calibration: &Calibration,
    definition: &Definition,
    out: &Path,
    version: Option<&str>,
    report: &Report,
    report_path: &Path,
) -> Result<Option<CalibratedFile>, CalibratedFileError> {
    if !calibration.has_recommendation() {
        return Ok(None);
    }
    let version = match version {
        Some(version) => version.to_owned(),
        None => {
            let existing = Definition::from_path(out).ok();
            calibrated_version(
                definition.version(),
                existing.as_ref().map(Definition::version),
            )
        }
    };
    let calibrated = calibration
        .apply(definition, &version)
        .map_err(CalibratedFileError::Version)?;
    let text = calibrated_definition_text(
        &calibrated,
        DefinitionFormat::from_path(out),
        &report_path.display().to_string(),
        report.rows.len(),
        &report.definition_version,
    )
    .map_err(CalibratedFileError::Text)?;
    Ok(Some(CalibratedFile { text, version }))
}
