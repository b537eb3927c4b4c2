//! Failed sign-ins, counted per user and per client address, so that guessing passwords is slow:
//! after [`FAILURES`] failures within [`WINDOW`], sign-ins for that user, or from that address,
//! are refused until the oldest failure is a window old. Time is an argument, so tests drive a
//! virtual clock.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures allowed within [`WINDOW`]. **Decision:** 5 a minute; the sixth is refused.
pub const FAILURES: usize = 5;
/// The window failures are counted in.
pub const WINDOW: Duration = Duration::from_secs(60);
/// The most client addresses remembered at once; beyond it, addresses whose failures are a
/// window old are forgotten, and failures from new addresses count only against their user.
const CLIENTS: usize = 65_536;

/// The failed sign-ins of the last [`WINDOW`].
#[derive(Debug, Default)]
pub struct Throttle {
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    users: HashMap<String, VecDeque<Instant>>,
    clients: HashMap<IpAddr, VecDeque<Instant>>,
}

impl Throttle {
    /// How long until a sign-in for `user` (a user who exists) from `client` may be tried, or
    /// `None` when it may be tried now.
    pub fn wait(
        &self,
        user: Option<&str>,
        client: Option<IpAddr>,
        now: Instant,
    ) -> Option<Duration> {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let user = user.and_then(|u| counts.users.get(u));
        let client = client.map(network).and_then(|c| counts.clients.get(&c));
        [user, client]
            .into_iter()
            .flatten()
            .filter_map(|failures| wait_for(failures, now))
            .max()
    }

    /// Counts a failed sign-in.
    pub fn failed(&self, user: Option<&str>, client: Option<IpAddr>, now: Instant) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(user) = user {
            record(counts.users.entry(user.to_string()).or_default(), now);
        }
        if let Some(client) = client.map(network) {
            if counts.clients.len() >= CLIENTS && !counts.clients.contains_key(&client) {
                counts
                    .clients
                    .retain(|_, failures| wait_for(failures, now).is_some());
            }
            if counts.clients.len() < CLIENTS || counts.clients.contains_key(&client) {
                record(counts.clients.entry(client).or_default(), now);
            }
        }
    }

    /// A right password: the user's failures are forgotten (their address's are not, so one
    /// account an attacker holds does not let them guess others').
    pub fn succeeded(&self, user: &str) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.users.remove(user);
    }
}

/// The part of an address one client holds: the address itself for IPv4, its /64 network for
/// IPv6, where one machine commonly has a whole /64 to pick addresses from.
fn network(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => {
            let segments = v6.segments();
            IpAddr::V6(std::net::Ipv6Addr::new(
                segments[0],
                segments[1],
                segments[2],
                segments[3],
                0,
                0,
                0,
                0,
            ))
        }
    }
}

fn record(failures: &mut VecDeque<Instant>, now: Instant) {
    while failures.len() >= FAILURES {
        failures.pop_front();
    }
    failures.push_back(now);
}

/// How long until the window holds fewer than [`FAILURES`] failures.
fn wait_for(failures: &VecDeque<Instant>, now: Instant) -> Option<Duration> {
    let recent: Vec<&Instant> = failures
        .iter()
        .filter(|at| now.saturating_duration_since(**at) < WINDOW)
        .collect();
    if recent.len() < FAILURES {
        return None;
    }
    let oldest = recent[recent.len() - FAILURES];
    Some(WINDOW.saturating_sub(now.saturating_duration_since(*oldest)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, seconds: u64) -> Instant {
        start + Duration::from_secs(seconds)
    }

    #[test]
    fn the_sixth_quick_failure_waits_until_the_first_is_a_minute_old() {
        let throttle = Throttle::default();
        let start = Instant::now();
        let client = Some(IpAddr::from([203, 0, 113, 7]));
        for second in 0..5 {
            assert_eq!(
                throttle.wait(Some("acme/alice"), client, at(start, second)),
                None
            );
            throttle.failed(Some("acme/alice"), client, at(start, second));
        }
        assert_eq!(
            throttle.wait(Some("acme/alice"), client, at(start, 10)),
            Some(Duration::from_secs(50))
        );
        assert_eq!(
            throttle.wait(Some("acme/alice"), client, at(start, 60)),
            None
        );
    }

    #[test]
    fn another_address_is_still_held_back_by_the_users_count_and_the_reverse() {
        let throttle = Throttle::default();
        let start = Instant::now();
        for second in 0..5 {
            throttle.failed(
                Some("acme/alice"),
                Some(IpAddr::from([10, 0, 0, second as u8])),
                at(start, second),
            );
        }
        let fresh = Some(IpAddr::from([10, 0, 1, 1]));
        assert!(
            throttle
                .wait(Some("acme/alice"), fresh, at(start, 5))
                .is_some()
        );
        assert_eq!(throttle.wait(Some("acme/bob"), fresh, at(start, 5)), None);

        let guesser = Some(IpAddr::from([198, 51, 100, 1]));
        for second in 0..5 {
            throttle.failed(None, guesser, at(start, second));
        }
        assert!(
            throttle
                .wait(Some("acme/bob"), guesser, at(start, 5))
                .is_some()
        );
    }

    #[test]
    fn a_right_password_forgets_the_users_failures_but_not_the_addresss() {
        let throttle = Throttle::default();
        let start = Instant::now();
        let client = Some(IpAddr::from([192, 0, 2, 1]));
        for second in 0..4 {
            throttle.failed(Some("acme/alice"), client, at(start, second));
        }
        throttle.succeeded("acme/alice");
        throttle.failed(Some("acme/alice"), client, at(start, 5));
        assert!(
            throttle
                .wait(Some("acme/alice"), None, at(start, 6))
                .is_none()
        );
        assert!(throttle.wait(None, client, at(start, 6)).is_some());
    }

    #[test]
    fn ipv6_addresses_in_one_64_count_as_one_client() {
        let throttle = Throttle::default();
        let start = Instant::now();
        for n in 0..5u16 {
            let address: IpAddr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 2, n, n, n, n).into();
            throttle.failed(None, Some(address), at(start, 0));
        }
        let sibling: IpAddr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 9, 9, 9, 9).into();
        let stranger: IpAddr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 3, 9, 9, 9, 9).into();
        assert!(throttle.wait(None, Some(sibling), at(start, 1)).is_some());
        assert!(throttle.wait(None, Some(stranger), at(start, 1)).is_none());
    }
}
