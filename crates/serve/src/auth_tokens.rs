//! Callers' bearer tokens.
//!
//! Why compare in constant time? A comparison that stops at the first differing byte answers
//! sooner the more of a guess is right, and over many requests that timing leaks the token.
//! [`AuthTokens::verify`] compares against every configured token with `subtle`'s constant-time
//! equality, whatever the guess.

use std::fmt;

use subtle::{Choice, ConstantTimeEq as _};

/// The longest token accepted, in bytes.
const MAX_TOKEN_BYTES: usize = 4096;
/// The shortest token accepted, in characters (callers' and reviewers' alike): a short token
/// falls to guessing.
pub const MIN_TOKEN_CHARS: usize = 16;

/// The bearer tokens callers may present; empty means authentication is off.
///
/// `Debug` shows only how many tokens there are; no token is ever printed or logged.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthTokens {
    tokens: Vec<Vec<u8>>,
}

/// Why a token list was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthTokensError {
    /// No token at all (an empty or blank list).
    #[error("no token: expected one token or several separated by commas")]
    Empty,
    /// An entry of the comma-separated list is blank (for example `a,,b`).
    #[error("token {position} of the list is blank")]
    Blank {
        /// Its position, from 1.
        position: usize,
    },
    /// A token with whitespace, control or non-ASCII characters, or longer than 4096 bytes.
    #[error(
        "token {position} of the list is not printable ASCII without spaces (at most 4096 bytes)"
    )]
    Invalid {
        /// Its position, from 1.
        position: usize,
    },
    /// A token shorter than 16 characters.
    #[error("token {position} of the list is shorter than 16 characters")]
    TooShort {
        /// Its position, from 1.
        position: usize,
    },
}

impl AuthTokens {
    /// No tokens: every caller is accepted.
    pub fn none() -> AuthTokens {
        AuthTokens::default()
    }

    /// These tokens (each printable ASCII without whitespace, 16 characters to 4096 bytes).
    pub fn new<I, S>(tokens: I) -> Result<AuthTokens, AuthTokensError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut checked = Vec::new();
        for (index, token) in tokens.into_iter().enumerate() {
            let token = token.as_ref();
            let position = index + 1;
            if token.is_empty() {
                return Err(AuthTokensError::Blank { position });
            }
            if token.len() > MAX_TOKEN_BYTES || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(AuthTokensError::Invalid { position });
            }
            if token.len() < MIN_TOKEN_CHARS {
                return Err(AuthTokensError::TooShort { position });
            }
            checked.push(token.as_bytes().to_vec());
        }
        if checked.is_empty() {
            return Err(AuthTokensError::Empty);
        }
        Ok(AuthTokens { tokens: checked })
    }

    /// Parses an environment variable's value: one token, or several separated by commas
    /// (spaces around each are trimmed).
    pub fn parse(value: &str) -> Result<AuthTokens, AuthTokensError> {
        if value.trim().is_empty() {
            return Err(AuthTokensError::Empty);
        }
        AuthTokens::new(value.split(',').map(str::trim))
    }

    /// Whether callers must present a token.
    pub fn is_enabled(&self) -> bool {
        !self.tokens.is_empty()
    }

    /// How many tokens are accepted.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// True when there are none (authentication off).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Whether an `Authorization` header value carries an accepted token (`Bearer <token>`,
    /// scheme case-insensitive). Always true when authentication is off.
    pub fn verify(&self, authorization: Option<&[u8]>) -> bool {
        if !self.is_enabled() {
            return true;
        }
        let Some(presented) = authorization.and_then(bearer) else {
            return false;
        };
        // Every token is compared, so the time does not say which one (if any) matched.
        let found = self.tokens.iter().fold(Choice::from(0), |found, token| {
            found | token.as_slice().ct_eq(presented)
        });
        bool::from(found)
    }
}

