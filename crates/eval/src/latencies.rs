//! Review times kept compactly for the nearest-rank P50/P95 of a summary (judge-contract
//! rule 56): each review's time is kept as whole nanoseconds, four bytes for anything under
//! 4.29 s and eight for the rare longer one. Order statistics do not depend on the order the
//! times came in, and nanoseconds → milliseconds (`ns as f64 / 1e6`, as
//! [`jevjudge_judge::Verdict::elapsed_millis`] computes it) never reverses two times, so the
//! figures are exactly those of sorting every review's milliseconds as f64.
//!
//! Memory stays bounded however many reviews a run has: once [`SPILL_AT`] four-byte times
//! are held, they are written to an unlinked temporary file (in `TMPDIR`), and the order
//! statistics are then taken exactly by reading the times again a few times
//! ([`select_by_passes`]): each pass counts the times in 65,536 equal buckets of the range
//! still possible and keeps only the bucket holding the rank, so a range of 2³² nanoseconds
//! is settled in two passes. Without a temporary file (it cannot be made or written) the
//! times stay in memory, with the same figures.
//!
//! A summary over several groups (the overall summary over its scenarios) needs no copy of
//! the times: [`percentile_of_union`] takes the k-th smallest over the groups' times.

use std::{
    fs::File,
    io::{BufReader, Read, Seek, SeekFrom, Write},
    time::Duration,
};

use jevjudge_stats::nearest_rank_index;

/// How many four-byte times are held in memory before they go to the temporary file
/// (256 KiB).
pub const SPILL_AT: usize = 1 << 16;

/// Buckets per selection pass (2¹⁶).
const BUCKET_BITS: u32 = 16;

/// Review times in nanoseconds: those below `u32::MAX` in `short` (and, past [`SPILL_AT`],
/// in the temporary file), the others in `long`.
#[derive(Debug)]
pub struct Latencies {
    short: Vec<u32>,
    long: Vec<u64>,
    spill: Option<Spill>,
    /// No temporary file could be made or written: every time stays in memory.
    spill_off: bool,
    spill_at: usize,
    min: u64,
    max: u64,
    sorted: bool,
}

/// Four-byte times written out, little-endian: the first `count` of the file are whole.
#[derive(Debug)]
struct Spill {
    file: File,
    count: usize,
}

impl Default for Latencies {
    fn default() -> Latencies {
        Latencies::with_spill_at(SPILL_AT)
    }
}

impl Latencies {
    /// Times held in memory up to `spill_at` before they go to a temporary file.
    pub fn with_spill_at(spill_at: usize) -> Latencies {
        Latencies {
            short: Vec::new(),
            long: Vec::new(),
            spill: None,
            spill_off: false,
            spill_at: spill_at.max(1),
            min: u64::MAX,
            max: 0,
            sorted: true,
        }
    }

    /// Keeps one review's time.
    pub fn push(&mut self, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.min = self.min.min(nanos);
        self.max = self.max.max(nanos);
        match u32::try_from(nanos) {
            Ok(short) if short != u32::MAX => {
                self.short.push(short);
                if self.short.len() >= self.spill_at && !self.spill_off {
                    self.spill_short();
                }
            }
            _ => self.long.push(nanos),
        }
        self.sorted = false;
    }

    /// Writes the four-byte times held in memory to the temporary file (made on first use).
    /// On failure they stay in memory, as every later one does.
    fn spill_short(&mut self) {
        if self.spill.is_none() {
            match tempfile::tempfile() {
                Ok(file) => self.spill = Some(Spill { file, count: 0 }),
                Err(e) => {
                    tracing::warn!("review times stay in memory: no temporary file: {e}");
                    self.spill_off = true;
                    return;
                }
            }
        }
        let Some(spill) = self.spill.as_mut() else {
            return;
        };
        let bytes: Vec<u8> = self.short.iter().flat_map(|t| t.to_le_bytes()).collect();
        let at = (spill.count as u64).saturating_mul(4);
        let written = spill
            .file
            .seek(SeekFrom::Start(at))
            .and_then(|_| spill.file.write_all(&bytes));
        match written {
            Ok(()) => {
                spill.count += self.short.len();
                self.short.clear();
            }
            Err(e) => {
                tracing::warn!("review times stay in memory: cannot write the temporary file: {e}");
                self.spill_off = true;
            }
        }
    }

