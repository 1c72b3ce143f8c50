//! Definition files: TOML or JSON by extension (cli-and-formats.md §2.1), with errors that
//! name the file and the field, and unknown fields rejected.

use std::{
    fmt,
    path::{Path, PathBuf},
};

use jevjudge_wire::NoulQuestion;
use serde::{Deserialize, Serialize};

use crate::{Criterion, Definition, DefinitionError};

/// The most criteria one definition may hold: every review sends them all in one request.
pub const MAX_CRITERIA: usize = 1_000;

/// The largest definition file read by [`Definition::from_path`]: 16 MiB.
pub const DEFAULT_MAX_DEFINITION_BYTES: u64 = 16 * 1024 * 1024;

/// The file layout of a definition.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DefinitionFile {
    version: String,
    criteria: Vec<CriterionFile>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CriterionFile {
    id: String,
    expected: bool,
    fail_at_or_below: f64,
    pass_at_or_above: f64,
    question: NoulQuestion,
}

/// The two file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefinitionFormat {
    /// `.toml`
    Toml,
    /// `.json`
    Json,
}

impl DefinitionFormat {
    /// The format chosen by a path's extension.
    pub fn from_path(path: &Path) -> Option<DefinitionFormat> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "toml" => Some(DefinitionFormat::Toml),
            "json" => Some(DefinitionFormat::Json),
            _ => None,
        }
    }
}

/// A definition file that could not be loaded. `Display` names the file, then the field.
#[derive(Debug)]
pub struct LoadError {
    path: Option<PathBuf>,
    kind: LoadErrorKind,
}

/// What went wrong while loading a definition.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadErrorKind {
    /// The file could not be read.
    Io(std::io::Error),
    /// The extension is neither `.toml` nor `.json`.
    UnknownFormat,
    /// The text is not a definition (syntax, missing, unknown or mistyped field).
    Parse(String),
    /// The file is larger than the cap.
    TooLarge {
        /// The cap in bytes.
        cap: u64,
    },
    /// A rule of judge-contract §2 failed; `field` says where.
    Invalid {
        /// Where in the file, for example `criteria[1].pass_at_or_above`.
        field: String,
        /// Which rule.
        error: DefinitionError,
    },
}

impl LoadError {
    /// The file, when loading from a file.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &LoadErrorKind {
        &self.kind
    }

    fn at(mut self, path: &Path) -> LoadError {
        self.path = Some(path.to_owned());
        self
    }
}

impl jevjudge_wire::setting::Explain for LoadError {
    /// The error; a file over the cap names the setting that raises it.
    fn explain(&self, name: jevjudge_wire::setting::Namer<'_>) -> String {
        match self.kind {
            LoadErrorKind::TooLarge { .. } => format!(
                "{self} (raise it with {})",
                name(jevjudge_wire::setting::Setting::MaxInputBytes)
            ),
            _ => self.to_string(),
        }
    }
}

impl From<LoadErrorKind> for LoadError {
    fn from(kind: LoadErrorKind) -> LoadError {
        LoadError { path: None, kind }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}: ", path.display())?;
        }
        match &self.kind {
            LoadErrorKind::Io(error) => write!(f, "cannot read the definition: {error}"),
            LoadErrorKind::UnknownFormat => {
                f.write_str("a definition file must end in .toml or .json")
            }
            LoadErrorKind::Parse(message) => write!(f, "{message}"),
            LoadErrorKind::TooLarge { cap } => {
                write!(f, "the definition is larger than the cap of {cap} bytes")
            }
            LoadErrorKind::Invalid { field, error } => write!(f, "{field}: {error}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            LoadErrorKind::Io(error) => Some(error),
            LoadErrorKind::Invalid { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl Definition {
    /// Loads a `.toml` or `.json` definition file.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Definition, LoadError> {
        Definition::from_path_capped(path, DEFAULT_MAX_DEFINITION_BYTES)
    }

    /// Loads a `.toml` or `.json` definition file of at most `max_bytes` bytes (reading stops
    /// there: `/dev/zero` costs `max_bytes`, never more).
    pub fn from_path_capped(
        path: impl AsRef<Path>,
        max_bytes: u64,
    ) -> Result<Definition, LoadError> {
        use std::io::Read;
        let path = path.as_ref();
        let format = DefinitionFormat::from_path(path)
            .ok_or_else(|| LoadError::from(LoadErrorKind::UnknownFormat).at(path))?;
        let file = std::fs::File::open(path)
            .map_err(|e| LoadError::from(LoadErrorKind::Io(e)).at(path))?;
        let mut bytes = Vec::new();
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| LoadError::from(LoadErrorKind::Io(e)).at(path))?;
        if bytes.len() as u64 > max_bytes {
            return Err(LoadError::from(LoadErrorKind::TooLarge { cap: max_bytes }).at(path));
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            LoadError::from(LoadErrorKind::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "not valid UTF-8",
            )))
            .at(path)
        })?;
        Definition::from_str_as(&text, format).map_err(|e| e.at(path))
    }

    /// Parses a definition from text in the given format.
    pub fn from_str_as(text: &str, format: DefinitionFormat) -> Result<Definition, LoadError> {
        let file: DefinitionFile = match format {
            DefinitionFormat::Toml => {
                toml::from_str(text).map_err(|e| LoadErrorKind::Parse(toml_message(&e, text)))?
            }
            DefinitionFormat::Json => serde_json::from_str(text)
                .map_err(|e| LoadErrorKind::Parse(format!("invalid definition: {e}")))?,
        };
        file.build()
    }

    /// The TOML form of this definition (loads back to an equal definition). TOML has no
    /// null: a definition whose question content holds a JSON `null` has no TOML form, and this
    /// is then an error (write the JSON form instead), never an empty text.
    pub fn to_toml_string(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(&DefinitionFile::of(self))
    }

    /// The JSON form of this definition.
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::to_value(DefinitionFile::of(self)).unwrap_or_default()
    }
}

