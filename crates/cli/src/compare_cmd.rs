//! `jevjudge compare`: two runs case by case (cli-and-formats.md §1.5).

use std::path::PathBuf;

use jevjudge_eval::{
    compare::{CompareError, CompareOptions, compare},
    gates::{CompareGates, all_held},
    terminal,
};

use crate::{exit, report_cmd::read_report};

/// Options of `jevjudge compare`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Rows are paired by case id. A flip is a case whose verdict status \
    changed; a regression is a case correct in BASE and not correct in CANDIDATE (incorrect, \
    abstained or errored), a fix the reverse. McNemar's exact two-sided test is computed on the \
    cases correct in exactly one run.\n\n\
    --max-new-incorrect counts cases incorrect in CANDIDATE and not in BASE, \
    --max-false-pass-increase cases false PASS in CANDIDATE and not in BASE; with repeats every \
    gate counts only cases that Fisher's exact test on the repeat counts, Holm-corrected across \
    cases, finds changed.\n\n\
    Exit status: 0 compared and every gate held; 1 a gate was exceeded; 2 invalid \
    input (an unreadable report, different case sets without --intersect, a case whose \
    expected_pass differs)."
)]
pub struct Args {
    /// The reference run's JSON report.
    #[arg(value_name = "BASE.json")]
    pub base: PathBuf,

    /// The run to compare with it.
    #[arg(value_name = "CANDIDATE.json")]
    pub candidate: PathBuf,

    /// Compare only the cases both reports hold, instead of refusing different case sets.
    #[arg(long)]
    pub intersect: bool,

    /// Gate: exit 1 when more than N cases regressed.
    #[arg(long, value_name = "N")]
    pub max_regressions: Option<u64>,

    /// Gate: exit 1 when more than N cases are incorrect in CANDIDATE and were not in BASE
    /// (correct, abstained or errored there).
    #[arg(long, value_name = "N")]
    pub max_new_incorrect: Option<u64>,

    /// Gate: exit 1 when more than N cases are false PASS in CANDIDATE and were not in BASE.
    #[arg(long, value_name = "N")]
    pub max_false_pass_increase: Option<u64>,

    /// The share of cases that should pass in production (strictly between 0 and 1): adds
    /// each run's PASS and FAIL precisions at that base rate.
    #[arg(long, value_name = "P", value_parser = crate::inputs::parse_prevalence)]
    pub prevalence: Option<f64>,

    /// Print the compare JSON document instead of the human summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let base = read_report(&args.base)?;
    let candidate = read_report(&args.candidate)?;
    let prevalence = args.prevalence;
    let mut comparison = compare(
        &base,
        &candidate,
        CompareOptions {
            intersect: args.intersect,
        },
    )
    .map_err(|e| {
        let hint = match &e {
            CompareError::DifferentCases { .. } => ": pass --intersect to compare only those",
            _ => "",
        };
        anyhow::anyhow!(
            "cannot compare {} with {}: {e}{hint}",
            args.base.display(),
            args.candidate.display()
        )
    })?;
    if let Some(prevalence) = prevalence {
        comparison.set_prevalence(prevalence);
    }
    let gates = CompareGates {
        max_regressions: args.max_regressions,
        max_new_incorrect: args.max_new_incorrect,
        max_false_pass_increase: args.max_false_pass_increase,
    }
    .evaluate(&comparison);
    let held = all_held(&gates);
    if args.json {
        crate::output::print_stdout(
            &(serde_json::to_string_pretty(&comparison.to_document())? + "\n"),
        );
    } else {
        crate::output::print_stdout(&terminal::compare_with_gates(
            &comparison,
            &args.base,
            &args.candidate,
            &gates,
        ));
    }
    Ok(if held { exit::SUCCESS } else { exit::FAILED })
}
