//! latet-core: the pure engine of the Latet gateway.
//!
//! Everything that decides something about a value lives here: what counts as
//! a value ([`detect`], [`snapshot`]), what it becomes ([`surrogate`]), how a
//! request is masked ([`mask`], deny by default, per [`provider`]), how an
//! answer is restored ([`restore`]), what a forget changes
//! ([`snapshot::SnapshotIndex::apply_event`]), how the gateway's copies
//! follow the event feed and what a forget erases from the shared ones
//! ([`feed`]), the wire types shared with the control service
//! ([`wire`]), and the filter's configuration rules ([`config`]). No
//! proxy-wasm, HTTP server or database dependency: it builds for the host,
//! `wasm32-wasip1` and `wasm32-unknown-unknown`.
//!
//! No value ever appears in an error message of this crate: errors name the
//! kind, the field or the position.

pub mod config;
pub mod detect;
pub mod error;
pub mod eventstream;
pub mod feed;
pub mod json;
pub mod keyed_hash;
pub mod kind;
pub mod mask;
pub mod provider;
pub mod restore;
mod simd_block;
pub mod snapshot;
pub mod sort;
pub mod surrogate;
pub mod text;
mod wipe;
pub mod wire;

pub use error::CoreError;
pub use kind::Kind;
