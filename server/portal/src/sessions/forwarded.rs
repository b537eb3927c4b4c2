//! The client's address behind proxies the portal trusts (`--trusted-proxy`), for the failed
//! sign-in counts. Behind a proxy every connection comes from the proxy, so counting its address
//! would let one guesser lock everyone out. A proxy adds the address it was reached from to
//! `X-Forwarded-For`; the header is read from the right, past the trusted proxies, so a client
//! cannot name an address of its own choosing: what it writes there stays left of the first
//! address no trusted proxy vouches for.

use std::net::{IpAddr, SocketAddr};

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The header proxies add the address they were reached from to.
const FORWARDED_FOR: &str = "x-forwarded-for";

/// The address failed sign-ins are counted against, for a connection from `peer`: `peer`
/// itself, unless it is a trusted proxy; then the rightmost `X-Forwarded-For` address that is
/// not one (or, when the header runs out or holds something that is not an address, the last
/// address read, itself a trusted proxy).
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |address: &IpAddr| trusted.iter().any(|net| net.contains(address));
    let mut client = peer.to_canonical();
    if !is_trusted(&client) {
        return client;
    }
    let hops: Vec<&str> = headers
        .get_all(FORWARDED_FOR)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .collect();
    for hop in hops.into_iter().rev() {
        let Some(address) = address(hop) else {
            break;
        };
        client = address.to_canonical();
        if !is_trusted(&client) {
            break;
        }
    }
    client
}

/// Reads `--trusted-proxy`: an address (`10.0.0.5`, `::1`) or a network (`10.0.0.0/8`).
pub fn parse_trusted_proxy(text: &str) -> Result<IpNet, String> {
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map(|net| net.trunc())
        .map_err(|_| {
            format!("`{text}` is not an address or a network; write it as 10.0.0.5 or 10.0.0.0/24")
        })
}

/// One `X-Forwarded-For` entry: an address, with or without a port (`[::1]:443`, `1.2.3.4:80`).
fn address(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    /// The client address for a connection from `peer` carrying `forwarded` (one header each),
    /// with `trusted` proxies.
    fn check(peer: &str, forwarded: &[&str], trusted: &[&str], expected: &str) {
        let mut headers = HeaderMap::new();
        for value in forwarded {
            headers.append(FORWARDED_FOR, HeaderValue::from_str(value).unwrap());
        }
        let trusted: Vec<IpNet> = trusted
            .iter()
            .map(|t| parse_trusted_proxy(t).unwrap())
            .collect();
        let got = client_address(peer.parse().unwrap(), &headers, &trusted);
        assert_eq!(
            got,
            expected.parse::<IpAddr>().unwrap(),
            "{peer} {forwarded:?} {trusted:?}"
        );
    }

    #[test]
    fn without_trusted_proxies_the_header_is_ignored() {
        check("203.0.113.7", &["198.51.100.1"], &[], "203.0.113.7");
        check("127.0.0.1", &["198.51.100.1"], &[], "127.0.0.1");
    }

    #[test]
    fn a_connection_from_elsewhere_cannot_name_its_address() {
        check(
            "203.0.113.7",
            &["198.51.100.1"],
            &["10.0.0.0/8"],
            "203.0.113.7",
        );
    }

    #[test]
    fn behind_a_trusted_proxy_the_address_it_was_reached_from_counts() {
        check("10.0.0.2", &["198.51.100.1"], &["10.0.0.2"], "198.51.100.1");
        check(
            "10.0.0.2",
            &["198.51.100.1:5123"],
            &["10.0.0.2"],
            "198.51.100.1",
        );
        check(
            "10.0.0.2",
            &["[2001:db8::5]:443"],
            &["10.0.0.0/8"],
            "2001:db8::5",
        );
    }

    #[test]
    fn what_a_client_writes_itself_stays_left_of_the_address_the_proxy_saw() {
        // The client sent `X-Forwarded-For: 192.0.2.1`; nginx appended the address it saw.
        check(
            "10.0.0.2",
            &["192.0.2.1, 198.51.100.1"],
            &["10.0.0.2"],
            "198.51.100.1",
        );
        check(
            "10.0.0.2",
            &["192.0.2.1", "198.51.100.1"],
            &["10.0.0.2"],
            "198.51.100.1",
        );
    }

    #[test]
    fn chains_of_trusted_proxies_are_walked_through() {
        check(
            "10.0.0.2",
            &["198.51.100.1, 10.0.0.9, 10.0.0.3"],
            &["10.0.0.0/8"],
            "198.51.100.1",
        );
    }

    #[test]
    fn a_missing_or_broken_header_leaves_the_last_proxy() {
        check("10.0.0.2", &[], &["10.0.0.2"], "10.0.0.2");
        check("10.0.0.2", &["unknown"], &["10.0.0.0/8"], "10.0.0.2");
        check(
            "10.0.0.2",
            &["198.51.100.1, bogus, 10.0.0.3"],
            &["10.0.0.0/8"],
            "10.0.0.3",
        );
    }

    #[test]
    fn ipv4_mapped_addresses_are_read_as_ipv4() {
        check(
            "::ffff:10.0.0.2",
            &["198.51.100.1"],
            &["10.0.0.2"],
            "198.51.100.1",
        );
    }

    #[test]
    fn trusted_proxies_are_addresses_or_networks() {
        assert_eq!(
            parse_trusted_proxy("10.0.0.5").unwrap().to_string(),
            "10.0.0.5/32"
        );
        assert_eq!(
            parse_trusted_proxy("10.1.2.3/8").unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!(parse_trusted_proxy("::1").unwrap().to_string(), "::1/128");
        for wrong in [
            "",
            "10.0.0",
            "10.0.0.0/33",
            "proxy.example.com",
            "10.0.0.1:80",
        ] {
            assert!(parse_trusted_proxy(wrong).is_err(), "{wrong}");
        }
    }
}
