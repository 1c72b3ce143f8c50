//! A row's compact JSON for the rows file, written field by field: the bytes
//! `serde_json::to_writer` writes for a [`Row`] (a property test holds the two together),
//! without escaping the fixed keys one at a time. A row with labelled findings, repeats or a
//! weight other than 1 is serialized by serde as it is.

use std::io::Write as _;

use jevjudge_judge::{Finding, Verdict};

use crate::Row;

/// Appends `row`'s JSON to `out`, byte for byte as serde_json's compact writer does.
pub(crate) fn write_row(out: &mut Vec<u8>, row: &Row) -> serde_json::Result<()> {
    if row.expected_findings.is_some() || row.repeats.is_some() || row.weight != 1.0 {
        return serde_json::to_writer(out, row);
    }
    out.extend_from_slice(br#"{"scenario":"#);
    string(out, &row.scenario)?;
    out.extend_from_slice(br#","id":"#);
    string(out, &row.id)?;
    out.extend_from_slice(match (row.expected_pass, row.pass) {
        (true, true) => br#","expected_pass":true,"pass":true,"score":"#,
        (true, false) => br#","expected_pass":true,"pass":false,"score":"#,
        (false, true) => br#","expected_pass":false,"pass":true,"score":"#,
        (false, false) => br#","expected_pass":false,"pass":false,"score":"#,
    });
    serde_json::to_writer(&mut *out, &row.score)?;
    out.extend_from_slice(br#","verdict":"#);
    verdict(out, &row.verdict)?;
    out.push(b'}');
    Ok(())
}

fn verdict(out: &mut Vec<u8>, verdict: &Verdict) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"definition_version":"#);
    string(out, &verdict.definition_version)?;
    out.extend_from_slice(br#","status":""#);
    out.extend_from_slice(verdict.status.as_str().as_bytes());
    out.extend_from_slice(br#"","error":""#);
    out.extend_from_slice(verdict.error.as_str().as_bytes());
    out.extend_from_slice(br#"","detail":"#);
    serde_json::to_writer(&mut *out, &verdict.detail)?;
    out.extend_from_slice(br#","findings":{"#);
    for (at, (id, found)) in verdict.findings.iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        string(out, id)?;
        out.push(b':');
        finding(out, found)?;
    }
    out.extend_from_slice(br#"},"model":"#);
    match &verdict.model {
        Some(model) => string(out, model)?,
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","usage":"#);
    match verdict.usage {
        Some(usage) => write!(
            out,
            r#"{{"input_tokens":{},"output_tokens":{}}}"#,
            usage.input_tokens, usage.output_tokens
        )
        .map_err(serde_json::Error::io)?,
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","elapsed_millis":"#);
    // As the verdict's `elapsed_millis` is written: nanoseconds ÷ 10⁶.
    serde_json::to_writer(&mut *out, &(verdict.elapsed.as_nanos() as f64 / 1e6))?;
    out.push(b'}');
    Ok(())
}

fn finding(out: &mut Vec<u8>, finding: &Finding) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"status":""#);
    out.extend_from_slice(finding.status.as_str().as_bytes());
    out.extend_from_slice(br#"","yes_probability":"#);
    serde_json::to_writer(&mut *out, &finding.yes_probability)?;
    out.extend_from_slice(br#","expected_probability":"#);
    serde_json::to_writer(&mut *out, &finding.expected_probability)?;
    out.push(b'}');
    Ok(())
}

/// A JSON string: put whole, quoted, when nothing in it needs escaping (found in one pass the
/// compiler can vectorise), else as serde_json escapes it.
fn string(out: &mut Vec<u8>, text: &str) -> serde_json::Result<()> {
    let bytes = text.as_bytes();
    let plain = !bytes.iter().fold(false, |escaped, &b| {
        escaped | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if !plain {
        return serde_json::to_writer(out, text);
    }
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    out.extend_from_slice(bytes);
    out.push(b'"');
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
            write_row(&mut ours, &row).unwrap();
            prop_assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&row).unwrap()
            );
        }
    }
}
