//! System One wire types (placeholder; being written).

pub mod canonical;
pub mod record;
