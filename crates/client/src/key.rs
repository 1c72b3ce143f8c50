//! The API key, and where it comes from (systemone-wire.md §2).
//!
//! The key is a secret: it is sent only as `Authorization: Bearer <key>` and never appears in
//! `Debug`, `Display`, an error message or a log line. [`ApiKey`] enforces that by having no
//! way to print itself; the one accessor, [`ApiKey::expose_secret`], is named so that its
//! callers stand out in review.

use std::fmt;

use crate::ConfigError;

/// The environment variable read first for the key.
pub const TYPESAFE_API_KEY: &str = "TYPESAFE_API_KEY";
/// The environment variable read when [`TYPESAFE_API_KEY`] is unset or blank.
pub const JEV_API_KEY: &str = "JEV_API_KEY";

/// A System One API key: trimmed, non-empty printable ASCII without whitespace.
///
/// `Debug` and `Display` print `ApiKey(<redacted>)`, never the key.
///
/// ```
/// use jevjudge_client::ApiKey;
///
/// let key = ApiKey::new("  apikey_abc-123 \n").unwrap();
/// assert_eq!(key.expose_secret(), "apikey_abc-123");
/// assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
/// assert!(ApiKey::new("two words").is_err());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Checks and trims a key. Surrounding whitespace is removed; what remains must be
    /// non-empty printable ASCII (`!` to `~`), so no inner whitespace or control characters.
    pub fn new(key: impl AsRef<str>) -> Result<ApiKey, ConfigError> {
        let trimmed = key.as_ref().trim();
        if trimmed.is_empty() {
            return Err(ConfigError::BlankKey);
        }
        if !trimmed.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ConfigError::InvalidKey);
        }
        Ok(ApiKey(trimmed.to_owned()))
    }

    /// The key from the process environment: `TYPESAFE_API_KEY` when it is set and not blank,
    /// else `JEV_API_KEY`. `None` when neither holds a key, or when the chosen variable holds
    /// an invalid one (use [`ApiKey::resolve`] to see that error).
    pub fn from_env() -> Option<ApiKey> {
        ApiKey::resolve(process_env).ok().flatten()
    }

    /// The key in one environment variable: `Ok(None)` when it is unset or blank, an error
    /// when it is set to something that is not a valid key or not Unicode.
    pub fn from_env_var(name: &str) -> Result<Option<ApiKey>, ConfigError> {
        match std::env::var(name) {
            Ok(value) => ApiKey::from_value(name, Some(value)),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(ConfigError::EnvNotUnicode {
                name: name.to_owned(),
            }),
        }
    }

    /// The resolution rule of [`ApiKey::from_env`] over any variable lookup, so that callers
    /// and tests need not touch the process environment.
    ///
    /// ```
    /// use jevjudge_client::ApiKey;
    ///
    /// let env = |name: &str| match name {
    ///     "TYPESAFE_API_KEY" => Some(" ".to_owned()),
    ///     "JEV_API_KEY" => Some("fallback".to_owned()),
    ///     _ => None,
    /// };
    /// let key = ApiKey::resolve(env).unwrap().unwrap();
    /// assert_eq!(key.expose_secret(), "fallback");
    /// ```
    pub fn resolve(lookup: impl Fn(&str) -> Option<String>) -> Result<Option<ApiKey>, ConfigError> {
        for name in [TYPESAFE_API_KEY, JEV_API_KEY] {
            if let Some(key) = ApiKey::from_value(name, lookup(name))? {
                return Ok(Some(key));
            }
        }
        Ok(None)
    }

    /// The key in the variable `name` when it holds one, else the key of [`ApiKey::from_env`];
    /// without a name, [`ApiKey::resolve`] over the process environment. An error when the
    /// variable read holds something that is not a valid key or not Unicode.
    pub fn from_env_or_default(name: Option<&str>) -> Result<Option<ApiKey>, ConfigError> {
        match name {
            Some(name) => Ok(ApiKey::from_env_var(name)?.or_else(ApiKey::from_env)),
            None => ApiKey::resolve(process_env),
        }
    }

    fn from_value(name: &str, value: Option<String>) -> Result<Option<ApiKey>, ConfigError> {
        match value {
            Some(value) if !value.trim().is_empty() => {
                ApiKey::new(value)
                    .map(Some)
                    .map_err(|_| ConfigError::InvalidKeyInEnv {
                        name: name.to_owned(),
                    })
            }
            _ => Ok(None),
        }
    }

    /// The key itself, for the `Authorization` header. Never log or print it.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

