//! Reviewers of the review queue and their bearer tokens (`--reviewer-tokens-env VAR`).
//!
//! The variable holds comma-separated `name:token` pairs, or `name:token:lead` for a lead (who
//! also adjudicates disagreements and reads the decisions; a token may not hold `:`). The name is what the store, the stats
//! and the logs show; the token is only ever compared, in constant time (`subtle`), against
//! every configured token whatever the guess, and never printed (`Debug` shows the names only).
//! Reviewer tokens are separate from the service's callers' tokens (`--auth-token-env`).

use std::fmt;

use subtle::{Choice, ConditionallySelectable as _, ConstantTimeEq as _};

use crate::auth_tokens::{MIN_TOKEN_CHARS, bearer};

/// The longest token accepted, in bytes.
const MAX_TOKEN_BYTES: usize = 4096;
/// The longest reviewer name, in characters.
pub const MAX_REVIEWER_NAME_CHARS: usize = 64;

/// A signed-in reviewer: the name from `--reviewer-tokens-env`. Holds no token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reviewer {
    /// The reviewer's name (1–64 characters of `A–Z a–z 0–9 - _ . @`).
    pub name: String,
    /// Whether they lead (`name:token:lead`): adjudicate and read the decisions.
    pub lead: bool,
}

/// The reviewers and their tokens.
///
/// `Debug` shows the names and never a token.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct ReviewerTokens {
    entries: Vec<(String, Vec<u8>)>,
    /// The names of the leads.
    leads: Vec<String>,
}

/// Why a reviewer token list was refused; the message never holds a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewerTokensError {
    /// No pair at all.
    #[error("no reviewer: expected name:token pairs separated by commas")]
    Empty,
    /// An entry without a `:` or with an empty name or token.
    #[error("entry {position} is not name:token")]
    NotAPair {
        /// Its position, from 1.
        position: usize,
    },
    /// A name with characters outside `A–Z a–z 0–9 - _ . @`, or longer than 64 characters.
    #[error("entry {position}: the name must be 1–64 characters of A–Z a–z 0–9 - _ . @")]
    BadName {
        /// Its position, from 1.
        position: usize,
    },
    /// A token with whitespace, control or non-ASCII characters, or longer than 4096 bytes.
    #[error(
        "entry {position}: the token is not printable ASCII without spaces (at most 4096 bytes)"
    )]
    BadToken {
        /// Its position, from 1.
        position: usize,
    },
    /// A token shorter than 16 characters.
    #[error("entry {position} (reviewer `{name}`): the token is shorter than 16 characters")]
    TokenTooShort {
        /// Its position, from 1.
        position: usize,
        /// The reviewer's name.
        name: String,
    },
    /// A token holding `:` (the separator of name and token).
    #[error(
        "entry {position} (reviewer `{name}`): the token holds `:` (an entry is name:token, or \
         name:token:lead for a lead)"
    )]
    TokenWithColon {
        /// Its position, from 1.
        position: usize,
        /// The reviewer's name.
        name: String,
    },
    /// Two entries with one name.
    #[error("entry {position}: the name `{name}` is given twice")]
    DuplicateName {
        /// Its position, from 1.
        position: usize,
        /// The name.
        name: String,
    },
    /// Two entries with one token (two reviewers could not be told apart).
    #[error("entry {position}: its token is already another reviewer's")]
    DuplicateToken {
        /// Its position, from 1.
        position: usize,
    },
}

/// Whether `name` is a valid reviewer name.
pub fn valid_reviewer_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_REVIEWER_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'))
}

