//! The summary `jevjudge calibrate` prints (cli-and-formats.md §1.5).

use std::fmt::Write as _;

use jevjudge_stats::{Tally, Targets};

use crate::{
    Report,
    calibration::{
        BINS, Calibration, CriterionCalibration, INTERVAL_RESAMPLES, MIN_AUROC, MIN_CLASS,
        Recommendation,
    },
};

/// The summary `jevjudge calibrate` prints: the run, the targets, one
/// [`criterion_block`] per criterion and the method. `with_definition` says whether the
/// current thresholds are known (`--definition`).
pub fn calibration(calibration: &Calibration, report: &Report, with_definition: bool) -> String {
    let mut out = String::new();
    let models = report.models();
    let settings = &calibration.settings;
    let targets = settings.targets;
    let _ = writeln!(
        out,
        "jevjudge calibrate: {} · {} · backend {}{}",
        calibration.definition_version,
        crate::plural::count(report.rows.len(), "row"),
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
        "targets: PASS precision >= {}, FAIL precision >= {}, abstain <= {} (precisions certified by Learn then Test, delta = {})",
        targets.min_pass_precision, targets.min_fail_precision, targets.max_abstain, settings.delta
    );
    for criterion in &calibration.criteria {
        out.push_str(&criterion_block(criterion, &targets, with_definition));
    }
    let _ = writeln!(
        out,
        "\nmethod: metrics on the raw p against whether the condition holds; ECE over {BINS} equal-width\n\
         and up to {BINS} equal-mass bins (ties never split); MCE and the table over the equal-width\n\
         bins. 95 % intervals: AUROC by DeLong (with repeats, a bootstrap by case), Brier and ECE by\n\
         a percentile bootstrap of {INTERVAL_RESAMPLES} resamples by case. Candidate thresholds are the\n\
         observed p' values. Learn then Test: each candidate's precision gets a one-sided binomial\n\
         p-value; PASS thresholds are tested from the highest down and FAIL thresholds from the\n\
         lowest up (each from the widest with enough decisions to certify one wrong one), each\n\
         sequence at delta/2 = {} and stopped at its first failure; the pair recommended abstains\n\
         least among the certified ones. Stability: {} bootstrap resamples\n\
         (seed {}, each distinct row once) redo the certification and score it on the rows left out\n\
         — a description, not a guarantee. No recommendation below {MIN_CLASS} cases of a class or at\n\
         AUROC below {MIN_AUROC}. Wilson lower bounds: z = {}.",
        settings.delta / 2.0,
        settings.resamples,
        settings.seed,
        targets.z
    );
    out
}

/// The certified pair, its guarantee and its stability.
fn recommendation_lines(recommendation: &Recommendation, targets: &Targets) -> String {
    let mut out = String::new();
    let certificate = &recommendation.certificate;
    let thresholds = certificate.thresholds;
    let tally = certificate.tally;
    let observed =
        |value: Option<f64>| value.map_or_else(|| "none".to_owned(), |v| format!("{v:.3}"));
    let _ = writeln!(
        out,
        "  recommended  fail_at_or_below {}, pass_at_or_above {}: PASS {} (observed precision {}, p = {:.2e}) · FAIL {} (observed precision {}, p = {:.2e}) · abstain {} ({:.3})",
        thresholds.fail_at_or_below,
        thresholds.pass_at_or_above,
        tally.passes,
        observed(tally.pass_precision()),
        certificate.pass_p_value,
        tally.fails,
        observed(tally.fail_precision()),
        certificate.fail_p_value,
        tally.abstained(),
        tally.abstain_rate().unwrap_or(0.0)
    );
    if let Some(weighted) = &recommendation.weighted {
        out.push_str(&weighted_line(weighted));
    }
    let [pass, fail] = recommendation.guarantee(targets);
    let _ = writeln!(out, "  guarantee    {pass}");
    let _ = writeln!(out, "               {fail}");
    let _ = writeln!(
        out,
        "               (both at once: probability ≥ {:.2} jointly)",
        1.0 - certificate.delta
    );
    let figure = &recommendation.stability;
    let range = |precision: Option<f64>, range: Option<(f64, f64)>| match (precision, range) {
        (Some(p), Some((low, high))) => format!("{p:.3} [{low:.3}, {high:.3}]"),
        _ => "n/a".to_owned(),
    };
    let _ = writeln!(
        out,
        "  stability    this pair in {} of {} resamples ({} certified a pair, {} distinct pairs); out-of-bag precision PASS {} · FAIL {} — a description, not a guarantee",
        figure.same_pair,
        figure.resamples,
        figure.certified,
        figure.distinct_pairs,
        range(figure.pass_precision(), figure.pass_interval),
        range(figure.fail_precision(), figure.fail_interval)
    );
    out
}

