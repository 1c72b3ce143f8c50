//! The definitions a service reviews against, by version, loaded once at start.

use std::{
    collections::BTreeMap,
    fmt,
    path::{Path, PathBuf},
};

use jevjudge_judge::{Definition, DefinitionFormat, LoadError};

/// Definitions by version (listed in version order).
///
/// Built from a directory with [`Definitions::load_dir`] or from values with
/// [`Definitions::new`]; two definitions with one version are an error.
#[derive(Debug, Clone, Default)]
pub struct Definitions {
    by_version: BTreeMap<String, Definition>,
}

/// Why the definitions could not be loaded. `Display` names the directory or the file.
#[derive(Debug)]
#[non_exhaustive]
pub enum DefinitionsError {
    /// The directory could not be listed.
    ReadDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The directory holds no `.toml` or `.json` file.
    NoDefinitions {
        /// The directory.
        dir: PathBuf,
    },
    /// A definition file is unreadable or invalid (the error names the file and the field).
    Load(LoadError),
    /// Two definitions share a version.
    DuplicateVersion {
        /// The version.
        version: String,
        /// The file that defined it first, when loading from files.
        first: Option<PathBuf>,
        /// The file that defined it again, when loading from files.
        second: Option<PathBuf>,
    },
}

impl fmt::Display for DefinitionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DefinitionsError::ReadDir { dir, source } => {
                write!(
                    f,
                    "{}: cannot list the definitions: {source}",
                    dir.display()
                )
            }
            DefinitionsError::NoDefinitions { dir } => write!(
                f,
                "{}: no definition files (.toml or .json) in this directory",
                dir.display()
            ),
            DefinitionsError::Load(error) => error.fmt(f),
            DefinitionsError::DuplicateVersion {
                version,
                first,
                second,
            } => match (first, second) {
                (Some(first), Some(second)) => write!(
                    f,
                    "{}: version `{version}` is already defined by {}",
                    second.display(),
                    first.display()
                ),
                _ => write!(f, "version `{version}` is defined twice"),
            },
        }
    }
}

impl std::error::Error for DefinitionsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DefinitionsError::ReadDir { source, .. } => Some(source),
            DefinitionsError::Load(error) => Some(error),
            _ => None,
        }
    }
}

impl Definitions {
    /// These definitions; two with one version are an error.
    pub fn new(
        definitions: impl IntoIterator<Item = Definition>,
    ) -> Result<Definitions, DefinitionsError> {
        let mut by_version = BTreeMap::new();
        for definition in definitions {
            let version = definition.version().to_owned();
            if by_version.insert(version.clone(), definition).is_some() {
                return Err(DefinitionsError::DuplicateVersion {
                    version,
                    first: None,
                    second: None,
                });
            }
        }
        Ok(Definitions { by_version })
    }

    /// Loads every `.toml` and `.json` file directly in `dir` (in file-name order; other files
    /// and subdirectories are ignored). The first bad file stops loading with an error naming
    /// it; a directory without definitions is an error too.
    pub fn load_dir(dir: impl AsRef<Path>) -> Result<Definitions, DefinitionsError> {
        let dir = dir.as_ref();
        let read_dir = |source| DefinitionsError::ReadDir {
            dir: dir.to_owned(),
            source,
        };
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(read_dir)? {
            let path = entry.map_err(read_dir)?.path();
            if DefinitionFormat::from_path(&path).is_some() && path.is_file() {
                paths.push(path);
            }
        }
        if paths.is_empty() {
            return Err(DefinitionsError::NoDefinitions {
                dir: dir.to_owned(),
            });
        }
        paths.sort();
        let mut by_version = BTreeMap::new();
        let mut sources: BTreeMap<String, PathBuf> = BTreeMap::new();
        for path in paths {
            let definition = Definition::from_path(&path).map_err(DefinitionsError::Load)?;
            let version = definition.version().to_owned();
            if let Some(first) = sources.get(&version) {
                return Err(DefinitionsError::DuplicateVersion {
                    version,
                    first: Some(first.clone()),
                    second: Some(path),
                });
            }
            sources.insert(version.clone(), path);
            by_version.insert(version, definition);
        }
        Ok(Definitions { by_version })
    }

    /// The definition with this version.
    pub fn get(&self, version: &str) -> Option<&Definition> {
        self.by_version.get(version)
    }

    /// The definitions in version order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Definition> {
        self.by_version.values()
    }

    /// How many definitions.
    pub fn len(&self) -> usize {
        self.by_version.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.by_version.is_empty()
    }

    /// `GET /v1/definitions`: each version with its criteria's ids, expected flags and
    /// thresholds. No question text.
    pub fn summary(&self) -> serde_json::Value {
        let definitions: Vec<serde_json::Value> = self
            .iter()
            .map(|definition| {
                let criteria: Vec<serde_json::Value> = definition
                    .criteria()
                    .iter()
                    .map(|criterion| {
                        serde_json::json!({
                            "id": criterion.id(),
                            "expected": criterion.expected(),
                            "fail_at_or_below": criterion.fail_at_or_below(),
                            "pass_at_or_above": criterion.pass_at_or_above(),
                        })
                    })
                    .collect();
                serde_json::json!({"version": definition.version(), "criteria": criteria})
            })
            .collect();
        serde_json::json!({ "definitions": definitions })
    }
}

#[cfg(test)]
mod tests {
    use jevjudge_judge::Criterion;
    use jevjudge_wire::NoulQuestion;

    use super::*;

    fn definition(version: &str) -> Definition {
        Definition::new(
            version,
            vec![
                Criterion::new(
                    "supported",
                    NoulQuestion::new("SECRET-QUESTION-TEXT"),
                    false,
                    0.2,
                    0.8,
                )
                .unwrap(),
            ],
        )
        .unwrap()
    }

    #[test]
    fn versions_are_unique() {
        let error = Definitions::new([definition("a"), definition("a")]).unwrap_err();
        assert_eq!(error.to_string(), "version `a` is defined twice");
        let definitions = Definitions::new([definition("b"), definition("a")]).unwrap();
        let versions: Vec<&str> = definitions.iter().map(|d| d.version()).collect();
        assert_eq!(versions, ["a", "b"]);
        assert!(definitions.get("a").is_some() && definitions.get("c").is_none());
    }

    #[test]
    fn the_summary_has_thresholds_but_no_question_text() {
        let summary = Definitions::new([definition("a")]).unwrap().summary();
        assert_eq!(
            summary,
            serde_json::json!({"definitions": [{"version": "a", "criteria": [
                {"id": "supported", "expected": false, "fail_at_or_below": 0.2, "pass_at_or_above": 0.8}
            ]}]})
        );
        assert!(!summary.to_string().contains("SECRET"));
    }
}
