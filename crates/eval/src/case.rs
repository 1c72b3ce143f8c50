//! Cases: labelled inputs for a batch run, read from JSON Lines (cli-and-formats.md §2.2).

use std::{collections::HashSet, fmt, io::BufRead, path::Path};

use jevjudge_wire::lines::{CappedLines, InputError, LineFault, read_file};
use serde_json::{Map, Value};

/// What the evaluator reviews: the seeds' (question, evidence, answer), or any state.
#[derive(Clone, PartialEq)]
pub enum CaseInput {
    /// The evaluator form; becomes the state
    /// `{"user_question", "supporting_context", "assistant_answer"}`.
    Evaluator(EvaluatorRequest),
    /// The state form: any System One state, sent as is.
    State(Value),
}

/// The evaluator form of a case's input (judge-contract §9).
#[derive(Clone, PartialEq)]
pub struct EvaluatorRequest {
    /// The customer's question (`user_question`).
    pub question: String,
    /// The business evidence, in order (`supporting_context`); may be empty.
    pub supporting_context: Vec<String>,
    /// The agent's draft (`assistant_answer`).
    pub answer: String,
}

impl EvaluatorRequest {
    /// The state a review sends (rule 38): exactly these three keys, in this order, the text
    /// moved into it.
    pub fn into_state(self) -> Value {
        let mut state = Map::with_capacity(3);
        state.insert("user_question".into(), Value::String(self.question));
        state.insert(
            "supporting_context".into(),
            Value::Array(
                self.supporting_context
                    .into_iter()
                    .map(Value::String)
                    .collect(),
            ),
        );
        state.insert("assistant_answer".into(), Value::String(self.answer));
        Value::Object(state)
    }

    /// The state a review sends (rule 38): exactly these three keys, in this order.
    pub fn to_state(&self) -> Value {
        self.clone().into_state()
    }
}

impl CaseInput {
    /// The state a review of this input sends.
    pub fn to_state(&self) -> Value {
        match self {
            CaseInput::Evaluator(request) => request.to_state(),
            CaseInput::State(state) => state.clone(),
        }
    }

    /// [`CaseInput::to_state`], moving the text into the state instead of copying it.
    pub fn into_state(self) -> Value {
        match self {
            CaseInput::Evaluator(request) => request.into_state(),
            CaseInput::State(state) => state,
        }
    }
}

impl fmt::Debug for CaseInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the text (D12): only the form and sizes.
        match self {
            CaseInput::Evaluator(request) => write!(
                f,
                "Evaluator {{ question: <{} bytes>, supporting_context: <{} items>, answer: <{} bytes> }}",
                request.question.len(),
                request.supporting_context.len(),
                request.answer.len()
            ),
            CaseInput::State(state) => write!(f, "State(<{}>)", jevjudge_wire::json_kind(state)),
        }
    }
}

impl fmt::Debug for EvaluatorRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&CaseInput::Evaluator(self.clone()), f)
    }
}

/// One labelled case. Only `id` and `input` ever reach the evaluator (rule 47).
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The report group.
    pub scenario: String,
    /// A unique id.
    pub id: String,
    /// What is reviewed.
    pub input: CaseInput,
    /// Whether the draft should pass.
    pub expected_pass: bool,
    /// Whether each condition really holds, by criterion id (for calibration).
    pub expected_findings: Option<Vec<(String, bool)>>,
    /// How many cases of the traffic this case stands for (`weight`, positive, finite;
    /// default 1): 1/π for a case drawn into a sample with inclusion probability π.
    pub weight: f64,
}

/// A cases file that could not be read. `Display` names the file, the line and the field.
pub type CasesError = InputError<CasesErrorKind>;

