//! Our proxy-wasm host on wasmtime: it loads a built filter (`.wasm`, ABI
//! 0.2.1 as proxy-wasm 0.2.5 uses it, `wasm32-wasip1`) into several VMs that
//! share data and queues like Envoy's workers, on a clock that moves only
//! when the test says, with callouts the test answers, and records
//! everything the VMs did.
//!
//! ```no_run
//! use host_tests::{Host, VmSpec};
//! let host = Host::new(std::path::Path::new("filter.wasm")).unwrap();
//! let worker = host.start_vm(VmSpec::new("worker-1", "latet").root("latet", "{}")).unwrap();
//! let stream = worker.new_http_stream().unwrap();
//! stream.request_headers(&[(":method", "POST"), (":path", "/")], false).unwrap();
//! stream.request_body(b"{}", true).unwrap();
//! assert!(stream.request_complete(), "{}", host.dump());
//! ```

pub mod abi;
pub mod callout;
pub mod control;
pub mod error;
pub mod gateway;
mod host;
mod imports;
pub mod record;
pub mod state;
mod stream;
pub mod stream_state;
pub mod synthetic_vault;
mod vm;
pub mod wasm_build;

pub use abi::{Action, Headers};
pub use callout::{CalloutAnswer, CalloutRequest, CalloutResponse, CalloutScript};
pub use error::{HostError, HostResult};
pub use host::{Host, QueueMessage, Vm, DEFAULT_START_UNIX_SECONDS};
pub use record::{Event, Metric, Record};
pub use stream::{headers, HttpStream};
pub use stream_state::{LocalReply, StreamState};
pub use vm::{VmCtx, VmSpec};
