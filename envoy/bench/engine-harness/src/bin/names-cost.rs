//! `core/examples/names_cost.rs` built into the engine harness, so that the
//! same measurement runs natively and as `wasm32-wasip1` in V8
//! (`node --no-liftoff envoy/bench/run-wasi.mjs …/names-cost.wasm`). One
//! source: the example itself.

#[path = "../../../../../core/examples/names_cost.rs"]
mod names_cost;

fn main() -> std::process::ExitCode {
    names_cost::main()
}
