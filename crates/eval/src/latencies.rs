//! Review times kept compactly for the nearest-rank P50/P95 of a summary (judge-contract
//! rule 56): each review's time is kept as whole nanoseconds, four bytes for anything under
//! 4.29 s and eight for the rare longer one. Order statistics do not depend on the order the
//! times came in, and nanoseconds → milliseconds (`ns as f64 / 1e6`, as
//! [`jevjudge_judge::Verdict::elapsed_millis`] computes it) never reverses two times, so the
//! figures are exactly those of sorting every review's milliseconds as f64.
//!
//! A summary over several groups (the overall summary over its scenarios) needs no copy of
//! the times: [`percentile_of_union`] takes the k-th smallest over the groups' sorted times.

use std::time::Duration;

use jevjudge_stats::nearest_rank_index;

/// Review times in nanoseconds: those below `u32::MAX` in `short`, the others in `long`.
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    short: Vec<u32>,
    long: Vec<u64>,
    sorted: bool,
}

impl Latencies {
    /// Keeps one review's time.
    pub fn push(&mut self, elapsed: Duration) {
        let nanos = elapsed.as_nanos();
        match u32::try_from(nanos) {
            Ok(short) if short != u32::MAX => self.short.push(short),
            _ => self.long.push(u64::try_from(nanos).unwrap_or(u64::MAX)),
        }
        self.sorted = false;
    }

    /// How many times are kept.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// Sorts the times in place (ascending); later queries need it.
    pub fn sort(&mut self) {
        if !self.sorted {
            self.short.sort_unstable();
            self.long.sort_unstable();
            self.sorted = true;
        }
    }

    /// The `rank`-th smallest time (0-based) in nanoseconds; the times must be sorted.
    fn nth(&self, rank: usize) -> Option<u64> {
        match self.short.get(rank) {
            Some(&short) => Some(u64::from(short)),
            None => self.long.get(rank - self.short.len()).copied(),
        }
    }

    /// How many times are at most `nanos`; the times must be sorted.
    fn count_at_most(&self, nanos: u64) -> usize {
        let short = match u32::try_from(nanos) {
            Ok(n) => self.short.partition_point(|&t| t <= n),
            Err(_) => self.short.len(),
        };
        short + self.long.partition_point(|&t| t <= nanos)
    }

    /// The smallest and largest time; the times must be sorted.
    fn range(&self) -> Option<(u64, u64)> {
        let first = self.nth(0)?;
        let last = self.nth(self.len() - 1)?;
        Some((first, last))
    }

    /// Nearest-rank `(P50, P95)` in milliseconds, `(0.0, 0.0)` when empty; sorts first.
    pub fn p50_p95(&mut self) -> (f64, f64) {
        self.sort();
        let n = self.len();
        let at = |k| {
            self.nth(nearest_rank_index(n, k))
                .map_or(0.0, |nanos| nanos as f64 / 1e6)
        };
        (at(50), at(95))
    }
}

/// Nearest-rank `(P50, P95)` in milliseconds over the union of several groups' times, without
/// copying them; sorts each group. `(0.0, 0.0)` when there is no time at all.
pub fn p50_p95_of_union(groups: &mut [&mut Latencies]) -> (f64, f64) {
    for group in groups.iter_mut() {
        group.sort();
    }
    let groups: Vec<&Latencies> = groups.iter().map(|g| &**g).collect();
    let n: usize = groups.iter().map(|g| g.len()).sum();
    let at = |k| {
        percentile_of_union(&groups, nearest_rank_index(n, k)).map_or(0.0, |ns| ns as f64 / 1e6)
    };
    (at(50), at(95))
}

/// The `rank`-th smallest time (0-based) over sorted groups: the least time `t` such that more
/// than `rank` times are at most `t`, found by bisection on the value. `None` when there are
/// not that many times.
pub fn percentile_of_union(groups: &[&Latencies], rank: usize) -> Option<u64> {
    let total: usize = groups.iter().map(|g| g.len()).sum();
    if rank >= total {
        return None;
    }
    let (mut low, mut high) = groups
        .iter()
        .filter_map(|g| g.range())
        .fold((u64::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)));
    // Invariant: more than `rank` times are at most `high`; the answer is in [low, high].
    while low < high {
        let mid = low + (high - low) / 2;
        let at_most: usize = groups.iter().map(|g| g.count_at_most(mid)).sum();
        if at_most > rank {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    Some(low)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The figures as the summaries computed them before: every review's milliseconds as f64,
    /// sorted.
    fn as_f64(nanos: &[u64]) -> (f64, f64) {
        let mut millis: Vec<f64> = nanos
            .iter()
            .map(|&n| Duration::from_nanos(n).as_nanos() as f64 / 1e6)
            .collect();
        jevjudge_stats::p50_p95(&mut millis)
    }

    fn latencies(nanos: &[u64]) -> Latencies {
        let mut l = Latencies::default();
        for &n in nanos {
            l.push(Duration::from_nanos(n));
        }
        l
    }

    /// Times from 0 to a minute, many around the 4.29 s boundary between four and eight bytes.
    fn nanos() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..5_000_000,
            Just(u64::from(u32::MAX)),
            Just(u64::from(u32::MAX) - 1),
            u64::from(u32::MAX) - 10..u64::from(u32::MAX) + 10,
            0u64..60_000_000_000,
        ]
    }

    #[test]
    fn rule_56_empty_is_zero() {
        assert_eq!(Latencies::default().p50_p95(), (0.0, 0.0));
        assert_eq!(p50_p95_of_union(&mut []), (0.0, 0.0));
    }

    #[test]
    fn rule_56_first_example_in_milliseconds() {
        let mut l = latencies(&[5_000_000, 1_000_000, 3_000_000, 2_000_000, 4_000_000]);
        assert_eq!(l.p50_p95(), (3.0, 5.0));
    }

    #[test]
    fn times_of_4_29_seconds_and_more_sort_after_the_short_ones() {
        let max = u64::from(u32::MAX);
        let mut l = latencies(&[max + 5, max, max - 1, 7]);
        assert_eq!(l.short.len(), 2);
        assert_eq!(l.long.len(), 2);
        assert_eq!(l.p50_p95(), as_f64(&[max + 5, max, max - 1, 7]));
    }

    proptest! {
        #[test]
        fn compact_times_give_the_same_p50_p95_as_f64_milliseconds(
            times in prop::collection::vec(nanos(), 0..300)
        ) {
            prop_assert_eq!(latencies(&times).p50_p95(), as_f64(&times));
        }

        #[test]
        fn the_union_of_groups_gives_the_figures_of_all_times_together(
            groups in prop::collection::vec(prop::collection::vec(nanos(), 0..60), 0..8)
        ) {
            let all: Vec<u64> = groups.iter().flatten().copied().collect();
            let mut kept: Vec<Latencies> = groups.iter().map(|g| latencies(g)).collect();
            let mut refs: Vec<&mut Latencies> = kept.iter_mut().collect();
            prop_assert_eq!(p50_p95_of_union(&mut refs), as_f64(&all));
        }
    }
}
