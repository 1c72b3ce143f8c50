//! Importing a jevassert question pack and its recording (cli-and-formats.md §3a).
//!
//! A pack (`pack.yaml`, `cases.jsonl`) and a recording (`predictions.jsonl`) become a
//! definition (one criterion per noul question, thresholds from the pack's floors), cases in
//! the state form (with per-criterion labels), and `.jevl` records of exactly the requests
//! jevassert sent, so that `jevjudge eval --replay` reproduces the recording's decisions.

use std::{collections::HashMap, path::Path};

use jevjudge_judge::{Criterion, Definition, DefinitionError};
use jevjudge_wire::{NoulQuestion, Question, Questions, record::Record};
use serde::Deserialize;
use serde_json::{Map, Value};

/// A jevassert pack's `pack.yaml` (the fields jevjudge uses; others are ignored).
#[derive(Debug, Deserialize)]
pub struct Pack {
    /// The pack id, for example `sms-spam`.
    pub id: String,
    /// The pack version, for example `0.1.0`.
    pub version: String,
    /// The model the recording was made with, for example `jev-1.13.0`.
    #[serde(default)]
    pub tested: Option<String>,
    /// The questions by id, in order.
    pub questions: serde_yaml_ng::Mapping,
    /// Floors per question: `{true: 0.9, false: 0.9}`.
    #[serde(default)]
    pub thresholds: HashMap<String, Floors>,
}

/// jevassert's decision floors: yes when p ≥ `true`, no when 1 − p ≥ `false`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Floors {
    /// The floor of a yes.
    #[serde(rename = "true")]
    pub when_true: Option<f64>,
    /// The floor of a no.
    #[serde(rename = "false")]
    pub when_false: Option<f64>,
}

/// What an import produces.
#[derive(Debug)]
pub struct Imported {
    /// The definition (version `<pack id>-<pack version>`).
    pub definition: Definition,
    /// The cases file's text: state form, scenario = pack id.
    pub cases_jsonl: String,
    /// One record per successful prediction.
    pub records: Vec<Record>,
    /// Predictions that carried an error (not recorded).
    pub skipped_predictions: usize,
}

/// Why an import failed. Messages name the file and, where it applies, the line and field.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ImportError(pub String);

fn err(message: impl Into<String>) -> ImportError {
    ImportError(message.into())
}

/// `1 − floor` as its shortest decimal: `1 − 0.9` is `0.1`, not `0.09999999999999998`, so
/// that `p <= fail_at_or_below` agrees with jevassert's `1 − p >= floor` on recorded values.
pub fn one_minus_decimal(floor: f64) -> Option<f64> {
    if !(0.0..=1.0).contains(&floor) {
        return None;
    }
    let text = format!("{floor}");
    let decimals = text.split_once('.').map_or(0, |(_, frac)| frac.len());
    if decimals > 17 {
        return None;
    }
    let scale = 10u128.pow(decimals as u32);
    let scaled: u128 = text.replace('.', "").parse().ok()?;
    let rest = scale.checked_sub(scaled)?;
    let formatted = if decimals == 0 {
        rest.to_string()
    } else {
        let digits = format!("{rest:0>width$}", width = decimals + 1);
        let (int, frac) = digits.split_at(digits.len() - decimals);
        format!("{int}.{frac}")
    };
    formatted.parse().ok()
}

