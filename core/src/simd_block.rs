//! Sixteen bytes at a step, for the scans that class a block of a text at
//! once (the vault token walk, the JSON string scan): the block's size, and
//! with `simd128` (the filter's `.wasm`, `plugin/build.sh`) the block as one
//! vector, built from two `u64` reads, so no pointer load and no `unsafe`.

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use core::arch::wasm32::{u64x2, v128};

/// Bytes in a block (a `simd128` vector's width).
pub(crate) const BLOCK: usize = 16;

/// The block as a vector (byte `n` in lane `n`).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(crate) fn load(block: &[u8; BLOCK]) -> v128 {
    let half = |from: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&block[from..from + 8]);
        u64::from_le_bytes(word)
    };
    u64x2(half(0), half(8))
}
