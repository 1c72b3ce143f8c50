//! Bearer-key authentication, checked before anything else when a key is configured
//! (systemone-wire.md §13 item 2).

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use subtle::ConstantTimeEq as _;

use crate::rejection::Rejection;

/// Accepts the request, or says why not: 403 without a Bearer key, 401 with a wrong one.
/// Without a configured key every request is accepted, `Authorization` header or not.
pub(crate) fn check(headers: &HeaderMap, key: Option<&str>) -> Result<(), Rejection> {
    let Some(key) = key else {
        return Ok(());
    };
    let token = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token);
    match token {
        None => Err(Rejection::key_missing()),
        Some(token) if same(token.as_bytes(), key.as_bytes()) => Ok(()),
        Some(_) => Err(Rejection::key_invalid()),
    }
}

/// Who a request is for the rate limiter: its Bearer token, else the raw `Authorization` value,
/// else `None` (every request without the header shares one bucket).
pub(crate) fn caller_key(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?;
    Some(bearer_token(value).unwrap_or(value))
}

/// The token of `Bearer <token>` (scheme case-insensitive), if non-empty.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Equality whose time does not depend on where the first difference is (`subtle`'s
/// constant-time comparison; only the length, which is not secret for a fixed key format, can
/// end it early).
fn same(given: &[u8], expected: &[u8]) -> bool {
    given.ct_eq(expected).into()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn with(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn no_key_accepts_everything() {
        assert!(check(&HeaderMap::new(), None).is_ok());
        assert!(check(&with("Bearer anything"), None).is_ok());
    }

    #[test]
    fn missing_or_non_bearer_is_403() {
        for headers in [
            HeaderMap::new(),
            with("Basic Sw=="),
            with("Bearer "),
            with("K"),
        ] {
            assert_eq!(check(&headers, Some("K")).map_err(|r| r.status), Err(403));
        }
    }

    #[test]
    fn wrong_key_is_401_and_right_key_passes() {
        assert_eq!(
            check(&with("Bearer nope"), Some("K")).map_err(|r| r.status),
            Err(401)
        );
        assert_eq!(
            check(&with("Bearer KK"), Some("K")).map_err(|r| r.status),
            Err(401)
        );
        assert!(check(&with("Bearer K"), Some("K")).is_ok());
        assert!(check(&with("bearer K"), Some("K")).is_ok());
    }

    #[test]
    fn the_key_is_never_in_an_error_body() {
        let rejection = check(&with("Bearer apikey_wrong"), Some("apikey_right")).err();
        let text = rejection.map(|r| r.body.to_string()).unwrap_or_default();
        assert!(!text.contains("apikey_"));
    }
}
