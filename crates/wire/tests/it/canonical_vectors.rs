//! Canonical JSON against jevkit's reference (systemone-wire.md §15).
//!
//! The data files under `tests/data/` were written by `scripts/gen-canonical-vectors.py` with
//! package jevkit-core 0.2.0 (`jevkit_core/canonical.py`) on CPython 3.11; every expected text
//! and digest there is the reference's output, byte for byte.

use std::collections::BTreeMap;

use jevjudge_wire::canonical::{
    CanonicalError, digest, request_digest, to_canonical_string, write_canonical,
};
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

const VECTORS: &str = include_str!("../data/canonical_vectors.json");
const FLOAT_REPRS: &str = include_str!("../data/float_reprs.txt");

fn vectors() -> Value {
    serde_json::from_str(VECTORS).expect("canonical_vectors.json is JSON")
}

fn field<'a>(entry: &'a Value, name: &str) -> &'a str {
    entry[name]
        .as_str()
        .unwrap_or_else(|| panic!("vector field {name} is a string"))
}

fn canonical_float(x: f64) -> String {
    let number = Number::from_f64(x).expect("finite");
    to_canonical_string(&Value::Number(number)).expect("a finite float has a canonical form")
}

#[test]
fn every_reference_vector_gives_the_same_text_and_digest() {
    let doc = vectors();
    let list = doc["vectors"].as_array().expect("vectors is a list");
    assert!(list.len() >= 60, "the vector file lost entries");
    for entry in list {
        let name = field(entry, "name");
        let value: Value = serde_json::from_str(field(entry, "input"))
            .unwrap_or_else(|e| panic!("{name}: input does not parse: {e}"));
        let text = to_canonical_string(&value).unwrap();
        assert_eq!(text, field(entry, "canonical"), "{name}: canonical text");
        assert_eq!(
            digest(&value).unwrap(),
            field(entry, "digest"),
            "{name}: digest"
        );

        let mut appended = String::from("prefix:");
        write_canonical(&value, &mut appended).unwrap();
        assert_eq!(
            appended,
            format!("prefix:{text}"),
            "{name}: write_canonical"
        );
    }
}

#[test]
fn request_digests_match_jevkit_record_id_and_request_id() {
    let doc = vectors();
    let list = doc["request_digests"].as_array().expect("a list");
    assert!(!list.is_empty());
    for entry in list {
        let name = field(entry, "name");
        let model = entry["model"].as_str();
        let state: Value = serde_json::from_str(field(entry, "state")).unwrap();
        let questions: Value = serde_json::from_str(field(entry, "questions")).unwrap();
        assert_eq!(
            request_digest(model, &state, &questions).unwrap(),
            field(entry, "digest"),
            "{name}"
        );
    }
}

#[test]
fn thousands_of_floats_format_as_python_repr() {
    let mut checked = 0;
    for line in FLOAT_REPRS.lines().filter(|l| !l.starts_with('#')) {
        let (bits, repr) = line.split_once(' ').expect("`bits repr` lines");
        let x = f64::from_bits(u64::from_str_radix(bits, 16).expect("hex bits"));
        assert_eq!(canonical_float(x), repr, "bits {bits}");
        checked += 1;
    }
    assert!(checked > 3000, "only {checked} floats checked");
}

#[test]
fn spec_examples_differ_from_jcs_as_documented() {
    // systemone-wire.md §15: `[1e-7, 1.0, 1e21]` is `[1e-07,1.0,1e+21]`, JCS gives `[1e-7,1,1e+21]`.
    let value: Value = serde_json::from_str("[1e-7, 1.0, 1e21]").unwrap();
    assert_eq!(to_canonical_string(&value).unwrap(), "[1e-07,1.0,1e+21]");
    // `1` and `1.0` hash differently.
    assert_ne!(
        digest(&serde_json::from_str("1").unwrap()).unwrap(),
        digest(&serde_json::from_str("1.0").unwrap()).unwrap()
    );
}

#[test]
fn errors_are_short_and_lowercase() {
    let err = CanonicalError::TooDeep { limit: 512 };
    assert_eq!(err.to_string(), "value is nested deeper than 512 levels");
    assert!(
        CanonicalError::NonFiniteNumber
            .to_string()
            .starts_with("non-finite")
    );
}

