//! Definition files (cli-and-formats.md §2.1), TOML and JSON: any input is either a definition
//! or an error naming the problem — no panic — and a definition written back as TOML or JSON
//! loads to an equal definition.
#![no_main]

use jevjudge_judge::{Definition, DefinitionFormat};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn holds_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(holds_null),
        Value::Object(fields) => fields.values().any(holds_null),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for format in [DefinitionFormat::Toml, DefinitionFormat::Json] {
        let Ok(definition) = Definition::from_str_as(text, format) else {
            continue;
        };
        let json_value = definition.to_json_value();
        // KNOWN BUG, reported (fuzz/artifacts/definition/toml-form-drops-null-content.json):
        // TOML has no null, and `to_toml_string` then returns "" instead of an error, so
        // `import jevassert` and `calibrate --write-definition X.toml` write a definition file
        // without a definition and exit 0. Until it is an error, such definitions skip the
        // TOML round trip; every other definition must survive it.
        if !holds_null(&json_value) {
            let toml = definition.to_toml_string();
            let again = Definition::from_str_as(&toml, DefinitionFormat::Toml)
                .expect("a definition's TOML form loads back");
            assert_eq!(again, definition, "TOML round trip changed the definition");
        }
        let json = json_value.to_string();
        let again = Definition::from_str_as(&json, DefinitionFormat::Json)
            .expect("a definition's JSON form loads back");
        assert_eq!(again, definition, "JSON round trip changed the definition");
    }
});
