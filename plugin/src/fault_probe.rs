//! Fault probe, built only with the cargo feature `fault-probe` (off by
//! default; never in the `.wasm` that `plugin/build.sh` ships): a request
//! carrying `x-latet-fault: crash` aborts the VM, so that `envoy/faults.sh`
//! can assert on real Envoy what `failure_policy: FAIL_CLOSED` does after a
//! VM crash (503, nothing forwarded upstream, masked or not).

use proxy_wasm::hostcalls;
use proxy_wasm::types::{LogLevel, MapType};

/// The request header that asks for a fault.
const FAULT_HEADER: &str = "x-latet-fault";

/// Its value that aborts the VM.
const CRASH: &str = "crash";

/// Aborts the VM when the request asks for it; otherwise does nothing.
/// Called first in the request-headers hook, before the filter reads the
/// request. The abort is a wasm trap: what a panic is with `panic = "abort"`.
pub(crate) fn on_request_headers() {
    let asked = matches!(
        hostcalls::get_map_value(MapType::HttpRequestHeaders, FAULT_HEADER),
        Ok(Some(value)) if value == CRASH
    );
    if asked {
        // Names the fault, never anything of the request.
        let _ = hostcalls::log(
            LogLevel::Critical,
            "latet fault probe: aborting the VM (x-latet-fault: crash)",
        );
        std::process::abort();
    }
}
