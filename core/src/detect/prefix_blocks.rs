//! Where a secret prefix may start, sixteen positions at a step: each of a
//! prefix's first three bytes is looked up by its two nibbles in tables of
//! eight buckets (the "Teddy" method of Hyperscan and the `aho-corasick`
//! crate), and a position is a candidate when the three bytes from it fall
//! in one bucket. In the filter's `.wasm` the lookups are `simd128`
//! swizzles (`wasm32` has none of `aho-corasick`'s vector prefilters);
//! elsewhere the secret scan keeps its one-position-at-a-step form.
//!
//! Candidates are a superset of the positions whose three bytes begin a
//! prefix (a bucket's nibbles also pair across its keys): the secret scan
//! checks each one as before, so what it finds does not change.

/// Positions a block covers.
pub(super) const BLOCK: usize = 16;

/// Bytes a block reads: its positions and the two bytes after the last.
pub(super) const BLOCK_READ: usize = BLOCK + 2;

/// Per byte of a key (first, second, third), the buckets of the keys that
/// have a byte of that low nibble there (`low`) and of that high nibble
/// (`high`), one bit per bucket.
pub(super) struct NibbleTables {
    low: [[u8; 16]; 3],
    high: [[u8; 16]; 3],
}

impl NibbleTables {
    /// Tables for `keys` (three bytes each); key `n` goes to bucket `n % 8`.
    pub(super) fn new<'a>(keys: impl Iterator<Item = &'a [u8; 3]>) -> Self {
        let mut tables = NibbleTables {
            low: [[0; 16]; 3],
            high: [[0; 16]; 3],
        };
        for (n, key) in keys.enumerate() {
            let bucket = 1u8 << (n % 8);
            for (at, &byte) in key.iter().enumerate() {
                tables.low[at][usize::from(byte & 15)] |= bucket;
                tables.high[at][usize::from(byte >> 4)] |= bucket;
            }
        }
        tables
    }

    /// Bit `n` set: position `n` of `block` may begin a key (its three
    /// bytes are `block[n..n + 3]`). One lane at a time: the reference the
    /// vector form equals.
    #[cfg(test)]
    pub(super) fn candidates_by_lane(&self, block: &[u8; BLOCK_READ]) -> u16 {
        let mut mask = 0u16;
        for lane in 0..BLOCK {
            let mut buckets = u8::MAX;
            for at in 0..3 {
                let byte = block[lane + at];
                buckets &=
                    self.low[at][usize::from(byte & 15)] & self.high[at][usize::from(byte >> 4)];
            }
            if buckets != 0 {
                mask |= 1 << lane;
            }
        }
        mask
    }

    /// The tables as vectors, loaded once for a scan.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[inline]
    pub(super) fn vectors(&self) -> NibbleVectors {
        let table = |t: &[u8; 16]| crate::simd_block::load(t);
        NibbleVectors {
            low: [
                table(&self.low[0]),
                table(&self.low[1]),
                table(&self.low[2]),
            ],
            high: [
                table(&self.high[0]),
                table(&self.high[1]),
                table(&self.high[2]),
            ],
        }
    }
}

/// [`NibbleTables`] as `simd128` vectors (kept in registers through a scan).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) struct NibbleVectors {
    low: [core::arch::wasm32::v128; 3],
    high: [core::arch::wasm32::v128; 3],
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl NibbleVectors {
    /// As [`NibbleTables::candidates_by_lane`], sixteen lanes at once.
    #[inline(always)]
    pub(super) fn candidates(&self, block: &[u8; BLOCK_READ]) -> u16 {
        use core::arch::wasm32::{
            u8x16_bitmask, u8x16_eq, u8x16_shr, u8x16_splat, u8x16_swizzle, v128, v128_and,
        };
        let nibble = u8x16_splat(15);
        let buckets = |k: usize| -> v128 {
            let mut bytes = [0u8; BLOCK];
            bytes.copy_from_slice(&block[k..k + BLOCK]);
            let v = crate::simd_block::load(&bytes);
            let low = u8x16_swizzle(self.low[k], v128_and(v, nibble));
            let high = u8x16_swizzle(self.high[k], u8x16_shr(v, 4));
            v128_and(low, high)
        };
        let all = v128_and(v128_and(buckets(0), buckets(1)), buckets(2));
        !u8x16_bitmask(u8x16_eq(all, u8x16_splat(0)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KEYS: &[[u8; 3]] = &[
        *b"sk-",
        *b"ghp",
        *b"AKI",
        *b"eyJ",
        *b"---",
        *b"sig",
        *b"\xc3\xa9x",
    ];

    proptest! {
        /// Every position whose three bytes are a key is a candidate.
        #[test]
        fn every_key_position_is_a_candidate(
            mut block in proptest::array::uniform18(any::<u8>()),
            placed in proptest::collection::vec((0usize..BLOCK, 0usize..7), 0..4),
        ) {
            for (lane, key) in placed {
                block[lane..lane + 3].copy_from_slice(&KEYS[key]);
            }
            let tables = NibbleTables::new(KEYS.iter());
            let mask = tables.candidates_by_lane(&block);
            for lane in 0..BLOCK {
                let three = [block[lane], block[lane + 1], block[lane + 2]];
                if KEYS.contains(&three) {
                    prop_assert!(mask & (1 << lane) != 0, "lane {}", lane);
                }
            }
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            prop_assert_eq!(tables.vectors().candidates(&block), mask);
        }
    }

    #[test]
    fn prose_is_mostly_no_candidate() {
        let tables = NibbleTables::new(KEYS.iter());
        let block: &[u8; BLOCK_READ] = b"the quarterly figu";
        assert_eq!(tables.candidates_by_lane(block), 0);
    }
}
