//! Repeated case ids in a streamed cases file, found in four bytes per case.
//!
//! A run that keeps its cases checks ids with a map of every id. A streaming run (millions of
//! cases) keeps only a 32-bit hash of each id, with a key chosen at random per run. After the
//! pass, the hashes are sorted; ids whose hashes are equal may be the same id or a collision,
//! so the file is read again and those ids alone (a few hundred in a million) are compared
//! exactly. The error is the one the exact check gives: the first line whose id an earlier
//! line already has, naming that earlier line.

use std::{
    cmp::Reverse,
    collections::{BinaryHeap, HashMap, HashSet},
    hash::{BuildHasher, RandomState},
    io::BufRead,
    path::Path,
};

use jevjudge_wire::lines::{CappedLines, read_file};

use crate::{
    CasesError, CasesErrorKind,
    case::{IdCheck, parse_case},
};

/// A 32-bit hash of every id, checked after the pass ([`IdHashes::first_duplicate`]).
///
/// The hashes are kept in chunks of a fixed size, each allocated whole, rather than in one
/// vector that grows: growing a vector of millions copies it, and with the allocator the
/// binary uses the old and the new copy are both resident at that moment.
#[derive(Debug)]
pub(crate) struct IdHashes {
    key: RandomState,
    /// The hash bits kept: all of them, but tests keep fewer to force collisions.
    mask: u32,
    /// Hashes a chunk holds (fewer in tests, to make several).
    chunk: usize,
    chunks: Vec<Vec<u32>>,
}

/// Hashes a chunk holds: 4 MiB.
const CHUNK: usize = 1 << 20;

impl Default for IdHashes {
    fn default() -> IdHashes {
        IdHashes::with_mask(u32::MAX)
    }
}

impl IdCheck for IdHashes {
    fn check(&mut self, id: &str, _number: usize) -> Option<usize> {
        let hash = self.hash(id);
        match self.chunks.last_mut() {
            Some(last) if last.len() < self.chunk => last.push(hash),
            _ => {
                let mut chunk = Vec::with_capacity(self.chunk);
                chunk.push(hash);
                self.chunks.push(chunk);
            }
        }
        None
    }
}

impl IdHashes {
    fn with_mask(mask: u32) -> IdHashes {
        IdHashes {
            key: RandomState::new(),
            mask,
            chunk: CHUNK,
            chunks: Vec::new(),
        }
    }

    fn hash(&self, id: &str) -> u32 {
        // The low half of a keyed 64-bit SipHash.
        self.key.hash_one(id) as u32 & self.mask
    }

    /// The first case (of those checked, in order) whose id an earlier case has, as the error
    /// naming both lines; reads `reader` (the same cases, from the start) again only when two
    /// hashes are equal. Memory: the hashes, then the ids whose hashes collide.
    pub(crate) fn first_duplicate(
        mut self,
        reader: impl BufRead,
        max_line_bytes: usize,
    ) -> Option<CasesError> {
        let mut chunks = std::mem::take(&mut self.chunks);
        let checked: usize = chunks.iter().map(Vec::len).sum();
        for chunk in &mut chunks {
            chunk.sort_unstable();
        }
        // The sorted chunks merged (smallest head first), equal hashes counted as they come.
        let mut heads: BinaryHeap<Reverse<(u32, usize)>> = chunks
            .iter()
            .enumerate()
            .filter_map(|(at, chunk)| Some(Reverse((*chunk.first()?, at))))
            .collect();
        let mut next = vec![1_usize; chunks.len()];
        let mut suspects = HashSet::new();
        let mut suspect_cases = 0_usize;
        let mut run: Option<(u32, usize)> = None;
        while let Some(Reverse((hash, at))) = heads.pop() {
            if let Some(&following) = chunks[at].get(next[at]) {
                heads.push(Reverse((following, at)));
                next[at] += 1;
            }
            run = match run {
                Some((same, count)) if same == hash => Some((same, count + 1)),
                ended => {
                    if let Some((hash, count)) = ended.filter(|&(_, count)| count > 1) {
                        suspects.insert(hash);
                        suspect_cases += count;
                    }
                    Some((hash, 1))
                }
            };
        }
        if let Some((hash, count)) = run.filter(|&(_, count)| count > 1) {
            suspects.insert(hash);
            suspect_cases += count;
        }
        drop(chunks);
        if suspects.is_empty() {
            return None;
        }
        let mut first_line: HashMap<String, usize> = HashMap::new();
        let mut lines = CappedLines::new(reader, max_line_bytes, None);
        let mut cases = 0;
        // Only the suspects are compared; once every one of them has been seen, none is left.
        while cases < checked && first_line.len() < suspect_cases {
            // A file that no longer reads as it did is caught by the caller's digest.
            let Ok(Some((number, line))) = lines.next_line() else {
                return None;
            };
            let Ok(case) = parse_case(line) else {
                return None;
            };
            cases += 1;
            if !suspects.contains(&self.hash(&case.id)) {
                continue;
            }
            if let Some(&first) = first_line.get(&case.id) {
                return Some(CasesError::at_line(
                    number,
                    CasesErrorKind::DuplicateId {
                        id: case.id,
                        first_line: first,
                    },
                ));
            }
            first_line.insert(case.id, number);
        }
        None
    }
}