/// What is wrong with a cases file.
#[derive(Debug)]
#[non_exhaustive]
pub enum CasesErrorKind {
    /// The file could not be read.
    Io(std::io::Error),
    /// The line is not a JSON object.
    NotJson(String),
    /// A field is missing, mistyped, unknown or conflicting.
    Field {
        /// The field name.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// An id used before (line of its first use).
    DuplicateId {
        /// The id.
        id: String,
        /// The line where it was first used.
        first_line: usize,
    },
    /// More cases than the limit.
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// A line longer than the cap.
    LineTooLong {
        /// The cap in bytes.
        cap: usize,
    },
    /// The file is larger than the cap (for a run that keeps the cases in memory).
    TooLarge {
        /// The cap in bytes.
        cap: u64,
    },
    /// The file holds no case.
    Empty,
}

impl fmt::Display for CasesErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CasesErrorKind::Io(error) => write!(f, "cannot read the cases: {error}"),
            CasesErrorKind::NotJson(message) => write!(f, "not a JSON object: {message}"),
            CasesErrorKind::Field { field, problem } => write!(f, "field `{field}`: {problem}"),
            CasesErrorKind::DuplicateId { id, first_line } => {
                write!(
                    f,
                    "field `id`: duplicate case id `{id}` (first on line {first_line})"
                )
            }
            CasesErrorKind::TooMany { limit } => write!(
                f,
                "more than {}; split the file or raise the limit for a streaming run",
                crate::plural::count(*limit, "case")
            ),
            CasesErrorKind::LineTooLong { cap } => {
                write!(f, "a line is longer than the cap of {cap} bytes")
            }
            CasesErrorKind::TooLarge { cap } => {
                write!(f, "the cases are larger than the cap of {cap} bytes")
            }
            CasesErrorKind::Empty => write!(
                f,
                "no cases: the file is empty (one JSON object per line is expected)"
            ),
        }
    }
}

fn field_error(field: &str, problem: impl Into<String>) -> CasesErrorKind {
    CasesErrorKind::Field {
        field: field.to_owned(),
        problem: problem.into(),
    }
}

/// The items of a list field, each converted by `convert`; the first it refuses is an error
/// naming that item (`field` of its key: `supporting_context[0]`, `expected_findings.spam`)
/// and saying `problem`.
fn items<K, T>(
    items: impl IntoIterator<Item = (K, Value)>,
    field: impl Fn(&K) -> String,
    problem: &str,
    convert: impl Fn(&K, Value) -> Option<T>,
) -> Result<Vec<T>, CasesErrorKind> {
    items
        .into_iter()
        .map(|(key, value)| convert(&key, value).ok_or_else(|| field_error(&field(&key), problem)))
        .collect()
}

const EVALUATOR_FIELDS: [&str; 3] = ["question", "supporting_context", "answer"];
const KNOWN_FIELDS: [&str; 9] = [
    "scenario",
    "id",
    "expected_pass",
    "expected_findings",
    "weight",
    "state",
    "question",
    "supporting_context",
    "answer",
];

