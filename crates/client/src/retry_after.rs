//! Server-requested waits: `retry-after-ms` and `Retry-After` (systemone-wire.md §9).
//!
//! `retry-after-ms` comes first (a finite, non-negative number of milliseconds); then
//! `Retry-After`, either non-negative seconds (decimals allowed) or an HTTP date, whose wait is
//! the date minus now and 0 once it has passed. An unparsable value is ignored. Whether a wait
//! is *used* (only from retryable responses, at most 60 s) is the retry decision's business,
//! not the parser's.

use std::time::{Duration, SystemTime};

/// Header names, lower-case as transports report them.
pub(crate) const RETRY_AFTER_MS: &str = "retry-after-ms";
/// See [`RETRY_AFTER_MS`].
pub(crate) const RETRY_AFTER: &str = "retry-after";

/// Parses a `retry-after-ms` value: a finite, non-negative number of milliseconds.
pub fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    let value = value.trim();
    if !is_plain_decimal(value) {
        return None;
    }
    let millis: f64 = value.parse().ok()?;
    Duration::try_from_secs_f64(millis / 1000.0).ok()
}

/// Parses a `Retry-After` value: non-negative seconds (decimals allowed), or an HTTP date
/// whose wait is the date minus `now` (0 when it has passed).
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use jevjudge_client::parse_retry_after;
///
/// let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
/// assert_eq!(parse_retry_after("1.5", now), Some(Duration::from_millis(1500)));
/// assert_eq!(parse_retry_after("Sun, 09 Sep 2001 01:46:43 GMT", now), Some(Duration::from_secs(3)));
/// assert_eq!(parse_retry_after("soon", now), None);
/// ```
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if is_plain_decimal(value) {
        let seconds: f64 = value.parse().ok()?;
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The server's requested wait from a response's headers: `retry-after-ms` if it parses, else
/// `Retry-After`. `header` looks a lower-case header name up.
pub(crate) fn server_wait<'a>(
    header: impl Fn(&str) -> Option<&'a str>,
    now: SystemTime,
) -> Option<Duration> {
    header(RETRY_AFTER_MS)
        .and_then(parse_retry_after_ms)
        .or_else(|| header(RETRY_AFTER).and_then(|value| parse_retry_after(value, now)))
}

/// Digits with at most one `.` and at least one digit: no sign, exponent, `inf` or `nan`, so
/// only what the headers allow parses as a number.
fn is_plain_decimal(value: &str) -> bool {
    let mut dots = 0;
    let mut digits = 0;
    for byte in value.bytes() {
        match byte {
            b'0'..=b'9' => digits += 1,
            b'.' => dots += 1,
            _ => return false,
        }
    }
    digits > 0 && dots <= 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn milliseconds_are_finite_and_non_negative() {
        assert_eq!(
            parse_retry_after_ms("250"),
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_retry_after_ms(" 0 "), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after_ms("12.5"),
            Some(Duration::from_micros(12_500))
        );
        for bad in [
            "", "-1", "+5", "1e3", "inf", "NaN", "1.2.3", ".", "ten", "0x10",
        ] {
            assert_eq!(parse_retry_after_ms(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn seconds_with_decimals() {
        let now = at(0);
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("0.25", now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(parse_retry_after("1.", now), Some(Duration::from_secs(1)));
        assert_eq!(
            parse_retry_after(".5", now),
            Some(Duration::from_millis(500))
        );
        for bad in ["-1", "1e2", "inf", "+1", "1 2", ""] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad:?}");
        }
    }

    #[test]
    fn http_dates_are_relative_to_now_and_zero_when_past() {
        let now = at(1_000_000_000); // Sun, 09 Sep 2001 01:46:40 GMT
        let formats = [
            "Sun, 09 Sep 2001 01:46:50 GMT",
            "Sunday, 09-Sep-01 01:46:50 GMT",
            "Sun Sep  9 01:46:50 2001",
        ];
        for date in formats {
            assert_eq!(
                parse_retry_after(date, now),
                Some(Duration::from_secs(10)),
                "{date}"
            );
        }
        assert_eq!(
            parse_retry_after("Sun, 09 Sep 2001 01:46:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("Sun, 09 Sep 2001 25:00:00 GMT", now),
            None
        );
    }

    #[test]
    fn the_ms_header_comes_first_and_an_unparsable_one_is_skipped() {
        let now = at(0);
        let both = |name: &str| match name {
            RETRY_AFTER_MS => Some("250"),
            RETRY_AFTER => Some("3"),
            _ => None,
        };
        assert_eq!(server_wait(both, now), Some(Duration::from_millis(250)));
        let bad_ms = |name: &str| match name {
            RETRY_AFTER_MS => Some("later"),
            RETRY_AFTER => Some("3"),
            _ => None,
        };
        assert_eq!(server_wait(bad_ms, now), Some(Duration::from_secs(3)));
        assert_eq!(server_wait(|_| None, now), None);
        assert_eq!(server_wait(|_| Some("garbage"), now), None);
    }

    proptest! {
        #[test]
        fn parsers_never_panic(value in any::<String>(), now in any::<u32>()) {
            let _ = parse_retry_after(&value, at(u64::from(now)));
            let _ = parse_retry_after_ms(&value);
        }

        #[test]
        fn huge_numbers_are_ignored_not_panics(digits in "[0-9]{1,400}(\\.[0-9]{0,40})?") {
            let _ = parse_retry_after(&digits, at(0));
            let _ = parse_retry_after_ms(&digits);
        }

        #[test]
        fn whole_seconds_round_trip(seconds in 0u32..1_000_000) {
            prop_assert_eq!(
                parse_retry_after(&seconds.to_string(), at(0)),
                Some(Duration::from_secs(u64::from(seconds)))
            );
            prop_assert_eq!(
                parse_retry_after_ms(&seconds.to_string()),
                Some(Duration::from_millis(u64::from(seconds)))
            );
        }

        #[test]
        fn dates_round_trip(ahead in 0u64..100_000, base in 0u64..4_000_000_000) {
            let date = httpdate::fmt_http_date(at(base + ahead));
            prop_assert_eq!(parse_retry_after(&date, at(base)), Some(Duration::from_secs(ahead)));
        }
    }
}