/// Converts a pack and (optionally) its recording. `recorded_at` is the RFC 3339 time stamped
/// on the records (jevassert's predictions carry none).
pub fn import_jevassert(
    pack_yaml: &str,
    cases_jsonl: &str,
    predictions_jsonl: Option<&str>,
    recorded_at: &str,
) -> Result<Imported, ImportError> {
    let pack: Pack =
        serde_yaml_ng::from_str(pack_yaml).map_err(|e| err(format!("pack.yaml: {e}")))?;
    let mut criteria = Vec::new();
    let mut wire_questions = Vec::new();
    for (key, question) in &pack.questions {
        let id = key
            .as_str()
            .ok_or_else(|| err("pack.yaml: questions: every question id must be a string"))?;
        let question: Value = serde_json::to_value(question)
            .map_err(|e| err(format!("pack.yaml: questions.{id}: {e}")))?;
        let kind = question.get("type").and_then(Value::as_str).unwrap_or("");
        if kind != "noul" {
            return Err(err(format!(
                "pack.yaml: questions.{id}: type `{kind}` cannot be a criterion; jevjudge imports \
                 packs of noul questions only"
            )));
        }
        let mut fields = question.as_object().cloned().unwrap_or_default();
        fields.remove("type");
        let noul: NoulQuestion = serde_json::from_value(Value::Object(fields))
            .map_err(|e| err(format!("pack.yaml: questions.{id}: {e}")))?;
        let (pass, fail) = match pack.thresholds.get(id) {
            Some(Floors {
                when_true: Some(yes),
                when_false: Some(no),
            }) => {
                let fail = one_minus_decimal(*no).ok_or_else(|| {
                    err(format!(
                        "pack.yaml: thresholds.{id}.false: {no} is not within [0, 1]"
                    ))
                })?;
                (*yes, fail)
            }
            Some(_) => {
                return Err(err(format!(
                    "pack.yaml: thresholds.{id}: give both `true` and `false` floors"
                )));
            }
            None => (0.5, 0.49),
        };
        let criterion = Criterion::new(id, noul.clone(), true, fail, pass).map_err(|e| {
            err(format!(
                "pack.yaml: thresholds.{id}: {e} (pass {pass}, fail {fail})"
            ))
        })?;
        criteria.push(criterion);
        wire_questions.push((id.to_owned(), Question::Noul(noul)));
    }
    let version = format!("{}-{}", pack.id, pack.version);
    let definition = Definition::new(version, criteria)
        .map_err(|e: DefinitionError| err(format!("pack.yaml: {e}")))?;
    let questions_json = match Questions::new(wire_questions).to_json() {
        Value::Object(map) => map,
        _ => Map::new(),
    };

    // Cases: state form with labels.
    let mut cases_out = String::new();
    let mut states: HashMap<String, (Value, Map<String, Value>)> = HashMap::new();
    let mut order = Vec::new();
    for (index, line) in cases_jsonl.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: String| err(format!("cases.jsonl:{number}: {m}"));
        let value: Value = serde_json::from_str(line).map_err(|e| at(format!("not JSON: {e}")))?;
        let id = value
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| at("field `id`: a string is required".into()))?
            .to_owned();
        let state = value
            .get("state")
            .cloned()
            .ok_or_else(|| at("field `state`: is required".into()))?;
        let expect = value
            .get("expect")
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| at("field `expect`: an object of labels is required".into()))?;
        let mut labels = Map::new();
        for criterion in definition.criteria() {
            match expect.get(criterion.id()) {
                Some(Value::Bool(label)) => {
                    labels.insert(criterion.id().to_owned(), Value::Bool(*label));
                }
                _ => {
                    return Err(at(format!(
                        "field `expect.{}`: true or false is required",
                        criterion.id()
                    )));
                }
            }
        }
        let expected_pass = labels.values().all(|v| v == &Value::Bool(true));
        let case = serde_json::json!({
            "scenario": pack.id,
            "id": id,
            "state": state,
            "expected_pass": expected_pass,
            "expected_findings": labels,
        });
        cases_out.push_str(&case.to_string());
        cases_out.push('\n');
        if states.insert(id.clone(), (state, labels)).is_some() {
            return Err(at(format!("field `id`: duplicate case id `{id}`")));
        }
        order.push(id);
    }

    // Records: exactly the requests jevassert sent, answered by the tested model.
    let mut records = Vec::new();
    let mut skipped = 0;
    if let Some(predictions) = predictions_jsonl {
        for (index, line) in predictions.lines().enumerate() {
            let number = index + 1;
            if line.trim().is_empty() {
                continue;
            }
            let at = |m: String| err(format!("predictions.jsonl:{number}: {m}"));
            let value: Value =
                serde_json::from_str(line).map_err(|e| at(format!("not JSON: {e}")))?;
            if !value.get("error").is_none_or(Value::is_null) {
                skipped += 1;
                continue;
            }
            let case_id = value
                .get("case_id")
                .and_then(Value::as_str)
                .ok_or_else(|| at("field `case_id`: a string is required".into()))?;
            let (state, labels) = states.get(case_id).ok_or_else(|| {
                at(format!(
                    "field `case_id`: no case `{case_id}` in cases.jsonl"
                ))
            })?;
            let model = value
                .get("model")
                .and_then(Value::as_str)
                .or(pack.tested.as_deref())
                .ok_or_else(
                    || at("field `model`: missing, and pack.yaml has no `tested`".into()),
                )?;
            let answers = value
                .get("answers")
                .and_then(Value::as_object)
                .cloned()
                .ok_or_else(|| at("field `answers`: an object is required".into()))?;
            let requested = pack.tested.as_deref().unwrap_or(model);
            let mut record = Record::new(
                model,
                requested,
                state.clone(),
                questions_json.clone(),
                answers,
                value.get("usage").cloned().filter(|u| !u.is_null()),
                recorded_at.to_owned(),
            )
            .map_err(|e| at(format!("cannot digest the request: {e}")))?;
            record.label = Some(Value::Object(labels.clone()));
            if let Some(meta) = record.meta.as_mut() {
                meta.insert("source".into(), Value::String("jevassert".into()));
                meta.insert("case_id".into(), Value::String(case_id.to_owned()));
                if let Some(latency) = value.get("latency_ms") {
                    meta.insert("latency_ms".into(), latency.clone());
                }
            }
            records.push(record);
        }
    }
    Ok(Imported {
        definition,
        cases_jsonl: cases_out,
        records,
        skipped_predictions: skipped,
    })
}

