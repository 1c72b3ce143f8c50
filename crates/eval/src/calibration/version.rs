//! The version name of a calibrated definition, and the text of its file.

use jevjudge_judge::{Definition, DefinitionFormat};

/// The version of a calibrated definition: `<old>+cal.<n>`.
///
/// `n` is 1, or one more than the `+cal.<k>` suffix `old` already carries (so calibrating
/// `v1+cal.1` gives `v1+cal.2`, not `v1+cal.1+cal.1`); when the output file already holds a
/// definition of the same base with `+cal.<m>`, `m ≥ n`, the result is `+cal.<m + 1>`, so a new
/// calibration never reuses a version that named other thresholds.
///
/// ```
/// use jevjudge_eval::calibration::calibrated_version;
/// assert_eq!(calibrated_version("sms-spam-0.1.0", None), "sms-spam-0.1.0+cal.1");
/// assert_eq!(calibrated_version("v1+cal.1", None), "v1+cal.2");
/// assert_eq!(calibrated_version("v1", Some("v1+cal.3")), "v1+cal.4");
/// assert_eq!(calibrated_version("v1", Some("other+cal.9")), "v1+cal.1");
/// ```
pub fn calibrated_version(old: &str, existing: Option<&str>) -> String {
    let split = |version: &str| -> Option<(String, u64)> {
        let (base, suffix) = version.rsplit_once("+cal.")?;
        let k: u64 = suffix.parse().ok()?;
        Some((base.to_owned(), k))
    };
    let (base, mut n) = match split(old) {
        Some((base, k)) => (base, k.saturating_add(1)),
        None => (old.to_owned(), 1),
    };
    if let Some((existing_base, m)) = existing.and_then(split) {
        if existing_base == base && m >= n {
            n = m.saturating_add(1);
        }
    }
    format!("{base}+cal.{n}")
}

/// Why a calibrated definition cannot be written as a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionTextError {
    /// The file name ends in neither `.toml` nor `.json`.
    #[error("a definition file must end in .toml or .json")]
    UnknownFormat,
    /// TOML has no null, and the question content holds one.
    #[error(
        "the definition holds a JSON null in its question content, which TOML cannot carry: \
         write a .json file instead"
    )]
    NullInToml,
}

/// The file text of `calibrated` in `format` (`None`: not a definition file name). A TOML file
/// opens with a comment naming the report it was calibrated from (`source`), its `rows` and
/// the definition version the report was made with (`from_version`).
pub fn calibrated_definition_text(
    calibrated: &Definition,
    format: Option<DefinitionFormat>,
    source: &str,
    rows: usize,
    from_version: &str,
) -> Result<String, DefinitionTextError> {
    match format.ok_or(DefinitionTextError::UnknownFormat)? {
        DefinitionFormat::Toml => {
            let body = calibrated
                .to_toml_string()
                .map_err(|_| DefinitionTextError::NullInToml)?;
            let end = if body.ends_with('\n') { "" } else { "\n" };
            Ok(format!(
                "# Calibrated by `jevjudge calibrate` from {source} ({} of \
                 {from_version}).\n{body}{end}",
                crate::plural::count(rows, "row")
            ))
        }
        DefinitionFormat::Json => Ok(format!("{:#}\n", calibrated.to_json_value())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition() -> Definition {
        Definition::from_str_as(
            r#"{"version": "v1+cal.1", "criteria": [{"id": "spam", "question": {"instructions": "Spam?"}, "expected": true, "fail_at_or_below": 0.2, "pass_at_or_above": 0.8}]}"#,
            DefinitionFormat::Json,
        )
        .unwrap()
    }

    #[test]
    fn a_toml_file_names_its_report_and_a_json_file_is_the_definition_alone() {
        let toml = calibrated_definition_text(
            &definition(),
            Some(DefinitionFormat::Toml),
            "r.json",
            150,
            "v1",
        )
        .unwrap();
        assert!(
            toml.starts_with(
                "# Calibrated by `jevjudge calibrate` from r.json (150 rows of v1).\n"
            ),
            "{toml}"
        );
        assert!(toml.ends_with('\n'));
        let back = Definition::from_str_as(&toml, DefinitionFormat::Toml).unwrap();
        assert_eq!(back.version(), "v1+cal.1");
        let json = calibrated_definition_text(
            &definition(),
            Some(DefinitionFormat::Json),
            "r.json",
            150,
            "v1",
        )
        .unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["version"], "v1+cal.1");
        assert_eq!(
            calibrated_definition_text(&definition(), None, "r.json", 150, "v1"),
            Err(DefinitionTextError::UnknownFormat)
        );
    }
}
