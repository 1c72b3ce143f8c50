//! A row's JSON written field by field, its fixed keys (and, in a report, their indentation)
//! as they are rather than escaped and indented one at a time: compact for the rows file, pretty
//! for a report's rows. The bytes are those serde_json writes for a [`Row`] (property tests hold
//! the two together). A row with labelled findings, repeats or a weight other than 1 is
//! serialized by serde as it is.

use std::io::Write as _;

use jevjudge_judge::{Finding, Verdict};

use crate::Row;

/// Where a row's JSON goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Compact, as a line of the rows file.
    Compact,
    /// Pretty, as an element of a report's `rows` (two levels deep: the row's fields at three).
    InReport,
}

/// Appends a field's key and what comes before it: `$lead` (a comma, or nothing for the first
/// field) and, in a report, a newline and the field's indentation. Each branch copies a
/// constant of known length, which the compiler writes out in place.
macro_rules! key {
    ($out:expr, $pretty:expr, $lead:literal, $name:literal, $indent:literal) => {
        if $pretty {
            $out.extend_from_slice(concat!($lead, "\n", $indent, "\"", $name, "\": ").as_bytes())
        } else {
            $out.extend_from_slice(concat!($lead, "\"", $name, "\":").as_bytes())
        }
    };
}

/// Appends the closing brace of an object with members, in a report indented by `$indent`.
macro_rules! close {
    ($out:expr, $pretty:expr, $indent:literal) => {
        if $pretty {
            $out.extend_from_slice(concat!("\n", $indent, "}").as_bytes())
        } else {
            $out.push(b'}')
        }
    };
}

/// Appends `row`'s JSON to `out`, byte for byte as serde_json writes it: compactly, or in
/// serde_json's pretty layout two levels deep.
pub(crate) fn write_row(out: &mut Vec<u8>, row: &Row, layout: Layout) -> serde_json::Result<()> {
    if row.expected_findings.is_some() || row.repeats.is_some() || row.weight != 1.0 {
        return match layout {
            Layout::Compact => serde_json::to_writer(out, row),
            Layout::InReport => serde::Serialize::serialize(
                row,
                &mut serde_json::Serializer::with_formatter(out, crate::pretty::Pretty::at(2)),
            ),
        };
    }
    match layout {
        Layout::Compact => fields::<false>(out, row),
        Layout::InReport => fields::<true>(out, row),
    }
}

/// A row of the common shape, compact or (`PRETTY`) in a report.
fn fields<const PRETTY: bool>(out: &mut Vec<u8>, row: &Row) -> serde_json::Result<()> {
    out.push(b'{');
    key!(out, PRETTY, "", "scenario", "      ");
    string(out, &row.scenario)?;
    key!(out, PRETTY, ",", "id", "      ");
    string(out, &row.id)?;
    key!(out, PRETTY, ",", "expected_pass", "      ");
    out.extend_from_slice(boolean(row.expected_pass));
    key!(out, PRETTY, ",", "pass", "      ");
    out.extend_from_slice(boolean(row.pass));
    key!(out, PRETTY, ",", "score", "      ");
    serde_json::to_writer(&mut *out, &row.score)?;
    key!(out, PRETTY, ",", "verdict", "      ");
    verdict::<PRETTY>(out, &row.verdict)?;
    close!(out, PRETTY, "    ");
    Ok(())
}

fn boolean(value: bool) -> &'static [u8] {
    if value { b"true" } else { b"false" }
}

fn verdict<const PRETTY: bool>(out: &mut Vec<u8>, verdict: &Verdict) -> serde_json::Result<()> {
    out.push(b'{');
    key!(out, PRETTY, "", "definition_version", "        ");
    string(out, &verdict.definition_version)?;
    key!(out, PRETTY, ",", "status", "        ");
    quoted(out, verdict.status.as_str());
    key!(out, PRETTY, ",", "error", "        ");
    quoted(out, verdict.error.as_str());
    key!(out, PRETTY, ",", "detail", "        ");
    serde_json::to_writer(&mut *out, &verdict.detail)?;
    key!(out, PRETTY, ",", "findings", "        ");
    out.push(b'{');
    for (at, (id, found)) in verdict.findings.iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        if PRETTY {
            out.extend_from_slice(b"\n          ");
        }
        string(out, id)?;
        if PRETTY {
            out.extend_from_slice(b": ");
        } else {
            out.push(b':');
        }
        finding::<PRETTY>(out, found)?;
    }
    if verdict.findings.is_empty() {
        out.push(b'}');
    } else {
        close!(out, PRETTY, "        ");
    }
    key!(out, PRETTY, ",", "model", "        ");
    match &verdict.model {
        Some(model) => string(out, model)?,
        None => out.extend_from_slice(b"null"),
    }
    key!(out, PRETTY, ",", "usage", "        ");
    match verdict.usage {
        Some(usage) => {
            out.push(b'{');
            key!(out, PRETTY, "", "input_tokens", "          ");
            write!(out, "{}", usage.input_tokens).map_err(serde_json::Error::io)?;
            key!(out, PRETTY, ",", "output_tokens", "          ");
            write!(out, "{}", usage.output_tokens).map_err(serde_json::Error::io)?;
            close!(out, PRETTY, "        ");
        }
        None => out.extend_from_slice(b"null"),
    }
    key!(out, PRETTY, ",", "elapsed_millis", "        ");
    // As the verdict's `elapsed_millis` is written: nanoseconds ÷ 10⁶.
    serde_json::to_writer(&mut *out, &(verdict.elapsed.as_nanos() as f64 / 1e6))?;
    close!(out, PRETTY, "      ");
    Ok(())
}