/// [`crate::for_each_case_capped`] on a file, keeping a hash of each id instead of the id (see
/// the module documentation); no cap on the file's size. The file is read a second time when
/// two ids' hashes are equal. Errors are those the exact check gives, naming the file.
pub fn for_each_case_in_file_hashed(
    path: &Path,
    limit: usize,
    max_line_bytes: usize,
    visit: impl FnMut(crate::Case),
) -> Result<usize, CasesError> {
    let mut ids = IdHashes::default();
    let scanned = read_file(path, CasesErrorKind::Io, |reader| {
        crate::case::scan(reader, limit, max_line_bytes, None, &mut ids, visit)
    });
    // An error at a line stops the pass there, but a repeated id on an earlier line comes
    // first, as it would have in an exact pass.
    let repeated = read_file(path, CasesErrorKind::Io, |reader| {
        Ok(ids.first_duplicate(reader, max_line_bytes))
    });
    match repeated {
        Ok(Some(mut error)) => {
            error.path = Some(path.to_owned());
            Err(error)
        }
        Ok(None) | Err(_) => scanned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::ExactIds;
    use proptest::prelude::*;

    fn line(id: &str) -> String {
        format!(
            r#"{{"scenario":"s","id":"{id}","question":"q","supporting_context":[],"answer":"a","expected_pass":true}}"#
        )
    }

    /// What the exact map says: the line of the first repeat, its id and the first line.
    fn exact(ids: &[String]) -> Option<(usize, String, usize)> {
        let mut check = ExactIds::default();
        ids.iter().enumerate().find_map(|(i, id)| {
            check
                .check(id, i + 1)
                .map(|first| (i + 1, id.clone(), first))
        })
    }

    /// What the hashes say, keeping `mask`'s bits of each hash, `chunk` hashes a chunk.
    fn hashed(ids: &[String], mask: u32, chunk: usize) -> Option<(usize, String, usize)> {
        let mut hashes = IdHashes::with_mask(mask);
        hashes.chunk = chunk;
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(hashes.check(id, i + 1), None);
        }
        let text: String = ids.iter().map(|id| line(id) + "\n").collect();
        let error = hashes.first_duplicate(text.as_bytes(), 1 << 20)?;
        match error.kind {
            CasesErrorKind::DuplicateId { id, first_line } => Some((error.line?, id, first_line)),
            other => panic!("not a repeated id: {other:?}"),
        }
    }

    #[test]
    fn a_collision_of_different_ids_is_not_a_repeat() {
        let ids: Vec<String> = ["a", "b", "c"].map(str::to_owned).to_vec();
        // With no hash bit kept every pair collides; the second look finds no repeat.
        assert_eq!(hashed(&ids, 0, CHUNK), None);
        assert_eq!(hashed(&ids, 0, 1), None);
    }

    #[test]
    fn a_repeated_id_names_its_line_and_the_first() {
        let ids: Vec<String> = ["x", "y", "z", "y", "x"].map(str::to_owned).to_vec();
        for chunk in [1, 2, CHUNK] {
            assert_eq!(hashed(&ids, u32::MAX, chunk), Some((4, "y".to_owned(), 2)));
            assert_eq!(hashed(&ids, 0, chunk), Some((4, "y".to_owned(), 2)));
        }
    }

    #[test]
    fn the_second_look_stops_at_the_cases_the_pass_checked() {
        // The pass stopped (an error) before line 3: its repeat of line 1 is not this check's.
        let mut hashes = IdHashes::with_mask(0);
        hashes.check("p", 1);
        hashes.check("q", 2);
        let text = [line("p"), line("q"), line("p")].join("\n");
        assert!(hashes.first_duplicate(text.as_bytes(), 1 << 20).is_none());
    }

    proptest! {
        /// Few distinct ids, so repeats are common; every hash width from none to all, and
        /// chunks from one hash to all of them: the hashed check finds what the exact map
        /// finds, at the same lines.
        #[test]
        fn hashed_ids_find_the_same_repeat_as_the_exact_map(
            ids in prop::collection::vec("[a-e]{1,2}", 0..40),
            bits in 0u32..=32,
            chunk in prop_oneof![1_usize..8, Just(CHUNK)],
        ) {
            let mask = u32::MAX.checked_shr(32 - bits).unwrap_or(0);
            prop_assert_eq!(hashed(&ids, mask, chunk), exact(&ids));
        }
    }
}
