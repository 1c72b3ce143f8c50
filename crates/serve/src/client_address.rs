//! The address a request came from, for the per-address limits (sign-in attempts, failed
//! bearer checks).
//!
//! The peer of the TCP connection is the client unless it is one of the operator's trusted
//! proxies ([`crate::Config::trusted_proxies`], `--trusted-proxy CIDR`). Only then is
//! `X-Forwarded-For` read: from its right end, every address inside a trusted network is a
//! proxy and skipped; the first one outside is the client. A header from any other peer is
//! ignored, since anyone can write one.

use std::{fmt, net::IpAddr, str::FromStr};

use axum::http::HeaderMap;

/// A network whose peers are trusted to say, in `X-Forwarded-For`, whom they forward:
/// `10.0.0.0/8`, `2001:db8::/32`, or one address (`192.0.2.1`, a /32 or /128).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedProxy {
    network: IpAddr,
    prefix: u8,
}

/// Why a trusted proxy network was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TrustedProxyError {
    /// Not an IPv4 or IPv6 address, with or without `/prefix`.
    #[error("`{0}` is not an address or a network such as 10.0.0.0/8 or 2001:db8::/32")]
    NotANetwork(String),
    /// A prefix longer than the address (32 for IPv4, 128 for IPv6).
    #[error("`{0}`: the prefix length is more than the address has bits")]
    PrefixTooLong(String),
}

impl TrustedProxy {
    /// Whether `address` is inside this network (an IPv4-mapped IPv6 address counts as its
    /// IPv4 address).
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.network, canonical(address)) {
            (IpAddr::V4(network), IpAddr::V4(address)) => {
                masked(u128::from(u32::from(address)), 32, self.prefix)
                    == u128::from(u32::from(network))
            }
            (IpAddr::V6(network), IpAddr::V6(address)) => {
                masked(u128::from(address), 128, self.prefix) == u128::from(network)
            }
            _ => false,
        }
    }
}

/// `value` with only its first `prefix` bits of `bits` kept.
fn masked(value: u128, bits: u8, prefix: u8) -> u128 {
    if prefix == 0 {
        return 0;
    }
    let host_bits = u32::from(bits - prefix);
    value >> host_bits << host_bits
}

fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

impl FromStr for TrustedProxy {
    type Err = TrustedProxyError;

    fn from_str(text: &str) -> Result<TrustedProxy, TrustedProxyError> {
        let text = text.trim();
        let not_a_network = || TrustedProxyError::NotANetwork(text.to_owned());
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => {
                if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(not_a_network());
                }
                (
                    address,
                    Some(prefix.parse::<u8>().map_err(|_| not_a_network())?),
                )
            }
            None => (text, None),
        };
        let address = canonical(address.parse::<IpAddr>().map_err(|_| not_a_network())?);
        let bits = if address.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(bits);
        if prefix > bits {
            return Err(TrustedProxyError::PrefixTooLong(text.to_owned()));
        }
        let network = match address {
            IpAddr::V4(v4) => IpAddr::V4(
                u32::try_from(masked(u128::from(u32::from(v4)), 32, prefix))
                    .expect("a masked IPv4 address fits in 32 bits")
                    .into(),
            ),
            IpAddr::V6(v6) => IpAddr::V6(masked(u128::from(v6), 128, prefix).into()),
        };
        Ok(TrustedProxy { network, prefix })
    }
}

impl fmt::Display for TrustedProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// The client's address: the peer's, or — when the peer is a trusted proxy — the rightmost
/// address of `X-Forwarded-For` outside every trusted network. When every listed address is
/// trusted, the leftmost is the client; when an entry is not an address, the proxy that
/// wrote it (the last trusted hop) stands for the client. `None` without a peer (the router
/// driven in-process).
pub(crate) fn client_address(
    peer: Option<IpAddr>,
    headers: &HeaderMap,
    trusted: &[TrustedProxy],
) -> Option<IpAddr> {
    let peer = canonical(peer?);
    let is_trusted = |address: IpAddr| trusted.iter().any(|network| network.contains(address));
    if !is_trusted(peer) {
        return Some(peer);
    }
    let forwarded: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .collect();
    let mut client = peer;
    for entry in forwarded.iter().rev() {
        let Some(address) = parse_forwarded(entry) else {
            return Some(client);
        };
        client = canonical(address);
        if !is_trusted(client) {
            return Some(client);
        }
    }
    Some(client)
}

