//! Failed sign-ins, counted per user and per client address, so that guessing passwords is slow:
//! after [`FAILURES`] failures within [`WINDOW`], sign-ins for that user, or from that address,
//! are refused until the oldest failure is a window old. A sign-in counts as a failure from
//! before its password is checked until it proves right, so guesses at once are counted like
//! guesses one after another.
//!
//! The counts live in the database (`sign_in_failures`, on SQLite and PostgreSQL alike), so the
//! replicas on one PostgreSQL database count them together: 5 a minute in all, not 5 for each
//! replica; and a restart forgets none. The rule is written once, [`rule`]; storage runs it in
//! the transaction that takes a sign-in's places, under a lock on its keys, and holds only the
//! statements (`Storage::take_sign_in_places`). Time is the database's clock, so [`rule`] is a
//! function of the failures' times and the time now, tested here on any clock.

use std::net::IpAddr;
use std::time::Duration;

use portal_store::{AsyncStorage, SignInPlaces, StorageError};

/// Failures allowed within [`WINDOW`]. **Decision:** 5 a minute; the sixth is refused.
pub const FAILURES: usize = 5;
/// The window failures are counted in.
pub const WINDOW: Duration = Duration::from_secs(60);

/// The throttle's rule, for the failures of each of a sign-in's keys (its user, its client's
/// address; times in milliseconds, oldest first) at `now_ms`: `None` lets it be checked,
/// `Some(wait)` refuses it for as long as the longest wait of its keys, until the window holds
/// fewer than [`FAILURES`] of that key's failures.
pub fn rule(failures: &[Vec<i64>], now_ms: i64) -> Option<Duration> {
    failures
        .iter()
        .filter_map(|times| wait_for(times, now_ms))
        .max()
}

/// How long until the window holds fewer than [`FAILURES`] of `times`.
fn wait_for(times: &[i64], now_ms: i64) -> Option<Duration> {
    let window = window_ms();
    let recent: Vec<i64> = times
        .iter()
        .copied()
        .filter(|at| now_ms.saturating_sub(*at) < window)
        .collect();
    if recent.len() < FAILURES {
        return None;
    }
    let oldest = recent[recent.len() - FAILURES];
    let left = window.saturating_sub(now_ms.saturating_sub(oldest).max(0));
    Some(Duration::from_millis(u64::try_from(left).unwrap_or(0)))
}

fn window_ms() -> i64 {
    i64::try_from(WINDOW.as_millis()).unwrap_or(i64::MAX)
}

/// The failed sign-ins of the last [`WINDOW`], kept in storage.
#[derive(Debug, Clone)]
pub struct Throttle {
    storage: AsyncStorage,
}

impl Throttle {
    pub fn new(storage: AsyncStorage) -> Self {
        Throttle { storage }
    }

    /// Takes a place for one sign-in for `user` (a user who exists, `ORG/USER`) from `client`,
    /// before its password is checked: it counts as a failure from now until it is known to be
    /// right, so guesses sent at once, to any replica, cannot pass the limit together. The inner
    /// error is how long until a sign-in may be tried, when the user or the address has
    /// [`FAILURES`] in the window, places taken included.
    pub async fn guess(
        &self,
        user: Option<&str>,
        client: Option<IpAddr>,
    ) -> Result<Result<Guess, Duration>, StorageError> {
        let user = user.map(user_key);
        let keys: Vec<String> = user.iter().cloned().chain(client.map(client_key)).collect();
        if keys.is_empty() {
            return Ok(Ok(Guess::none(self.storage.clone())));
        }
        let places = self
            .storage
            .take_sign_in_places(keys, window_ms(), rule)
            .await?;
        let places = match places {
            SignInPlaces::Taken(places) => places,
            SignInPlaces::Wait(wait) => return Ok(Err(wait)),
        };
        let client_place = client.and_then(|_| places.last().copied());
        Ok(Ok(Guess {
            storage: self.storage.clone(),
            user,
            client_place,
            places,
            settled: false,
        }))
    }
}

/// A sign-in's places among the failures, taken by [`Throttle::guess`]. Dropped without being
/// settled (the check could not be made, or the request was abandoned), they are given back in
/// the background.
#[derive(Debug)]
pub struct Guess {
    storage: AsyncStorage,
    /// The user's key, when the user exists.
    user: Option<String>,
    /// The place taken against the client's address, when it has one.
    client_place: Option<i64>,
    /// Every place taken, the user's and the address's.
    places: Vec<i64>,
    settled: bool,
}

