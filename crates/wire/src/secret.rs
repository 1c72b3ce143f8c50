//! A secret string (an API key, a token) that `Debug` never shows.

use std::fmt;

/// A secret string, such as an API key: `Debug` prints `<redacted>`, never the text, so a
/// struct holding one can `#[derive(Debug)]`. It has no `Display`; the one accessor,
/// [`Secret::expose_secret`], is named so that its callers stand out in review.
///
/// ```
/// use jevjudge_wire::Secret;
///
/// let key = Secret::from("apikey_abc-123");
/// assert_eq!(key.expose_secret(), "apikey_abc-123");
/// assert_eq!(format!("{key:?}"), "<redacted>");
/// assert_eq!(format!("{:?}", Some(key)), "Some(<redacted>)");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `secret`.
    pub fn new(secret: impl Into<String>) -> Secret {
        Secret(secret.into())
    }

    /// The secret itself, for the one place that must send or compare it. Never log or print
    /// it.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(secret: String) -> Secret {
        Secret(secret)
    }
}

impl From<&str> for Secret {
    fn from(secret: &str) -> Secret {
        Secret(secret.to_owned())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_secret_in_any_form() {
        let secret = Secret::new("apikey_SENTINEL_7f3a");
        #[derive(Debug)]
        #[allow(dead_code)] // read only through Debug
        struct Holder {
            key: Option<Secret>,
        }
        let holder = Holder {
            key: Some(secret.clone()),
        };
        for shown in [
            format!("{secret:?}"),
            format!("{secret:#?}"),
            format!("{holder:?}"),
            format!("{holder:#?}"),
        ] {
            assert!(!shown.contains("SENTINEL"), "{shown}");
            assert!(shown.contains("<redacted>"), "{shown}");
        }
        assert_eq!(format!("{holder:?}"), "Holder { key: Some(<redacted>) }");
        assert_eq!(secret.expose_secret(), "apikey_SENTINEL_7f3a");
    }

    #[test]
    fn equal_secrets_compare_equal() {
        assert_eq!(Secret::from("k"), Secret::from("k".to_owned()));
        assert_ne!(Secret::from("k"), Secret::from("K"));
    }
}