/// The `weighted` line under a pair's decisions: its Horvitz–Thompson precisions and
/// abstention rate, each with its interval at the Kish effective n.
fn weighted_line(weighted: &crate::calibration::WeightedDecisions) -> String {
    let rate = |value: Option<jevjudge_stats::WeightedProportion>| {
        value.map_or_else(
            || "none".to_owned(),
            |r| {
                format!(
                    "{:.3} [{:.3}, {:.3}] at effective n {:.1}",
                    r.estimate, r.interval.0, r.interval.1, r.effective_n
                )
            },
        )
    };
    format!(
        "  weighted     (effective n {:.1}) PASS precision {} · FAIL precision {} · abstain {:.3} (the metrics above and the stability figure are unweighted)\n",
        weighted.effective_n,
        rate(weighted.pass_precision),
        rate(weighted.fail_precision),
        weighted.abstain_rate.map_or(0.0, |r| r.estimate)
    )
}

fn interval(value: Option<[f64; 2]>) -> String {
    value.map_or_else(String::new, |[low, high]| format!(" [{low:.4}, {high:.4}]"))
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

/// One criterion's block of the `calibrate` summary, starting with a blank line: where its
/// labels came from, the metrics, the reliability table, the current thresholds' decisions
/// and the recommendation with its guarantee and stability, or the reason there is none.
pub fn criterion_block(
    criterion: &CriterionCalibration,
    targets: &Targets,
    with_definition: bool,
) -> String {
    let mut out = String::new();
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
        sources.push(format!(
            "{} unlabelled (left out)",
            crate::plural::count(points.unlabelled, "row")
        ));
    }
    if points.without_finding > 0 {
        sources.push(format!(
            "{} without a finding (ERROR, left out)",
            crate::plural::count(points.without_finding, "row")
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
    let reviews = points.points.len();
    let cases = points.cases();
    let counted = if reviews > cases {
        format!(
            "{reviews} reviews of {cases} cases (every repeat used; intervals and the certification count cases): "
        )
    } else {
        String::new()
    };
    let _ = writeln!(out, "  labels       {counted}{}", sources.join(", "));
    let base_rate = if m.n > 0 {
        format!("{:.3}", m.positives as f64 / m.n as f64)
    } else {
        "n/a".to_owned()
    };
    let _ = writeln!(
        out,
        "  n {} · positives {} (base rate {base_rate}) · Brier {}{} · log loss {} · AUROC {}{}",
        m.n,
        m.positives,
        figure(m.brier),
        interval(m.brier_ci),
        figure(m.log_loss),
        figure(m.auroc),
        interval(m.auroc_ci)
    );
    let _ = writeln!(
        out,
        "  ECE {}{} ({BINS} equal-width bins; {} expected of a perfectly calibrated model at these p) · {} ({} equal-mass bins) · MCE {} (equal-width)",
        figure(m.ece_equal_width),
        interval(m.ece_ci),
        figure(m.ece_expected),
        figure(m.ece_equal_mass),
        m.ece_equal_mass_bins,
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
            if let Some(weighted) = &criterion.current_weighted {
                out.push_str(&weighted_line(weighted));
            }
        }
        _ if !with_definition => {
            let _ = writeln!(out, "  current      thresholds unknown (no --definition)");
        }
        _ => {}
    }
    match &criterion.outcome {
        Ok(recommendation) => out.push_str(&recommendation_lines(recommendation, targets)),
        Err(refusal) => {
            let _ = writeln!(out, "  no recommendation: {refusal}");
        }
    }
    if let Some(at) = &criterion.at_prevalence {
        out.push_str(&prevalence_lines(at));
    }
    out
}

/// With a stated production base rate: each known pair's precisions at it, then the warning
/// when the labelled cases' mix is far from it.
fn prevalence_lines(at: &crate::calibration::PairsAtPrevalence) -> String {
    let mut out = String::new();
    let mut warning = None;
    for (name, figures) in [("current", &at.current), ("recommended", &at.recommended)] {
        let Some(figures) = figures else { continue };
        let _ = writeln!(
            out,
            "  at {:<9} {name} pair: PASS precision {} · FAIL precision {}",
            at.prevalence,
            crate::cells::rate(figures.pass_precision, figures.pass_precision_ci, 3),
            crate::cells::rate(figures.fail_precision, figures.fail_precision_ci, 3)
        );
        warning = warning.or(figures.warning.as_ref());
    }
    if let Some(warning) = warning {
        let _ = writeln!(out, "  warning      {warning}");
    }
    out
}
