//! A record's `ts`: checking RFC 3339 and writing the current time.

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with fields in range.
pub(super) fn is_rfc3339(ts: &str) -> bool {
    let b = ts.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(range)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let fields = (|| {
        let (month, day) = (digits(5..7)?, digits(8..10)?);
        let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
        digits(0..4)?;
        let separators = b.get(4) == Some(&b'-')
            && b.get(7) == Some(&b'-')
            && matches!(b.get(10), Some(b'T' | b't'))
            && b.get(13) == Some(&b':')
            && b.get(16) == Some(&b':');
        Some(
            separators
                && (1..=12).contains(&month)
                && (1..=31).contains(&day)
                && hour < 24
                && minute < 60
                && second <= 60,
        )
    })();
    if fields != Some(true) {
        return false;
    }
    let mut rest = &ts[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest.as_bytes() {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit())
                && (h1 - b'0') * 10 + (h2 - b'0') < 24
                && (m1 - b'0') * 10 + (m2 - b'0') < 60
        }
        _ => false,
    }
}

/// The current time as RFC 3339 UTC with whole seconds (`"2026-09-19T19:40:00Z"`), the form
/// of a record's `ts`. A clock before 1970 reads as `1970-01-01T00:00:00Z`.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339_from_unix(secs)
}

/// Formats seconds since the Unix epoch as RFC 3339 UTC.
fn rfc3339_from_unix(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, for non-negative counts).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days since 0000-03-01
    let era = z / 146_097;
    let doe = z % 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March first
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_known_days() {
        assert_eq!(rfc3339_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_from_unix(951_868_799), "2000-02-29T23:59:59Z");
        assert_eq!(rfc3339_from_unix(951_868_800), "2000-03-01T00:00:00Z");
        assert_eq!(rfc3339_from_unix(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(rfc3339_from_unix(1_790_797_200), "2026-09-30T19:40:00Z");
        assert_eq!(rfc3339_from_unix(1_703_980_800), "2023-12-31T00:00:00Z");
        assert_eq!(rfc3339_from_unix(253_402_300_799), "9999-12-31T23:59:59Z");
        // No overflow or panic at the far end.
        let far = rfc3339_from_unix(u64::MAX);
        assert!(far.ends_with('Z'));
    }

    #[test]
    fn now_has_the_record_ts_shape() {
        let now = now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        assert_eq!(&now[4..5], "-");
        assert_eq!(&now[10..11], "T");
        assert!(now.ends_with('Z'));
    }
}
