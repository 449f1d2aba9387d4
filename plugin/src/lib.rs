//! latet-filter: the Envoy proxy-wasm filter of the Latet gateway.
//!
//! Thin glue over latet-core: one `.wasm` with two roots chosen by the
//! `plugin_root_id` property — `latet` (the HTTP filter: [`filter_root`],
//! [`exchange`]) and `latet-sync` (the singleton sync service:
//! [`sync_root`], [`poller`]). The host is reached only through
//! [`host::Host`]; `wasm_host` (built for wasm32 only) implements it over
//! proxy-wasm, and the tests use a fake. Shared-data keys, queues, metrics and configuration are
//! documented in the crate's README.

pub mod config;
pub mod exchange;
#[cfg(all(target_arch = "wasm32", feature = "fault-probe"))]
mod fault_probe;
pub mod filter_root;
#[cfg(target_arch = "wasm32")]
mod glue;
pub mod host;
pub mod lease;
pub mod metrics;
pub mod poller;
pub mod reply;
pub mod shared;
pub mod shared_snapshot;
pub mod sync_root;
pub mod vault;
#[cfg(target_arch = "wasm32")]
pub mod wasm_host;
pub mod worker;
pub mod zeroing_alloc;

/// Every block the VM frees is zeroed first (see [`zeroing_alloc`]); the
/// `zeroing-alloc` feature (on by default) exists to measure its cost.
#[cfg(all(target_arch = "wasm32", feature = "zeroing-alloc"))]
#[global_allocator]
static ALLOCATOR: zeroing_alloc::ZeroingAlloc = zeroing_alloc::ZeroingAlloc;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod fake_host;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod test_support;

/// The crate version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git revision this build was made from ("unknown" outside git).
pub const GIT_REVISION: &str = env!("LATET_GIT_REVISION");

/// The VM start line: version and git revision.
pub fn start_line() -> String {
    format!("latet-filter {VERSION} (git {GIT_REVISION}) starting")
}

#[cfg(target_arch = "wasm32")]
proxy_wasm::main! {{
    glue::install();
}}
