//! The reviewer's session and the forms' CSRF tokens, under one key.
//!
//! A session is a cookie signed by the `cookie` crate's signed jar (HMAC-SHA256 over the
//! cookie's name and value), whose value is `<name hex>.<expires unix s>.<nonce hex>`: nothing
//! is kept in memory or in the store, so any replica holding the same reviewer tokens accepts
//! it. Which key signs a session ([`SessionKeys`]):
//! - by default one key derived from the whole reviewer token set ([`SessionKey::derive`]), so
//!   replicas agree with no configuration, but changing any token signs every reviewer out;
//! - with a session secret (`--session-secret-env`, the same on every replica), one key per
//!   reviewer, derived from the secret, the reviewer's name and a digest of their token
//!   ([`SessionKey::for_reviewer`]): replacing one reviewer's token, or removing them, signs
//!   out that reviewer only.
//!
//! A session never outlives the token it was made under. The name is hex-encoded so no byte
//! of it can break the cookie syntax.
//!
//! A form's CSRF token is `HMAC(key, "csrf" ‖ session nonce ‖ purpose)`: fixed for one sign-in
//! and one purpose, different after signing in again, unguessable without the key. The sign-in
//! form, which has no session yet, gets its token from a short-lived pre-session cookie nonce
//! (double submit, signed).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cookie::{Cookie, CookieJar, Key, SameSite};
use hmac::{Hmac, Mac};
use rand::RngCore as _;
use sha2::{Digest, Sha512};
use subtle::ConstantTimeEq as _;

type HmacSha256 = Hmac<sha2::Sha256>;

/// The session cookie's name.
pub(crate) const SESSION_COOKIE: &str = "jevjudge_ui";
/// The pre-session cookie's name (the sign-in form's CSRF nonce).
pub(crate) const PRE_COOKIE: &str = "jevjudge_ui_pre";
/// How long a session lasts.
pub(crate) const SESSION_TTL: Duration = Duration::from_secs(8 * 60 * 60);
/// How long the sign-in form stays valid.
pub(crate) const PRE_TTL: Duration = Duration::from_secs(30 * 60);
/// The longest reviewer name a session carries.
const MAX_NAME_BYTES: usize = 256;
/// The longest cookie value looked at.
const MAX_VALUE_BYTES: usize = 4096;

/// The key sessions and CSRF tokens are signed with.
#[derive(Clone)]
pub(crate) struct SessionKey(Key);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

impl SessionKey {
    /// The key for a reviewer token set: SHA-512 over a domain label and the `name:token`
    /// pairs in sorted order, so every replica started with the same set derives the same key,
    /// whatever order the pairs were given in.
    pub(crate) fn derive<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> SessionKey {
        let mut pairs: Vec<(&str, &[u8])> = pairs.into_iter().collect();
        pairs.sort_unstable();
        let mut hash = Sha512::new();
        hash.update(b"jevjudge-ui-session-v2\0");
        for (name, token) in pairs {
            hash.update((name.len() as u64).to_be_bytes());
            hash.update(name.as_bytes());
            hash.update((token.len() as u64).to_be_bytes());
            hash.update(token);
        }
        let master: [u8; 64] = hash.finalize().into();
        SessionKey(Key::from(&master))
    }