    /// How many times are kept.
    pub fn len(&self) -> usize {
        self.short.len() + self.long.len() + self.spill.as_ref().map_or(0, |s| s.count)
    }

    /// Whether no time is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether some times are in the temporary file.
    fn spilled(&self) -> bool {
        self.spill.as_ref().is_some_and(|s| s.count > 0)
    }

    /// Sorts the times held in memory in place (ascending); the in-memory queries need it.
    fn sort(&mut self) {
        if !self.sorted {
            self.short.sort_unstable();
            self.long.sort_unstable();
            self.sorted = true;
        }
    }

    /// Calls `visit` with every time, in no particular order, reading the temporary file.
    fn for_each(&self, mut visit: impl FnMut(u64)) -> std::io::Result<()> {
        if let Some(spill) = &self.spill {
            let mut file = &spill.file;
            file.seek(SeekFrom::Start(0))?;
            let mut reader = BufReader::with_capacity(1 << 16, file)
                .take((spill.count as u64).saturating_mul(4));
            let mut chunk = vec![0_u8; 1 << 16];
            let mut read = 0_usize;
            loop {
                let n = reader.read(&mut chunk)?;
                if n == 0 {
                    break;
                }
                // Whole records only: a read may end mid-record (kept for the next read).
                let whole = n - n % 4;
                for record in chunk[..whole].chunks_exact(4) {
                    visit(u64::from(u32::from_le_bytes([
                        record[0], record[1], record[2], record[3],
                    ])));
                }
                read += whole / 4;
                if whole < n {
                    let mut rest = [0_u8; 4];
                    rest[..n - whole].copy_from_slice(&chunk[whole..n]);
                    reader.read_exact(&mut rest[n - whole..])?;
                    visit(u64::from(u32::from_le_bytes(rest)));
                    read += 1;
                }
            }
            if read != spill.count {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("{read} of {} review times read back", spill.count),
                ));
            }
        }
        self.short.iter().for_each(|&t| visit(u64::from(t)));
        self.long.iter().for_each(|&t| visit(t));
        Ok(())
    }

    /// The `rank`-th smallest time (0-based) in nanoseconds; in memory only, sorted.
    fn nth(&self, rank: usize) -> Option<u64> {
        match self.short.get(rank) {
            Some(&short) => Some(u64::from(short)),
            None => self.long.get(rank - self.short.len()).copied(),
        }
    }

    /// How many times are at most `nanos`; in memory only, sorted.
    fn count_at_most(&self, nanos: u64) -> usize {
        let short = match u32::try_from(nanos) {
            Ok(n) => self.short.partition_point(|&t| t <= n),
            Err(_) => self.short.len(),
        };
        short + self.long.partition_point(|&t| t <= nanos)
    }

    /// The smallest and largest time.
    fn range(&self) -> Option<(u64, u64)> {
        (!self.is_empty()).then_some((self.min, self.max))
    }

    /// Nearest-rank `(P50, P95)` in milliseconds, `(0.0, 0.0)` when empty.
    pub fn p50_p95(&mut self) -> (f64, f64) {
        p50_p95_of_union(&mut [self])
    }
}

/// Nearest-rank `(P50, P95)` in milliseconds over the union of several groups' times, without
/// copying them. `(0.0, 0.0)` when there is no time at all; NaN (and an error logged) when
/// times written to a temporary file cannot be read back.
pub fn p50_p95_of_union(groups: &mut [&mut Latencies]) -> (f64, f64) {
    for group in groups.iter_mut() {
        group.sort();
    }
    let groups: Vec<&Latencies> = groups.iter().map(|g| &**g).collect();
    let n: usize = groups.iter().map(|g| g.len()).sum();
    let at = |k| match percentile_of_union(&groups, nearest_rank_index(n, k)) {
        Ok(nanos) => nanos.map_or(0.0, |ns| ns as f64 / 1e6),
        Err(e) => {
            tracing::error!("review times cannot be read back from their temporary file: {e}");
            f64::NAN
        }
    };
    (at(50), at(95))
}

