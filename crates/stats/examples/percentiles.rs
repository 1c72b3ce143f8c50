//! Nearest-rank percentiles of the numbers on standard input, for the benchmark scripts, so
//! that they rank exactly as jevjudge does everywhere ([`jevjudge_stats::nearest_rank`]).
//!
//! ```text
//! cargo run -p jevjudge-stats --example percentiles -- K... < values
//! ```
//!
//! Reads one number a line (blank lines are skipped) and prints one JSON object:
//! `{"n": N, "p<K>": …, …, "max": …}`, every figure 0 when there are no numbers. A K that is not
//! an integer from 0 to 100, or a line that is not a finite number, is an error naming it
//! (exit 2). `scripts/percentiles.py` calls it from the scripts' Python.

use std::{
    io::{self, BufRead as _},
    process::ExitCode,
};

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("percentiles: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<String, String> {
    let ks = std::env::args()
        .skip(1)
        .map(|k| match k.parse::<u32>() {
            Ok(k) if k <= 100 => Ok(k),
            _ => Err(format!(
                "percentile {k:?} is not an integer from 0 to 100 (usage: percentiles K... < values)"
            )),
        })
        .collect::<Result<Vec<u32>, String>>()?;
    if ks.is_empty() {
        return Err("no percentile given (usage: percentiles K... < values)".to_owned());
    }
    let mut values = Vec::new();
    for (index, line) in io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|error| format!("standard input: {error}"))?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => values.push(value),
            _ => {
                return Err(format!(
                    "standard input, line {}: {text:?} is not a finite number",
                    index + 1
                ));
            }
        }
    }
    values.sort_unstable_by(f64::total_cmp);
    let mut fields = vec![format!("\"n\": {}", values.len())];
    for k in ks {
        fields.push(format!(
            "\"p{k}\": {}",
            jevjudge_stats::nearest_rank(&values, k)
        ));
    }
    fields.push(format!(
        "\"max\": {}",
        values.last().copied().unwrap_or(0.0)
    ));
    Ok(format!("{{{}}}", fields.join(", ")))
}