/// An `X-Forwarded-For` entry: an address, an IPv4 `address:port`, or `[IPv6]:port`.
fn parse_forwarded(entry: &str) -> Option<IpAddr> {
    if let Ok(address) = entry.parse::<IpAddr>() {
        return Some(address);
    }
    entry
        .parse::<std::net::SocketAddr>()
        .ok()
        .map(|socket| socket.ip())
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn proxies(list: &[&str]) -> Vec<TrustedProxy> {
        list.iter().map(|text| text.parse().unwrap()).collect()
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn networks_parse_and_contain_their_addresses() {
        let network: TrustedProxy = "10.1.2.3/8".parse().unwrap();
        assert_eq!(network.to_string(), "10.0.0.0/8");
        assert!(network.contains(ip("10.255.0.1")));
        assert!(network.contains(ip("::ffff:10.0.0.9")));
        assert!(!network.contains(ip("11.0.0.1")));
        let one: TrustedProxy = "192.0.2.1".parse().unwrap();
        assert_eq!(one.to_string(), "192.0.2.1/32");
        assert!(one.contains(ip("192.0.2.1")) && !one.contains(ip("192.0.2.2")));
        let v6: TrustedProxy = "2001:db8::/32".parse().unwrap();
        assert!(v6.contains(ip("2001:db8:ffff::1")));
        assert!(!v6.contains(ip("2001:db9::1")));
        let all: TrustedProxy = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("203.0.113.1")) && !all.contains(ip("::1")));
        for bad in [
            "",
            "10.0.0.0/",
            "10.0.0.0/x",
            "10.0.0.0/-1",
            "example.com",
            "10.0.0/8",
        ] {
            assert!(
                matches!(
                    bad.parse::<TrustedProxy>(),
                    Err(TrustedProxyError::NotANetwork(_))
                ),
                "{bad}"
            );
        }
        assert_eq!(
            "10.0.0.0/33".parse::<TrustedProxy>(),
            Err(TrustedProxyError::PrefixTooLong("10.0.0.0/33".to_owned()))
        );
        assert!("::/129".parse::<TrustedProxy>().is_err());
    }

    #[test]
    fn sign_in_lock_out_forwarded_for_is_read_only_from_trusted_peers() {
        let trusted = proxies(&["10.0.0.0/8"]);
        let headers = forwarded(&["198.51.100.7, 203.0.113.5"]);
        // An untrusted peer is the client, whatever it writes.
        assert_eq!(
            client_address(Some(ip("192.0.2.9")), &headers, &trusted),
            Some(ip("192.0.2.9"))
        );
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &headers, &[]),
            Some(ip("10.0.0.2"))
        );
        // From a trusted peer: the rightmost address outside the trusted networks.
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &headers, &trusted),
            Some(ip("203.0.113.5"))
        );
        let chained = forwarded(&["198.51.100.7", "203.0.113.5, 10.9.9.9"]);
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &chained, &trusted),
            Some(ip("203.0.113.5"))
        );
        // Every hop trusted: the leftmost; no header: the peer.
        let inside = forwarded(&["10.1.1.1, 10.2.2.2"]);
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &inside, &trusted),
            Some(ip("10.1.1.1"))
        );
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &HeaderMap::new(), &trusted),
            Some(ip("10.0.0.2"))
        );
        // A garbled entry: the last trusted hop stands for the client.
        let garbled = forwarded(&["203.0.113.5, not-an-address, 10.3.3.3"]);
        assert_eq!(
            client_address(Some(ip("10.0.0.2")), &garbled, &trusted),
            Some(ip("10.3.3.3"))
        );
        // Ports and IPv4-mapped peers.
        let ported = forwarded(&["203.0.113.5:4711", "[2001:db8::1]:443"]);
        assert_eq!(
            client_address(Some(ip("::ffff:10.0.0.2")), &ported, &trusted),
            Some(ip("2001:db8::1"))
        );
        assert_eq!(client_address(None, &headers, &trusted), None);
    }
}