/// The structure Python's `repr(float)` has, checked independently of the formatter's code.
fn assert_python_repr_shape(x: f64, text: &str) {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    assert_eq!(text.starts_with('-'), x.is_sign_negative(), "{text}: sign");
    // Decimal exponent of the shortest digits, as Rust's `{:e}` reports it.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        assert!(!unsigned.contains('e'), "{text}: positional expected");
        let (int, frac) = unsigned.split_once('.').expect("a decimal point");
        assert!(
            !int.is_empty() && !frac.is_empty(),
            "{text}: digits both sides"
        );
        assert!(
            int == "0" || !int.starts_with('0'),
            "{text}: no leading zeros"
        );
        // As many significant digits as the shortest form (which digits, on a tie, is
        // pinned by the Python vectors).
        let all = format!("{int}{frac}");
        let significant = all.trim_start_matches('0').trim_end_matches('0');
        let shortest = digits.trim_end_matches('0');
        if x != 0.0 {
            assert_eq!(significant.len(), shortest.len(), "{text}: digit count");
        }
        assert!(
            frac == "0" || !frac.ends_with('0'),
            "{text}: no trailing zeros beyond one"
        );
    } else {
        let (mant, e) = unsigned.split_once('e').expect("scientific expected");
        assert!(
            e.starts_with('+') || e.starts_with('-'),
            "{text}: exponent sign"
        );
        assert!(e.len() >= 3, "{text}: at least two exponent digits");
        assert_eq!(e[1..].parse::<i32>().unwrap().abs(), exp.abs());
        assert_eq!(
            mant.replace('.', "").len(),
            digits.len(),
            "{text}: digit count"
        );
        assert!(!mant.ends_with('.'), "{text}: no bare point");
    }
}

/// A JSON value tree, as a strategy.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter_map("finite", Number::from_f64)
            .prop_map(Value::Number),
        "\\PC{0,8}".prop_map(Value::String),
        "[\\x00-\\x20\"\\\\\u{7f}\u{2028}\u{ff61}\u{1f600}]{0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("\\PC{0,4}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The same value with every object's keys inserted in reverse.
fn reversed(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map.iter().rev() {
                out.insert(k.clone(), reversed(v));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn floats_round_trip_and_have_python_repr_shape(x in any::<f64>().prop_filter("finite", |x| x.is_finite())) {
        let text = canonical_float(x);
        let back: f64 = text.parse().unwrap();
        prop_assert_eq!(back.to_bits(), x.to_bits(), "{} does not round-trip", text);
        assert_python_repr_shape(x, &text);
    }

    #[test]
    fn floats_from_bits_round_trip(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assume!(x.is_finite());
        let text = canonical_float(x);
        prop_assert_eq!(text.parse::<f64>().unwrap().to_bits(), bits);
        assert_python_repr_shape(x, &text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn output_does_not_depend_on_key_insertion_order(value in json_value()) {
        let forward = to_canonical_string(&value).unwrap();
        let backward = to_canonical_string(&reversed(&value)).unwrap();
        prop_assert_eq!(&forward, &backward);
        prop_assert_eq!(digest(&value).unwrap(), digest(&reversed(&value)).unwrap());
        // The output is JSON that reads back as the same value.
        let back: Value = serde_json::from_str(&forward).unwrap();
        prop_assert_eq!(back, value);
    }

    #[test]
    fn objects_come_out_sorted_by_code_point(keys in prop::collection::vec("\\PC{0,3}", 0..8)) {
        let map: Map<String, Value> = keys.iter().map(|k| (k.clone(), Value::Null)).collect();
        let text = to_canonical_string(&Value::Object(map)).unwrap();
        let sorted: BTreeMap<&str, ()> = keys.iter().map(|k| (k.as_str(), ())).collect();
        let expected: Vec<String> = sorted
            .keys()
            .map(|k| format!("{}:null", serde_json::to_string(k).unwrap()))
            .collect();
        // serde_json escapes like Python for these keys except control characters, which
        // `\PC` excludes.
        prop_assert_eq!(text, format!("{{{}}}", expected.join(",")));
    }
}