    /// One reviewer's key under a session secret: SHA-512 over a domain label, the secret,
    /// the name and SHA-256 of the token. Another token (or name) gives another key.
    pub(crate) fn for_reviewer(secret: &SessionSecret, name: &str, token: &[u8]) -> SessionKey {
        let digest = sha2::Sha256::digest(token);
        let mut hash = Sha512::new();
        hash.update(b"jevjudge-ui-session-reviewer-v1\0");
        for part in [&secret.0[..], name.as_bytes(), &digest[..]] {
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part);
        }
        let master: [u8; 64] = hash.finalize().into();
        SessionKey(Key::from(&master))
    }

    /// The sign-in form's key under a session secret (no reviewer yet).
    fn pre_session_key(secret: &SessionSecret) -> SessionKey {
        let mut hash = Sha512::new();
        hash.update(b"jevjudge-ui-pre-session-v1\0");
        hash.update((secret.0.len() as u64).to_be_bytes());
        hash.update(&secret.0);
        let master: [u8; 64] = hash.finalize().into();
        SessionKey(Key::from(&master))
    }

    fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut mac =
            HmacSha256::new_from_slice(self.0.signing()).expect("HMAC takes any key length");
        for part in parts {
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    /// The signed value of cookie `name` holding `plain`.
    fn sign(&self, name: &'static str, plain: String) -> String {
        let mut jar = CookieJar::new();
        jar.signed_mut(&self.0).add(Cookie::new(name, plain));
        jar.get(name)
            .map(|cookie| cookie.value().to_owned())
            .unwrap_or_default()
    }

    /// The plain value of cookie `name` whose signed value is `value`, when it is genuine.
    fn verified(&self, name: &'static str, value: &str) -> Option<String> {
        if value.len() > MAX_VALUE_BYTES {
            return None;
        }
        let mut jar = CookieJar::new();
        jar.add_original(Cookie::new(name, value.to_owned()));
        jar.signed(&self.0)
            .get(name)
            .map(|cookie| cookie.value().to_owned())
    }

    /// A new session for `name`, valid for [`SESSION_TTL`] from `now`.
    pub(crate) fn sign_in(&self, name: &str, now: SystemTime) -> Session {
        let mut nonce = [0u8; 16];
        rand::rng().fill_bytes(&mut nonce);
        Session {
            name: name.to_owned(),
            expires: unix(now) + SESSION_TTL.as_secs(),
            nonce,
        }
    }

    /// The cookie value of a session.
    pub(crate) fn encode(&self, session: &Session) -> String {
        let plain = format!(
            "{}.{}.{}",
            hex::encode(session.name.as_bytes()),
            session.expires,
            hex::encode(session.nonce)
        );
        self.sign(SESSION_COOKIE, plain)
    }

    /// The session a cookie value holds, when it is well formed, signed with this key and not
    /// expired at `now`.
    pub(crate) fn verify(&self, value: &str, now: SystemTime) -> Option<Session> {
        let plain = self.verified(SESSION_COOKIE, value)?;
        let [name, expires, nonce] = fields(&plain)?;
        let expires: u64 = expires.parse().ok()?;
        if expires <= unix(now) {
            return None;
        }
        let name = String::from_utf8(hex::decode(name).ok()?).ok()?;
        if name.is_empty() || name.len() > MAX_NAME_BYTES {
            return None;
        }
        let mut bytes = [0u8; 16];
        hex::decode_to_slice(nonce, &mut bytes).ok()?;
        Some(Session {
            name,
            expires,
            nonce: bytes,
        })
    }

    /// The CSRF token of a session's forms.
    pub(crate) fn csrf(&self, session: &Session) -> String {
        hex::encode(self.mac(&[b"csrf", &session.nonce]))
    }

    /// Whether `given` is the session's CSRF token (constant time).
    pub(crate) fn check_csrf(&self, session: &Session, given: &str) -> bool {
        let expected = self.csrf(session);
        bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
    }

    /// A new pre-session cookie value (the sign-in form's nonce and expiry, signed).
    pub(crate) fn pre_session(&self, now: SystemTime) -> String {
        let mut nonce = [0u8; 16];
        rand::rng().fill_bytes(&mut nonce);
        let expires = unix(now) + PRE_TTL.as_secs();
        self.sign(PRE_COOKIE, format!("{}.{expires}", hex::encode(nonce)))
    }

    /// The sign-in form's CSRF token for a pre-session cookie value, when the value is
    /// genuine and not expired.
    pub(crate) fn pre_csrf(&self, pre: &str, now: SystemTime) -> Option<String> {
        let plain = self.verified(PRE_COOKIE, pre)?;
        let [nonce, expires] = fields(&plain)?;
        if expires.parse::<u64>().ok()? <= unix(now) {
            return None;
        }
        Some(hex::encode(self.mac(&[b"pre-csrf", nonce.as_bytes()])))
    }

    /// Whether `given` is the sign-in form's CSRF token for the pre-session cookie `pre`.
    pub(crate) fn check_pre_csrf(&self, pre: &str, given: &str, now: SystemTime) -> bool {
        self.pre_csrf(pre, now)
            .is_some_and(|expected| bool::from(given.as_bytes().ct_eq(expected.as_bytes())))
    }
}

/// The secret of per-reviewer session keys (`--session-secret-env`): at least
/// [`MIN_SECRET_BYTES`] bytes. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionSecret(Vec<u8>);

/// The shortest session secret accepted, in bytes.
pub const MIN_SECRET_BYTES: usize = 32;

/// A session secret that is too short.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the session secret must be at least {MIN_SECRET_BYTES} bytes (it is {0})")]
pub struct SessionSecretError(pub usize);

