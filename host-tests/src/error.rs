//! The host's one error type. Messages name the VM, the export or the
//! token: enough to see what failed without a debugger.

/// What went wrong in the host or in a VM.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// Loading, compiling or linking the module failed.
    #[error("setting up the module failed: {0}")]
    Setup(String),
    /// An exported call trapped (a panic in the filter, an out-of-bounds
    /// access…). The VM is crashed from then on.
    #[error("VM {vm}: {call} trapped: {message}")]
    Trap {
        /// The VM's name.
        vm: String,
        /// The export called.
        call: String,
        /// wasmtime's message.
        message: String,
    },
    /// The VM trapped earlier and takes no more calls.
    #[error("VM {0} crashed earlier and takes no more calls")]
    Crashed(String),
    /// `proxy_on_vm_start` returned false.
    #[error("VM {vm}: root {root_id} refused to start (proxy_on_vm_start returned false)")]
    StartRefused {
        /// The VM's name.
        vm: String,
        /// The root id.
        root_id: String,
    },
    /// `proxy_on_configure` returned false.
    #[error(
        "VM {vm}: root {root_id} refused its configuration (proxy_on_configure returned false)"
    )]
    ConfigureRefused {
        /// The VM's name.
        vm: String,
        /// The root id.
        root_id: String,
    },
    /// A context, root, token or VM the call names does not exist.
    #[error("unknown {0}")]
    Unknown(String),
    /// The test drove the stream in an order a proxy never would.
    #[error("misuse: {0}")]
    Misuse(String),
}

/// Results of host operations.
pub type HostResult<T> = Result<T, HostError>;
