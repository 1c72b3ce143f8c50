//! `jevjudge calibrate`: calibration metrics and threshold advice from a report
//! (cli-and-formats.md §1.5). No backend is called: the report keeps every probability.

use std::{fmt::Write as _, path::PathBuf};

use jevjudge_eval::calibration::{
    self, BINS, CalibrationSettings, CriterionCalibration, CriterionSpec, MIN_AUROC, MIN_CLASS,
    MIN_OUT_OF_BAG_RATE, RESAMPLES, SEED, Z, calibrate, calibrated_version, infer_criteria,
};
use jevjudge_judge::{Definition, DefinitionFormat};
use jevjudge_stats::{Tally, Targets};

use crate::{
    InputError, exit, output,
    report_cmd::{definition_for, read_report},
};

/// Options of `jevjudge calibrate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Per criterion, on the raw yes-probability against whether the \
    condition really holds: count, positives, Brier, log loss, ECE over 10 equal-width and 10 \
    equal-mass bins, MCE and the reliability table (equal-width), AUROC. Then a recommended \
    (fail_at_or_below, pass_at_or_above) on p': among the observed p' values, the pair that \
    abstains least while the Wilson lower bounds (z = 1.96) of both precisions reach the \
    targets, checked on 200 seeded out-of-bag bootstrap resamples. No recommendation (a reason \
    instead) below 10 cases of a class, at AUROC below 0.6, when no pair meets the targets, or \
    when the targets hold in fewer than 80 % of the out-of-bag resamples.\n\n\
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

    /// Target: the least precision of PASS decisions (the expectation really holds), as a
    /// Wilson lower bound.
    #[arg(long, value_name = "X", default_value_t = 0.9)]
    pub min_pass_precision: f64,

    /// Target: the least precision of FAIL decisions (the expectation really does not hold),
    /// as a Wilson lower bound.
    #[arg(long, value_name = "X", default_value_t = 0.9)]
    pub min_fail_precision: f64,

    /// Target: the largest fraction of INCONCLUSIVE decisions.
    #[arg(long, value_name = "X", default_value_t = 0.25)]
    pub max_abstain: f64,

    /// Out-of-bag bootstrap resamples.
    #[arg(long, value_name = "N", default_value_t = RESAMPLES)]
    pub resamples: u32,

    /// The seed of the out-of-bag resamples (the same seed gives the same advice).
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

    /// Print the calibrate JSON document instead of the human summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    for (flag, value) in [
        ("--min-pass-precision", args.min_pass_precision),
        ("--min-fail-precision", args.min_fail_precision),
        ("--max-abstain", args.max_abstain),
    ] {
        if !(0.0..=1.0).contains(&value) {
            return Err(InputError(format!("{flag} must be within 0..=1, not {value}")).into());
        }
    }
    if args.resamples == 0 {
        return Err(InputError("--resamples must be at least 1".into()).into());
    }
    let report = read_report(&args.report)?;
    if report.rows.is_empty() && report.overall.total > 0 {
        return Err(InputError(format!(
            "{} holds no rows (a streaming run keeps them in its rows file): calibrate needs the rows",
            args.report.display()
        ))
        .into());
    }
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
            let specs = infer_criteria(&report)
                .map_err(|e| InputError(format!("{}: {e}", args.report.display())))?;
            let read: Vec<String> = specs
                .iter()
                .map(|spec| {
                    format!(
                        "`{}` expects {}",
                        spec.id,
                        if spec.expected { "yes" } else { "no" }
                    )
                })
                .collect();
            eprintln!(
                "jevjudge: note: no --definition: read from the report's findings that {}; current thresholds unknown",
                read.join(", ")
            );
            specs
        }
    };
    let settings = CalibrationSettings {
        targets: Targets {
            min_pass_precision: args.min_pass_precision,
            min_fail_precision: args.min_fail_precision,
            max_abstain: args.max_abstain,
            z: Z,
        },
        resamples: args.resamples,
        seed: args.seed,
        ..CalibrationSettings::default()
    };
    let calibration = calibrate(&report, &specs, &settings);

    let mut written = None;
    let mut code = exit::SUCCESS;
    if let (Some(out), Some(definition)) = (&args.write_definition, &definition) {
        if calibration.has_recommendation() {
            let version = match &args.new_version {
                Some(version) => version.clone(),
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
                .map_err(|e| InputError(format!("--new-version: {e}")))?;
            let text = match DefinitionFormat::from_path(out) {
                Some(DefinitionFormat::Toml) => {
                    let body = calibrated.to_toml_string().map_err(|_| {
                        InputError(format!(
                            "--write-definition {}: the definition holds a JSON null in its \
                             question content, which TOML cannot carry: write a .json file instead",
                            out.display()
                        ))
                    })?;
                    format!(
                        "# Calibrated by `jevjudge calibrate` from {} ({} rows of {}).\n{body}{}",
                        args.report.display(),
                        report.rows.len(),
                        report.definition_version,
                        if body.ends_with('\n') { "" } else { "\n" }
                    )
                }
                Some(DefinitionFormat::Json) => {
                    serde_json::to_string_pretty(&calibrated.to_json_value())? + "\n"
                }
                None => {
                    return Err(InputError(format!(
                        "--write-definition {}: a definition file must end in .toml or .json",
                        out.display()
                    ))
                    .into());
                }
            };
            output::write_atomic(out, &text)?;
            written = Some((out.clone(), version));
        } else {
            code = exit::FAILED;
        }
    }

    if args.json {
        crate::output::print_stdout(
            &(serde_json::to_string_pretty(&calibration.to_document())? + "\n"),
        );
    } else {
        crate::output::print_stdout(&human(&calibration, &report, definition.is_some()));
    }
    match (&args.write_definition, written) {
        (_, Some((out, version))) => {
            eprintln!("jevjudge: wrote {} (version {version})", out.display());
        }
        (Some(out), None) => eprintln!(
            "jevjudge: no criterion has a recommendation: {} was not written",
            out.display()
        ),
        (None, None) => {}
    }
    Ok(code)
}

