//! `jevjudge calibrate`: calibration metrics and threshold advice from a report
//! (cli-and-formats.md §1.5). No backend is called: the report keeps every probability.

use std::path::PathBuf;

use jevjudge_eval::{
    Report,
    calibration::{
        CalibratedFile, Calibration, CalibrationSettings, CriterionSpec, DELTA, RESAMPLES, SEED,
        calibrate, calibrated_file, check_rows, expectations, infer_criteria,
    },
    terminal,
};
use jevjudge_judge::Definition;

use crate::{
    exit,
    inputs::flagged,
    output,
    report_cmd::{definition_for, read_report},
};

/// Options of `jevjudge calibrate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Per criterion, on the raw yes-probability against whether the \
    condition really holds (every review of a repeated report, clustered by case): count, \
    positives, Brier, log loss, AUROC (with 95 % intervals), ECE over 10 equal-width bins (with \
    its interval and the value a perfectly calibrated model would show) and up to 10 equal-mass \
    bins, MCE and the reliability table (equal-width). Then a recommended (fail_at_or_below, \
    pass_at_or_above) on p': among the observed p' values, the pair that abstains least among \
    those certified by Learn then Test (one-sided binomial p-values, fixed sequences from the \
    widest band inwards) with family-wise error at most --delta, and its guarantee: \"PASS \
    precision >= X for this pair, with probability >= 1 - delta over the draw of these cases, \
    assuming they are exchangeable with production\". A bootstrap stability figure follows (a \
    description, not a check). No recommendation (a reason instead) below 10 cases of a class, \
    at AUROC below 0.6, or when no pair is certified within the abstention target.\n\n\
    Labels: each row's `expected_findings` entry; for a one-criterion definition, rows without \
    one use `expected_pass` (the condition holds when expected_pass == expected).\n\n\
    Exit status: 0 done; 1 --write-definition was given but no criterion has a recommendation \
    (nothing written); 2 invalid input (unreadable report or definition, a definition the \
    report does not fit, bad targets)."
)]
pub struct Args {
    /// The JSON report of an `eval` run (`--report OUT.json`).
    #[arg(long, value_name = "R.json")]
    pub report: PathBuf,

    /// The definition the report was made with: each criterion's `expected` and current
    /// thresholds. Required with --write-definition. Without it, `expected` is read from the
    /// report's findings (p' = p means a yes is expected, p' = 1 - p a no).
    #[arg(long, value_name = "DEF")]
    pub definition: Option<PathBuf>,

    /// Target: the least precision of PASS decisions (the expectation really holds), certified
    /// at --delta.
    #[arg(long, value_name = "X", default_value_t = 0.9)]
    pub min_pass_precision: f64,

    /// Target: the least precision of FAIL decisions (the expectation really does not hold),
    /// certified at --delta.
    #[arg(long, value_name = "X", default_value_t = 0.9)]
    pub min_fail_precision: f64,

    /// Target: the largest fraction of INCONCLUSIVE decisions.
    #[arg(long, value_name = "X", default_value_t = 0.25)]
    pub max_abstain: f64,

    /// The family-wise error bound of the certification: both precision targets hold for the
    /// recommended pair with probability at least 1 - delta. Within (0, 1).
    #[arg(long, value_name = "P", default_value_t = DELTA)]
    pub delta: f64,

    /// Bootstrap resamples of the stability figure.
    #[arg(long, value_name = "N", default_value_t = RESAMPLES)]
    pub resamples: u32,

    /// The seed of the stability resamples and of the Brier and ECE intervals (the same seed
    /// gives the same output).
    #[arg(long, value_name = "N", default_value_t = SEED)]
    pub seed: u64,

    /// Write the definition with the recommended thresholds here (.toml or .json), under a new
    /// version. Criteria without a recommendation keep their thresholds.
    #[arg(long, value_name = "OUT", requires = "definition")]
    pub write_definition: Option<PathBuf>,