impl fmt::Debug for AuthTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthTokens")
            .field("count", &self.tokens.len())
            .finish_non_exhaustive()
    }
}

/// The token of a `Bearer <token>` header value (the scheme in any case), for the callers'
/// tokens and the reviewers' alike.
pub(crate) fn bearer(value: &[u8]) -> Option<&[u8]> {
    let scheme = value.get(..7)?;
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return None;
    }
    let token = value[7..].trim_ascii();
    (!token.is_empty()).then_some(token)
}

/// Compares two byte strings in time that depends only on their lengths, not their contents
/// (`subtle`), as [`AuthTokens::verify`] does for each token.
#[cfg(test)]
fn constant_time_eq(expected: &[u8], presented: &[u8]) -> bool {
    bool::from(expected.ct_eq(presented))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_or_several_comma_separated_tokens() {
        let tokens = AuthTokens::parse(" alpha-0123456789ab , beta-2-0123456789ab ").unwrap();
        assert_eq!(tokens.len(), 2);
        for (header, accepted) in [
            (Some("Bearer alpha-0123456789ab"), true),
            (Some("bearer beta-2-0123456789ab"), true),
            (Some("BEARER  beta-2-0123456789ab "), true),
            (Some("Bearer alpha-0123456789a"), false),
            (Some("Bearer alpha-0123456789abc"), false),
            (Some("Bearer "), false),
            (Some("Basic alpha-0123456789ab"), false),
            (Some("alpha-0123456789ab"), false),
            (None, false),
        ] {
            assert_eq!(
                tokens.verify(header.map(str::as_bytes)),
                accepted,
                "{header:?}"
            );
        }
    }

    #[test]
    fn without_tokens_everyone_is_accepted() {
        let tokens = AuthTokens::none();
        assert!(!tokens.is_enabled());
        assert!(tokens.verify(None));
    }

    #[test]
    fn bad_lists_are_refused_by_position() {
        assert_eq!(AuthTokens::parse(""), Err(AuthTokensError::Empty));
        assert_eq!(AuthTokens::parse("  "), Err(AuthTokensError::Empty));
        assert_eq!(
            AuthTokens::parse("a-0123456789abcdef,,b"),
            Err(AuthTokensError::Blank { position: 2 })
        );
        assert_eq!(
            AuthTokens::parse("a-0123456789abcdef,b c"),
            Err(AuthTokensError::Invalid { position: 2 })
        );
        assert_eq!(
            AuthTokens::parse("é"),
            Err(AuthTokensError::Invalid { position: 1 })
        );
        let long = "x".repeat(MAX_TOKEN_BYTES + 1);
        assert_eq!(
            AuthTokens::parse(&long),
            Err(AuthTokensError::Invalid { position: 1 })
        );
    }

    #[test]
    fn tokens_under_16_characters_are_refused_by_position() {
        assert!(AuthTokens::parse("0123456789abcdef").is_ok());
        assert_eq!(
            AuthTokens::parse("0123456789abcdef, 0123456789abcde"),
            Err(AuthTokensError::TooShort { position: 2 })
        );
        assert_eq!(
            AuthTokens::new(["x"]),
            Err(AuthTokensError::TooShort { position: 1 })
        );
        let message = AuthTokens::parse("secret").unwrap_err().to_string();
        assert!(!message.contains("secret"), "{message}");
    }

    #[test]
    fn debug_never_shows_a_token() {
        let tokens = AuthTokens::parse("tok_secret_1_0123456,tok_secret_2_0123456").unwrap();
        let shown = format!("{tokens:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("count: 2"), "{shown}");
    }

    #[test]
    fn constant_time_eq_is_plain_equality() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(!constant_time_eq(b"ab", b"abc"));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(constant_time_eq(b"", b""));
        // A presented byte equal to the complement used for padding cannot fake a match.
        assert!(!constant_time_eq(&[0x00], &[0x00, 0xff]));
    }
}