fn human(
    calibration: &calibration::Calibration,
    report: &jevjudge_eval::Report,
    with_definition: bool,
) -> String {
    let mut out = String::new();
    let models = report.models();
    let settings = &calibration.settings;
    let targets = settings.targets;
    let _ = writeln!(
        out,
        "jevjudge calibrate: {} · {} rows · backend {}{}",
        calibration.definition_version,
        report.rows.len(),
        report.backend,
        if models.is_empty() {
            String::new()
        } else {
            format!(" · model {}", models.join(", "))
        }
    );
    if report.backend.is_synthetic() {
        let _ = writeln!(
            out,
            "note: answers come from the {} backend, not a model: this calibrates no model",
            report.backend
        );
    }
    let _ = writeln!(
        out,
        "targets: PASS precision >= {}, FAIL precision >= {} (Wilson lower bounds, z = {}), abstain <= {}",
        targets.min_pass_precision, targets.min_fail_precision, targets.z, targets.max_abstain
    );
    for criterion in &calibration.criteria {
        criterion_block(&mut out, criterion, &targets, with_definition);
    }
    let _ = writeln!(
        out,
        "\nmethod: metrics on the raw p against whether the condition holds; ECE over {BINS} equal-width\n\
         and {BINS} equal-mass bins; MCE and the table over the equal-width bins. Candidate thresholds\n\
         are the observed p' values; the pair chosen abstains least among those whose PASS and FAIL\n\
         precisions have Wilson lower bounds (z = {}) at or above the targets. Out of bag: {}\n\
         bootstrap resamples (seed {}) redo the choice on the in-bag rows and score it on the rows\n\
         left out. No recommendation below {MIN_CLASS} cases of a class, at AUROC below {MIN_AUROC}, or\n\
         when the targets hold in fewer than {:.0} % of the resamples.",
        targets.z,
        settings.resamples,
        settings.seed,
        MIN_OUT_OF_BAG_RATE * 100.0
    );
    out
}

fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.4}"))
}

fn decisions(tally: &Tally, z: f64) -> String {
    let precision = |value: Option<f64>, lower: Option<f64>| match (value, lower) {
        (Some(value), Some(lower)) => format!("precision {value:.3}, Wilson lower {lower:.3}"),
        _ => "none".to_owned(),
    };
    format!(
        "PASS {} ({}) · FAIL {} ({}) · abstain {} ({:.3})",
        tally.passes,
        precision(tally.pass_precision(), tally.pass_lower(z)),
        tally.fails,
        precision(tally.fail_precision(), tally.fail_lower(z)),
        tally.abstained(),
        tally.abstain_rate().unwrap_or(0.0)
    )
}

