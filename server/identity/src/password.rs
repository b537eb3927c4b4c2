//! Passwords: the configuration holds only an argon2id hash of each (in PHC string form,
//! `$argon2id$v=19$…`), made by `portal user add` and `portal user passwd`.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use sha2::{Digest, Sha256};

/// The shortest password `portal user add` accepts.
pub const MIN_LENGTH: usize = 8;

/// A user's stored password hash.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordDigest(String);

impl std::fmt::Debug for PasswordDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordDigest(…)")
    }
}

impl PasswordDigest {
    /// Hashes `password` with argon2id (the crate's defaults: 19 MiB, two passes, one lane, the
    /// OWASP recommendation) and a fresh random salt.
    pub fn hash(password: &str) -> Result<Self, PasswordError> {
        let mut salt = [0u8; 16];
        getrandom::fill(&mut salt).map_err(|_| PasswordError::NoRandomness)?;
        let salt = SaltString::encode_b64(&salt).map_err(|_| PasswordError::NoRandomness)?;
        let hash = Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map_err(|_| PasswordError::NoRandomness)?;
        Ok(PasswordDigest(hash.to_string()))
    }

    /// Reads a PHC string as `portal user add` writes it; only argon2id is accepted.
    pub fn parse(phc: &str) -> Option<Self> {
        let parsed = PasswordHash::new(phc.trim()).ok()?;
        (parsed.algorithm == argon2::Algorithm::Argon2id.ident())
            .then(|| PasswordDigest(phc.trim().to_string()))
    }

    /// The PHC string, for the user's file.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `password` is the one hashed. Takes as long whichever way it goes.
    pub fn verify(&self, password: &str) -> bool {
        PasswordHash::new(&self.0).is_ok_and(|hash| {
            Argon2::default()
                .verify_password(password.as_bytes(), &hash)
                .is_ok()
        })
    }

    /// A short fingerprint of the hash, kept with each session: a changed password changes it,
    /// which ends the sessions signed in with the old one.
    pub fn stamp(&self) -> String {
        Sha256::digest(self.0.as_bytes())[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// A hash checked when the user does not exist, so that a wrong user name takes as long to
/// refuse as a wrong password.
pub(crate) fn decoy() -> &'static PasswordDigest {
    static DECOY: std::sync::OnceLock<PasswordDigest> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| {
        PasswordDigest::hash("a password nobody has").expect("the system has randomness")
    })
}

/// Why a password could not be hashed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("the system gave no randomness for the password's salt; try again")]
    NoRandomness,
    #[error("the password is shorter than {MIN_LENGTH} characters; choose a longer one")]
    TooShort,
}

/// Checks a new password's length (in characters) before it is hashed.
pub fn check_new(password: &str) -> Result<(), PasswordError> {
    if password.chars().count() < MIN_LENGTH {
        return Err(PasswordError::TooShort);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let digest = PasswordDigest::hash("correct horse").expect("hashes");
        assert!(
            digest.as_str().starts_with("$argon2id$"),
            "{}",
            digest.as_str()
        );
        assert!(!digest.as_str().contains("correct horse"));
        assert!(digest.verify("correct horse"));
        assert!(!digest.verify("correct horsE"));
        assert_eq!(PasswordDigest::parse(digest.as_str()), Some(digest.clone()));
    }

    #[test]
    fn two_hashes_of_one_password_differ_and_so_do_their_stamps() {
        let first = PasswordDigest::hash("correct horse").expect("hashes");
        let second = PasswordDigest::hash("correct horse").expect("hashes");
        assert_ne!(first, second);
        assert_ne!(first.stamp(), second.stamp());
        assert_eq!(first.stamp().len(), 24);
    }

    #[test]
    fn only_argon2id_phc_strings_are_read() {
        assert_eq!(PasswordDigest::parse("hunter2"), None);
        assert_eq!(
            PasswordDigest::parse("$argon2i$v=19$m=16,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"),
            None
        );
    }

    #[test]
    fn a_short_password_is_refused() {
        assert_eq!(check_new("short"), Err(PasswordError::TooShort));
        assert_eq!(check_new("long enough"), Ok(()));
    }
}
