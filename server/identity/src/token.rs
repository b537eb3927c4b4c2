//! Bearer tokens: the configuration holds only their SHA-256 digests, and a presented token is
//! hashed and compared with every digest in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The SHA-256 digest of a token, as the configuration writes it (`token_sha256`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenDigest([u8; 32]);

impl std::fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenDigest(…)")
    }
}

impl TokenDigest {
    /// The digest of `token`.
    pub fn of(token: &str) -> Self {
        TokenDigest(Sha256::digest(token.as_bytes()).into())
    }

    /// Reads 64 hexadecimal digits (either case), as `sha256sum` prints them.
    pub fn from_hex(hex: &str) -> Option<Self> {
        let hex = hex.trim().as_bytes();
        if hex.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(hex.chunks_exact(2)) {
            *byte = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(TokenDigest(bytes))
    }

    /// The digest as 64 lowercase hexadecimal digits.
    pub fn to_hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether the two digests are equal, in time that does not depend on where they differ.
    pub fn matches(&self, other: &TokenDigest) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

fn nibble(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_matches_sha256sum_output() {
        // `printf %s secret | sha256sum`
        let hex = "2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";
        let digest = TokenDigest::from_hex(hex).expect("valid hex");
        assert!(digest.matches(&TokenDigest::of("secret")));
        assert!(!digest.matches(&TokenDigest::of("Secret")));
        assert_eq!(digest.to_hex(), hex);
        assert_eq!(TokenDigest::from_hex(&hex.to_uppercase()), Some(digest));
    }

    #[test]
    fn bad_hex_is_refused() {
        assert_eq!(TokenDigest::from_hex("abc"), None);
        assert_eq!(TokenDigest::from_hex(&"g".repeat(64)), None);
    }

    #[test]
    fn debug_does_not_show_the_digest() {
        assert_eq!(format!("{:?}", TokenDigest::of("x")), "TokenDigest(…)");
    }
}