    /// The new definition's version [default: `<old>+cal.<n>`: n = 1, or one more than the
    /// old version's or OUT's existing `+cal.<k>`].
    /// (`--version` prints the program's version, as everywhere.)
    #[arg(
        long = "new-version",
        value_name = "VERSION",
        requires = "write_definition"
    )]
    pub new_version: Option<String>,

    /// The share of production cases whose expectation holds (for a one-criterion definition,
    /// the share that should pass), strictly between 0 and 1: adds each pair's PASS and FAIL
    /// precisions at that base rate instead of the labelled cases' own mix.
    #[arg(long, value_name = "P", value_parser = crate::inputs::parse_prevalence)]
    pub prevalence: Option<f64>,

    /// Ignore case weights (`weight`, 1/π of sampled labels): every case counts once. Without
    /// it, unequal weights make the certification and the decided precisions weighted.
    #[arg(long)]
    pub unweighted: bool,

    /// Print the calibrate JSON document instead of the human summary.
    #[arg(long)]
    pub json: bool,
}

/// `jevjudge calibrate`'s flags resolved: the settings checked, the report (and definition)
/// read and checked against each other, and the criteria to calibrate known.
#[derive(Debug)]
pub struct Plan {
    /// Where the report was read (`--report`).
    pub report_path: PathBuf,
    /// The report.
    pub report: Report,
    /// The definition (`--definition`), when given.
    pub definition: Option<Definition>,
    /// The criteria: the definition's, or read from the report's findings.
    pub specs: Vec<CriterionSpec>,
    /// The targets, resamples and seed.
    pub settings: CalibrationSettings,
    /// Where to write the calibrated definition (`--write-definition`).
    pub write_definition: Option<PathBuf>,
    /// Its version (`--new-version`) [default: `calibrated_version`].
    pub new_version: Option<String>,
    /// The production base rate (`--prevalence`), checked.
    pub prevalence: Option<f64>,
    /// Print the JSON document instead of the summary.
    pub json: bool,
}

/// The calibration settings of the flags, each target within 0..=1 and at least one resample.
pub fn settings(args: &Args) -> anyhow::Result<CalibrationSettings> {
    CalibrationSettings::with_targets(
        args.min_pass_precision,
        args.min_fail_precision,
        args.max_abstain,
        args.resamples,
        args.seed,
    )
    .map_err(|e| flagged(&e))?
    .with_delta(args.delta)
    .map_err(|e| flagged(&e))
    .map(|settings| CalibrationSettings {
        unweighted: args.unweighted,
        ..settings
    })
}

impl Plan {
    /// Resolves the flags: the settings, then the report (it must hold its rows), then the
    /// definition it must fit, or the criteria read from its findings (said on stderr).
    pub fn resolve(args: Args) -> anyhow::Result<Plan> {
        let settings = settings(&args)?;
        let report = read_report(&args.report)?;
        check_rows(&report).map_err(|e| anyhow::anyhow!("{} {e}", args.report.display()))?;
        if !report.complete {
            eprintln!(
                "jevjudge: note: {} is an interrupted run: calibrating its {} finished rows",
                args.report.display(),
                report.rows.len()
            );
        }
        let definition = match &args.definition {
            Some(path) => Some(definition_for(path, &report, &args.report)?),
            None => None,
        };
        let specs = match &definition {
            Some(definition) => CriterionSpec::from_definition(definition),
            None => {
                let specs = infer_criteria(&report).map_err(|e| {
                    anyhow::anyhow!("{}: {e}: give it with --definition", args.report.display())
                })?;
                eprintln!(
                    "jevjudge: note: no --definition: read from the report's findings that {}; current thresholds unknown",
                    expectations(&specs)
                );
                specs
            }
        };
        Ok(Plan {
            report_path: args.report,
            report,
            definition,
            specs,
            settings,
            write_definition: args.write_definition,
            new_version: args.new_version,
            prevalence: args.prevalence,
            json: args.json,
        })
    }

