//! Keyed hashes shared by the gateway and the control service: entry ids,
//! retired-surrogate hashes and surrogate derivation seeds. Both sides must
//! compute them byte for byte the same, so they live here.

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Length in bytes of an entry id and of a retired-surrogate hash.
pub const HASH_LEN: usize = 16;

/// A 128-bit keyed hash (entry id or retired-surrogate hash).
pub type Hash128 = [u8; HASH_LEN];

/// The HMAC of `parts`, with the stack the computation used overwritten
/// after it: the hash state holds its input (a surrogate being retired, a
/// value) in its block buffer, and a freed stack frame is not zeroed the
/// way freed heap memory is in the filter (host-tests scenario 8 found an
/// old surrogate there after a forget).
fn hmac_parts(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let out = hmac_parts_unscrubbed(key, parts);
    scrub_stack();
    out
}

/// Writes zeros over the stack below the caller's frame, where the frames
/// of the call before it were.
#[inline(never)]
fn scrub_stack() {
    let zeros = [0u8; 4096];
    // Observed, so the zeros are written to memory and not optimised away.
    std::hint::black_box(&zeros);
}

#[inline(never)]
fn hmac_parts_unscrubbed(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    // HMAC accepts keys of any length; `new_from_slice` cannot fail for HMAC.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable_hmac(),
    };
    for part in parts {
        // Length-prefix every part so that ("ab","c") and ("a","bc") differ.
        mac.update(&(part.len() as u64).to_be_bytes());
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

#[cold]
fn unreachable_hmac() -> ! {
    // HMAC's new_from_slice only fails for fixed-size-key MACs.
    #[allow(clippy::panic)]
    {
        panic!("hmac key rejected")
    }
}

fn truncate(full: [u8; 32]) -> Hash128 {
    let mut out = [0u8; HASH_LEN];
    out.copy_from_slice(&full[..HASH_LEN]);
    out
}

/// The id of a vault entry: a keyed hash of the value (rule V4,
/// docs/product-rules.md#v4). The key is the vault's id key, held by the
/// control service only.
pub fn entry_id(id_key: &[u8], value: &str) -> Hash128 {
    truncate(hmac_parts(
        id_key,
        &[b"latet/entry-id/v1", value.as_bytes()],
    ))
}

/// The keyed hash under which a retired surrogate is kept (rule V6,
/// docs/product-rules.md#v6). The salt travels in the snapshot so a gateway
/// can recognise a retired surrogate without ever holding it.
pub fn retired_hash(salt: &[u8], surrogate: &str) -> Hash128 {
    truncate(hmac_parts(
        salt,
        &[b"latet/retired/v1", surrogate.as_bytes()],
    ))
}

/// The seed a surrogate is derived from: generation, kind and value under the
/// vault's derivation key, with a counter bumped on collisions.
pub fn surrogate_seed(
    derive_key: &[u8],
    generation: u64,
    kind: &str,
    value: &str,
    counter: u32,
) -> [u8; 32] {
    hmac_parts(
        derive_key,
        &[
            b"latet/surrogate/v1",
            &generation.to_be_bytes(),
            kind.as_bytes(),
            value.as_bytes(),
            &counter.to_be_bytes(),
        ],
    )
}

/// Lower-case hex of a hash.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// Parses lower- or upper-case hex of exactly `N` bytes.
pub fn from_hex<const N: usize>(hex: &str) -> Option<[u8; N]> {
    let bytes = hex.as_bytes();
    if bytes.len() != N * 2 {
        return None;
    }
    let mut out = [0u8; N];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(out)
}

fn nibble(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_keyed_and_distinct_by_purpose() {
        let a = entry_id(b"k1", "mario.rossi@acme.it");
        assert_eq!(a, entry_id(b"k1", "mario.rossi@acme.it"));
        assert_ne!(a, entry_id(b"k2", "mario.rossi@acme.it"));
        assert_ne!(a, retired_hash(b"k1", "mario.rossi@acme.it"));
        assert_ne!(
            surrogate_seed(b"k", 1, "email", "x", 0),
            surrogate_seed(b"k", 2, "email", "x", 0)
        );
        assert_ne!(
            surrogate_seed(b"k", 1, "email", "x", 0),
            surrogate_seed(b"k", 1, "email", "x", 1)
        );
    }

    #[test]
    fn hex_round_trips_and_refuses_bad_input() {
        let h = entry_id(b"k", "v");
        assert_eq!(from_hex::<16>(&to_hex(&h)), Some(h));
        assert_eq!(from_hex::<16>("zz"), None);
        assert_eq!(from_hex::<2>("0g00"), None);
    }
}