/// The files [`write_imported`] wrote, as `name (count noun)` for a summary line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written(pub Vec<String>);

/// Why [`write_imported`] wrote nothing or not everything.
#[derive(Debug, thiserror::Error)]
pub enum WriteImportError {
    /// The pack's question content holds a null, which TOML cannot carry.
    #[error(
        "{}: the pack's question content holds a null (`~`), which a TOML definition cannot \
         carry: remove it from the pack",
        pack.display()
    )]
    NullInQuestion {
        /// The pack directory.
        pack: std::path::PathBuf,
    },
    /// The output directory could not be created.
    #[error("cannot create {}: {source}", dir.display())]
    Directory {
        /// The directory.
        dir: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A record could not be turned into a line.
    #[error("cannot write a record: {0}")]
    Record(jevjudge_wire::record::RecordErrorKind),
    /// A file could not be written.
    #[error(transparent)]
    Write(#[from] crate::output::WriteError),
}

/// Writes an import into `out` (created when missing), each file atomically:
/// `definition.toml` (headed by where it came from and how the floors became thresholds),
/// `cases.jsonl`, and `recordings.jevl` when `with_records` (the pack came with predictions).
pub fn write_imported(
    imported: &Imported,
    pack: &Path,
    out: &Path,
    with_records: bool,
) -> Result<Written, WriteImportError> {
    let toml =
        imported
            .definition
            .to_toml_string()
            .map_err(|_| WriteImportError::NullInQuestion {
                pack: pack.to_owned(),
            })?;
    std::fs::create_dir_all(out).map_err(|source| WriteImportError::Directory {
        dir: out.to_owned(),
        source,
    })?;
    let definition = format!(
        "# Imported by `jevjudge import jevassert` from {}.\n# pass_at_or_above = the pack's \
         `true` floor; fail_at_or_below = 1 - its `false` floor.\n{toml}",
        pack.display()
    );
    crate::output::write_atomic(&out.join("definition.toml"), &definition)?;
    crate::output::write_atomic(&out.join("cases.jsonl"), &imported.cases_jsonl)?;
    let cases = imported.cases_jsonl.lines().count();
    let mut written = vec![
        "definition.toml".to_owned(),
        format!("cases.jsonl ({})", crate::plural::count(cases, "case")),
    ];
    if with_records {
        let mut lines = String::new();
        for record in &imported.records {
            lines.push_str(&record.to_line().map_err(WriteImportError::Record)?);
        }
        crate::output::write_atomic(&out.join("recordings.jevl"), &lines)?;
        written.push(format!(
            "recordings.jevl ({})",
            crate::plural::count(imported.records.len(), "exchange")
        ));
    }
    Ok(Written(written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_become_shortest_decimals() {
        assert_eq!(one_minus_decimal(0.9), Some(0.1));
        assert_eq!(one_minus_decimal(0.75), Some(0.25));
        assert_eq!(one_minus_decimal(1.0), Some(0.0));
        assert_eq!(one_minus_decimal(0.0), Some(1.0));
        assert_eq!(one_minus_decimal(0.333), Some(0.667));
        assert_eq!(one_minus_decimal(1.5), None);
        assert_ne!(1.0 - 0.9, 0.1, "why the decimal subtraction exists");
    }

    const PACK: &str = "id: demo\nversion: 0.1.0\ntested: jev-1.13.0\nquestions:\n  spam:\n    type: noul\n    instructions: \"Is this spam?\"\nthresholds:\n  spam: {true: 0.9, false: 0.9}\n";

    #[test]
    fn a_pack_becomes_definition_cases_and_records() {
        let cases =
            "{\"id\": \"a\", \"state\": {\"message\": \"hi\"}, \"expect\": {\"spam\": false}}\n";
        let predictions = "{\"case_id\": \"a\", \"model\": \"jev-1.13.0\", \"latency_ms\": 10.5, \"usage\": {\"input_tokens\": 300, \"output_tokens\": 20}, \"answers\": {\"spam\": {\"type\": \"noul\", \"noul\": 0.02}}, \"error\": null}\n{\"case_id\": \"a\", \"model\": \"jev-1.13.0\", \"answers\": null, \"error\": \"timeout\"}\n";
        let imported =
            import_jevassert(PACK, cases, Some(predictions), "2026-09-19T00:00:00Z").unwrap();
        let definition = &imported.definition;
        assert_eq!(definition.version(), "demo-0.1.0");
        let c = &definition.criteria()[0];
        assert_eq!(
            (
                c.id(),
                c.expected(),
                c.fail_at_or_below(),
                c.pass_at_or_above()
            ),
            ("spam", true, 0.1, 0.9)
        );
        assert_eq!(
            imported.cases_jsonl,
            "{\"scenario\":\"demo\",\"id\":\"a\",\"state\":{\"message\":\"hi\"},\"expected_pass\":false,\"expected_findings\":{\"spam\":false}}\n"
        );
        assert_eq!(imported.records.len(), 1);
        assert_eq!(imported.skipped_predictions, 1);
        let record = &imported.records[0];
        assert_eq!(record.model, "jev-1.13.0");
        assert_eq!(
            Value::Object(record.request.questions.clone()).to_string(),
            r#"{"spam":{"type":"noul","instructions":"Is this spam?"}}"#
        );
        assert_eq!(record.label, Some(serde_json::json!({"spam": false})));
    }

    #[test]
    fn other_question_types_are_refused() {
        let pack = PACK.replace("type: noul", "type: choice");
        let error = import_jevassert(&pack, "", None, "t")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("questions.spam: type `choice` cannot be a criterion"),
            "{error}"
        );
    }

    #[test]
    fn no_floors_means_a_single_cut() {
        let pack = PACK.split("thresholds").next().unwrap();
        let imported = import_jevassert(pack, "", None, "t").unwrap();
        let c = &imported.definition.criteria()[0];
        assert_eq!((c.fail_at_or_below(), c.pass_at_or_above()), (0.49, 0.5));
    }
}