fn toml_message(error: &toml::de::Error, text: &str) -> String {
    let message = error.message().to_owned();
    let message = if text.contains("[[criterion]]") || text.contains("[criterion.") {
        format!("{message} (the table is `[[criteria]]`, plural, not `[[criterion]]`)")
    } else {
        message
    };
    match error.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => format!("invalid definition: {message}"),
    }
}

impl DefinitionFile {
    fn build(self) -> Result<Definition, LoadError> {
        let invalid =
            |field: String, error: DefinitionError| LoadErrorKind::Invalid { field, error };
        if self.version.trim().is_empty() {
            return Err(invalid("version".into(), DefinitionError::VersionRequired).into());
        }
        if let Some(bad) = self.version.chars().find(|c| c.is_control()) {
            return Err(LoadErrorKind::Parse(format!(
                "version: must not hold control characters (found U+{:04X})",
                u32::from(bad)
            ))
            .into());
        }
        if self.criteria.is_empty() {
            return Err(invalid("criteria".into(), DefinitionError::CriteriaEmpty).into());
        }
        if self.criteria.len() > MAX_CRITERIA {
            return Err(LoadErrorKind::Parse(format!(
                "criteria: {} criteria; a definition holds at most {MAX_CRITERIA} (every review \
                 asks them all in one request): split it into several definitions",
                self.criteria.len()
            ))
            .into());
        }
        let mut criteria = Vec::with_capacity(self.criteria.len());
        let mut seen = std::collections::HashSet::with_capacity(self.criteria.len());
        for (index, c) in self.criteria.into_iter().enumerate() {
            if c.question
                .instructions
                .as_str()
                .is_some_and(|text| text.trim().is_empty())
            {
                return Err(LoadErrorKind::Parse(format!(
                    "criteria[{index}].question.instructions: must not be empty or only whitespace \
                     (every review would be refused as request_invalid)"
                ))
                .into());
            }
            if let Some(bad) = c.id.chars().find(|c| c.is_control()) {
                return Err(LoadErrorKind::Parse(format!(
                    "criteria[{index}].id: must not hold control characters (found U+{:04X})",
                    u32::from(bad)
                ))
                .into());
            }
            let criterion = Criterion::new(
                c.id,
                c.question,
                c.expected,
                c.fail_at_or_below,
                c.pass_at_or_above,
            )
            .map_err(|error| {
                let field = match error {
                    DefinitionError::CriterionIdRequired => format!("criteria[{index}].id"),
                    _ => format!("criteria[{index}].fail_at_or_below/pass_at_or_above"),
                };
                invalid(field, error)
            })?;
            if !seen.insert(criterion.id().to_owned()) {
                let error = DefinitionError::DuplicateCriterionId {
                    id: criterion.id().to_owned(),
                };
                return Err(invalid(format!("criteria[{index}].id"), error).into());
            }
            criteria.push(criterion);
        }
        Definition::new(self.version, criteria)
            .map_err(|error| invalid("criteria".to_owned(), error).into())
    }

