//! latet-playground: the gateway's engine for the browser playground
//! (`playground/web/`), built for `wasm32-unknown-unknown`.
//!
//! [`session::run`] takes the filter's configuration, a vault and a request
//! and answers what the filter would send upstream and give back, through
//! the same `latet-core` calls; [`demo_vault`] stands for the control
//! service, deriving surrogates under a public demo key. `abi` (built for
//! wasm32 only) is the raw interface the page calls (JSON in, JSON out): no
//! JavaScript glue generator, see `playground/README.md` for why.

#[cfg(target_arch = "wasm32")]
pub mod abi;
pub mod demo_vault;
pub mod session;
