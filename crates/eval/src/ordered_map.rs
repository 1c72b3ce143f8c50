//! `Vec<(String, T)>` as a JSON object whose keys keep their order (D1).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use jevjudge_wire::ordered_map::{deserialize, serialize};

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