fn criterion_block(
    out: &mut String,
    criterion: &CriterionCalibration,
    targets: &Targets,
    with_definition: bool,
) {
    let points = &criterion.points;
    let spec = &points.spec;
    let m = &criterion.metrics;
    let _ = writeln!(
        out,
        "\ncriterion `{}` (a {} is expected: p' = {})",
        spec.id,
        if spec.expected { "yes" } else { "no" },
        if spec.expected { "p" } else { "1 - p" }
    );
    let mut sources = Vec::new();
    if points.from_expected_findings > 0 {
        sources.push(format!(
            "{} from expected_findings",
            points.from_expected_findings
        ));
    }
    if points.from_expected_pass > 0 {
        sources.push(format!("{} from expected_pass", points.from_expected_pass));
    }
    if points.unlabelled > 0 {
        sources.push(format!("{} rows unlabelled (left out)", points.unlabelled));
    }
    if points.without_finding > 0 {
        sources.push(format!(
            "{} rows without a finding (ERROR, left out)",
            points.without_finding
        ));
    }
    if points.invalid > 0 {
        sources.push(format!(
            "{} probabilities outside [0, 1] (left out)",
            points.invalid
        ));
    }
    if sources.is_empty() {
        sources.push("none".into());
    }
    let _ = writeln!(out, "  labels       {}", sources.join(", "));
    let base_rate = if m.n > 0 {
        format!("{:.3}", m.positives as f64 / m.n as f64)
    } else {
        "n/a".to_owned()
    };
    let _ = writeln!(
        out,
        "  n {} · positives {} (base rate {base_rate}) · Brier {} · log loss {} · AUROC {}",
        m.n,
        m.positives,
        figure(m.brier),
        figure(m.log_loss),
        figure(m.auroc)
    );
    let _ = writeln!(
        out,
        "  ECE {} ({BINS} equal-width bins) · {} ({BINS} equal-mass bins) · MCE {} (equal-width)",
        figure(m.ece_equal_width),
        figure(m.ece_equal_mass),
        figure(m.mce)
    );
    if !m.reliability.is_empty() {
        let _ = writeln!(
            out,
            "  reliability ({BINS} equal-width bins, empty ones left out):"
        );
        let _ = writeln!(
            out,
            "    {:<12} {:>6} {:>8} {:>9}",
            "bin", "count", "mean p", "observed"
        );
        for bin in &m.reliability {
            let close = if bin.upper >= 1.0 { ']' } else { ')' };
            let _ = writeln!(
                out,
                "    {:<12} {:>6} {:>8.3} {:>9.3}",
                format!("[{:.1}, {:.1}{close}", bin.lower, bin.upper),
                bin.count,
                bin.mean_probability,
                bin.observed_rate
            );
        }
    }
    match (&criterion.current, spec.thresholds) {
        (Some(tally), Some(thresholds)) => {
            let _ = writeln!(
                out,
                "  current      fail_at_or_below {}, pass_at_or_above {}: {}",
                thresholds.fail_at_or_below,
                thresholds.pass_at_or_above,
                decisions(tally, targets.z)
            );
        }
        _ if !with_definition => {
            let _ = writeln!(out, "  current      thresholds unknown (no --definition)");
        }
        _ => {}
    }
    match &criterion.outcome {
        Ok(recommendation) => {
            let thresholds = recommendation.choice.thresholds;
            let _ = writeln!(
                out,
                "  recommended  fail_at_or_below {}, pass_at_or_above {}: {}",
                thresholds.fail_at_or_below,
                thresholds.pass_at_or_above,
                decisions(&recommendation.choice.tally, targets.z)
            );
            let check = recommendation.out_of_bag;
            let _ = writeln!(
                out,
                "  out of bag   targets held in {} of {} resamples ({:.1} %; {} of them admitted a pair) — the honest estimate for unseen cases",
                check.met,
                check.resamples,
                check.rate().unwrap_or(0.0) * 100.0,
                check.fitted
            );
        }
        Err(refusal) => {
            let _ = writeln!(out, "  no recommendation: {refusal}");
        }
    }
}
