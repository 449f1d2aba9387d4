//! Zeroing memory that held values or surrogates before it is freed or
//! reused: one way to do it, so the writes are never optimised away.

/// Overwrites `bytes` with zeros, observed so the stores are kept even
/// when the buffer is freed right after.
pub(crate) fn wipe(bytes: &mut [u8]) {
    bytes.fill(0);
    std::hint::black_box(bytes);
}
