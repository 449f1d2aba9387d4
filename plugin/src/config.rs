//! The filter's configuration. Its rules and messages live in
//! `latet_core::config` (`core/src/config.rs`), shared with the playground;
//! the root context parses it at `on_configure`.

pub use latet_core::config::*;
