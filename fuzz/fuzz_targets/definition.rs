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
        // TOML has no null: a definition holding one has no TOML form, and says so with an
        // error (fuzz/artifacts/definition/toml-form-drops-null-content.json, fixed); every
        // other definition must survive the round trip.
        match definition.to_toml_string() {
            Ok(toml) => {
                let again = Definition::from_str_as(&toml, DefinitionFormat::Toml)
                    .expect("a definition's TOML form loads back");
                assert_eq!(again, definition, "TOML round trip changed the definition");
            }
            Err(_) => assert!(holds_null(&json_value), "only a null has no TOML form"),
        }
        let json = json_value.to_string();
        let again = Definition::from_str_as(&json, DefinitionFormat::Json)
            .expect("a definition's JSON form loads back");
        assert_eq!(again, definition, "JSON round trip changed the definition");
    }
});
