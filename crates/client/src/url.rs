//! Base URL validation and joining (systemone-wire.md §1).
//!
//! The rules follow the Java client, so gateways with a path prefix work: trim, strip trailing
//! `/`, then append `/v1/systemone`, `/systemone` or nothing depending on how the URL ends.
//! Validation is strict because the key travels with every request: only absolute `http(s)`
//! URLs, no query, no fragment, no credentials, and plain `http` only for loopback hosts unless
//! the caller opts in.

use std::net::{IpAddr, Ipv6Addr};

use reqwest::Url;

use crate::ConfigError;

/// The default root when neither configuration nor `TYPESAFE_BASE_URL` gives one.
pub const DEFAULT_BASE_URL: &str = "https://api.typesafe.ai";
/// The environment variable read for the root when none is configured.
pub const TYPESAFE_BASE_URL: &str = "TYPESAFE_BASE_URL";

const SYSTEMONE_SUFFIX: &str = "/v1/systemone";
const V1_SUFFIX: &str = "/v1";

/// The two URLs the client calls, derived from one configured root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoints {
    /// `POST` target for reviews.
    pub(crate) systemone: String,
    /// `GET` target listing models.
    pub(crate) models: String,
}

impl Endpoints {
    /// Validates `configured` and joins the endpoint and models URLs.
    pub(crate) fn parse(
        configured: &str,
        allow_insecure_http: bool,
    ) -> Result<Endpoints, ConfigError> {
        let trimmed = configured.trim().trim_end_matches('/');
        let url = Url::parse(trimmed).map_err(|_| ConfigError::InvalidBaseUrl)?;
        let secure = match url.scheme() {
            "https" => true,
            "http" => false,
            _ => return Err(ConfigError::InvalidBaseUrl),
        };
        let host = match url.host_str() {
            Some(host) if !host.trim().is_empty() => host,
            _ => return Err(ConfigError::InvalidBaseUrl),
        };
        if url.query().is_some() || url.fragment().is_some() {
            return Err(ConfigError::BaseUrlQueryOrFragment);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(ConfigError::BaseUrlCredentials);
        }
        if !secure && !allow_insecure_http && !is_loopback(host) {
            return Err(ConfigError::InsecureHttp {
                host: host.to_owned(),
            });
        }
        // The parsed form is normalised (scheme and host lower-cased, spaces escaped); a bare
        // host gains a `/` path, which the joining rules strip again.
        // The suffix rules look at the path only, so a host named `v1` is not a suffix.
        let root = url.as_str().trim_end_matches('/');
        let path = url.path().trim_end_matches('/');
        Ok(Endpoints {
            systemone: join_systemone(root, path),
            models: join_models(root, path),
        })
    }
}

/// Joining rules 2–4 of §1 on a root that has no trailing `/`; `path` is its path part.
fn join_systemone(root: &str, path: &str) -> String {
    if path.ends_with(SYSTEMONE_SUFFIX) {
        root.to_owned()
    } else if path.ends_with(V1_SUFFIX) {
        format!("{root}/systemone")
    } else {
        format!("{root}{SYSTEMONE_SUFFIX}")
    }
}

/// The models URL: the root without a trailing `/v1/systemone` or `/v1`, plus `/v1/models`.
fn join_models(root: &str, path: &str) -> String {
    let base = if path.ends_with(SYSTEMONE_SUFFIX) {
        &root[..root.len() - SYSTEMONE_SUFFIX.len()]
    } else if path.ends_with(V1_SUFFIX) {
        &root[..root.len() - V1_SUFFIX.len()]
    } else {
        root
    };
    format!("{}/v1/models", base.trim_end_matches('/'))
}

