//! The host functions a module imports: proxy-wasm ABI 0.2.1 (`env`) and
//! the WASI calls a `wasm32-wasip1` build uses (`wasi_snapshot_preview1`).
//! Every import a module needs must be here: `check_imports` names the
//! missing ones before instantiation.

mod memory;
mod proxy;
mod wasi;

use crate::vm::VmCtx;
use wasmtime::{Engine, Linker, Module, Result, Store};

/// A linker with every host function defined, for modules of this engine.
pub fn linker(engine: &Engine, module: &Module) -> Result<Linker<VmCtx>> {
    let mut linker = Linker::new(engine);
    proxy::define(&mut linker)?;
    proxy::define_unsupported(&mut linker, module)?;
    wasi::define(&mut linker)?;
    Ok(linker)
}

/// Fails with the name of every import the linker does not provide.
pub fn check_imports(
    linker: &Linker<VmCtx>,
    store: &mut Store<VmCtx>,
    module: &Module,
) -> Result<()> {
    let missing: Vec<String> = module
        .imports()
        .filter(|import| {
            linker
                .get(&mut *store, import.module(), import.name())
                .is_err()
        })
        .map(|import| format!("{}::{}", import.module(), import.name()))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(wasmtime::format_err!(
            "the module imports what this host does not provide: {}",
            missing.join(", ")
        ))
    }
}