fn finding<const PRETTY: bool>(out: &mut Vec<u8>, finding: &Finding) -> serde_json::Result<()> {
    out.push(b'{');
    key!(out, PRETTY, "", "status", "            ");
    quoted(out, finding.status.as_str());
    key!(out, PRETTY, ",", "yes_probability", "            ");
    serde_json::to_writer(&mut *out, &finding.yes_probability)?;
    key!(out, PRETTY, ",", "expected_probability", "            ");
    serde_json::to_writer(&mut *out, &finding.expected_probability)?;
    close!(out, PRETTY, "          ");
    Ok(())
}

/// A name that needs no escaping, quoted.
fn quoted(out: &mut Vec<u8>, name: &str) {
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.push(b'"');
}

/// A JSON string: put whole, quoted, when nothing in it needs escaping, else as serde_json
/// escapes it.
fn string(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    if jevjudge_wire::canonical::needs_escape(text) {
        return serde_json::to_writer(out, text);
    }
    out.reserve(text.len() + 2);
    quoted(out, text);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use jevjudge_judge::{ErrorCode, Findings, Status};
    use jevjudge_wire::{Detail, Usage};
    use proptest::prelude::*;

    use super::*;
    use crate::row::Repeats;

    fn status() -> impl Strategy<Value = Status> {
        prop_oneof![
            Just(Status::Pass),
            Just(Status::Fail),
            Just(Status::Inconclusive),
            Just(Status::Error)
        ]
    }

    fn float() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => 0.0..=1.0_f64,
            1 => any::<f64>(),
            1 => Just(f64::NAN),
            1 => Just(0.0),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![3 => "[a-z0-9 _-]{0,12}", 1 => any::<String>()]
    }

    fn verdict() -> impl Strategy<Value = Verdict> {
        let findings = proptest::collection::vec((text(), status(), float(), float()), 0..4)
            .prop_map(|findings| {
                Findings::new(
                    findings
                        .into_iter()
                        .map(|(id, status, yes_probability, expected_probability)| {
                            let finding = Finding {
                                status,
                                yes_probability,
                                expected_probability,
                            };
                            (id, finding)
                        })
                        .collect(),
                )
            });
        let detail = prop_oneof![
            Just(None),
            Just(Some(Detail::BudgetElapsed)),
            Just(Some(Detail::BodyUnreadable)),
            Just(Some(Detail::AnswerMissing)),
        ];
        let error = prop_oneof![
            Just(ErrorCode::None),
            Just(ErrorCode::Timeout),
            Just(ErrorCode::InvalidResponse),
            Just(ErrorCode::Backend),
            Just(ErrorCode::Evaluator),
        ];
        let usage = proptest::option::of((any::<u64>(), any::<u64>()).prop_map(
            |(input_tokens, output_tokens)| Usage {
                input_tokens,
                output_tokens,
            },
        ));
        (
            text(),
            status(),
            error,
            detail,
            findings,
            proptest::option::of(text()),
            usage,
            any::<u64>(),
        )
            .prop_map(
                |(definition_version, status, error, detail, findings, model, usage, nanos)| {
                    Verdict {
                        definition_version,
                        status,
                        error,
                        detail,
                        findings,
                        model,
                        usage,
                        elapsed: Duration::from_nanos(nanos),
                    }
                },
            )
    }

    fn row() -> impl Strategy<Value = Row> {
        let rare = prop_oneof![
            6 => Just((None, false, 1.0)),
            1 => Just((Some(vec![("a".to_owned(), true)]), false, 1.0)),
            1 => Just((None, true, 1.0)),
            1 => (0.01..100.0_f64).prop_map(|weight| (None, false, weight)),
        ];
        (
            text(),
            text(),
            any::<bool>(),
            any::<bool>(),
            float(),
            verdict(),
            rare,
        )
            .prop_map(
                |(scenario, id, expected_pass, pass, score, verdict, rare)| {
                    let (expected_findings, repeated, weight) = rare;
                    let repeats = repeated.then(|| Repeats {
                        verdicts: vec![verdict.clone()],
                        pass_rate: 0.5,
                    });
                    Row {
                        scenario,
                        id,
                        expected_pass,
                        pass,
                        score,
                        verdict,
                        expected_findings,
                        repeats,
                        weight,
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn a_row_is_written_as_serde_json_writes_it(row in row()) {
            let mut ours = Vec::new();
            write_row(&mut ours, &row, Layout::Compact).unwrap();
            prop_assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&row).unwrap()
            );
        }

        #[test]
        fn a_row_in_a_report_is_laid_out_as_serde_json_lays_it_out(row in row()) {
            // The row as the only element of a report's rows, at the report's depth.
            #[derive(serde::Serialize)]
            struct Report<'a> {
                rows: [&'a Row; 1],
            }
            let pretty = serde_json::to_string_pretty(&Report { rows: [&row] }).unwrap();
            let mut ours = b"{\n  \"rows\": [\n    ".to_vec();
            write_row(&mut ours, &row, Layout::InReport).unwrap();
            ours.extend_from_slice(b"\n  ]\n}");
            prop_assert_eq!(String::from_utf8(ours).unwrap(), pretty);
        }
    }
}