/// `unknown field`, the nearest accepted field when one is close (`did you mean `state`?`),
/// and every accepted field.
fn unknown_field(unknown: &str) -> String {
    let nearest = KNOWN_FIELDS
        .iter()
        .map(|known| (edit_distance(unknown, known), *known))
        .min()
        .filter(|(distance, _)| *distance <= 3 && *distance < unknown.chars().count());
    let suggestion = match nearest {
        Some((_, known)) => format!(" (did you mean `{known}`?)"),
        None => String::new(),
    };
    format!(
        "unknown field{suggestion}; a case takes {}",
        KNOWN_FIELDS
            .iter()
            .map(|known| format!("`{known}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The Levenshtein distance between `a` and `b`, by characters, ASCII case ignored.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

/// The hint for a file holding one JSON array of cases, not one object per line.
pub const JSON_ARRAY_HINT: &str = "a cases file holds one JSON object per line, not one JSON \
     array: convert it with `jq -c '.[]' FILE > FILE.jsonl`";

/// Parses one line of a cases file (not blank).
pub fn parse_case(line: &str) -> Result<Case, CasesErrorKind> {
    let value: Value = crate::strict_json::from_str(line).map_err(|e| {
        let trimmed = line.trim();
        let hint = if trimmed.starts_with('[') {
            format!(" ({JSON_ARRAY_HINT})")
        } else if e.is_eof() || trimmed == "{" || trimmed.ends_with(',') {
            " (a cases file holds one JSON object per line; a pretty-printed file spreads one \
             object over many: compact it, for example with `jq -c . FILE`)"
                .to_owned()
        } else {
            String::new()
        };
        CasesErrorKind::NotJson(format!("{e}{hint}"))
    })?;
    let Value::Object(mut map) = value else {
        let hint = match value {
            Value::Array(_) => format!(" ({JSON_ARRAY_HINT})"),
            _ => String::new(),
        };
        return Err(CasesErrorKind::NotJson(format!(
            "found {}{hint}",
            jevjudge_wire::json_kind(&value)
        )));
    };
    if let Some(unknown) = map.keys().find(|k| !KNOWN_FIELDS.contains(&k.as_str())) {
        return Err(field_error(unknown, unknown_field(unknown)));
    }
    let string = |map: &mut Map<String, Value>, field: &str| match map.remove(field) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(field_error(
            field,
            format!("must be a string, not {}", jevjudge_wire::json_kind(&other)),
        )),
        None => Err(field_error(field, "is required")),
    };
    let scenario = string(&mut map, "scenario")?;
    let id = string(&mut map, "id")?;
    if id.trim().is_empty() {
        return Err(field_error("id", "must not be empty"));
    }
    if let Some(bad) = id.chars().find(|c| c.is_control()) {
        return Err(field_error(
            "id",
            format!(
                "must not hold control characters (found U+{:04X})",
                u32::from(bad)
            ),
        ));
    }
    let expected_pass = match map.remove("expected_pass") {
        Some(Value::Bool(b)) => b,
        Some(_) => return Err(field_error("expected_pass", "must be true or false")),
        None => return Err(field_error("expected_pass", "is required")),
    };
    let expected_findings = match map.remove("expected_findings") {
        None | Some(Value::Null) => None,
        Some(Value::Object(labels)) => Some(items(
            labels,
            |criterion| format!("expected_findings.{criterion}"),
            "must be true or false",
            |criterion, label| label.as_bool().map(|b| (criterion.clone(), b)),
        )?),
        Some(_) => {
            return Err(field_error(
                "expected_findings",
                "must be an object of criterion id to true/false",
            ));
        }
    };
    let weight = match map.remove("weight") {
        None => 1.0,
        Some(Value::Number(number)) => match number.as_f64() {
            Some(weight) if weight > 0.0 && weight.is_finite() => weight,
            _ => {
                return Err(field_error(
                    "weight",
                    format!("must be a positive finite number, not {number}"),
                ));
            }
        },
        Some(other) => {
            return Err(field_error(
                "weight",
                format!(
                    "must be a positive finite number, not {}",
                    jevjudge_wire::json_kind(&other)
                ),
            ));
        }
    };
    let has_evaluator_field = EVALUATOR_FIELDS.iter().any(|f| map.contains_key(*f));
    let input = match map.remove("state") {
        Some(state) => {
            if has_evaluator_field {
                return Err(field_error(
                    "state",
                    "a case has either `state` or question/supporting_context/answer, never both",
                ));
            }
            if !matches!(state, Value::String(_) | Value::Object(_) | Value::Array(_)) {
                return Err(field_error(
                    "state",
                    format!(
                        "must be a string, an object or an array, not {}",
                        jevjudge_wire::json_kind(&state)
                    ),
                ));
            }
            CaseInput::State(state)
        }
        None => {
            let question = string(&mut map, "question")?;
            let supporting_context = match map.remove("supporting_context") {
                Some(Value::Array(texts)) => items(
                    texts.into_iter().enumerate(),
                    |i| format!("supporting_context[{i}]"),
                    "must be a string",
                    |_, text| match text {
                        Value::String(text) => Some(text),
                        _ => None,
                    },
                )?,
                Some(_) => {
                    return Err(field_error(
                        "supporting_context",
                        "must be an array of strings",
                    ));
                }
                None => return Err(field_error("supporting_context", "is required")),
            };
            let answer = string(&mut map, "answer")?;
            CaseInput::Evaluator(EvaluatorRequest {
                question,
                supporting_context,
                answer,
            })
        }
    };
    Ok(Case {
        scenario,
        id,
        input,
        expected_pass,
        expected_findings,
        weight,
    })
}

/// Reads every case of a JSON Lines source, checking each line and the ids' uniqueness
/// before anything runs. Blank lines are skipped. `limit` bounds the number of cases.
pub fn read_cases(reader: impl BufRead, limit: usize) -> Result<Vec<Case>, CasesError> {
    let mut cases = Vec::new();
    for_each_case(reader, limit, |case| cases.push(case))?;
    Ok(cases)
}

/// Like [`read_cases`] but hands each case to `visit` instead of keeping them: the streaming
/// form, whose memory is the set of ids. Lines are capped at the default
/// ([`jevjudge_wire::lines::DEFAULT_MAX_LINE_BYTES`]).
pub fn for_each_case(
    reader: impl BufRead,
    limit: usize,
    visit: impl FnMut(Case),
) -> Result<usize, CasesError> {
    for_each_case_capped(
        reader,
        limit,
        jevjudge_wire::lines::DEFAULT_MAX_LINE_BYTES,
        None,
        visit,
    )
}

/// [`for_each_case`] with caps: a line longer than `max_line_bytes`, or (when given) more than
/// `max_total_bytes` in all, is an error naming the cap; memory stays within them. A source
/// with no case at all is an error too.
pub fn for_each_case_capped(
    reader: impl BufRead,
    limit: usize,
    max_line_bytes: usize,
    max_total_bytes: Option<u64>,
    visit: impl FnMut(Case),
) -> Result<usize, CasesError> {
    let mut ids = ExactIds::default();
    scan(
        reader,
        limit,
        max_line_bytes,
        max_total_bytes,
        &mut ids,
        visit,
    )
}

/// One pass over the cases: each line read, parsed, its id checked by `ids`, counted against
/// `limit` and handed to `visit`, in that order; the first problem stops the pass.
pub(crate) fn scan(
    reader: impl BufRead,
    limit: usize,
    max_line_bytes: usize,
    max_total_bytes: Option<u64>,
    ids: &mut impl IdCheck,
    mut visit: impl FnMut(Case),
) -> Result<usize, CasesError> {
    let mut count = 0;
    let mut lines = CappedLines::new(reader, max_line_bytes, max_total_bytes);
    while let Some((number, line)) = lines
        .next_line()
        .map_err(|(number, fault)| CasesError::at_line(number, fault_kind(fault)))?
    {
        let case = parse_case(line).map_err(|kind| CasesError::at_line(number, kind))?;
        if let Some(first_line) = ids.check(&case.id, number) {
            return Err(CasesError::at_line(
                number,
                CasesErrorKind::DuplicateId {
                    id: case.id,
                    first_line,
                },
            ));
        }
        count += 1;
        if count > limit {
            return Err(CasesError::at_line(
                number,
                CasesErrorKind::TooMany { limit },
            ));
        }
        visit(case);
    }
    if count == 0 {
        return Err(CasesError {
            path: None,
            line: None,
            kind: CasesErrorKind::Empty,
        });
    }
    Ok(count)
}

/// How a pass over the cases meets their ids, in input order.
pub(crate) trait IdCheck {
    /// Line `number` holds `id`: the line of an earlier case with the same id, when this one
    /// can tell at once.
    fn check(&mut self, id: &str, number: usize) -> Option<usize>;
}

/// Every id with its line: exact at once, for runs that keep their cases.
#[derive(Debug, Default)]
pub(crate) struct ExactIds(std::collections::HashMap<String, usize>);

impl IdCheck for ExactIds {
    fn check(&mut self, id: &str, number: usize) -> Option<usize> {
        if let Some(&first) = self.0.get(id) {
            return Some(first);
        }
        self.0.insert(id.to_owned(), number);
        None
    }
}

/// What a fault of the line reader means for a cases source.
pub(crate) fn fault_kind(fault: LineFault) -> CasesErrorKind {
    match fault {
        LineFault::Io(e) => CasesErrorKind::Io(e),
        LineFault::TooLong { cap } => CasesErrorKind::LineTooLong { cap },
        LineFault::TooLarge { cap } => CasesErrorKind::TooLarge { cap },
        LineFault::NotUtf8 => CasesErrorKind::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not valid UTF-8",
        )),
    }
}

/// Reads a cases file; errors name the file and the line.
pub fn read_cases_file(path: &Path, limit: usize) -> Result<Vec<Case>, CasesError> {
    read_file(path, CasesErrorKind::Io, |reader| read_cases(reader, limit))
}

/// Streams a cases file; errors name the file and the line.
pub fn for_each_case_in_file(
    path: &Path,
    limit: usize,
    visit: impl FnMut(Case),
) -> Result<usize, CasesError> {
    read_file(path, CasesErrorKind::Io, |reader| {
        for_each_case(reader, limit, visit)
    })
}

/// [`for_each_case_capped`] on a file; errors name the file and the line.
pub fn for_each_case_in_file_capped(
    path: &Path,
    limit: usize,
    max_line_bytes: usize,
    max_total_bytes: Option<u64>,
    visit: impl FnMut(Case),
) -> Result<usize, CasesError> {
    read_file(path, CasesErrorKind::Io, |reader| {
        for_each_case_capped(reader, limit, max_line_bytes, max_total_bytes, visit)
    })
}

/// Checks that every `expected_findings` key names a criterion of the definition.
pub fn check_expected_findings<'a>(
    cases: impl IntoIterator<Item = &'a Case>,
    criteria: &HashSet<&str>,
) -> Result<(), (String, String)> {
    for case in cases {
        for (criterion, _) in case.expected_findings.iter().flatten() {
            if !criteria.contains(criterion.as_str()) {
                return Err((case.id.clone(), criterion.clone()));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
