//! The version name of a calibrated definition.

/// The version of a calibrated definition: `<old>+cal.<n>`.
///
/// `n` is 1, or one more than the `+cal.<k>` suffix `old` already carries (so calibrating
/// `v1+cal.1` gives `v1+cal.2`, not `v1+cal.1+cal.1`); when the output file already holds a
/// definition of the same base with `+cal.<m>`, `m ≥ n`, the result is `+cal.<m + 1>`, so a new
/// calibration never reuses a version that named other thresholds.
///
/// ```
/// use jevjudge_eval::calibration::calibrated_version;
/// assert_eq!(calibrated_version("sms-spam-0.1.0", None), "sms-spam-0.1.0+cal.1");
/// assert_eq!(calibrated_version("v1+cal.1", None), "v1+cal.2");
/// assert_eq!(calibrated_version("v1", Some("v1+cal.3")), "v1+cal.4");
/// assert_eq!(calibrated_version("v1", Some("other+cal.9")), "v1+cal.1");
/// ```
pub fn calibrated_version(old: &str, existing: Option<&str>) -> String {
    let split = |version: &str| -> Option<(String, u64)> {
        let (base, suffix) = version.rsplit_once("+cal.")?;
        let k: u64 = suffix.parse().ok()?;
        Some((base.to_owned(), k))
    };
    let (base, mut n) = match split(old) {
        Some((base, k)) => (base, k.saturating_add(1)),
        None => (old.to_owned(), 1),
    };
    if let Some((existing_base, m)) = existing.and_then(split) {
        if existing_base == base && m >= n {
            n = m.saturating_add(1);
        }
    }
    format!("{base}+cal.{n}")
}
