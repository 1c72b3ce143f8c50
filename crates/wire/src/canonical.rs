//! Canonical JSON as jevkit writes it, and the request digests built on it
//! (systemone-wire.md §15).
//!
//! # Why not RFC 8785?
//!
//! jevkit's documentation claims RFC 8785 (JCS), but its code (package jevkit-core,
//! `jevkit_core/canonical.py`) is Python's
//! `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)`.
//! The two disagree on floats and on key order, so a JCS implementation computes different ids
//! for most real requests. `.jevl` ids must match the ones jevkit writes, so this module
//! reproduces Python's form exactly:
//!
//! - **Numbers.** An integer token stays an integer (`1` and `1.0` hash differently). A float is
//!   written as Python's `repr`: the shortest digits that round-trip (of those, the closest to the
//!   value, an exact tie going to the even digit), positionally with at least
//!   one fractional digit when the decimal exponent is in −4..=15 (`0.0001`, `100.0`,
//!   `1000000000000000.0`), otherwise in scientific form with a sign and at least two exponent
//!   digits (`1e-05`, `1e+16`, `1.5e+300`). `-0.0` stays `-0.0`.
//! - **Keys** are sorted by Unicode code point (for `str` that is byte order), not by UTF-16 code
//!   unit as in JCS: `"｡"` (U+FF61) sorts before `"😀"` (U+1F600).
//! - **Strings** are raw UTF-8. The escapes are `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, and
//!   `\u00xx` (lowercase hex) for the other control characters below U+0020. U+007F, U+2028 and
//!   U+2029 are written raw.
//! - **No whitespace**: separators are `,` and `:`.
//!
//! The tests check this against vectors made by jevkit-core 0.2.0 itself
//! (`scripts/gen-canonical-vectors.py`), including thousands of floats.
//!
//! # Limitations
//!
//! The input is a [`serde_json::Value`], so it can only be as faithful as serde_json's parser
//! (this workspace builds serde_json without `arbitrary_precision`):
//!
//! - Integers outside the 64-bit range (above `u64::MAX` or below `i64::MIN`) are parsed by
//!   serde_json as floats, so `18446744073709551616` is written `1.8446744073709552e+19`, while
//!   Python keeps the exact integer. Such a request gets a different digest than jevkit's.
//! - The token `-0` is parsed by serde_json as the float `-0.0` and written `-0.0`; Python
//!   parses it as the integer `0` and writes `0`.
//! - A number that is none of `u64`, `i64` or a finite `f64` (possible only if some other crate
//!   turns on serde_json's `arbitrary_precision`) is refused with
//!   [`CanonicalError::UnrepresentableNumber`] rather than hashed wrongly.
//!
//! Values nested deeper than [`MAX_DEPTH`] containers are refused, so no input can overflow the
//! stack. serde_json's parser already stops at 128 levels, so only values built in code can get
//! that deep (Python's own encoder gives up near 1000 with a `RecursionError`).
//!
//! # Example
//!
//! ```
//! use jevjudge_wire::canonical::to_canonical_string;
//!
//! let value = serde_json::json!({"b": [1e-7, 1.0, 1e21, 1], "a": "é\n"});
//! assert_eq!(
//!     to_canonical_string(&value).unwrap(),
//!     r#"{"a":"é\n","b":[1e-07,1.0,1e+21,1]}"#,
//! );
//! ```

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};
use sha2::{Digest as _, Sha256};

/// The deepest nesting of arrays and objects that is canonicalised; deeper values are refused
/// with [`CanonicalError::TooDeep`].
pub const MAX_DEPTH: usize = 512;

/// Why a value has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CanonicalError {
    /// A NaN or infinite float; Python's `allow_nan=False` refuses them too.
    #[error("non-finite number has no canonical form")]
    NonFiniteNumber,
    /// A number that is not a `u64`, an `i64` or a finite `f64`, so its Python form is unknown.
    #[error("number cannot be written as python would")]
    UnrepresentableNumber,
    /// Arrays and objects nested deeper than [`MAX_DEPTH`].
    #[error("value is nested deeper than {limit} levels")]
    TooDeep {
        /// The limit that was exceeded ([`MAX_DEPTH`]).
        limit: usize,
    },
}

