//! The raw interface the page calls through `WebAssembly.instantiate`:
//! the page asks for a buffer (`latet_alloc`), writes the call's JSON in it,
//! calls `latet_run`, reads the answer's JSON from the pointer and length it
//! returns, and frees both buffers (`latet_free`). Nothing else crosses.

/// A buffer of `len` bytes for the page to write into (freed with
/// [`latet_free`]).
#[no_mangle]
pub extern "C" fn latet_alloc(len: usize) -> *mut u8 {
    Box::into_raw(vec![0u8; len].into_boxed_slice()).cast::<u8>()
}

/// Frees a buffer from [`latet_alloc`] or [`latet_run`].
///
/// # Safety
/// `ptr` and `len` must be those of a buffer this module handed out, freed
/// once.
#[no_mangle]
pub unsafe extern "C" fn latet_free(ptr: *mut u8, len: usize) {
    if ptr.is_null() {
        return;
    }
    // SAFETY: the caller hands back a boxed slice of exactly `len` bytes.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
}

/// Runs the call whose JSON is the `len` bytes at `ptr` (see
/// [`crate::session::Call`]); answers the outcome's JSON as a buffer, its
/// pointer in the high 32 bits and its length in the low 32 bits. The
/// caller frees it with [`latet_free`], and the call's buffer too.
///
/// # Safety
/// `ptr` must point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn latet_run(ptr: *const u8, len: usize) -> u64 {
    // SAFETY: the caller gives `len` readable bytes at `ptr`.
    let call = unsafe { std::slice::from_raw_parts(ptr, len) };
    let answer = crate::session::run_json(call).into_boxed_slice();
    let answer_len = answer.len() as u64;
    let answer_ptr = Box::into_raw(answer).cast::<u8>() as usize as u64;
    (answer_ptr << 32) | answer_len
}
