//! `[(String, T)]` as a JSON object whose keys keep their order (D1): the questions of a
//! request, a verdict's findings, and the eval crate's keyed lists all use it.

use std::{fmt, marker::PhantomData};

use serde::{
    Deserialize, Deserializer, Serialize, Serializer,
    de::{MapAccess, Visitor},
};

/// Serializes pairs as an object, in order.
pub fn serialize<S: Serializer, T: Serialize>(
    entries: &[(String, T)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_map(entries.iter().map(|(key, value)| (key, value)))
}

/// Reads an object into pairs, in order; a key may stand more than once.
pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<(String, T)>, D::Error> {
    read(deserializer, "an object", None)
}

/// Reads an object into pairs, in order. `expecting` ends the format's "invalid type: …,
/// expected …" message. With `unique`, a key that stands twice is an error ``duplicate
/// {unique} `{key}` ``, raised while reading, so that the format can say where it is.
pub fn read<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
    expecting: &'static str,
    unique: Option<&'static str>,
) -> Result<Vec<(String, T)>, D::Error> {
    deserializer.deserialize_map(Pairs {
        expecting,
        unique,
        value: PhantomData,
    })
}

struct Pairs<T> {
    expecting: &'static str,
    unique: Option<&'static str>,
    value: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Pairs<T> {
    type Value = Vec<(String, T)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut entries: Vec<(String, T)> = Vec::new();
        while let Some((key, value)) = access.next_entry::<String, T>()? {
            if let Some(what) = self.unique
                && entries.iter().any(|(seen, _)| *seen == key)
            {
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate {what} `{key}`"
                )));
            }
            entries.push((key, value));
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(json: &str, unique: Option<&'static str>) -> Result<Vec<(String, u8)>, String> {
        read(
            &mut serde_json::Deserializer::from_str(json),
            "an object of name to number",
            unique,
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn keys_keep_their_order_both_ways() {
        let read = pairs(r#"{"b": 1, "a": 2, "c": 3}"#, None).unwrap();
        assert_eq!(read, [("b".into(), 1), ("a".into(), 2), ("c".into(), 3)]);
        let written = serialize(&read, serde_json::value::Serializer).unwrap();
        assert_eq!(written.to_string(), r#"{"b":1,"a":2,"c":3}"#);
    }

    #[test]
    fn a_repeated_key_is_kept_unless_keys_are_unique() {
        let json = r#"{"b": 1, "a": 2, "b": 3}"#;
        assert_eq!(
            pairs(json, None).unwrap(),
            [("b".into(), 1), ("a".into(), 2), ("b".into(), 3)]
        );
        assert_eq!(
            pairs(json, Some("name")).unwrap_err(),
            "duplicate name `b` at line 1 column 24"
        );
    }

    #[test]
    fn the_expected_shape_is_named() {
        assert_eq!(
            pairs("[]", None).unwrap_err(),
            "invalid type: sequence, expected an object of name to number at line 1 column 0"
        );
    }
}
