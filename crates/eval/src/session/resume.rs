//! Resuming a streaming run in memory that does not grow with its rows: one bit per case for
//! what is done, plus the line of the last row of each case the rows file holds more than once
//! (a case an earlier `retry errors` resume ran again).
//!
//! Opening reads the cases again, keeping a 32-bit hash of each id (keyed at random per run) by
//! input index, and checks every row of the rows file against it: a row whose id does not hash
//! to its index's is looked up exactly in a third read, so the error names the line as a run
//! that keeps its cases does. A hash that matches by chance (odds 2⁻³² a row, in a file whose
//! header already names these exact cases) is accepted. The hashes are dropped before anything
//! runs. Finishing reads the rows file once more and summarises the rows kept.

use std::{
    collections::HashMap,
    hash::{BuildHasher, RandomState},
    path::Path,
};

use jevjudge_judge::Status;

use super::{SessionError, SessionPlan};
use crate::{
    Row, SummariesBuilder, Summary,
    rows_file::{Scanned, check_row_index, scan_rows},
};

/// One bit per case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    pub(super) fn new(len: usize) -> Bits {
        Bits {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    pub(super) fn get(&self, index: usize) -> bool {
        index < self.len && self.words[index / 64] & (1 << (index % 64)) != 0
    }

    pub(super) fn set(&mut self, index: usize, on: bool) {
        if index >= self.len {
            return;
        }
        let bit = 1 << (index % 64);
        if on {
            self.words[index / 64] |= bit;
        } else {
            self.words[index / 64] &= !bit;
        }
    }

    fn ones(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// Words per block of the count kept for [`Missing::index`].
const BLOCK_WORDS: usize = 64;

/// The cases a resumed streaming run still runs (those without a kept row), in input order:
/// the done bits, and how many cases are missing before each block of 4,096, so the
/// `position`-th missing case is found without a list of them.
#[derive(Debug)]
pub(super) struct Missing {
    /// Done cases set; the bits past the last case are set too.
    done: Bits,
    before_block: Vec<usize>,
    missing: usize,
}

impl Missing {
    pub(super) fn new(mut done: Bits) -> Missing {
        let len = done.len;
        if len % 64 != 0
            && let Some(last) = done.words.last_mut()
        {
            *last |= !0 << (len % 64);
        }
        let mut before_block = Vec::with_capacity(done.words.len().div_ceil(BLOCK_WORDS));
        let mut missing = 0;
        for block in done.words.chunks(BLOCK_WORDS) {
            before_block.push(missing);
            missing += block
                .iter()
                .map(|w| w.count_zeros() as usize)
                .sum::<usize>();
        }
        Missing {
            done,
            before_block,
            missing,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.missing
    }

    pub(super) fn contains(&self, index: usize) -> bool {
        index < self.done.len && !self.done.get(index)
    }

    /// The input index of the `position`-th missing case (`position` itself past the last).
    pub(super) fn index(&self, position: usize) -> usize {
        if position >= self.missing {
            return position;
        }
        let block = self
            .before_block
            .partition_point(|&before| before <= position)
            - 1;
        let mut rank = position - self.before_block[block];
        for (offset, word) in self.done.words[block * BLOCK_WORDS..]
            .iter()
            .take(BLOCK_WORDS)
            .enumerate()
        {
            let zeros = word.count_zeros() as usize;
            if rank < zeros {
                let mut free = !word;
                for _ in 0..rank {
                    free &= free - 1;
                }
                return (block * BLOCK_WORDS + offset) * 64 + free.trailing_zeros() as usize;
            }
            rank -= zeros;
        }
        position
    }
}

/// What a resumed streaming run keeps of its rows file, besides the done bits.
#[derive(Debug)]
pub(super) struct Streamed {
    /// Rows kept from the file (they are not run again).
    pub(super) kept: usize,
    /// The input tokens the kept rows spent.
    pub(super) input_tokens: u64,
    /// The last line the file had when the run opened it: later lines are this run's.
    last_old_line: usize,
    /// For each case with more than one row in the file, the line of its last (the one that
    /// counts).
    last_of: HashMap<usize, usize>,
    /// The cases this run wrote a row for: their earlier rows no longer count.
    pub(super) written: Bits,
}

/// Opens the rows file at `path` of a streaming run over `cases` cases to resume it: checks
/// each row against the cases, and gives the file as scanned, the done cases (a row that
/// counts, not ERROR when retrying errors) and what [`finish`] needs.
pub(super) fn open(
    plan: &SessionPlan,
    path: &Path,
    cases: usize,
) -> Result<(Scanned, Bits, Streamed), SessionError> {
    let key = RandomState::new();
    let hash = |id: &str| key.hash_one(id) as u32;
    let mut hashes = Vec::with_capacity(cases);
    super::stream::each_id(&plan.cases, plan.max_line_bytes, |id| hashes.push(hash(id)))?;
    let mut done = Bits::new(cases);
    let mut seen = Bits::new(cases);
    let mut last_of = HashMap::new();
    // The tokens of the rows that count, when every case has at most one row.
    let mut tokens = 0;
    let scanned = scan_rows(path, plan.max_line_bytes, |number, index, row| {
        if hashes.get(index) != Some(&hash(&row.id)) {
            return Err(exact_problem(plan, &row.id, index));
        }
        if seen.get(index) {
            last_of.insert(index, number);
        }
        seen.set(index, true);
        let counts = !(plan.retry_errors && has_error(&row));
        done.set(index, counts);
        if counts {
            tokens += input_tokens(&row);
        }
        Ok(())
    })
    .map_err(|e| SessionError::CannotResume(e.to_string()))?;
    drop(hashes);
    drop(seen);
    if !last_of.is_empty() {
        // Some case has more rows: only its last counts, so read the file again.
        tokens = 0;
        scan_rows(path, plan.max_line_bytes, |number, index, row| {
            if done.get(index) && last_of.get(&index).is_none_or(|&last| last == number) {
                tokens += input_tokens(&row);
            }
            Ok(())
        })
        .map_err(|e| SessionError::CannotResume(e.to_string()))?;
    }
    let streamed = Streamed {
        kept: done.ones(),
        input_tokens: tokens,
        last_old_line: scanned.last_line,
        last_of,
        written: Bits::new(cases),
    };
    Ok((scanned, done, streamed))
}

/// Summarises every row of a resumed streaming run from its rows file: the rows this run wrote
/// and, for the other cases, the last row the file held before.
pub(super) fn finish(
    plan: &SessionPlan,
    path: &Path,
    streamed: &Streamed,
) -> Result<(Summary, Vec<(String, Summary)>), SessionError> {
    let mut summaries = SummariesBuilder::default();
    scan_rows(path, plan.max_line_bytes, |number, index, row| {
        let counts = if number <= streamed.last_old_line {
            !streamed.written.get(index)
                && streamed
                    .last_of
                    .get(&index)
                    .is_none_or(|&last| last == number)
        } else {
            true
        };
        if counts {
            summaries.add(index, &row);
        }
        Ok(())
    })
    .map_err(|e| SessionError::Failed(format!("cannot read the rows back: {e}")))?;
    Ok(summaries.finish(plan.price_per_million_input))
}

fn has_error(row: &Row) -> bool {
    row.verdicts()
        .iter()
        .any(|verdict| verdict.status == Status::Error)
}

fn input_tokens(row: &Row) -> u64 {
    row.verdict.usage.map_or(0, |usage| usage.input_tokens)
}

/// The exact problem with a row whose id did not hash to its index's: reads the cases again to
/// find which case, if any, has the id.
fn exact_problem(plan: &SessionPlan, id: &str, index: usize) -> String {
    let mut found = None;
    let mut position = 0;
    let read = super::stream::each_id(&plan.cases, plan.max_line_bytes, |case| {
        if found.is_none() && case == id {
            found = Some(position);
        }
        position += 1;
    });
    match read {
        Err(e) => e.to_string(),
        // Only a hash collision of two ids at one index gets here with the right index.
        Ok(_) => check_row_index(found, id, index)
            .err()
            .unwrap_or_else(|| format!("row `{id}` at index {index} could not be checked")),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The `position`-th missing case is the one a list of the missing cases names.
        #[test]
        fn missing_index_is_the_listed_one(done in proptest::collection::vec(any::<bool>(), 0..9_000)) {
            let mut bits = Bits::new(done.len());
            for (index, &on) in done.iter().enumerate() {
                bits.set(index, on);
            }
            let listed: Vec<usize> = done.iter().enumerate().filter(|(_, on)| !**on).map(|(i, _)| i).collect();
            let missing = Missing::new(bits);
            prop_assert_eq!(missing.len(), listed.len());
            for (position, &index) in listed.iter().enumerate() {
                prop_assert_eq!(missing.index(position), index);
                prop_assert!(missing.contains(index));
            }
            for (index, &on) in done.iter().enumerate() {
                prop_assert_eq!(missing.contains(index), !on);
            }
            prop_assert!(!missing.contains(done.len()));
        }
    }
}