    /// Writes the calibrated definition when `--write-definition` asked for it and a
    /// criterion has a recommendation: where, under which version.
    fn write_definition(
        &self,
        calibration: &Calibration,
    ) -> anyhow::Result<Option<(PathBuf, String)>> {
        let (Some(out), Some(definition)) = (&self.write_definition, &self.definition) else {
            return Ok(None);
        };
        let file = calibrated_file(
            calibration,
            definition,
            out,
            self.new_version.as_deref(),
            &self.report,
            &self.report_path,
        )
        .map_err(|e| flagged(&e))?;
        let Some(CalibratedFile { text, version }) = file else {
            return Ok(None);
        };
        output::write_atomic(out, &text)?;
        Ok(Some((out.clone(), version)))
    }
}

/// Runs the command: resolve the plan, calibrate, write the definition if asked, render.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let plan = Plan::resolve(args)?;
    let mut calibration = calibrate(&plan.report, &plan.specs, &plan.settings);
    if plan.settings.unweighted && calibration.unequal_weights() {
        eprintln!(
            "jevjudge: warning: the cases carry unequal weights (sampled labels) and --unweighted ignores them: the precisions describe the labelled mix, not the population it was sampled from"
        );
    }
    if let Some(prevalence) = plan.prevalence {
        calibration.set_prevalence(prevalence);
    }
    let written = plan.write_definition(&calibration)?;
    if plan.json {
        output::print_stdout(&(serde_json::to_string_pretty(&calibration.to_document())? + "\n"));
    } else {
        output::print_stdout(&terminal::calibration(
            &calibration,
            &plan.report,
            plan.definition.is_some(),
        ));
    }
    match (&plan.write_definition, written) {
        (_, Some((out, version))) => {
            eprintln!("jevjudge: wrote {} (version {version})", out.display());
            Ok(exit::SUCCESS)
        }
        (Some(out), None) => {
            eprintln!(
                "jevjudge: no criterion has a recommendation: {} was not written",
                out.display()
            );
            Ok(exit::FAILED)
        }
        (None, None) => Ok(exit::SUCCESS),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, clap::Parser)]
    struct Command {
        #[command(flatten)]
        args: Args,
    }

    fn args(extra: &[&str]) -> Args {
        let argv = ["calibrate", "--report", "r.json"].iter().chain(extra);
        Command::try_parse_from(argv).unwrap().args
    }

    #[test]
    fn the_settings_are_the_flags_with_the_documented_defaults() {
        let defaults = settings(&args(&[])).unwrap();
        assert_eq!(defaults, CalibrationSettings::default());
        let set = settings(&args(&[
            "--min-pass-precision",
            "0.95",
            "--max-abstain",
            "0.1",
            "--resamples",
            "20",
            "--seed",
            "7",
            "--delta",
            "0.1",
        ]))
        .unwrap();
        assert_eq!(set.delta, 0.1);
        assert_eq!(set.targets.min_pass_precision, 0.95);
        assert_eq!(set.targets.min_fail_precision, 0.9);
        assert_eq!(set.targets.max_abstain, 0.1);
        assert_eq!((set.resamples, set.seed), (20, 7));
    }

    #[test]
    fn targets_outside_zero_to_one_and_no_resamples_are_refused() {
        for (flags, message) in [
            (
                ["--min-fail-precision", "1.2"],
                "--min-fail-precision must be within 0..=1, not 1.2",
            ),
            (
                ["--max-abstain", "NaN"],
                "--max-abstain must be within 0..=1, not NaN",
            ),
            (["--delta", "0"], "--delta must be within (0, 1), not 0"),
            (["--delta", "1"], "--delta must be within (0, 1), not 1"),
            (["--resamples", "0"], "--resamples must be at least 1"),
        ] {
            assert_eq!(settings(&args(&flags)).unwrap_err().to_string(), message);
        }
    }
}