impl ReviewerTokens {
    /// Parses `name:token,name:token:lead` (spaces around each entry are trimmed).
    pub fn parse(value: &str) -> Result<ReviewerTokens, ReviewerTokensError> {
        if value.trim().is_empty() {
            return Err(ReviewerTokensError::Empty);
        }
        let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
        let mut leads: Vec<String> = Vec::new();
        for (index, entry) in value.split(',').map(str::trim).enumerate() {
            let position = index + 1;
            let Some((name, token)) = entry.split_once(':') else {
                return Err(ReviewerTokensError::NotAPair { position });
            };
            let (name, mut token) = (name.trim(), token.trim());
            let lead = match token.rsplit_once(':') {
                Some((before, "lead")) if !before.contains(':') => {
                    token = before.trim();
                    true
                }
                _ => false,
            };
            if name.is_empty() || token.is_empty() {
                return Err(ReviewerTokensError::NotAPair { position });
            }
            if !valid_reviewer_name(name) {
                return Err(ReviewerTokensError::BadName { position });
            }
            if token.len() > MAX_TOKEN_BYTES || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(ReviewerTokensError::BadToken { position });
            }
            if token.contains(':') {
                return Err(ReviewerTokensError::TokenWithColon {
                    position,
                    name: name.to_owned(),
                });
            }
            if token.len() < MIN_TOKEN_CHARS {
                return Err(ReviewerTokensError::TokenTooShort {
                    position,
                    name: name.to_owned(),
                });
            }
            if entries.iter().any(|(known, _)| known == name) {
                return Err(ReviewerTokensError::DuplicateName {
                    position,
                    name: name.to_owned(),
                });
            }
            if entries.iter().any(|(_, known)| known == token.as_bytes()) {
                return Err(ReviewerTokensError::DuplicateToken { position });
            }
            entries.push((name.to_owned(), token.as_bytes().to_vec()));
            if lead {
                leads.push(name.to_owned());
            }
        }
        Ok(ReviewerTokens { entries, leads })
    }

    /// Whether `name` is a lead's.
    pub fn is_lead(&self, name: &str) -> bool {
        self.leads.iter().any(|lead| lead == name)
    }

    /// The leads' names, in the order given.
    pub fn leads(&self) -> impl Iterator<Item = &str> {
        self.leads.iter().map(String::as_str)
    }

    /// Parses a reviewer list file: the same entries, one or more a line (separated by
    /// commas or line breaks); blank lines and lines starting with `#` are skipped.
    pub fn parse_file(text: &str) -> Result<ReviewerTokens, ReviewerTokensError> {
        let entries: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .collect();
        ReviewerTokens::parse(&entries.join(","))
    }

    /// How many reviewers there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The reviewers' names, in the order given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(name, _)| name.as_str())
    }

    /// The `(name, token)` pairs, only for deriving the reviewer pages' session key
    /// (`ui::session`); never printed.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.entries
            .iter()
            .map(|(name, token)| (name.as_str(), token.as_slice()))
    }

    /// The reviewer whose token this is. Every token is compared in constant time, so the
    /// time taken says neither whether nor which one matched.
    pub fn reviewer_for_token(&self, presented: &[u8]) -> Option<Reviewer> {
        let mut found = Choice::from(0);
        let mut index = 0u64;
        for (position, (_, token)) in self.entries.iter().enumerate() {
            let hit = token.as_slice().ct_eq(presented);
            index = u64::conditional_select(&index, &(position as u64), hit);
            found |= hit;
        }
        bool::from(found).then(|| {
            let name = self.entries[index as usize].0.clone();
            Reviewer {
                lead: self.is_lead(&name),
                name,
            }
        })
    }

    /// The reviewer of an `Authorization: Bearer <token>` header value (scheme
    /// case-insensitive), if its token is known.
    pub fn reviewer_for_header(&self, authorization: Option<&[u8]>) -> Option<Reviewer> {
        self.reviewer_for_token(bearer(authorization?)?)
    }
}

