//! The store's reviews as files: `recordings.jevl` (replayable records of the reviews whose
//! state was kept) and, for the review queue's labels, `cases.jsonl` with exactly those
//! reviews' records. Both are state text, written with [`Policy::Private`]: whole or not at
//! all, readable by their owner only.

use std::{
    collections::{BTreeMap, HashMap},
    io,
    path::{Path, PathBuf},
};

use jevjudge_store::{
    Store, StoreError,
    export::{ExportError, LabelledExport, LeftOut, VersionError, export_version},
};
use jevjudge_wire::{
    record::Record,
    setting::{Explain, Namer, Setting},
};

use crate::output::{AtomicFile, Policy, WriteError};

/// The name of the record file an export writes in its directory.
pub const RECORDINGS: &str = "recordings.jevl";
/// The name of the cases file a labelled export writes in its directory.
pub const CASES: &str = "cases.jsonl";

/// Why an export stopped. Everything but [`ExportFailure::Write`] happens before a file is
/// in place; `Write` is met after the store was read.
#[derive(Debug, thiserror::Error)]
pub enum ExportFailure {
    /// The export directory could not be created.
    #[error("{}: {error}", dir.display())]
    Directory {
        /// The directory.
        dir: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// An export file could not be started.
    #[error(transparent)]
    Start(WriteError),
    /// The store could not be read, or gave a record that cannot be written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The export rules refused a review.
    #[error(transparent)]
    Refused(ExportError),
    /// No one definition version can be exported (several in the store, none named; or the
    /// one named has no reviews). Met before any file is started.
    #[error(transparent)]
    Version(VersionError),
    /// An export file could not be written or put in place.
    #[error(transparent)]
    Write(WriteError),
}

impl Explain for ExportFailure {
    /// The failure with the setting that names or fixes it.
    fn explain(&self, name: Namer<'_>) -> String {
        match self {
            ExportFailure::Directory { dir, error } => {
                format!("{} {}: {error}", name(Setting::Out), dir.display())
            }
            ExportFailure::Refused(error @ ExportError::NoExpectedFlags { .. }) => format!(
                "{error}: pass its definition with {} FILE",
                name(Setting::Definition)
            ),
            ExportFailure::Refused(error @ ExportError::CriteriaDiffer { .. }) => format!(
                "{error}: is {} the right file for this version?",
                name(Setting::Definition)
            ),
            ExportFailure::Version(error @ VersionError::Several { .. }) => format!(
                "{error}; name one with {}",
                name(Setting::DefinitionVersion)
            ),
            ExportFailure::Version(error) => {
                format!("{}: {error}", name(Setting::DefinitionVersion))
            }
            other => other.to_string(),
        }
    }
}

/// A written record file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenRecords {
    /// Where it is.
    pub path: PathBuf,
    /// The records in it.
    pub records: u64,
}

/// What a labelled export exported and left out.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelledExported {
    /// The cases exported.
    pub cases: u64,
    /// The records exported (each once).
    pub records: usize,
    /// The reviews left out, by reason.
    pub left_out: LeftOut,
    /// Agreement of the two reviewers per definition version and criterion (Scott's π with
    /// can't-tell rates), over the reviews decided twice.
    pub agreement: Vec<jevjudge_store::export::AgreementFigure>,
    /// The definition version exported (`None`: the store holds no review).
    pub version: Option<String>,
    /// The cases whose review was queued before its sampling rate was recorded (weight 1).
    pub unrecorded_inclusion: u64,
    /// The cases file and the record file, or `None` when no case was exported (then nothing
    /// was written and earlier files are left alone).
    pub files: Option<(PathBuf, PathBuf)>,
}

/// The expected flags of `definition`'s criteria, by criterion id: the labels a labelled
/// export gives its version's reviews when the store keeps none.
pub fn expected_flags(definition: &jevjudge_judge::Definition) -> BTreeMap<String, bool> {
    definition
        .criteria()
        .iter()
        .map(|c| (c.id().to_owned(), c.expected()))
        .collect()
}

/// The expected flags of each definition, by version ([`expected_flags`]); `Err` names a
/// version given twice.
pub fn flags_by_version<'a>(
    definitions: impl IntoIterator<Item = &'a jevjudge_judge::Definition>,
) -> Result<HashMap<String, BTreeMap<String, bool>>, String> {
    let mut by_version = HashMap::new();
    for definition in definitions {
        let version = definition.version().to_owned();
        if by_version
            .insert(version.clone(), expected_flags(definition))
            .is_some()
        {
            return Err(version);
        }
    }
    Ok(by_version)
}

