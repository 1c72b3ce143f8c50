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
        "{scope:<width$}  {:>9} {:>9} {:>8}  {:>9} {:>9} {:>9} {:>7}",
        accuracy(base),
        accuracy(candidate),
        delta,
        pair(|s| s.correct),
        pair(|s| s.incorrect),
        pair(|s| s.abstained),
        pair(|s| s.errors)
    );
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
        "\n{:<width$}  {:>9} {:>9} {:>8}  {:>9} {:>9} {:>9} {:>7}",
        "scope", "base acc", "cand acc", "delta", "correct", "incorrect", "abstained", "errors"
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
    if let Some(max) = max_regressions {
        let held = comparison.regressions <= max;
        let _ = writeln!(
            out,
            "gate max-regressions {max}: {} ({})",
            if held { "held" } else { "FAILED" },
            count(comparison.regressions, "regression")
        );
    }
    out
}

/// The regressions and fixes of repeated runs, beside each run's flip rate (issue 14).
fn noise_lines(noise: &NoiseRule) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "noise: base {}, flip rate {:.4} · candidate {}, flip rate {:.4} · within-case variance {:.4}",
        crate::plural::count(noise.base_repeats, "repeat"),
        noise.base_flip_rate,
        crate::plural::count(noise.candidate_repeats, "repeat"),
        noise.candidate_flip_rate,
        noise.within_case_variance
    );
    let changes = |list: &[RateChange]| -> String {
        list.iter()
            .map(|c| {
                format!(
                    "{} ({:.2}->{:.2}, noise bound {:.2})",
                    c.id, c.base_rate, c.candidate_rate, c.threshold
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(
        out,
        "regressions: {} (correct rate fell by more than the noise; base flip rate {:.4}, candidate flip rate {:.4}){}{}",
        noise.regressions.len(),
        noise.base_flip_rate,
        noise.candidate_flip_rate,
        if noise.regressions.is_empty() {
            ""
        } else {
            ": "
        },
        changes(&noise.regressions)
    );
    let _ = writeln!(
        out,
        "fixes: {} (correct rate rose by more than the noise){}{}",
        noise.fixes.len(),
        if noise.fixes.is_empty() { "" } else { ": " },
        changes(&noise.fixes)
    );
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