/// Appends the canonical form of `value` to `out`.
///
/// On error `out` is left as it was before the call.
pub fn write_canonical(value: &Value, out: &mut String) -> Result<(), CanonicalError> {
    let start = out.len();
    let result = write_value(value, out, 0);
    if result.is_err() {
        out.truncate(start);
    }
    result
}

/// Appends the canonical form of the string `s` (quoted and escaped) to `out`, for callers
/// that write a compound value piece by piece instead of building it as a [`Value`].
pub fn write_canonical_str(s: &str, out: &mut String) {
    write_str(s, out);
}

/// Appends the canonical form of the float `x` (Python's `repr`) to `out`, as
/// [`write_canonical`] writes a float [`Value`]; a non-finite `x` is refused and `out` is left
/// as it was.
pub fn write_canonical_f64(x: f64, out: &mut String) -> Result<(), CanonicalError> {
    let mut buf = StackBuf::new();
    write_python_float(x, &mut buf)?;
    out.push_str(buf.as_str());
    Ok(())
}

/// The canonical form of `value` as a new string.
pub fn to_canonical_string(value: &Value) -> Result<String, CanonicalError> {
    let mut out = String::new();
    write_value(value, &mut out, 0)?;
    Ok(out)
}

/// `"sha256:"` followed by the lowercase hex SHA-256 of the canonical form of `value`
/// (jevkit's `digest`).
pub fn digest(value: &Value) -> Result<String, CanonicalError> {
    let mut sink = HashSink::new();
    write_value(value, &mut sink, 0)?;
    Ok(hex_digest(&sink.finish()))
}

/// The digest of `{"model": model, "state": state, "questions": questions}`, or of
/// `{"state": state, "questions": questions}` when `model` is `None`.
///
/// With a model this is a record's `id` (jevkit's `record_id`); without one it is the
/// model-free request id (jevkit's `request_id`). The wrapper object is never built: its three
/// keys are written in sorted order straight into the hasher, so `state` and `questions` are
/// not cloned.
pub fn request_digest(
    model: Option<&str>,
    state: &Value,
    questions: &Value,
) -> Result<String, CanonicalError> {
    request_digest_bytes(model, state, questions).map(|bytes| hex_digest(&bytes))
}

/// [`request_digest`] as raw SHA-256 bytes, for a `Value` or a `Map` of questions.
pub(crate) fn request_digest_bytes<Q: Canonical + ?Sized>(
    model: Option<&str>,
    state: &Value,
    questions: &Q,
) -> Result<[u8; 32], CanonicalError> {
    let mut sink = HashSink::new();
    sink.put("{");
    if let Some(model) = model {
        sink.put("\"model\":");
        write_str(model, &mut sink);
        sink.put(",");
    }
    // "model" < "questions" < "state"
    sink.put("\"questions\":");
    questions.write_to(&mut sink, 1)?;
    sink.put(",\"state\":");
    write_value(state, &mut sink, 1)?;
    sink.put("}");
    Ok(sink.finish())
}

/// Something with a canonical form: a JSON value, or an object's map on its own.
pub(crate) trait Canonical {
    /// Writes the canonical form; `depth` counts the containers around `self`.
    fn write_to<S: Sink>(&self, sink: &mut S, depth: usize) -> Result<(), CanonicalError>;
}

impl Canonical for Value {
    fn write_to<S: Sink>(&self, sink: &mut S, depth: usize) -> Result<(), CanonicalError> {
        write_value(self, sink, depth)
    }
}

impl Canonical for Map<String, Value> {
    fn write_to<S: Sink>(&self, sink: &mut S, depth: usize) -> Result<(), CanonicalError> {
        write_object(self, sink, depth)
    }
}

/// Where canonical text goes: a `String`, or straight into a hasher.
pub(crate) trait Sink {
    /// Appends `s`.
    fn put(&mut self, s: &str);
}

