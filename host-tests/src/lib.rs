//! Our proxy-wasm host on wasmtime (being built).
