//! A sequence of small values kept as one-byte codes into a table of the distinct values.
//!
//! A summary keeps one tally per case, in the order the cases finished (its floating-point
//! sums are taken in that order). Tallies repeat: with one review per case and equal weights
//! there are a handful of distinct ones. [`Interned`] keeps the order and every value exactly,
//! in one byte per element while there are at most 256 distinct values, two up to 65,536, and
//! four beyond.

use std::{collections::HashMap, hash::Hash};

/// The table's hasher: tallies are hashed once or twice per row, and foldhash (seeded per
/// process) is several times faster than the default SipHash on them.
type Hasher = foldhash::fast::RandomState;

/// Codes, as narrow as the table allows.
#[derive(Debug, Clone)]
enum Codes {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

impl Default for Codes {
    fn default() -> Codes {
        Codes::U8(Vec::new())
    }
}

impl Codes {
    fn len(&self) -> usize {
        match self {
            Codes::U8(v) => v.len(),
            Codes::U16(v) => v.len(),
            Codes::U32(v) => v.len(),
        }
    }

    fn get(&self, i: usize) -> usize {
        match self {
            Codes::U8(v) => usize::from(v[i]),
            Codes::U16(v) => usize::from(v[i]),
            Codes::U32(v) => v[i] as usize,
        }
    }

    /// Appends `code`, widening every code first when it does not fit.
    fn push(&mut self, code: u32) {
        match self {
            Codes::U8(v) => match u8::try_from(code) {
                Ok(c) => v.push(c),
                Err(_) => {
                    *self = Codes::U16(v.iter().map(|&c| u16::from(c)).collect());
                    self.push(code);
                }
            },
            Codes::U16(v) => match u16::try_from(code) {
                Ok(c) => v.push(c),
                Err(_) => {
                    *self = Codes::U32(v.iter().map(|&c| u32::from(c)).collect());
                    self.push(code);
                }
            },
            Codes::U32(v) => v.push(code),
        }
    }
}

/// An ordered sequence of `T`, each element a code into the table of distinct values.
#[derive(Debug, Clone)]
pub struct Interned<T> {
    table: Vec<T>,
    codes_of: HashMap<T, u32, Hasher>,
    codes: Codes,
}

impl<T> Default for Interned<T> {
    fn default() -> Interned<T> {
        Interned {
            table: Vec::new(),
            codes_of: HashMap::default(),
            codes: Codes::default(),
        }
    }
}

impl<T: Copy + Eq + Hash> Interned<T> {
    /// Appends `value`.
    pub fn push(&mut self, value: T) {
        let code = match self.codes_of.get(&value) {
            Some(&code) => code,
            None => {
                // More than 2³² distinct values would need more elements than memory holds.
                let code = u32::try_from(self.table.len()).unwrap_or(u32::MAX);
                self.table.push(value);
                self.codes_of.insert(value, code);
                code
            }
        };
        self.codes.push(code);
    }

    /// The distinct elements, each once.
    pub fn distinct(&self) -> impl Iterator<Item = &T> + '_ {
        self.table.iter()
    }

    /// The elements in the order they were pushed.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.codes.len()).map(move |i| &self.table[self.codes.get(i)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn codes_widen_past_256_and_65536_distinct_values() {
        let mut seq = Interned::default();
        let values: Vec<u32> = (0..70_000).map(|i| (i * 7) % 69_997).collect();
        for &v in &values {
            seq.push(v);
        }
        assert!(matches!(seq.codes, Codes::U32(_)));
        assert!(seq.iter().copied().eq(values.iter().copied()));
    }

    proptest! {
        #[test]
        fn interned_values_come_back_in_order(
            values in prop::collection::vec(prop_oneof![0u16..4, 0u16..400], 0..2_000)
        ) {
            let mut seq = Interned::default();
            for &v in &values {
                seq.push(v);
            }
            prop_assert_eq!(seq.codes.len(), values.len());
            prop_assert!(seq.iter().copied().eq(values.iter().copied()));
        }
    }
}