impl Sink for String {
    fn put(&mut self, s: &str) {
        self.push_str(s);
    }
}

/// Feeds SHA-256 through a small buffer, so the many short pieces of canonical text do not
/// each cost a hasher call.
struct HashSink {
    hasher: Sha256,
    buf: Vec<u8>,
}

const HASH_BUF: usize = 4096;

impl HashSink {
    fn new() -> Self {
        HashSink {
            hasher: Sha256::new(),
            buf: Vec::with_capacity(HASH_BUF),
        }
    }

    fn finish(mut self) -> [u8; 32] {
        self.hasher.update(&self.buf);
        self.hasher.finalize().into()
    }
}

impl Sink for HashSink {
    fn put(&mut self, s: &str) {
        if self.buf.len() + s.len() > HASH_BUF {
            self.hasher.update(&self.buf);
            self.buf.clear();
            if s.len() > HASH_BUF {
                self.hasher.update(s.as_bytes());
                return;
            }
        }
        self.buf.extend_from_slice(s.as_bytes());
    }
}

/// `"sha256:"` and the lowercase hex of a SHA-256.
pub(crate) fn hex_digest(bytes: &[u8; 32]) -> String {
    format!("sha256:{}", hex::encode(bytes))
}

fn write_value<S: Sink>(value: &Value, sink: &mut S, depth: usize) -> Result<(), CanonicalError> {
    match value {
        Value::Null => sink.put("null"),
        Value::Bool(true) => sink.put("true"),
        Value::Bool(false) => sink.put("false"),
        Value::Number(n) => write_number(n, sink)?,
        Value::String(s) => write_str(s, sink),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(CanonicalError::TooDeep { limit: MAX_DEPTH });
            }
            sink.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    sink.put(",");
                }
                write_value(item, sink, depth + 1)?;
            }
            sink.put("]");
        }
        Value::Object(map) => write_object(map, sink, depth)?,
    }
    Ok(())
}

fn write_object<S: Sink>(
    map: &Map<String, Value>,
    sink: &mut S,
    depth: usize,
) -> Result<(), CanonicalError> {
    if depth >= MAX_DEPTH {
        return Err(CanonicalError::TooDeep { limit: MAX_DEPTH });
    }
    sink.put("{");
    // `str` order is byte order, which for UTF-8 is code point order, as in Python.
    if map.keys().is_sorted() {
        write_entries(map.iter(), sink, depth)?;
    } else {
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        write_entries(entries.into_iter(), sink, depth)?;
    }
    sink.put("}");
    Ok(())
}

fn write_entries<'a, S: Sink>(
    entries: impl Iterator<Item = (&'a String, &'a Value)>,
    sink: &mut S,
    depth: usize,
) -> Result<(), CanonicalError> {
    for (i, (key, value)) in entries.enumerate() {
        if i > 0 {
            sink.put(",");
        }
        write_str(key, sink);
        sink.put(":");
        write_value(value, sink, depth + 1)?;
    }
    Ok(())
}

/// Whether `text` has a character JSON escapes (a quote, a backslash or a control character),
/// found in one pass without an early exit, which the compiler can vectorise: most strings
/// have none and can be written whole.
pub fn needs_escape(text: &str) -> bool {
    text.bytes().fold(false, |escaped, b| {
        escaped | (b < 0x20) | (b == b'"') | (b == b'\\')
    })
}

fn write_str<S: Sink>(s: &str, sink: &mut S) {
    sink.put("\"");
    let bytes = s.as_bytes();
    if !needs_escape(s) {
        sink.put(s);
        sink.put("\"");
        return;
    }
    let mut run_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        // Only ASCII bytes end a run, so every slice boundary is a char boundary.
        sink.put(&s[run_start..i]);
        if escape.is_empty() {
            let mut buf = *b"\\u0000";
            // Two lowercase hex digits always fit the last two bytes, and keep the buffer ASCII.
            let _ = hex::encode_to_slice([b], &mut buf[4..]);
            sink.put(std::str::from_utf8(&buf).unwrap_or_default());
        } else {
            sink.put(escape);
        }
        run_start = i + 1;
    }
    sink.put(&s[run_start..]);
    sink.put("\"");
}

