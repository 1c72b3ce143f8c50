//! The summary `jevjudge compare` prints (cli-and-formats.md §1.5).

use std::{fmt::Write as _, path::Path};

use super::scope_width;
use crate::{
    Summary,
    compare::{Comparison, RunFigures},
    compare_noise::{NoiseRule, RateChange},
};

fn side_line(out: &mut String, label: &str, path: &Path, figures: &RunFigures) {
    let _ = writeln!(
        out,
        "  {label:<10} {} · backend {} · model {}{}  ({})",
        figures.definition_version,
        figures.backend,
        if figures.models.is_empty() {
            "unknown".to_owned()
        } else {
            figures.models.join(", ")
        },
        if figures.complete {
            ""
        } else {
            " · INCOMPLETE"
        },
        path.display()
    );
    if figures.backend.is_synthetic() {
        let _ = writeln!(
            out,
            "  {:<10} note: {} answers, not a model's",
            "", figures.backend
        );
    }
}

fn delta_line(
    out: &mut String,
    scope: &str,
    width: usize,
    base: Option<&Summary>,
    candidate: Option<&Summary>,
) {
    let accuracy =
        |s: Option<&Summary>| s.map_or_else(|| "-".to_owned(), |s| format!("{:.4}", s.accuracy));
    let delta = match (base, candidate) {
        (Some(b), Some(c)) => format!("{:+.4}", c.accuracy - b.accuracy),
        _ => "-".to_owned(),
    };
    let pair = |f: fn(&Summary) -> u64| {
        format!(
            "{}->{}",
            base.map_or_else(|| "-".to_owned(), |s| f(s).to_string()),
            candidate.map_or_else(|| "-".to_owned(), |s| f(s).to_string())
        )
    };
    let _ = writeln!(
        out,
        "{scope:<width$}  {:>9} {:>9} {:>8}  {:>9} {:>9} {:>9} {:>7} {:>10} {:>10}",
        accuracy(base),
        accuracy(candidate),
        delta,
        pair(|s| s.correct),
        pair(|s| s.incorrect),
        pair(|s| s.abstained),
        pair(|s| s.errors),
        pair(|s| s.risk.false_pass),
        pair(|s| s.risk.false_fail)
    );
}

/// The change lines: accuracy, coverage and decided accuracy, candidate − base, each with its
/// paired 95 % interval.
fn change_lines(comparison: &Comparison) -> String {
    let mut out = String::new();
    let changes = &comparison.changes;
    let _ = writeln!(
        out,
        "\nchange (candidate - base) [95% paired interval, docs/explanation/statistics.md]:"
    );
    for (name, change) in [
        ("accuracy", &changes.accuracy),
        ("coverage", &changes.coverage),
        ("decided accuracy", &changes.decided_accuracy),
    ] {
        let figure = |x: Option<f64>| x.map_or_else(|| "n/a".to_owned(), |x| format!("{x:.4}"));
        let line = match (change.difference, change.ci) {
            (Some(d), Some([low, high])) => format!(
                "{d:+.4} [{low:+.4}, {high:+.4}] ({} -> {}; {}{})",
                figure(change.base),
                figure(change.candidate),
                change.method,
                if change.excludes_zero() {
                    "; excludes 0"
                } else {
                    ""
                }
            ),
            _ => "n/a".to_owned(),
        };
        let _ = writeln!(out, "  {name:<17} {line}");
    }
    out
}

/// The summary `jevjudge compare` prints: each side, the accuracy table overall and per
/// scenario, the flips by transition, regressions and fixes (or, for repeated runs, the
/// changes beyond the noise), McNemar's test and the `--max-regressions` gate when given.
/// `base` and `candidate` are the reports' paths, as the command was given them.
pub fn compare(
    comparison: &Comparison,
    base: &Path,
    candidate: &Path,
    max_regressions: Option<u64>,
) -> String {
    let gates = crate::gates::CompareGates {
        max_regressions,
        ..Default::default()
    };
    compare_with_gates(comparison, base, candidate, &gates.evaluate(comparison))
}

