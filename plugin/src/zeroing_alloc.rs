//! The VM's allocator: the system allocator, but every block is zeroed
//! before it goes back (on free, and the old block when a reallocation
//! moves). A forgotten value must not linger in the VM's linear memory in
//! freed request bodies, parsed snapshots, serde buffers or memo texts;
//! zeroing at the allocator catches every copy, including ones inside
//! latet-core, serde and the SDK that the filter's code never sees.
//!
//! Cost, measured in wasmtime (`host-tests/tests/measure_zeroing_alloc.rs`,
//! time inside the VM, a 7.4 KB chat request with 40 values masked and a
//! 3.3 KB answer with 40 surrogates restored, memo off, 400 iterations x 4
//! interleaved rounds on a loaded 2-core machine): fastest 310-312 µs with
//! zeroing against 315-317 µs without, medians within noise — no cost that
//! the measurement can see. Zeroing is a `memory.fill` over bytes that were
//! just written; a realloc always moves (no in-place growth), which `Vec`'s
//! doubling keeps amortised.

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator with zero-on-free.
pub struct ZeroingAlloc;

/// Zeroes `len` bytes at `ptr` so the stores are not removed as dead
/// stores before the free.
///
/// # Safety
/// `ptr` must be valid for `len` bytes of writes.
unsafe fn zero(ptr: *mut u8, len: usize) {
    // SAFETY: the caller guarantees `ptr..ptr+len` is writable.
    unsafe { std::ptr::write_bytes(ptr, 0, len) };
    // The block is about to be freed: without this the compiler may treat
    // the writes as dead and drop them.
    std::hint::black_box(ptr);
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

// SAFETY: every method forwards to `System` with the same layouts; the only
// additions are writes inside blocks this allocator handed out and still
// owns at that point.
unsafe impl GlobalAlloc for ZeroingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` is a live block of `layout.size()` bytes until freed.
        unsafe {
            zero(ptr, layout.size());
            System.dealloc(ptr, layout);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size == layout.size() {
            return ptr;
        }
        // Never let the system allocator move (or shrink) a block itself:
        // it would free the old bytes unzeroed. Allocate, copy, zero, free.
        // SAFETY: `new_size` is non-zero and, rounded to the alignment, does
        // not overflow (the `realloc` contract); `ptr` holds `layout.size()`
        // live bytes.
        unsafe {
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            let new_ptr = System.alloc(new_layout);
            if new_ptr.is_null() {
                return new_ptr;
            }
            std::ptr::copy_nonoverlapping(ptr, new_ptr, layout.size().min(new_size));
            zero(ptr, layout.size());
            System.dealloc(ptr, layout);
            new_ptr
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn realloc_keeps_the_bytes_and_frees_zeroed() {
        let alloc = ZeroingAlloc;
        let layout = Layout::from_size_align(16, 8).unwrap();
        // SAFETY: a test of the allocator's own contract.
        unsafe {
            let p = alloc.alloc(layout);
            for i in 0..16 {
                *p.add(i) = i as u8 + 1;
            }
            let grown = alloc.realloc(p, layout, 64);
            let bytes: Vec<u8> = (0..16).map(|i| *grown.add(i)).collect();
            assert_eq!(bytes, (1..=16).collect::<Vec<u8>>());
            let shrunk = alloc.realloc(grown, Layout::from_size_align(64, 8).unwrap(), 4);
            let bytes: Vec<u8> = (0..4).map(|i| *shrunk.add(i)).collect();
            assert_eq!(bytes, vec![1, 2, 3, 4]);
            alloc.dealloc(shrunk, Layout::from_size_align(4, 8).unwrap());
        }
    }
}
