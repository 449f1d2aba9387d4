//! `core/examples/history_cost.rs` built into the engine harness, so that
//! the same measurement (a resent history, the last message new, masked
//! through the memo and its answer restored in the request's scope, 10k and
//! 100k vaults) runs natively and as `wasm32-wasip1` in V8
//! (`node --no-liftoff envoy/bench/run-wasi.mjs …/history-cost.wasm`). One
//! source: the example itself.

#[path = "../../../../../core/examples/history_cost.rs"]
mod history_cost;

fn main() -> std::process::ExitCode {
    history_cost::main()
}
