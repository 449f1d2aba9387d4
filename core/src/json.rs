//! JSON scanning that keeps bytes as they came: string spans with their
//! paths, escape decoding and minimal re-encoding, and a splice that rewrites
//! only the spans that changed.
//!
//! How the pieces fit (masking and restoring both work this way):
//!
//! 1. [`Document::parse`] validates the body (UTF-8, RFC 8259 grammar) and
//!    records every value as a node in document order — iteratively, so deep
//!    nesting cannot overflow the stack ([`Limits::max_depth`] caps it with an
//!    error naming the byte offset). A node's subtree is a contiguous range of
//!    nodes, so "every string value under this node" needs no recursion.
//! 2. Navigate by shape ([`Document::get`], [`Document::children`],
//!    [`Document::strings_in`]) and read a string with [`Document::str_value`]
//!    (escapes decoded).
//! 3. For each string that changes, [`Splice::replace_string`] its raw span
//!    (re-encoded with [`encode_into`]); [`Splice::apply`] copies every other
//!    byte as it came.

mod document;
mod error;
mod escape;
mod scan;
mod splice;

pub use document::{Children, Document, Limits, NodeId, NodeKind, PathSeg, DEFAULT_MAX_DEPTH};
pub use error::JsonError;
pub use escape::{decode, encode, encode_into, needs_escape};
pub use splice::{InOrderSplice, Splice};