/// Creates `dir` and starts its file `name`, private (0600, never through a link).
fn start_private(dir: &Path, name: &str) -> Result<AtomicFile, ExportFailure> {
    std::fs::create_dir_all(dir).map_err(|error| ExportFailure::Directory {
        dir: dir.to_owned(),
        error,
    })?;
    AtomicFile::create(&dir.join(name), Policy::Private).map_err(ExportFailure::Start)
}

/// Runs `each` over the store's export, stopping it at the first failure `each` gives: that
/// failure, else the store's. The store is closed after.
async fn drive<T>(
    store: Store,
    export: impl AsyncFnOnce(
        &Store,
        &mut dyn FnMut(T) -> Result<(), StoreError>,
    ) -> Result<u64, StoreError>,
    mut each: impl FnMut(T) -> Result<(), ExportFailure>,
) -> Result<u64, ExportFailure> {
    let mut stopped = None;
    let outcome = export(&store, &mut |item| {
        each(item).map_err(|failure| {
            let message = failure.to_string();
            stopped = Some(failure);
            StoreError::Invalid(message)
        })
    })
    .await;
    store.close().await;
    match stopped {
        Some(failure) => Err(failure),
        None => Ok(outcome?),
    }
}

/// A record as its `.jevl` line, written to `file`.
fn write_record(file: &mut AtomicFile, record: &Record) -> Result<(), ExportFailure> {
    let line = record
        .to_line()
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    file.write_all(line.as_bytes())
        .map_err(ExportFailure::Write)
}

/// Writes `dir/recordings.jevl` with the replayable records of the reviews whose state was
/// kept; `None` when there is none (nothing is written then).
pub async fn export_records(
    store: Store,
    dir: &Path,
) -> Result<Option<WrittenRecords>, ExportFailure> {
    let mut file = start_private(dir, RECORDINGS)?;
    let records = drive(
        store,
        async |store, each| store.export_records(each).await,
        |record| write_record(&mut file, &record),
    )
    .await?;
    if records == 0 {
        return Ok(None);
    }
    let path = file.commit().map_err(ExportFailure::Write)?;
    Ok(Some(WrittenRecords { path, records }))
}

/// Writes `dir/cases.jsonl` with the review queue's decided reviews of one definition
/// version as cases and `dir/recordings.jevl` with exactly their records, by the rules of
/// [`LabelledExport`] with the expected `flags` by definition version. The version is `version`,
/// or the only one the store holds reviews of ([`export_version`]); several and none named is
/// [`ExportFailure::Version`], before any file is started.
pub async fn export_labelled(
    store: Store,
    dir: &Path,
    flags: HashMap<String, BTreeMap<String, bool>>,
    version: Option<&str>,
) -> Result<LabelledExported, ExportFailure> {
    let chosen = match store.review_versions().await {
        Ok(versions) => export_version(&versions, version).map_err(ExportFailure::Version),
        Err(error) => Err(error.into()),
    };
    let chosen = match chosen {
        Ok(chosen) => chosen,
        Err(failure) => {
            store.close().await;
            return Err(failure);
        }
    };
    let mut rules = LabelledExport::new(flags);
    let mut cases = start_private(dir, CASES)?;
    let mut records = start_private(dir, RECORDINGS)?;
    let only = chosen.clone();
    drive(
        store,
        async move |store, each| store.export_labelled_of(only.as_deref(), each).await,
        |labelled| {
            let Some(case) = rules.admit(labelled).map_err(ExportFailure::Refused)? else {
                return Ok(());
            };
            cases
                .write_all(case.line.as_bytes())
                .map_err(ExportFailure::Write)?;
            match &case.record {
                Some(record) => write_record(&mut records, record),
                None => Ok(()),
            }
        },
    )
    .await?;
    let files = if rules.cases == 0 {
        None
    } else {
        let cases_path = cases.commit().map_err(ExportFailure::Write)?;
        let records_path = records.commit().map_err(ExportFailure::Write)?;
        Some((cases_path, records_path))
    };
    Ok(LabelledExported {
        cases: rules.cases,
        records: rules.records(),
        left_out: rules.left_out,
        agreement: rules.agreement(),
        version: chosen,
        unrecorded_inclusion: rules.unrecorded_inclusion,
        files,
    })
}

#[cfg(test)]
mod tests {
    use jevjudge_store::StoreUrl;

    use super::*;

