//! [`Hash`]: a SHA-256 digest, the link between consecutive entries; and the
//! chain step that computes it.

use core::fmt;
use core::str::FromStr;

use sha2::{Digest, Sha256};

use crate::error::ParseError;

/// A SHA-256 digest: an entry's hash, or the head of a log.
///
/// Shown and parsed as 64 lowercase hexadecimal digits, the form the log file and
/// the [`Seal`](crate::Seal) use.
///
/// ```
/// use bayesretry_audit::Hash;
///
/// let genesis = Hash::GENESIS;
/// assert_eq!(genesis.to_string(), "0".repeat(64));
/// assert_eq!(genesis.to_string().parse::<Hash>(), Ok(genesis));
/// assert!("ABC".parse::<Hash>().is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hash([u8; 32]);

impl Hash {
    /// The "previous hash" of the first entry: 32 zero bytes.
    ///
    /// A fixed, well-known value rather than a secret or a random nonce: anyone
    /// must be able to verify a log from its first line with nothing but the file.
    pub const GENESIS: Hash = Hash([0; 32]);

    /// A hash from its 32 bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Hash {
        Hash(bytes)
    }

    /// The 32 bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The hash of an entry: SHA-256 over the previous entry's hash (32 raw bytes)
    /// followed by the entry's canonical form.
    ///
    /// ```
    /// use bayesretry_audit::Hash;
    ///
    /// // SHA-256 of 32 zero bytes followed by the ASCII text "{}"
    /// let hash = Hash::chain(&Hash::GENESIS, b"{}");
    /// assert_eq!(
    ///     hash.to_string(),
    ///     "fb1634c4e6cd4b1f1afe3ce2d6ef080f7ac5d1f357d723ad4dfca782733b62db",
    /// );
    /// ```
    pub fn chain(prev: &Hash, canonical: &[u8]) -> Hash {
        let mut hasher = Sha256::new();
        hasher.update(prev.0);
        hasher.update(canonical);
        Hash(hasher.finalize().into())
    }

    /// [`chain`](Hash::chain) over a canonical form given in two pieces (the
    /// verifier hashes a line's bytes up to its hash field, then the closing
    /// brace, without copying them together).
    pub(crate) fn chain_pieces(prev: &Hash, first: &[u8], second: &[u8]) -> Hash {
        let mut hasher = Sha256::new();
        hasher.update(prev.0);
        hasher.update(first);
        hasher.update(second);
        Hash(hasher.finalize().into())
    }

    /// Writes the 64 lowercase hexadecimal digits into `out`.
    pub(crate) fn write_hex(&self, out: &mut Vec<u8>) {
        for byte in self.0 {
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0x0f)]);
        }
    }

    /// Parses exactly 64 lowercase hexadecimal digits.
    pub(crate) fn from_hex(text: &[u8]) -> Option<Hash> {
        if text.len() != 64 {
            return None;
        }
        let mut bytes = [0u8; 32];
        for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
            let (hi, lo) = match pair {
                [hi, lo] => (hex_digit(*hi)?, hex_digit(*lo)?),
                _ => return None,
            };
            *byte = (hi << 4) | lo;
        }
        Some(Hash(bytes))
    }
}

/// The lowercase hexadecimal digits.
pub(crate) const HEX: &[u8; 16] = b"0123456789abcdef";

/// The value of one lowercase hexadecimal digit.
pub(crate) const fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({self})")
    }
}

impl FromStr for Hash {
    type Err = ParseError;

    /// Exactly 64 lowercase hexadecimal digits.
    fn from_str(s: &str) -> Result<Hash, ParseError> {
        Hash::from_hex(s.as_bytes()).ok_or_else(|| ParseError::Hash(s.to_owned()))
    }
}