    fn of(definition: &Definition) -> DefinitionFile {
        DefinitionFile {
            version: definition.version().to_owned(),
            criteria: definition
                .criteria()
                .iter()
                .map(|c| CriterionFile {
                    id: c.id().to_owned(),
                    expected: c.expected(),
                    fail_at_or_below: c.fail_at_or_below(),
                    pass_at_or_above: c.pass_at_or_above(),
                    question: c.question().clone(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REFUND: &str = r#"
version = "refund-answer-v1"

[[criteria]]
id = "supported"
expected = true
fail_at_or_below = 0.2
pass_at_or_above = 0.8

[criteria.question]
instructions = "Is assistant_answer supported by supporting_context without inventing completed refunds?"
"#;

    #[test]
    fn toml_and_json_forms_load_the_same_definition() {
        let from_toml = Definition::from_str_as(REFUND, DefinitionFormat::Toml).unwrap();
        assert_eq!(from_toml.version(), "refund-answer-v1");
        let json = from_toml.to_json_value().to_string();
        let from_json = Definition::from_str_as(&json, DefinitionFormat::Json).unwrap();
        assert_eq!(from_toml, from_json);
        let round =
            Definition::from_str_as(&from_toml.to_toml_string().unwrap(), DefinitionFormat::Toml)
                .unwrap();
        assert_eq!(round, from_toml);
    }

    // Found by fuzzing (fuzz/artifacts/definition/toml-form-drops-null-content.json): a null in
    // question content has no TOML form; that must be an error, not an empty file.
    #[test]
    fn a_definition_holding_a_null_has_no_toml_form() {
        let json = r#"{"version": "content-v1", "criteria": [{"id": "c", "question":
            {"instructions": {"text": "Is `a` ok?", "parts": [1, 2.5, null]},
             "criteria": {"true": ["yes"], "false": "no"}},
            "expected": false, "fail_at_or_below": 0, "pass_at_or_above": 1}]}"#;
        let definition = Definition::from_str_as(json, DefinitionFormat::Json).unwrap();
        assert!(definition.to_toml_string().is_err());
        let again = Definition::from_str_as(
            &definition.to_json_value().to_string(),
            DefinitionFormat::Json,
        )
        .unwrap();
        assert_eq!(again, definition);
    }

    #[test]
    fn errors_name_the_field() {
        let unknown = REFUND.replace("expected = true", "expected = true\nweight = 2");
        let error = Definition::from_str_as(&unknown, DefinitionFormat::Toml).unwrap_err();
        assert!(
            error.to_string().contains("unknown field `weight`"),
            "{error}"
        );

        let swapped = REFUND
            .replace("fail_at_or_below = 0.2", "fail_at_or_below = 0.9")
            .replace("pass_at_or_above = 0.8", "pass_at_or_above = 0.1");
        let error = Definition::from_str_as(&swapped, DefinitionFormat::Toml).unwrap_err();
        assert_eq!(
            error.to_string(),
            "criteria[0].fail_at_or_below/pass_at_or_above: criterion `supported`: require 0 <= fail < pass <= 1"
        );

        let blank = REFUND.replace("refund-answer-v1", " ");
        let error = Definition::from_str_as(&blank, DefinitionFormat::Toml).unwrap_err();
        assert_eq!(error.to_string(), "version: version is required");

        let missing = REFUND.replace("expected = true\n", "");
        let error = Definition::from_str_as(&missing, DefinitionFormat::Toml).unwrap_err();
        assert!(
            error.to_string().contains("missing field `expected`"),
            "{error}"
        );

        let error =
            Definition::from_str_as(r#"{"version":"v","criteria":[]}"#, DefinitionFormat::Json)
                .unwrap_err();
        assert_eq!(error.to_string(), "criteria: criteria must not be empty");

        let twice = format!(
            "{REFUND}\n{}",
            &REFUND[REFUND.find("[[criteria]]").unwrap()..]
        );
        let error = Definition::from_str_as(&twice, DefinitionFormat::Toml).unwrap_err();
        assert_eq!(
            error.to_string(),
            "criteria[1].id: duplicate criterion id `supported`"
        );
    }

    #[test]
    fn file_errors_start_with_the_path() {
        let error = Definition::from_path("/nonexistent/refund.toml").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("/nonexistent/refund.toml: cannot read")
        );
        let error = Definition::from_path("refund.yaml").unwrap_err();
        assert_eq!(
            error.to_string(),
            "refund.yaml: a definition file must end in .toml or .json"
        );
    }
}