/// [`compare`] with any [`crate::gates::CompareGates`], already evaluated.
pub fn compare_with_gates(
    comparison: &Comparison,
    base: &Path,
    candidate: &Path,
    gates: &[crate::gates::Gate],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "jevjudge compare: {} paired cases", comparison.pairs);
    side_line(&mut out, "base", base, &comparison.base);
    side_line(&mut out, "candidate", candidate, &comparison.candidate);
    if !comparison.only_in_base.is_empty() || !comparison.only_in_candidate.is_empty() {
        let _ = writeln!(
            out,
            "  --intersect: left out {} only in base and {} only in candidate",
            crate::plural::count(comparison.only_in_base.len(), "case"),
            comparison.only_in_candidate.len()
        );
    }
    let scenarios = comparison.scenarios();
    let width = scope_width(scenarios.iter().map(|(name, ..)| name.as_str()));
    let _ = writeln!(
        out,
        "\n{:<width$}  {:>9} {:>9} {:>8}  {:>9} {:>9} {:>9} {:>7} {:>10} {:>10}",
        "scope",
        "base acc",
        "cand acc",
        "delta",
        "correct",
        "incorrect",
        "abstained",
        "errors",
        "false PASS",
        "false FAIL"
    );
    delta_line(
        &mut out,
        "overall",
        width,
        Some(&comparison.base.summary),
        Some(&comparison.candidate.summary),
    );
    for (name, base, candidate) in &scenarios {
        let name: String = name.chars().take(width).collect();
        delta_line(&mut out, &name, width, *base, *candidate);
    }
    out.push_str(&change_lines(comparison));
    for (side, figures) in [
        ("base", &comparison.base),
        ("candidate", &comparison.candidate),
    ] {
        for line in crate::cells::prevalence_lines(&figures.summary) {
            let _ = writeln!(out, "{side}: {line}");
        }
    }
    let _ = writeln!(out, "\nflips: {}", comparison.flips.len());
    for (transition, count) in &comparison.transitions {
        let ids: Vec<&str> = comparison
            .flips
            .iter()
            .filter(|flip| &flip.transition() == transition)
            .map(|flip| flip.id.as_str())
            .collect();
        let _ = writeln!(out, "  {transition:<24} {count:>5}  {}", ids.join(" "));
    }
    let list = |regression: bool| -> String {
        comparison
            .flips
            .iter()
            .filter(|flip| {
                if regression {
                    flip.is_regression()
                } else {
                    flip.is_fix()
                }
            })
            .map(|flip| flip.id.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    if let Some(noise) = &comparison.noise {
        out.push_str(&noise_lines(noise));
    } else {
        let counts = [
            ("regressions", comparison.regressions, true),
            ("fixes", comparison.fixes, false),
        ];
        for (what, count, regression) in counts {
            // A regression was correct in base and is not in candidate; a fix the reverse.
            let (was, is_not) = if regression {
                ("base", "candidate")
            } else {
                ("candidate", "base")
            };
            let colon = if count > 0 { ": " } else { "" };
            let ids = list(regression);
            let _ = writeln!(
                out,
                "{what}: {count} (correct in {was}, not in {is_not}){colon}{ids}"
            );
        }
    }
    let _ = writeln!(
        out,
        "McNemar exact two-sided p = {} ({} vs {}){}",
        if comparison.mcnemar_p >= 1e-4 {
            format!("{:.4}", comparison.mcnemar_p)
        } else {
            format!("{:.2e}", comparison.mcnemar_p)
        },
        count(comparison.regressions, "regression"),
        count(comparison.fixes, "fix"),
        if comparison.mcnemar_p < 0.05 {
            ": unlikely to be chance at the 5 % level"
        } else {
            ": consistent with chance at the 5 % level"
        }
    );
    if comparison.noise.is_none() {
        for (what, ids, base_was) in [
            (
                "new incorrect",
                &comparison.new_incorrect_ids,
                "correct, abstained or errored",
            ),
            (
                "new false PASS",
                &comparison.new_false_pass_ids,
                "not false PASS",
            ),
        ] {
            let colon = if ids.is_empty() { "" } else { ": " };
            let _ = writeln!(
                out,
                "{what}: {} ({base_was} in base){colon}{}",
                ids.len(),
                ids.join(" ")
            );
        }
    }
    for gate in gates {
        let _ = writeln!(out, "gate {}", gate.line);
    }
    out
}

/// The regressions and fixes of repeated runs, beside each run's flip rate.
fn noise_lines(noise: &NoiseRule) -> String {
    let mut out = String::new();
    let ci =
        |ci: Option<[f64; 2]>| ci.map_or_else(String::new, |[l, h]| format!(" [{l:.4}, {h:.4}]"));
    let _ = writeln!(
        out,
        "noise: base {}, flip rate {:.4}{} · candidate {}, flip rate {:.4}{}",
        crate::plural::count(noise.base_repeats, "repeat"),
        noise.base_flip_rate,
        ci(noise.base_flip_rate_ci),
        crate::plural::count(noise.candidate_repeats, "repeat"),
        noise.candidate_flip_rate,
        ci(noise.candidate_flip_rate_ci),
    );
    let _ = writeln!(
        out,
        "per case: Fisher's exact test on the repeat counts, Holm-corrected across the paired cases (family-wise error {})",
        noise.alpha
    );
    let changes = |list: &[RateChange]| -> String {
        list.iter()
            .map(|c| {
                format!(
                    "{} ({:.2}->{:.2}, adjusted p {:.3})",
                    c.id, c.base_rate, c.candidate_rate, c.adjusted_p
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (what, list) in [
        ("regressions (correct rate fell)", &noise.regressions),
        ("fixes (correct rate rose)", &noise.fixes),
        ("new incorrect (incorrect rate rose)", &noise.new_incorrect),
        (
            "new false PASS (false PASS rate rose)",
            &noise.new_false_pass,
        ),
    ] {
        let colon = if list.is_empty() { "" } else { ": " };
        let _ = writeln!(out, "{what}: {}{colon}{}", list.len(), changes(list));
    }
    out
}

/// `1 regression`, `2 regressions`, `1 fix`, `2 fixes`.
fn count(n: u64, noun: &str) -> String {
    match (n, noun.ends_with('x')) {
        (1, _) => format!("1 {noun}"),
        (_, true) => format!("{n} {noun}es"),
        _ => format!("{n} {noun}s"),
    }
}
