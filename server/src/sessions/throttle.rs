//! Failed sign-ins, counted per user and per client address, so that guessing passwords is slow:
//! after [`FAILURES`] failures within [`WINDOW`], sign-ins for that user, or from that address,
//! are refused until the oldest failure is a window old. A sign-in counts as a failure from
//! before its password is checked until it proves right, so guesses at once are counted like
//! guesses one after another. Time is an argument, so tests drive a virtual clock.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
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
    /// Takes a place for one sign-in for `user` (a user who exists) from `client`, before its
    /// password is checked: it counts as a failure from `now` until it is known to be right, so
    /// guesses sent at once cannot pass the limit together. Refused with how long until a
    /// sign-in may be tried when the user or the address has [`FAILURES`] in the window, places
    /// taken included.
    pub fn guess(
        self: &Arc<Self>,
        user: Option<&str>,
        client: Option<IpAddr>,
        now: Instant,
    ) -> Result<Guess, Duration> {
        let mut counts = self.lock();
        let client = client.map(network);
        let wait = [
            user.and_then(|u| counts.users.get(u)),
            client.and_then(|c| counts.clients.get(&c)),
        ]
        .into_iter()
        .flatten()
        .filter_map(|failures| wait_for(failures, now))
        .max();
        if let Some(wait) = wait {
            return Err(wait);
        }
        if let Some(user) = user {
            record(counts.users.entry(user.to_string()).or_default(), now);
        }
        let client = client.filter(|&client| {
            if counts.clients.len() >= CLIENTS && !counts.clients.contains_key(&client) {
                counts
                    .clients
                    .retain(|_, failures| wait_for(failures, now).is_some());
            }
            counts.clients.len() < CLIENTS || counts.clients.contains_key(&client)
        });
        if let Some(client) = client {
            record(counts.clients.entry(client).or_default(), now);
        }
        Ok(Guess {
            throttle: Arc::clone(self),
            user: user.map(str::to_string),
            client,
            at: now,
            settled: false,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A sign-in's place among the failures, taken by [`Throttle::guess`]. Dropped without being
/// settled (the check could not be made, or the request was abandoned), it is given back.
#[derive(Debug)]
pub struct Guess {
    throttle: Arc<Throttle>,
    user: Option<String>,
    /// The client's network, when its failures are remembered.
    client: Option<IpAddr>,
    at: Instant,
    settled: bool,
}

impl Guess {
    /// A wrong password: the place stays, a failure.
    pub fn wrong(mut self) {
        self.settled = true;
    }

    /// A right password: the user's failures are forgotten and the address's place is given
    /// back (its earlier failures are not forgotten, so one account an attacker holds does not
    /// let them guess others').
    pub fn right(mut self) {
        self.settled = true;
        let mut counts = self.throttle.lock();
        if let Some(user) = &self.user {
            counts.users.remove(user);
        }
        if let Some(client) = self.client {
            release(counts.clients.get_mut(&client), self.at);
        }
    }
}

impl Drop for Guess {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let mut counts = self.throttle.lock();
        if let Some(user) = &self.user {
            release(counts.users.get_mut(user), self.at);
        }
        if let Some(client) = self.client {
            release(counts.clients.get_mut(&client), self.at);
        }
    }
}

/// Gives back a place taken at `at`, if it is still counted.
fn release(failures: Option<&mut VecDeque<Instant>>, at: Instant) {
    if let Some(failures) = failures
        && let Some(place) = failures.iter().rposition(|taken| *taken == at)
    {
        failures.remove(place);
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

    /// A wrong password tried at `now`.
    fn fail(throttle: &Arc<Throttle>, user: Option<&str>, client: Option<IpAddr>, now: Instant) {
        throttle
            .guess(user, client, now)
            .expect("may be tried")
            .wrong();
    }

    /// How long until a sign-in may be tried at `now`, asked without trying one.
    fn wait(
        throttle: &Arc<Throttle>,
        user: Option<&str>,
        client: Option<IpAddr>,
        now: Instant,
    ) -> Option<Duration> {
        throttle.guess(user, client, now).err()
    }

    #[test]
    fn the_sixth_quick_failure_waits_until_the_first_is_a_minute_old() {
        let throttle = Arc::new(Throttle::default());
        let start = Instant::now();
        let client = Some(IpAddr::from([203, 0, 113, 7]));
        for second in 0..5 {
            assert_eq!(
                wait(&throttle, Some("acme/alice"), client, at(start, second)),
                None
            );
            fail(&throttle, Some("acme/alice"), client, at(start, second));
        }
        assert_eq!(
            wait(&throttle, Some("acme/alice"), client, at(start, 10)),
            Some(Duration::from_secs(50))
        );
        assert_eq!(
            wait(&throttle, Some("acme/alice"), client, at(start, 60)),
            None
        );
    }

    #[test]
    fn guesses_being_checked_count_so_a_sixth_at_once_waits_and_a_dropped_one_gives_its_place_back()
    {
        let throttle = Arc::new(Throttle::default());
        let start = Instant::now();
        let address = IpAddr::from([203, 0, 113, 8]);
        let client = Some(address);
        let checking: Vec<Guess> = (0..5)
            .map(|_| {
                throttle
                    .guess(Some("acme/alice"), client, start)
                    .expect("a place")
            })
            .collect();
        assert_eq!(
            wait(&throttle, Some("acme/alice"), client, start),
            Some(WINDOW)
        );
        assert!(
            wait(&throttle, Some("acme/bob"), client, start).is_some(),
            "the address is full too"
        );
        let mut checking = checking.into_iter();
        checking.next().expect("a guess").right();
        assert_eq!(
            wait(&throttle, Some("acme/alice"), client, start),
            None,
            "a right password forgets the user's failures"
        );
        assert_eq!(
            wait(&throttle, Some("acme/bob"), client, start),
            None,
            "and gives its address's place back"
        );
        drop(checking.next());
        let wrong = checking.next().expect("a guess");
        wrong.wrong();
        assert_eq!(
            throttle.lock().clients.get(&address).map(VecDeque::len),
            Some(3),
            "of the four left, a dropped guess gave its place back and a wrong one kept it"
        );
    }

    #[test]
    fn another_address_is_still_held_back_by_the_users_count_and_the_reverse() {
        let throttle = Arc::new(Throttle::default());
        let start = Instant::now();
        for second in 0..5 {
            fail(
                &throttle,
                Some("acme/alice"),
                Some(IpAddr::from([10, 0, 0, second as u8])),
                at(start, second),
            );
        }
        let fresh = Some(IpAddr::from([10, 0, 1, 1]));
        assert!(wait(&throttle, Some("acme/alice"), fresh, at(start, 5)).is_some());
        assert_eq!(wait(&throttle, Some("acme/bob"), fresh, at(start, 5)), None);

        let guesser = Some(IpAddr::from([198, 51, 100, 1]));
        for second in 0..5 {
            fail(&throttle, None, guesser, at(start, second));
        }
        assert!(wait(&throttle, Some("acme/bob"), guesser, at(start, 5)).is_some());
    }

    #[test]
    fn a_right_password_forgets_the_users_failures_but_not_the_addresss() {
        let throttle = Arc::new(Throttle::default());
        let start = Instant::now();
        let client = Some(IpAddr::from([192, 0, 2, 1]));
        for second in 0..4 {
            fail(&throttle, Some("acme/alice"), client, at(start, second));
        }
        throttle
            .guess(Some("acme/alice"), client, at(start, 4))
            .expect("a place")
            .right();
        fail(&throttle, Some("acme/alice"), client, at(start, 5));
        assert!(wait(&throttle, Some("acme/alice"), None, at(start, 6)).is_none());
        assert!(wait(&throttle, None, client, at(start, 6)).is_some());
    }

    #[test]
    fn ipv6_addresses_in_one_64_count_as_one_client() {
        let throttle = Arc::new(Throttle::default());
        let start = Instant::now();
        for n in 0..5u16 {
            let address: IpAddr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 2, n, n, n, n).into();
            fail(&throttle, None, Some(address), at(start, 0));
        }
        let sibling: IpAddr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 9, 9, 9, 9).into();
        let stranger: IpAddr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 3, 9, 9, 9, 9).into();
        assert!(wait(&throttle, None, Some(sibling), at(start, 1)).is_some());
        assert!(wait(&throttle, None, Some(stranger), at(start, 1)).is_none());
    }
}