fn write_number<S: Sink>(n: &Number, sink: &mut S) -> Result<(), CanonicalError> {
    let mut buf = StackBuf::new();
    if n.is_f64() {
        let x = n.as_f64().ok_or(CanonicalError::UnrepresentableNumber)?;
        write_python_float(x, &mut buf)?;
    } else if let Some(u) = n.as_u64() {
        write!(buf, "{u}").map_err(|_| CanonicalError::UnrepresentableNumber)?;
    } else if let Some(i) = n.as_i64() {
        write!(buf, "{i}").map_err(|_| CanonicalError::UnrepresentableNumber)?;
    } else {
        return Err(CanonicalError::UnrepresentableNumber);
    }
    sink.put(buf.as_str());
    Ok(())
}

/// Writes `x` as Python's `repr(float)` does.
///
/// The digits are the shortest that round-trip, as [`shortest_scientific`] picks them; only the
/// layout is Python's. With decimal exponent `e` (`x = d.ddd × 10^e`), Python writes
/// positionally when −4 ≤ e < 16 and in scientific form otherwise.
fn write_python_float(x: f64, out: &mut StackBuf) -> Result<(), CanonicalError> {
    if !x.is_finite() {
        return Err(CanonicalError::NonFiniteNumber);
    }
    let sci = shortest_scientific(x)?;
    let sci = sci.as_str();
    let (negative, unsigned) = match sci.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sci),
    };
    let (mantissa, exponent) = unsigned
        .split_once('e')
        .ok_or(CanonicalError::UnrepresentableNumber)?;
    let exponent: i32 = exponent
        .parse()
        .map_err(|_| CanonicalError::UnrepresentableNumber)?;
    let (lead, rest) = match mantissa.split_once('.') {
        Some((lead, rest)) => (lead, rest),
        None => (mantissa, ""),
    };
    if lead.len() != 1 {
        return Err(CanonicalError::UnrepresentableNumber);
    }
    let fmt_err = |_| CanonicalError::UnrepresentableNumber;
    if negative {
        out.write_str("-").map_err(fmt_err)?;
    }
    if (-4..16).contains(&exponent) {
        if exponent >= 0 {
            // `exponent` digits follow the lead digit before the point.
            let int_extra = exponent.unsigned_abs() as usize;
            out.write_str(lead).map_err(fmt_err)?;
            if rest.len() <= int_extra {
                out.write_str(rest).map_err(fmt_err)?;
                for _ in rest.len()..int_extra {
                    out.write_str("0").map_err(fmt_err)?;
                }
                out.write_str(".0").map_err(fmt_err)?;
            } else {
                out.write_str(&rest[..int_extra]).map_err(fmt_err)?;
                out.write_str(".").map_err(fmt_err)?;
                out.write_str(&rest[int_extra..]).map_err(fmt_err)?;
            }
        } else {
            out.write_str("0.").map_err(fmt_err)?;
            for _ in 1..exponent.unsigned_abs() {
                out.write_str("0").map_err(fmt_err)?;
            }
            out.write_str(lead).map_err(fmt_err)?;
            out.write_str(rest).map_err(fmt_err)?;
        }
    } else {
        out.write_str(lead).map_err(fmt_err)?;
        if !rest.is_empty() {
            out.write_str(".").map_err(fmt_err)?;
            out.write_str(rest).map_err(fmt_err)?;
        }
        let sign = if exponent < 0 { '-' } else { '+' };
        write!(out, "e{sign}{:02}", exponent.unsigned_abs()).map_err(fmt_err)?;
    }
    Ok(())
}

