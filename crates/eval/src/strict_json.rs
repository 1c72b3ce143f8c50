//! JSON that refuses a key repeated within one object (at any depth): see
//! [`jevjudge_wire::strict_json`].

pub(crate) use jevjudge_wire::strict_json::from_str;
