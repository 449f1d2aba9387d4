//! A set of 32-bit keys as 65,536 bits, one per multiplicative hash of a
//! key: the prefilter that tells, one text position at a step, whether a
//! cue phrase or a secret prefix may start there (a false "maybe" costs a
//! lookup; a "no" is exact).

const SLOTS: usize = 1 << 16;

pub(crate) struct StartBits(Box<[u64; SLOTS / 64]>);

/// The bit of `key`: the top 16 bits of the product, below `SLOTS`.
fn slot(key: u32) -> usize {
    (key.wrapping_mul(0x9e37_79b1) >> 16) as usize
}

impl StartBits {
    pub(crate) fn new() -> Self {
        StartBits(Box::new([0; SLOTS / 64]))
    }

    pub(crate) fn insert(&mut self, key: u32) {
        let slot = slot(key);
        self.0[slot >> 6] |= 1 << (slot & 63);
    }

    /// Whether `key` may be in the set (a fixed size: no bounds check).
    #[inline(always)]
    pub(crate) fn may_hold(&self, key: u32) -> bool {
        let slot = slot(key);
        self.0[slot >> 6] & (1 << (slot & 63)) != 0
    }
}