    async fn empty_store(dir: &Path) -> Store {
        let store = Store::connect(&StoreUrl::Sqlite(dir.join("store.db")))
            .await
            .unwrap();
        store.migrate().await.unwrap();
        store
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn flags_by_version_takes_each_definitions_expected_flags_and_refuses_a_version_twice() {
        let definition = |version: &str| {
            jevjudge_judge::Definition::from_str_as(
                &format!(
                    "version = \"{version}\"\n[[criteria]]\nid = \"grounded\"\n\
                     expected = false\nfail_at_or_below = 0.3\npass_at_or_above = 0.7\n\
                     [criteria.question]\ninstructions = \"Is it grounded?\"\n"
                ),
                jevjudge_judge::DefinitionFormat::Toml,
            )
            .unwrap()
        };
        let (one, two) = (definition("a-v1"), definition("a-v2"));
        let flags = flags_by_version([&one, &two]).unwrap();
        assert_eq!(
            flags["a-v1"],
            BTreeMap::from([("grounded".to_owned(), false)])
        );
        assert_eq!(flags.len(), 2);
        assert_eq!(flags_by_version([&one, &two, &one]), Err("a-v1".to_owned()));
    }

    #[tokio::test]
    async fn an_export_with_nothing_to_export_writes_no_file() {
        let temp = tempfile::tempdir().unwrap();
        let out = temp.path().join("out");
        let written = export_records(empty_store(temp.path()).await, &out)
            .await
            .unwrap();
        assert_eq!(written, None);
        assert!(names(&out).is_empty(), "{:?}", names(&out));

        let exported = export_labelled(empty_store(temp.path()).await, &out, HashMap::new(), None)
            .await
            .unwrap();
        assert_eq!((exported.cases, exported.records), (0, 0));
        assert_eq!(exported.version, None);
        assert_eq!(exported.left_out, LeftOut::default());
        assert_eq!(exported.files, None);
        assert!(names(&out).is_empty(), "{:?}", names(&out));
    }

    #[tokio::test]
    async fn several_versions_and_none_named_write_no_file_and_list_them() {
        let temp = tempfile::tempdir().unwrap();
        let store = empty_store(temp.path()).await;
        for version in ["v1", "v2", "v2"] {
            store.insert(&review_of(version)).await.unwrap();
        }
        store.close().await;
        let out = temp.path().join("out");
        let failure = export_labelled(empty_store(temp.path()).await, &out, HashMap::new(), None)
            .await
            .unwrap_err();
        assert!(
            matches!(&failure, ExportFailure::Version(VersionError::Several { versions })
                if versions == &[("v1".to_owned(), 1), ("v2".to_owned(), 2)]),
            "{failure:?}"
        );
        assert!(!out.exists(), "nothing is started");
        // Named: the export reads that version (nothing of it was queued here).
        let exported = export_labelled(
            empty_store(temp.path()).await,
            &out,
            HashMap::new(),
            Some("v2"),
        )
        .await
        .unwrap();
        assert_eq!(
            (exported.version.as_deref(), exported.cases),
            (Some("v2"), 0)
        );
    }

    fn review_of(version: &str) -> jevjudge_store::NewReview {
        jevjudge_store::NewReview {
            id: jevjudge_store::ReviewId::new(),
            definition_version: version.to_owned(),
            definition_digest: format!("sha256:{version}"),
            state_digest: "sha256:00".to_owned(),
            reference: None,
            status: "PASS".to_owned(),
            error: "NONE".to_owned(),
            detail: None,
            findings: serde_json::json!({}),
            model: None,
            usage: None,
            elapsed: std::time::Duration::ZERO,
            request_id: "r".to_owned(),
            backend: "fake".to_owned(),
            kept: None,
            shadow_of: None,
            route: None,
        }
    }

    #[test]
    fn expected_flags_are_each_criterions_expected_answer() {
        let criterion = |id: &str, expected| {
            let question = jevjudge_wire::NoulQuestion::new("Is it so?");
            jevjudge_judge::Criterion::new(id, question, expected, 0.2, 0.8).unwrap()
        };
        let definition = jevjudge_judge::Definition::new(
            "v1",
            vec![criterion("a", true), criterion("b", false)],
        )
        .unwrap();
        let flags = expected_flags(&definition);
        assert_eq!(
            flags.into_iter().collect::<Vec<_>>(),
            [("a".to_owned(), true), ("b".to_owned(), false)]
        );
    }

    #[tokio::test]
    async fn an_export_directory_that_cannot_be_made_is_named() {
        let temp = tempfile::tempdir().unwrap();
        let blocker = temp.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let out = blocker.join("out");
        let failure = export_records(empty_store(temp.path()).await, &out)
            .await
            .unwrap_err();
        let ExportFailure::Directory { dir, .. } = &failure else {
            panic!("expected a directory failure, got {failure:?}");
        };
        assert_eq!(dir, &out);
        assert!(
            failure
                .to_string()
                .starts_with(&format!("{}: ", out.display()))
        );
    }
}
