//! `Vec<(String, T)>` as a JSON object whose keys keep their order (D1).

use std::{fmt, marker::PhantomData};

use serde::{
    Deserialize, Deserializer, Serialize, Serializer,
    de::{MapAccess, Visitor},
    ser::SerializeMap,
};

/// Serializes pairs as an object, in order.
pub fn serialize<S: Serializer, T: Serialize>(
    entries: &[(String, T)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(entries.len()))?;
    for (key, value) in entries {
        map.serialize_entry(key, value)?;
    }
    map.end()
}

/// Reads an object into pairs, in order.
pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<(String, T)>, D::Error> {
    struct Pairs<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Pairs<T> {
        type Value = Vec<(String, T)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::new();
            while let Some(entry) = map.next_entry::<String, T>()? {
                entries.push(entry);
            }
            Ok(entries)
        }
    }
    deserializer.deserialize_map(Pairs(PhantomData))
}

/// The same for `Option<Vec<(String, T)>>`.
pub mod option {
    use super::*;

    /// Serializes `Some(pairs)` as an object and `None` as null.
    pub fn serialize<S: Serializer, T: Serialize>(
        entries: &Option<Vec<(String, T)>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match entries {
            Some(entries) => super::serialize(entries, serializer),
            None => serializer.serialize_none(),
        }
    }

    /// Reads null as `None` and an object as `Some(pairs)`.
    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        deserializer: D,
    ) -> Result<Option<Vec<(String, T)>>, D::Error> {
        #[derive(Deserialize)]
        #[serde(bound = "T: Deserialize<'de>")]
        struct Wrapper<T>(#[serde(deserialize_with = "super::deserialize")] Vec<(String, T)>);
        Ok(Option::<Wrapper<T>>::deserialize(deserializer)?.map(|Wrapper(entries)| entries))
    }
}