impl SessionSecret {
    /// The secret, when it is at least [`MIN_SECRET_BYTES`] bytes (surrounding whitespace
    /// trimmed).
    pub fn new(secret: &str) -> Result<SessionSecret, SessionSecretError> {
        let secret = secret.trim();
        if secret.len() < MIN_SECRET_BYTES {
            return Err(SessionSecretError(secret.len()));
        }
        Ok(SessionSecret(secret.as_bytes().to_vec()))
    }
}

impl std::fmt::Debug for SessionSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionSecret(..)")
    }
}

/// The keys of the reviewer pages for one reviewer list: one shared key, or one per reviewer
/// under a session secret (see the module documentation).
#[derive(Clone, Debug)]
pub(crate) enum SessionKeys {
    /// One key from the whole token set: any change signs everyone out.
    Shared(SessionKey),
    /// One key per reviewer, from the secret, the name and the token's digest.
    PerReviewer {
        /// The sign-in form's key.
        pre: SessionKey,
        /// Each reviewer's key, by name.
        keys: Vec<(String, SessionKey)>,
    },
}

impl SessionKeys {
    /// The keys of this reviewer list, with or without a secret.
    pub(crate) fn new(
        reviewers: &crate::ReviewerTokens,
        secret: Option<&SessionSecret>,
    ) -> SessionKeys {
        match secret {
            None => SessionKeys::Shared(SessionKey::derive(reviewers.pairs())),
            Some(secret) => SessionKeys::PerReviewer {
                pre: SessionKey::pre_session_key(secret),
                keys: reviewers
                    .pairs()
                    .map(|(name, token)| {
                        (
                            name.to_owned(),
                            SessionKey::for_reviewer(secret, name, token),
                        )
                    })
                    .collect(),
            },
        }
    }

    /// The key of the sign-in form (its pre-session cookie and CSRF token).
    pub(crate) fn pre(&self) -> &SessionKey {
        match self {
            SessionKeys::Shared(key) => key,
            SessionKeys::PerReviewer { pre, .. } => pre,
        }
    }

    /// The key of `name`'s sessions, when they are a reviewer.
    pub(crate) fn for_name(&self, name: &str) -> Option<&SessionKey> {
        match self {
            SessionKeys::Shared(key) => Some(key),
            SessionKeys::PerReviewer { keys, .. } => keys
                .iter()
                .find(|(known, _)| known == name)
                .map(|(_, key)| key),
        }
    }

    /// The session a cookie value holds, with its key: signed with the key of the reviewer it
    /// names (the name is read before the signature is checked, only to pick the key).
    pub(crate) fn verify(&self, value: &str, now: SystemTime) -> Option<(Session, &SessionKey)> {
        let key = match self {
            SessionKeys::Shared(key) => key,
            SessionKeys::PerReviewer { .. } => {
                // The signed jar's value: 44 characters of base64 MAC, then the plain value.
                let plain = value.get(44..)?;
                let name_hex = plain.split('.').next()?;
                let name = String::from_utf8(hex::decode(name_hex).ok()?).ok()?;
                self.for_name(&name)?
            }
        };
        key.verify(value, now).map(|session| (session, key))
    }
}

/// A signed-in reviewer.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Session {
    /// The reviewer's name (as the store records decisions).
    pub(crate) name: String,
    /// When the session ends, in Unix seconds.
    pub(crate) expires: u64,
    nonce: [u8; 16],
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("name", &self.name)
            .field("expires", &self.expires)
            .finish_non_exhaustive()
    }
}

/// A `Set-Cookie` value: `HttpOnly; SameSite=Strict; Path=/ui`, `Secure` when asked.
pub(crate) fn set_cookie(name: &str, value: &str, max_age: Duration, secure: bool) -> String {
    let max_age = i64::try_from(max_age.as_secs()).unwrap_or(i64::MAX);
    Cookie::build((name.to_owned(), value.to_owned()))
        .http_only(true)
        .same_site(SameSite::Strict)
        .secure(secure)
        .path("/ui")
        .max_age(cookie::time::Duration::seconds(max_age))
        .build()
        .to_string()
}

/// The value of cookie `name` in a `Cookie` header, if present.
pub(crate) fn cookie(header: &str, name: &str) -> Option<String> {
    Cookie::split_parse(header)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == name)
        .map(|cookie| cookie.value().to_owned())
}