/// The shortest round-trip digits of `x` in Rust's `{:e}` layout (`-1.2345e-7`), chosen as
/// Python chooses them.
///
/// When two digit strings of the shortest length both round-trip, Python takes the one closer
/// to `x`, and on an exact tie the one with an even last digit; Rust's shortest mode rounds such
/// a tie up (`222507385850720.125` gives `…720.13`, Python `…720.12`). A tie needs at least 16
/// significant digits (the two candidates are a unit of the last digit apart and both within half
/// an ulp of `x`, so that unit is at most an ulp, about `x / 2^52`), so only then is the correctly
/// rounded (half-to-even) form of that length computed, and taken when it round-trips.
fn shortest_scientific(x: f64) -> Result<StackBuf, CanonicalError> {
    let fmt_err = |_| CanonicalError::UnrepresentableNumber;
    let mut shortest = StackBuf::new();
    write!(shortest, "{x:e}").map_err(fmt_err)?;
    let digits = shortest
        .as_str()
        .split('e')
        .next()
        .unwrap_or_default()
        .bytes()
        .filter(u8::is_ascii_digit)
        .count();
    if digits >= 16 {
        let mut nearest = StackBuf::new();
        write!(nearest, "{x:.*e}", digits - 1).map_err(fmt_err)?;
        if nearest.as_str() != shortest.as_str()
            && nearest
                .as_str()
                .parse::<f64>()
                .is_ok_and(|y| y.to_bits() == x.to_bits())
        {
            return Ok(nearest);
        }
    }
    Ok(shortest)
}

/// A fixed-size text buffer, so numbers are formatted without allocating.
struct StackBuf {
    buf: [u8; 48],
    len: usize,
}