/// `localhost`, 127.0.0.0/8 and `::1` (an IPv4-mapped loopback counts too). `host` is the
/// parsed URL's host: lower-case, IPv6 in brackets.
fn is_loopback(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match bare.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback(),
        Ok(IpAddr::V6(ip)) => {
            ip == Ipv6Addr::LOCALHOST || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(configured: &str) -> String {
        Endpoints::parse(configured, false).unwrap().systemone
    }

    #[test]
    fn joining_table_of_section_1() {
        let table = [
            (
                "https://api.typesafe.ai",
                "https://api.typesafe.ai/v1/systemone",
            ),
            (
                "http://127.0.0.1:8787/",
                "http://127.0.0.1:8787/v1/systemone",
            ),
            (
                " https://gw.example/typesafe// ",
                "https://gw.example/typesafe/v1/systemone",
            ),
            (
                "https://gw.example/typesafe/v1/",
                "https://gw.example/typesafe/v1/systemone",
            ),
            (
                "https://gw.example/typesafe/v1/systemone",
                "https://gw.example/typesafe/v1/systemone",
            ),
        ];
        for (configured, expected) in table {
            assert_eq!(endpoint(configured), expected, "{configured:?}");
        }
    }

    #[test]
    fn models_url_strips_the_endpoint_suffix() {
        let models = |configured: &str| Endpoints::parse(configured, false).unwrap().models;
        assert_eq!(
            models("https://api.typesafe.ai"),
            "https://api.typesafe.ai/v1/models"
        );
        assert_eq!(
            models("https://gw.example/p/v1/"),
            "https://gw.example/p/v1/models"
        );
        assert_eq!(
            models("https://gw.example/p/v1/systemone/"),
            "https://gw.example/p/v1/models"
        );
        assert_eq!(
            models("http://localhost:1/"),
            "http://localhost:1/v1/models"
        );
        // A host named like a suffix is a host, not a suffix.
        assert_eq!(models("https://v1"), "https://v1/v1/models");
        assert_eq!(endpoint("https://v1"), "https://v1/v1/systemone");
        assert_eq!(
            endpoint("https://systemone/v1"),
            "https://systemone/v1/systemone"
        );
    }

    #[test]
    fn scheme_and_host_are_case_insensitive() {
        assert_eq!(
            endpoint("HTTPS://API.TypeSafe.AI"),
            "https://api.typesafe.ai/v1/systemone"
        );
        assert_eq!(
            endpoint("HTTP://LocalHost:9"),
            "http://localhost:9/v1/systemone"
        );
    }

    #[test]
    fn invalid_urls_are_rejected_with_the_spec_message() {
        for bad in [
            "not-a-url",
            "",
            "   ",
            "/v1/systemone",
            "ftp://api.typesafe.ai",
            "file:///etc/passwd",
            "mailto:x@y.z",
            "https://",
            "https:// /",
        ] {
            let error = Endpoints::parse(bad, true).unwrap_err();
            assert_eq!(error, ConfigError::InvalidBaseUrl, "{bad:?}");
            assert_eq!(error.to_string(), "baseUrl must be an absolute http(s) URL");
        }
    }

    #[test]
    fn query_fragment_and_credentials_are_rejected() {
        for bad in [
            "https://api.typesafe.ai?x=1",
            "https://api.typesafe.ai/?",
            "https://api.typesafe.ai/#top",
            "https://api.typesafe.ai/v1#",
        ] {
            assert_eq!(
                Endpoints::parse(bad, false),
                Err(ConfigError::BaseUrlQueryOrFragment),
                "{bad:?}"
            );
        }
        assert_eq!(
            Endpoints::parse("https://user:pw@api.typesafe.ai", false),
            Err(ConfigError::BaseUrlCredentials)
        );
    }

    #[test]
    fn plain_http_is_for_loopback_unless_opted_in() {
        for loopback in [
            "http://localhost",
            "http://127.0.0.1:8787",
            "http://127.9.8.7",
            "http://[::1]:8080/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            assert!(Endpoints::parse(loopback, false).is_ok(), "{loopback}");
        }
        for remote in [
            "http://api.typesafe.ai",
            "http://10.0.0.1",
            "http://[::2]",
            "http://0.0.0.0",
        ] {
            let error = Endpoints::parse(remote, false).unwrap_err();
            assert!(
                matches!(error, ConfigError::InsecureHttp { .. }),
                "{remote}"
            );
            assert!(Endpoints::parse(remote, true).is_ok(), "{remote}");
        }
        assert!(Endpoints::parse("https://api.typesafe.ai", false).is_ok());
    }
}