/// Whether `name` looks like an environment variable's name (A-Z, 0-9 and `_`, not starting
/// with a digit, at most 64 bytes), so that it can be shown: text that does not may be a key
/// pasted where a variable's name belongs, and must never be echoed.
pub fn is_conventional_var_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Reads a process environment variable; a value that is not Unicode reads as unset.
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn keys_are_trimmed_and_must_be_printable_ascii_without_whitespace() {
        assert_eq!(ApiKey::new(" k-1_x \t").unwrap().expose_secret(), "k-1_x");
        assert_eq!(ApiKey::new(""), Err(ConfigError::BlankKey));
        assert_eq!(ApiKey::new(" \n "), Err(ConfigError::BlankKey));
        assert_eq!(ApiKey::new("a b"), Err(ConfigError::InvalidKey));
        assert_eq!(ApiKey::new("a\u{7f}b"), Err(ConfigError::InvalidKey));
        assert_eq!(ApiKey::new("clé"), Err(ConfigError::InvalidKey));
        assert_eq!(ApiKey::new("a\0"), Err(ConfigError::InvalidKey));
        let live = format!("apikey_{}", "aZ9_-".repeat(20) + "x");
        assert_eq!(live.len(), 7 + 101);
        assert!(ApiKey::new(&live).is_ok());
    }

    /// The key `ApiKey::resolve` finds in `vars`, which must hold one.
    fn resolved(vars: &[(&str, &str)]) -> String {
        let key = ApiKey::resolve(env(vars)).unwrap().unwrap();
        key.expose_secret().to_owned()
    }

    #[test]
    fn blank_typesafe_key_falls_back_to_jev_key() {
        // systemone-wire.md §2: TYPESAFE_API_KEY=" " and JEV_API_KEY=fallback give fallback.
        let vars = [("TYPESAFE_API_KEY", " "), ("JEV_API_KEY", "fallback")];
        assert_eq!(resolved(&vars), "fallback");
    }

    #[test]
    fn typesafe_key_wins_when_set() {
        let vars = [
            ("TYPESAFE_API_KEY", " primary "),
            ("JEV_API_KEY", "fallback"),
        ];
        assert_eq!(resolved(&vars), "primary");
        assert_eq!(resolved(&[("JEV_API_KEY", "only")]), "only");
        assert_eq!(ApiKey::resolve(env(&[])), Ok(None));
        assert_eq!(ApiKey::resolve(env(&[("JEV_API_KEY", "")])), Ok(None));
    }

    #[test]
    fn an_invalid_key_in_the_environment_is_an_error_naming_the_variable_not_the_key() {
        let error = ApiKey::resolve(env(&[("TYPESAFE_API_KEY", "sec ret")])).unwrap_err();
        assert_eq!(
            error,
            ConfigError::InvalidKeyInEnv {
                name: "TYPESAFE_API_KEY".into()
            }
        );
        let shown = format!("{error} {error:?}");
        assert!(shown.contains("TYPESAFE_API_KEY"));
        assert!(!shown.contains("sec ret"), "{shown}");
    }

    #[test]
    fn debug_and_display_never_show_the_key() {
        let key = ApiKey::new("apikey_SENTINEL_7f3a").unwrap();
        for shown in [format!("{key:?}"), format!("{key}"), format!("{key:#?}")] {
            assert_eq!(shown, "ApiKey(<redacted>)");
        }
    }

    #[test]
    fn only_conventional_variable_names_may_be_shown() {
        for name in ["TYPESAFE_API_KEY", "MY_KEY_2", "_X"] {
            assert!(is_conventional_var_name(name), "{name}");
        }
        let long = "A".repeat(65);
        for name in ["", "apikey_abc-123", "lower", "2KEY", "A B", long.as_str()] {
            assert!(!is_conventional_var_name(name), "{name}");
        }
    }
}
