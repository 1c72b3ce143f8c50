//! Loading the definitions directory: every .toml/.json file, errors naming the file, one
//! version per definition.

use jevjudge_serve::Definitions;

use crate::util::data;

#[test]
fn every_definition_file_loads_and_other_files_are_ignored() {
    let definitions = Definitions::load_dir(data("definitions")).unwrap();
    let versions: Vec<&str> = definitions.iter().map(|d| d.version()).collect();
    assert_eq!(versions, ["refund-answer-v1", "support-draft-v1"]);
    assert_eq!(definitions.len(), 2);
    assert_eq!(
        definitions
            .get("support-draft-v1")
            .map(|d| d.criteria().len()),
        Some(2)
    );
}

#[test]
fn a_bad_file_stops_loading_with_an_error_naming_it() {
    let error = load_error("bad");
    assert!(error.contains("b-bad.toml"), "{error}");
    assert!(
        error.contains("criteria[0].fail_at_or_below/pass_at_or_above"),
        "{error}"
    );
}

#[test]
fn two_files_with_one_version_are_an_error_naming_both() {
    let error = load_error("duplicate");
    assert!(error.contains("second.toml"), "{error}");
    assert!(error.contains("first.toml"), "{error}");
    assert!(error.contains("`refund-answer-v1`"), "{error}");
}

#[test]
fn a_directory_without_definitions_is_an_error() {
    let error = load_error("empty");
    assert!(error.contains("no definition files"), "{error}");
    let error = load_error("missing");
    assert!(
        error.contains("missing: cannot list the definitions"),
        "{error}"
    );
}

/// The error of loading the test data directory `name`, which must fail.
fn load_error(name: &str) -> String {
    Definitions::load_dir(data(name)).unwrap_err().to_string()
}