impl StackBuf {
    fn new() -> Self {
        StackBuf {
            buf: [0; 48],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        // Only whole `&str`s are ever copied in, so the contents are valid UTF-8.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dest = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dest.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn float(x: f64) -> String {
        let mut buf = StackBuf::new();
        write_python_float(x, &mut buf).unwrap();
        buf.as_str().to_owned()
    }

    #[test]
    fn floats_follow_python_repr_layout() {
        // Values from systemone-wire.md §15.
        assert_eq!(float(1e-7), "1e-07");
        assert_eq!(float(1.0), "1.0");
        assert_eq!(float(1e21), "1e+21");
        assert_eq!(float(1e16), "1e+16");
        assert_eq!(float(1e15), "1000000000000000.0");
        assert_eq!(float(1e-5), "1e-05");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(-0.0), "-0.0");
        assert_eq!(float(0.0), "0.0");
        assert_eq!(float(100.0), "100.0");
        assert_eq!(float(1.5e300), "1.5e+300");
        assert_eq!(float(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(float(123.456), "123.456");
        assert_eq!(float(1234567890123456.7), "1234567890123456.8");
        assert_eq!(float(5e-324), "5e-324");
        assert_eq!(float(-2.5e-5), "-2.5e-05");
        assert_eq!(float(f64::MAX), "1.7976931348623157e+308");
        // An exact tie between two shortest candidates goes to the even digit, as in Python.
        // 0x42e94bd136316c04 is exactly 222507385850720.125.
        let tie = f64::from_bits(0x42e9_4bd1_3631_6c04);
        assert_eq!(float(tie), "222507385850720.12");
        assert_eq!(float(-tie), "-222507385850720.12");
    }

    #[test]
    fn non_finite_floats_are_refused() {
        let mut buf = StackBuf::new();
        assert_eq!(
            write_python_float(f64::NAN, &mut buf),
            Err(CanonicalError::NonFiniteNumber)
        );
        assert_eq!(
            write_python_float(f64::NEG_INFINITY, &mut buf),
            Err(CanonicalError::NonFiniteNumber)
        );
    }

    #[test]
    fn strings_escape_like_python() {
        let mut out = String::new();
        write_str(
            "a\"b\\c\n\r\t\u{8}\u{c}\u{0}\u{1f}\u{7f}\u{2028}\u{2029}é😀",
            &mut out,
        );
        assert_eq!(
            out,
            "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0000\\u001f\u{7f}\u{2028}\u{2029}é😀\""
        );
    }

    #[test]
    fn pieces_written_alone_match_the_value_they_stand_for() {
        for text in ["", "plain", "a\"b\\c\n\u{1}\u{7f}é😀"] {
            let mut piece = String::from("[");
            write_canonical_str(text, &mut piece);
            assert_eq!(piece[1..], to_canonical_string(&json!(text)).unwrap());
        }
        for x in [
            0.5,
            1.0,
            2.5,
            1e-7,
            1e21,
            123456.789,
            f64::MIN_POSITIVE,
            f64::MAX,
        ] {
            let mut piece = String::from("[");
            write_canonical_f64(x, &mut piece).unwrap();
            assert_eq!(piece[1..], to_canonical_string(&json!(x)).unwrap());
        }
        let mut kept = String::from("[");
        assert_eq!(
            write_canonical_f64(f64::NAN, &mut kept),
            Err(CanonicalError::NonFiniteNumber)
        );
        assert_eq!(kept, "[");
    }

    #[test]
    fn keys_sort_by_code_point_not_utf16() {
        let value = json!({"😀": 1, "｡": 2, "a": 3});
        assert_eq!(
            to_canonical_string(&value).unwrap(),
            r#"{"a":3,"｡":2,"😀":1}"#
        );
    }

    /// JSON text, parsed and written back in canonical form.
    fn canonical_text(json: &str) -> String {
        to_canonical_string(&serde_json::from_str::<Value>(json).unwrap()).unwrap()
    }

    #[test]
    fn integers_and_floats_stay_apart() {
        assert_eq!(
            canonical_text("[1, 1.0, -1, 18446744073709551615]"),
            "[1,1.0,-1,18446744073709551615]"
        );
    }

    #[test]
    fn documented_limitations_are_pinned() {
        // Python writes these as `18446744073709551616` and `0`; see the module docs.
        assert_eq!(
            canonical_text("[18446744073709551616, -0]"),
            "[1.8446744073709552e+19,-0.0]"
        );
    }

    #[test]
    fn request_digest_matches_the_built_wrapper() {
        let state = json!({"text": "x", "n": [1.5, 2]});
        let questions = json!({"q": {"type": "noul", "instructions": "?"}});
        let with_model = json!({"model": "jev-1", "state": state, "questions": questions});
        let without = json!({"state": state, "questions": questions});
        assert_eq!(
            request_digest(Some("jev-1"), &state, &questions).unwrap(),
            digest(&with_model).unwrap()
        );
        assert_eq!(
            request_digest(None, &state, &questions).unwrap(),
            digest(&without).unwrap()
        );
        let Value::Object(map) = &questions else {
            unreachable!()
        };
        assert_eq!(
            request_digest_bytes(Some("jev-1"), &state, map).unwrap(),
            request_digest_bytes(Some("jev-1"), &state, &questions).unwrap()
        );
    }

    #[test]
    fn hashing_through_the_buffer_equals_hashing_the_text() {
        // Longer than the hash buffer, with pieces that straddle and exceed it.
        let long = "x".repeat(3 * HASH_BUF + 17);
        let value = json!([long, {"k": "y".repeat(HASH_BUF - 3)}, "z".repeat(HASH_BUF + 1)]);
        let text = to_canonical_string(&value).unwrap();
        let expected: [u8; 32] = Sha256::digest(text.as_bytes()).into();
        assert_eq!(digest(&value).unwrap(), hex_digest(&expected));
    }

    #[test]
    fn too_deep_values_are_refused_and_leave_the_output_alone() {
        let mut value = json!(1);
        for i in 0..MAX_DEPTH {
            value = if i % 2 == 0 {
                json!([value])
            } else {
                json!({ "k": value })
            };
        }
        assert!(to_canonical_string(&value).is_ok());
        let deeper = json!([value]);
        let mut out = String::from("kept");
        assert_eq!(
            write_canonical(&deeper, &mut out),
            Err(CanonicalError::TooDeep { limit: MAX_DEPTH })
        );
        assert_eq!(out, "kept");
        assert!(digest(&deeper).is_err());
    }
}