impl Guess {
    /// A sign-in that counts against nothing: no known user, no address.
    fn none(storage: AsyncStorage) -> Guess {
        Guess {
            storage,
            user: None,
            client_place: None,
            places: Vec::new(),
            settled: true,
        }
    }

    /// A wrong password: the places stay, failures.
    pub fn wrong(mut self) {
        self.settled = true;
    }

    /// A right password: the user's failures are forgotten and the address's place is given
    /// back (its earlier failures are not forgotten, so one account an attacker holds does not
    /// let them guess others'). A failure to write this is logged; the sign-in stands.
    pub async fn right(mut self) {
        self.settled = true;
        let keys = self.user.take().into_iter().collect();
        let places = self.client_place.into_iter().collect();
        if let Err(error) = self.storage.forget_sign_in_failures(keys, places).await {
            tracing::warn!("a right password could not clear its failed sign-ins: {error}");
        }
    }

    /// A sign-in that was never checked: its places are given back now.
    pub async fn give_back(mut self) {
        self.settled = true;
        let places = std::mem::take(&mut self.places);
        if let Err(error) = self
            .storage
            .forget_sign_in_failures(Vec::new(), places)
            .await
        {
            tracing::warn!("an unchecked sign-in could not give its places back: {error}");
        }
    }
}

impl Drop for Guess {
    fn drop(&mut self) {
        if self.settled || self.places.is_empty() {
            return;
        }
        let (storage, places) = (self.storage.clone(), std::mem::take(&mut self.places));
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if let Err(error) = storage.forget_sign_in_failures(Vec::new(), places).await {
                        tracing::warn!(
                            "an unchecked sign-in could not give its places back: {error}"
                        );
                    }
                });
            }
            Err(_) => tracing::warn!(
                "an unchecked sign-in's places stay until they are a minute old: no runtime to give them back on"
            ),
        }
    }
}

/// What a user's failures are counted against.
fn user_key(user: &str) -> String {
    format!("user {user}")
}

/// What a client's failures are counted against: its address, or its /64 for IPv6.
fn client_key(client: IpAddr) -> String {
    format!("client {}", network(client))
}

