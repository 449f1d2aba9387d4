//! latet: the control service of the Latet gateway and its admin CLI.
//!
//! - [`serve`]: the HTTP server (gateway, apps, admin API, metrics).
//! - [`vault`]: what each call may do and changes; [`store`]: the storage
//!   trait, its SQLite backend and its PostgreSQL one (several replicas);
//!   [`secrets`]: master key, wrapping, sealing.
//! - [`cli`]: the admin CLI (`latet server …`); [`tls`]: HTTPS for both.
//!
//! No value, surrogate or token ever appears in a log line, an error message,
//! a metric label or a `Debug` output.

pub mod agent_env;
pub mod cli;
pub mod error;
pub mod feed_signal;
pub mod files;
pub mod http;
pub mod log;
pub mod metrics;
pub mod secrets;
pub mod serve;
pub mod store;
pub mod text_adapter;
pub mod tls;
pub mod tokens;
pub mod vault;

pub use error::ControlError;