/// The `rank`-th smallest time (0-based) over groups whose in-memory times are sorted.
/// `None` when there are not that many times.
pub fn percentile_of_union(groups: &[&Latencies], rank: usize) -> std::io::Result<Option<u64>> {
    if groups.iter().any(|g| g.spilled()) {
        return select_by_passes(groups, rank);
    }
    Ok(bisect_in_memory(groups, rank))
}

/// The least time `t` such that more than `rank` times are at most `t`, found by bisection on
/// the value over the groups' sorted times in memory.
fn bisect_in_memory(groups: &[&Latencies], rank: usize) -> Option<u64> {
    let total: usize = groups.iter().map(|g| g.len()).sum();
    if rank >= total {
        return None;
    }
    if let [group] = groups {
        return group.nth(rank);
    }
    let (mut low, mut high) = value_range(groups);
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

fn value_range(groups: &[&Latencies]) -> (u64, u64) {
    groups
        .iter()
        .filter_map(|g| g.range())
        .fold((u64::MAX, 0), |(lo, hi), (a, b)| (lo.min(a), hi.max(b)))
}

/// The `rank`-th smallest time (0-based) over the groups, reading their times once per pass:
/// each pass counts the times below the range still possible and those in each of 2¹⁶ equal
/// buckets of it, and narrows the range to the bucket holding the rank, until one value is
/// left (at most four passes; two over a range of 2³² ns).
fn select_by_passes(groups: &[&Latencies], rank: usize) -> std::io::Result<Option<u64>> {
    let total: usize = groups.iter().map(|g| g.len()).sum();
    if rank >= total {
        return Ok(None);
    }
    let (mut low, mut high) = value_range(groups);
    let mut counts = vec![0_usize; 1 << BUCKET_BITS];
    // Invariant: at most `rank` times are below `low`, more than `rank` at most `high`.
    while low < high {
        let span = high - low;
        let shift = (u64::BITS - span.leading_zeros()).saturating_sub(BUCKET_BITS);
        counts.fill(0);
        let mut below = 0_usize;
        for group in groups {
            group.for_each(|t| {
                if t < low {
                    below += 1;
                } else if t <= high {
                    counts[((t - low) >> shift) as usize] += 1;
                }
            })?;
        }
        let mut seen = below;
        let Some(bucket) = counts.iter().position(|&count| {
            seen += count;
            seen > rank
        }) else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the review times read back differ from those written",
            ));
        };
        low += (bucket as u64) << shift;
        high = high.min(low.saturating_add((1_u64 << shift) - 1));
    }
    Ok(Some(low))
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
        spilled_at(nanos, SPILL_AT)
    }

    fn spilled_at(nanos: &[u64], spill_at: usize) -> Latencies {
        let mut l = Latencies::with_spill_at(spill_at);
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

    #[test]
    fn past_the_spill_threshold_times_leave_memory_and_give_the_same_figures() {
        let times: Vec<u64> = (0..10_000_u64)
            .map(|i| (i * 7_919) % 10_007 * 1_000)
            .collect();
        let mut l = spilled_at(&times, 1_000);
        assert!(l.short.len() < 1_000);
        assert_eq!(l.len(), times.len());
        assert!(l.spilled());
        assert_eq!(l.p50_p95(), as_f64(&times));
    }

    #[test]
    fn equal_times_in_the_temporary_file_settle_in_one_pass() {
        let mut l = spilled_at(&[42; 100], 10);
        assert_eq!(l.p50_p95(), as_f64(&[42; 100]));
    }

    proptest! {
        #[test]
        fn spilled_times_give_the_same_p50_p95_as_f64_milliseconds(
            times in prop::collection::vec(nanos(), 0..300),
            spill_at in 1_usize..40,
        ) {
            prop_assert_eq!(spilled_at(&times, spill_at).p50_p95(), as_f64(&times));
        }

        #[test]
        fn spilled_groups_give_the_figures_of_all_times_together(
            groups in prop::collection::vec(
                (prop::collection::vec(nanos(), 0..60), 1_usize..20), 0..8),
        ) {
            let all: Vec<u64> = groups.iter().flat_map(|(g, _)| g).copied().collect();
            let mut kept: Vec<Latencies> =
                groups.iter().map(|(g, at)| spilled_at(g, *at)).collect();
            let mut refs: Vec<&mut Latencies> = kept.iter_mut().collect();
            prop_assert_eq!(p50_p95_of_union(&mut refs), as_f64(&all));
        }


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