impl fmt::Debug for ReviewerTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReviewerTokens")
            .field("names", &self.names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_name_reviewers_and_tokens_find_them() {
        let tokens =
            ReviewerTokens::parse(" ana:tok-a1-0123456789ab , bo.b@x:tok-b2-0123456789ab").unwrap();
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens.names().collect::<Vec<_>>(), ["ana", "bo.b@x"]);
        assert_eq!(
            tokens.reviewer_for_token(b"tok-b2-0123456789ab"),
            Some(Reviewer {
                name: "bo.b@x".to_owned(),
                lead: false,
            })
        );
        assert_eq!(
            tokens
                .reviewer_for_header(Some(b"bearer tok-a1-0123456789ab"))
                .unwrap()
                .name,
            "ana"
        );
        assert_eq!(tokens.reviewer_for_token(b"tok-a1-0123456789a"), None);
        assert_eq!(tokens.reviewer_for_token(b"tok-a1-0123456789abc"), None);
        assert_eq!(tokens.reviewer_for_token(b""), None);
        assert_eq!(
            tokens.reviewer_for_header(Some(b"Basic tok-a1-0123456789ab")),
            None
        );
        assert_eq!(tokens.reviewer_for_header(None), None);
    }

    #[test]
    fn a_trailing_lead_marks_a_lead_and_any_other_colon_is_refused() {
        let tokens =
            ReviewerTokens::parse("ana:tok-a1-0123456789ab,lea:tok-l1-0123456789ab:lead").unwrap();
        assert_eq!(tokens.names().collect::<Vec<_>>(), ["ana", "lea"]);
        assert_eq!(tokens.leads().collect::<Vec<_>>(), ["lea"]);
        let lea = tokens.reviewer_for_token(b"tok-l1-0123456789ab").unwrap();
        assert!(lea.lead);
        assert!(
            !tokens
                .reviewer_for_token(b"tok-a1-0123456789ab")
                .unwrap()
                .lead
        );
        assert_eq!(tokens.reviewer_for_token(b"tok-l1-0123456789ab:lead"), None);
        for value in [
            "lea:tok-l1-0123456789ab:leader",
            "lea:tok:l1-0123456789ab:lead",
            "lea:tok-l1-0123456789ab:lead:lead",
        ] {
            assert!(
                matches!(
                    ReviewerTokens::parse(value),
                    Err(ReviewerTokensError::TokenWithColon { position: 1, .. })
                ),
                "{value}"
            );
        }
    }

    #[test]
    fn a_file_takes_one_entry_a_line_with_comments() {
        let text = "# the review team\nana:tok-a1-0123456789ab\n\n  lea:tok-l1-0123456789ab:lead , bo:tok-b1-0123456789ab\n";
        let tokens = ReviewerTokens::parse_file(text).unwrap();
        assert_eq!(tokens.names().collect::<Vec<_>>(), ["ana", "lea", "bo"]);
        assert_eq!(tokens.leads().collect::<Vec<_>>(), ["lea"]);
        assert_eq!(
            ReviewerTokens::parse_file("# nobody\n"),
            Err(ReviewerTokensError::Empty)
        );
    }

    #[test]
    fn tokens_short_or_holding_a_colon_are_refused_naming_the_reviewer_never_the_token() {
        use ReviewerTokensError::*;
        let sixteen = "SECRET0123456789";
        assert_eq!(sixteen.len(), MIN_TOKEN_CHARS);
        assert!(ReviewerTokens::parse(&format!("ana:{sixteen}")).is_ok());
        for (value, error) in [
            (
                "ana:SECRET0123456789,bob:SECRET012345678",
                TokenTooShort {
                    position: 2,
                    name: "bob".to_owned(),
                },
            ),
            (
                "ana:S",
                TokenTooShort {
                    position: 1,
                    name: "ana".to_owned(),
                },
            ),
            (
                "ana:SECRET:0123456789abcdef",
                TokenWithColon {
                    position: 1,
                    name: "ana".to_owned(),
                },
            ),
        ] {
            let refused = ReviewerTokens::parse(value).unwrap_err();
            assert_eq!(refused, error, "{value}");
            let message = refused.to_string();
            assert!(!message.contains("SECRET"), "{message}");
            assert!(
                message.contains(&format!("`{}`", value_name(&refused))),
                "{message}"
            );
        }
    }

    fn value_name(error: &ReviewerTokensError) -> &str {
        match error {
            ReviewerTokensError::TokenTooShort { name, .. }
            | ReviewerTokensError::TokenWithColon { name, .. } => name,
            _ => "",
        }
    }

    #[test]
    fn bad_lists_are_refused_by_position_without_the_token() {
        use ReviewerTokensError::*;
        for (value, error) in [
            ("", Empty),
            ("  ", Empty),
            ("ana", NotAPair { position: 1 }),
            ("ana:x-0123456789abcdef,bob:", NotAPair { position: 2 }),
            (":x", NotAPair { position: 1 }),
            ("a b:x", BadName { position: 1 }),
            ("ana:x y-0123456789abcdef", BadToken { position: 1 }),
            (
                "ana:x-0123456789abcdef,ana:y-0123456789abcdef",
                DuplicateName {
                    position: 2,
                    name: "ana".to_owned(),
                },
            ),
            (
                "ana:SECRET0123456789,bob:SECRET0123456789",
                DuplicateToken { position: 2 },
            ),
        ] {
            let refused = ReviewerTokens::parse(value).unwrap_err();
            assert_eq!(refused, error, "{value}");
            assert!(!refused.to_string().contains("SECRET"), "{refused}");
        }
        let long = format!("ana:{}", "x".repeat(MAX_TOKEN_BYTES + 1));
        assert_eq!(ReviewerTokens::parse(&long), Err(BadToken { position: 1 }));
    }

    #[test]
    fn debug_shows_names_never_tokens() {
        let tokens =
            ReviewerTokens::parse("ana:tok_SECRET_1_0123456,bob:tok_SECRET_2_0123456").unwrap();
        let shown = format!("{tokens:?}");
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("ana") && shown.contains("bob"), "{shown}");
    }
}
