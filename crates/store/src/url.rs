//! Store URLs: `sqlite:PATH` or `postgresql://USER:PASSWORD@HOST:PORT/DB`.

use std::{fmt, path::PathBuf, str::FromStr};

/// Where reviews are kept.
///
/// `Display` never shows a password: `postgresql://app:***@db:5432/jevjudge`.
#[derive(Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// An SQLite file (created with mode 0600 when missing; its directory must exist).
    Sqlite(PathBuf),
    /// A PostgreSQL server (`postgres://` or `postgresql://`), shared by replicas.
    Postgres(String),
}

/// A store URL that is neither `sqlite:PATH` nor `postgresql://…`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreUrlError(String);

impl FromStr for StoreUrl {
    type Err = StoreUrlError;

    fn from_str(text: &str) -> Result<StoreUrl, StoreUrlError> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(StoreUrlError(
                    "`sqlite:` needs a file path, like sqlite:reviews.db".to_owned(),
                ));
            }
            if path.starts_with(":memory:") || path.contains('?') {
                return Err(StoreUrlError(
                    "`sqlite:` takes a plain file path (no :memory:, no ?options)".to_owned(),
                ));
            }
            return Ok(StoreUrl::Sqlite(PathBuf::from(path)));
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(StoreUrl::Postgres(text.to_owned()));
        }
        Err(StoreUrlError(
            "a store URL is sqlite:PATH or postgresql://USER@HOST:PORT/DATABASE".to_owned(),
        ))
    }
}

impl StoreUrl {
    /// `sqlite` or `postgres`.
    pub fn kind(&self) -> &'static str {
        match self {
            StoreUrl::Sqlite(_) => "sqlite",
            StoreUrl::Postgres(_) => "postgres",
        }
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreUrl::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            StoreUrl::Postgres(url) => f.write_str(&redacted(url)),
        }
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreUrl({self})")
    }
}

/// The URL with any password (and any `password=` query value) replaced by `***`.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "***".to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_and_postgres_urls_parse() {
        assert_eq!(
            "sqlite:reviews.db".parse::<StoreUrl>(),
            Ok(StoreUrl::Sqlite(PathBuf::from("reviews.db")))
        );
        assert_eq!(
            "sqlite:///var/lib/j.db".parse::<StoreUrl>(),
            Ok(StoreUrl::Sqlite(PathBuf::from("/var/lib/j.db")))
        );
        assert!(matches!(
            "postgresql://u@h/db".parse::<StoreUrl>(),
            Ok(StoreUrl::Postgres(_))
        ));
        for bad in ["", "sqlite:", "sqlite::memory:", "mysql://x", "reviews.db"] {
            assert!(bad.parse::<StoreUrl>().is_err(), "{bad}");
        }
    }

    #[test]
    fn passwords_are_never_displayed() {
        let url: StoreUrl = "postgresql://app:s3cret@db:5432/j?sslmode=require&password=s3cret"
            .parse()
            .unwrap();
        let shown = format!("{url} {url:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert_eq!(
            url.to_string(),
            "postgresql://app:***@db:5432/j?sslmode=require&password=***"
        );
        let url: StoreUrl = "postgres://app@db/j".parse().unwrap();
        assert_eq!(url.to_string(), "postgres://app@db/j");
    }
}