/// The part of an address one client holds: the address itself for IPv4, its /64 network for
/// IPv6, where one machine commonly has a whole /64 to pick addresses from.
pub fn network(address: IpAddr) -> IpAddr {
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use portal_store_sqlite::SqliteStorage;

    const SECOND: i64 = 1_000;

    /// Failures at these seconds.
    fn at(seconds: &[i64]) -> Vec<i64> {
        seconds.iter().map(|s| s * SECOND).collect()
    }

    #[test]
    fn the_sixth_quick_failure_waits_until_the_first_is_a_minute_old() {
        let five = at(&[0, 1, 2, 3, 4]);
        assert_eq!(rule(&[at(&[0, 1, 2, 3])], 5 * SECOND), None);
        assert_eq!(
            rule(std::slice::from_ref(&five), 10 * SECOND),
            Some(Duration::from_secs(50))
        );
        assert_eq!(
            rule(std::slice::from_ref(&five), 59 * SECOND + 999),
            Some(Duration::from_millis(1))
        );
        assert_eq!(rule(&[five], 60 * SECOND), None);
        assert_eq!(
            rule(&[at(&[0, 10, 20, 30, 40, 50])], 65 * SECOND),
            Some(Duration::from_secs(5)),
            "the oldest of the five in the window counts"
        );
        assert_eq!(
            rule(&[vec![0; 5]], 0),
            Some(WINDOW),
            "five at once wait a whole window"
        );
    }

    #[test]
    fn the_longest_wait_of_the_user_and_the_address_holds_a_sign_in_back() {
        let user = at(&[0, 1, 2, 3, 4]);
        let address = at(&[20, 21, 22, 23, 24]);
        assert_eq!(
            rule(&[user.clone(), address], 30 * SECOND),
            Some(Duration::from_secs(50))
        );
        assert_eq!(
            rule(&[user, Vec::new()], 30 * SECOND),
            Some(Duration::from_secs(30))
        );
        assert_eq!(rule(&[Vec::new(), Vec::new()], 0), None);
        assert_eq!(rule(&[], 0), None);
    }

    #[test]
    fn ipv6_addresses_in_one_64_count_as_one_client() {
        let address: IpAddr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 3, 4, 5, 6).into();
        let sibling: IpAddr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 2, 9, 9, 9, 9).into();
        let stranger: IpAddr = std::net::Ipv6Addr::new(0x2001, 0xdb8, 1, 3, 3, 4, 5, 6).into();
        assert_eq!(client_key(address), "client 2001:db8:1:2::");
        assert_eq!(client_key(address), client_key(sibling));
        assert_ne!(client_key(address), client_key(stranger));
        assert_eq!(
            client_key(IpAddr::from([203, 0, 113, 7])),
            "client 203.0.113.7"
        );
    }

    fn throttle() -> Throttle {
        Throttle::new(AsyncStorage::new(Arc::new(
            SqliteStorage::in_memory().expect("a database"),
        )))
    }

    /// How long a sign-in would wait now; one that would not wait gives its places back.
    async fn wait(
        throttle: &Throttle,
        user: Option<&str>,
        client: Option<IpAddr>,
    ) -> Option<Duration> {
        match throttle.guess(user, client).await.expect("storage works") {
            Ok(guess) => {
                guess.give_back().await;
                None
            }
            Err(wait) => Some(wait),
        }
    }

    async fn fail(throttle: &Throttle, user: Option<&str>, client: Option<IpAddr>) {
        throttle
            .guess(user, client)
            .await
            .expect("storage works")
            .expect("may be tried")
            .wrong();
    }

    #[tokio::test]
    async fn guesses_being_checked_count_so_a_sixth_at_once_waits_and_a_dropped_one_gives_its_place_back()
     {
        let throttle = throttle();
        let client = Some(IpAddr::from([203, 0, 113, 8]));
        let mut checking = Vec::new();
        for _ in 0..5 {
            checking.push(
                throttle
                    .guess(Some("acme/alice"), client)
                    .await
                    .expect("storage works")
                    .expect("a place"),
            );
        }
        let waited = wait(&throttle, Some("acme/alice"), client)
            .await
            .expect("the sixth waits");
        assert!(waited > WINDOW - Duration::from_secs(5), "{waited:?}");
        assert!(
            wait(&throttle, Some("acme/bob"), client).await.is_some(),
            "the address is full too"
        );
        let mut checking = checking.into_iter();
        checking.next().expect("a guess").right().await;
        assert_eq!(
            wait(&throttle, Some("acme/alice"), client).await,
            None,
            "a right password forgets the user's failures"
        );
        checking.next().expect("a guess").give_back().await;
        checking.next().expect("a guess").wrong();
        // Of the address's five places, the right one and the given-back one are free again:
        // two more sign-ins from it may be checked, and the third waits.
        fail(&throttle, Some("acme/bob"), client).await;
        fail(&throttle, Some("acme/bob"), client).await;
        assert!(wait(&throttle, Some("acme/carol"), client).await.is_some());
        drop(checking);
    }

    #[tokio::test]
    async fn a_guess_dropped_unsettled_gives_its_places_back_in_the_background() {
        let throttle = throttle();
        let client = Some(IpAddr::from([203, 0, 113, 9]));
        for _ in 0..5 {
            drop(
                throttle
                    .guess(Some("acme/alice"), client)
                    .await
                    .expect("storage works")
                    .expect("a place"),
            );
        }
        for _ in 0..100 {
            if wait(&throttle, Some("acme/alice"), client).await.is_none() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the dropped guesses' places were not given back");
    }

    #[tokio::test]
    async fn another_address_is_still_held_back_by_the_users_count_and_the_reverse() {
        let throttle = throttle();
        for n in 0..5 {
            fail(
                &throttle,
                Some("acme/alice"),
                Some(IpAddr::from([10, 0, 0, n])),
            )
            .await;
        }
        let fresh = Some(IpAddr::from([10, 0, 1, 1]));
        assert!(wait(&throttle, Some("acme/alice"), fresh).await.is_some());
        assert_eq!(wait(&throttle, Some("acme/bob"), fresh).await, None);

        let guesser = Some(IpAddr::from([198, 51, 100, 1]));
        for _ in 0..5 {
            fail(&throttle, None, guesser).await;
        }
        assert!(wait(&throttle, Some("acme/bob"), guesser).await.is_some());
    }

    #[tokio::test]
    async fn a_right_password_forgets_the_users_failures_but_not_the_addresss() {
        let throttle = throttle();
        let client = Some(IpAddr::from([192, 0, 2, 1]));
        for _ in 0..4 {
            fail(&throttle, Some("acme/alice"), client).await;
        }
        throttle
            .guess(Some("acme/alice"), client)
            .await
            .expect("storage works")
            .expect("a place")
            .right()
            .await;
        fail(&throttle, Some("acme/alice"), client).await;
        assert!(wait(&throttle, Some("acme/alice"), None).await.is_none());
        assert!(wait(&throttle, None, client).await.is_some());
    }
}
