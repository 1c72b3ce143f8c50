//! Which of a session's cases run.

/// The input indexes of the cases a session runs, ascending.
#[derive(Debug)]
pub(super) enum Todo {
    /// Every case (a new run): nothing kept per case.
    All(usize),
    /// Those a resumed run misses.
    Listed(Vec<usize>),
    /// Those a resumed streaming run misses, one bit per case.
    Missing(super::resume::Missing),
}

impl Todo {
    pub(super) fn len(&self) -> usize {
        match self {
            Todo::All(n) => *n,
            Todo::Listed(indexes) => indexes.len(),
            Todo::Missing(missing) => missing.len(),
        }
    }

    /// The input index of the `position`-th case run.
    pub(super) fn index(&self, position: usize) -> usize {
        match self {
            Todo::All(_) => position,
            Todo::Listed(indexes) => indexes.get(position).copied().unwrap_or(position),
            Todo::Missing(missing) => missing.index(position),
        }
    }

    pub(super) fn contains(&self, index: usize) -> bool {
        match self {
            Todo::All(n) => index < *n,
            Todo::Listed(indexes) => indexes.binary_search(&index).is_ok(),
            Todo::Missing(missing) => missing.contains(index),
        }
    }
}