fn unix(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// The `N` dot-separated fields of a value, when it has exactly `N`.
fn fields<const N: usize>(value: &str) -> Option<[&str; N]> {
    let mut parts = value.split('.');
    let fields: [Option<&str>; N] = std::array::from_fn(|_| parts.next());
    if parts.next().is_some() || fields.contains(&None) {
        return None;
    }
    Some(fields.map(Option::unwrap_or_default))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SessionKey {
        SessionKey::derive([("ada", &b"tok-a"[..]), ("bob", b"tok-b")])
    }

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_800_000_000)
    }

    #[test]
    fn a_session_round_trips_through_its_cookie_value() {
        let key = key();
        let session = key.sign_in("ada <admin>; x=1", now());
        let value = key.encode(&session);
        assert!(
            value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"./+=".contains(&b)),
            "cookie-safe: {value}"
        );
        assert_eq!(key.verify(&value, now()), Some(session));
    }

    #[test]
    fn the_key_is_the_same_on_every_replica_whatever_the_order_of_the_pairs() {
        let a = SessionKey::derive([("ada", &b"tok-a"[..]), ("bob", b"tok-b")]);
        let b = SessionKey::derive([("bob", &b"tok-b"[..]), ("ada", b"tok-a")]);
        let session = a.sign_in("ada", now());
        assert!(b.verify(&a.encode(&session), now()).is_some());
    }

    #[test]
    fn a_changed_token_set_signs_everyone_out() {
        let session = key().sign_in("ada", now());
        let value = key().encode(&session);
        let rotated = SessionKey::derive([("ada", &b"tok-a2"[..]), ("bob", b"tok-b")]);
        assert_eq!(rotated.verify(&value, now()), None);
    }

    #[test]
    fn a_tampered_name_expiry_or_mac_is_refused() {
        let key = key();
        let value = key.encode(&key.sign_in("ada", now()));
        // The signed jar's value: 44 characters of base64 MAC, then the plain value.
        let (mac, plain) = value.split_at(44);
        let parts: Vec<&str> = plain.split('.').collect();
        let forged_name = format!("{mac}{}.{}.{}", hex::encode(b"bob"), parts[1], parts[2]);
        assert_eq!(key.verify(&forged_name, now()), None);
        let later = format!(
            "{mac}{}.{}.{}",
            parts[0],
            parts[1].parse::<u64>().unwrap() + 1,
            parts[2]
        );
        assert_eq!(key.verify(&later, now()), None);
        let mut bad_mac = mac.to_owned();
        bad_mac.replace_range(0..1, if mac.starts_with('A') { "B" } else { "A" });
        assert_eq!(key.verify(&format!("{bad_mac}{plain}"), now()), None);
        // A pre-session cookie is no session, though signed with the same key.
        assert_eq!(key.verify(&key.pre_session(now()), now()), None);
        let old_format = format!(
            "v1.{}.9999999999.{}.{}",
            hex::encode(b"ada"),
            "00".repeat(16),
            "00".repeat(32)
        );
        for junk in [
            "",
            "v1",
            "v1....",
            plain,
            &old_format,
            &format!("{value}.x"),
        ] {
            assert_eq!(key.verify(junk, now()), None, "{junk}");
        }
    }

    #[test]
    fn an_expired_session_is_refused() {
        let key = key();
        let value = key.encode(&key.sign_in("ada", now()));
        assert!(
            key.verify(&value, now() + SESSION_TTL - Duration::from_secs(1))
                .is_some()
        );
        assert_eq!(key.verify(&value, now() + SESSION_TTL), None);
    }

    #[test]
    fn the_csrf_token_belongs_to_one_sign_in() {
        let key = key();
        let first = key.sign_in("ada", now());
        let second = key.sign_in("ada", now());
        let token = key.csrf(&first);
        assert!(key.check_csrf(&first, &token));
        assert!(!key.check_csrf(&second, &token));
        assert!(!key.check_csrf(&first, ""));
        assert!(!key.check_csrf(&first, &token[1..]));
        let other_key = SessionKey::derive([("ada", &b"x"[..])]);
        assert!(!other_key.check_csrf(&first, &token));
    }

    #[test]
    fn the_sign_in_form_token_needs_its_genuine_unexpired_pre_cookie() {
        let key = key();
        let pre = key.pre_session(now());
        let token = key.pre_csrf(&pre, now()).expect("a genuine pre-session");
        assert!(key.check_pre_csrf(&pre, &token, now()));
        assert!(!key.check_pre_csrf(&pre, "00", now()));
        assert!(!key.check_pre_csrf(&key.pre_session(now()), &token, now()));
        assert!(!key.check_pre_csrf(&pre, &token, now() + PRE_TTL));
        let forged = format!("p1.{}.99999999999.{}", "00".repeat(16), "00".repeat(32));
        assert_eq!(key.pre_csrf(&forged, now()), None);
        let session = key.encode(&key.sign_in("ada", now()));
        assert_eq!(
            key.pre_csrf(&session, now()),
            None,
            "a session is no pre-session"
        );
    }

    fn reviewers(list: &str) -> crate::ReviewerTokens {
        crate::ReviewerTokens::parse(list).unwrap()
    }

    #[test]
    fn with_a_secret_a_new_token_signs_out_only_its_reviewer() {
        let secret = SessionSecret::new(&"s".repeat(MIN_SECRET_BYTES)).unwrap();
        let before = SessionKeys::new(
            &reviewers("ada:tok-ada-0123456789ab,bob:tok-bob-0123456789ab"),
            Some(&secret),
        );
        let cookie = |keys: &SessionKeys, name: &str| {
            let key = keys.for_name(name).unwrap();
            key.encode(&key.sign_in(name, now()))
        };
        let (ada, bob) = (cookie(&before, "ada"), cookie(&before, "bob"));
        assert_eq!(before.verify(&ada, now()).unwrap().0.name, "ada");
        // bob's token replaced, cy added: ada stays signed in, bob is signed out.
        let after = SessionKeys::new(
            &reviewers("ada:tok-ada-0123456789ab,bob:tok-bob-NEW-456789ab,cy:tok-cy-0123456789ab"),
            Some(&secret),
        );
        assert_eq!(after.verify(&ada, now()).unwrap().0.name, "ada");
        assert!(after.verify(&bob, now()).is_none());
        // ada removed: signed out.
        let without_ada = SessionKeys::new(&reviewers("bob:tok-bob-0123456789ab"), Some(&secret));
        assert!(without_ada.verify(&ada, now()).is_none());
        assert!(without_ada.verify(&bob, now()).is_some());
        // One reviewer's cookie never passes as another's, nor under another secret.
        let forged = ada.replacen(&hex::encode("ada"), &hex::encode("bob"), 1);
        assert!(before.verify(&forged, now()).is_none());
        let other = SessionSecret::new(&"t".repeat(MIN_SECRET_BYTES)).unwrap();
        let elsewhere = SessionKeys::new(
            &reviewers("ada:tok-ada-0123456789ab,bob:tok-bob-0123456789ab"),
            Some(&other),
        );
        assert!(elsewhere.verify(&ada, now()).is_none());
    }

    #[test]
    fn without_a_secret_any_change_signs_everyone_out() {
        let before = SessionKeys::new(
            &reviewers("ada:tok-ada-0123456789ab,bob:tok-bob-0123456789ab"),
            None,
        );
        let key = before.for_name("ada").unwrap();
        let ada = key.encode(&key.sign_in("ada", now()));
        assert!(before.verify(&ada, now()).is_some());
        let after = SessionKeys::new(
            &reviewers("ada:tok-ada-0123456789ab,bob:tok-bob-NEW-456789ab"),
            None,
        );
        assert!(after.verify(&ada, now()).is_none());
    }

    #[test]
    fn a_short_secret_is_refused_and_never_shown() {
        assert_eq!(SessionSecret::new("short"), Err(SessionSecretError(5)));
        let secret = SessionSecret::new(&"SECRET".repeat(8)).unwrap();
        assert_eq!(format!("{secret:?}"), "SessionSecret(..)");
    }

    #[test]
    fn the_cookie_has_the_required_attributes() {
        let plain = set_cookie(SESSION_COOKIE, "v", SESSION_TTL, false);
        let mut attributes: Vec<&str> = plain.split("; ").collect();
        attributes.sort_unstable();
        assert_eq!(
            attributes,
            [
                "HttpOnly",
                "Max-Age=28800",
                "Path=/ui",
                "SameSite=Strict",
                "jevjudge_ui=v"
            ]
        );
        assert!(!plain.contains("Secure"));
        assert!(
            set_cookie(SESSION_COOKIE, "v", SESSION_TTL, true)
                .split("; ")
                .any(|attribute| attribute == "Secure")
        );
    }

    #[test]
    fn cookies_are_found_by_exact_name() {
        let header = "a=1; jevjudge_ui_pre=p; jevjudge_ui=s";
        assert_eq!(cookie(header, SESSION_COOKIE).as_deref(), Some("s"));
        assert_eq!(cookie(header, PRE_COOKIE).as_deref(), Some("p"));
        assert_eq!(cookie(header, "b"), None);
    }

    #[test]
    fn debug_never_shows_the_key_or_nonce() {
        let key = key();
        let session = key.sign_in("ada", now());
        assert_eq!(format!("{key:?}"), "SessionKey(..)");
        assert!(!format!("{session:?}").contains("nonce"));
    }
}
