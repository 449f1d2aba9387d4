//! The proxy-wasm contexts: thin adapters from the SDK's callbacks to the
//! roots and the exchange, with [`WasmHost`] as the host.

use crate::config::FilterConfig;
use crate::exchange::Exchange;
use crate::filter_root::FilterRoot;
use crate::host::{Flow, Host, Level};
use crate::sync_root::SyncRoot;
use crate::wasm_host::WasmHost;
use proxy_wasm::traits::{Context, HttpContext, RootContext};
use proxy_wasm::types::{Action, ContextType, LogLevel};
use std::cell::Cell;

/// The root id of the HTTP filter.
pub const FILTER_ROOT_ID: &str = "latet";
/// The root id of the singleton sync service.
pub const SYNC_ROOT_ID: &str = "latet-sync";
/// The vm_id used when the host does not tell (`plugin_vm_id`).
const FALLBACK_VM_ID: &str = "latet";

thread_local! {
    /// A sync root was configured in this VM: it is Envoy's main-thread VM,
    /// and the filter roots in it stand by (`FilterRoot::stand_by`). A VM
    /// is single-threaded; this is the one fact its roots share.
    static SYNC_IN_THIS_VM: Cell<bool> = const { Cell::new(false) };
}

fn sync_in_this_vm() -> bool {
    SYNC_IN_THIS_VM.with(Cell::get)
}

/// Registers the root context factory and the panic hook.
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        // The location only: a panic message can quote the text it was about.
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_else(|| "unknown location".to_string());
        WasmHost.log(
            Level::Critical,
            &format!(
                "latet: panic at {location}; this VM is lost (failure_policy decides what follows)"
            ),
        );
    }));
    proxy_wasm::set_log_level(LogLevel::Trace);
    proxy_wasm::set_root_context(|_| Box::new(LatetRoot::default()));
}

fn action(flow: Flow) -> Action {
    match flow {
        Flow::Continue => Action::Continue,
        Flow::Pause => Action::Pause,
    }
}

/// What a root context turned out to be at `on_configure`.
#[derive(Default)]
enum Role {
    #[default]
    Unconfigured,
    Filter(FilterRoot),
    Sync(SyncRoot),
}

/// The one root context type; its role comes from `plugin_root_id`.
#[derive(Default)]
struct LatetRoot {
    role: Role,
}

fn property_string(path: &[&str]) -> Option<String> {
    WasmHost
        .property(path)
        .and_then(|bytes| String::from_utf8(bytes).ok())
}

impl Context for LatetRoot {
    fn on_http_call_response(&mut self, token: u32, _: usize, body_size: usize, _: usize) {
        let host = WasmHost;
        // A root's callouts are its poller's: a large body (a snapshot) is
        // read in windows, so the VM never holds it whole (its memory
        // keeps its peak); the poller reads any other answer whole.
        let mut answer = host.callout_answer(body_size.min(crate::poller::ANSWER_HEAD_BYTES));
        answer.body_left = body_size.saturating_sub(answer.body.len());
        match &mut self.role {
            Role::Filter(root) => root.on_callout(&host, token, &answer),
            Role::Sync(root) => root.on_callout(&host, token, &answer),
            Role::Unconfigured => {}
        }
    }
}

impl RootContext for LatetRoot {
    fn on_vm_start(&mut self, _: usize) -> bool {
        WasmHost.log(Level::Info, &crate::start_line());
        true
    }

    fn on_configure(&mut self, _: usize) -> bool {
        let host = WasmHost;
        let root_id = property_string(&["plugin_root_id"]).unwrap_or_default();
        let vm_id = property_string(&["plugin_vm_id"])
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| FALLBACK_VM_ID.to_string());
        let bytes = host.plugin_configuration().unwrap_or_default();
        let config = match FilterConfig::parse(&bytes, |name| std::env::var(name).ok()) {
            Ok(config) => config,
            Err(err) => {
                host.log(
                    Level::Error,
                    &format!("latet: {err}; the filter refuses to start"),
                );
                return false;
            }
        };
        self.role = match root_id.as_str() {
            FILTER_ROOT_ID => match FilterRoot::start(&host, config, vm_id, sync_in_this_vm()) {
                Ok(root) => Role::Filter(root),
                Err(err) => {
                    host.log(
                        Level::Error,
                        &format!("latet: {err}; the filter refuses to start"),
                    );
                    return false;
                }
            },
            SYNC_ROOT_ID => {
                SYNC_IN_THIS_VM.with(|here| here.set(true));
                Role::Sync(SyncRoot::start(&host, config, vm_id))
            }
            _ => {
                host.log(
                    Level::Error,
                    &format!(
                        "latet: unknown root id (expected '{FILTER_ROOT_ID}' or '{SYNC_ROOT_ID}')"
                    ),
                );
                return false;
            }
        };
        host.log(Level::Info, &format!("latet: root '{root_id}' configured"));
        true
    }

    fn on_tick(&mut self) {
        let host = WasmHost;
        match &mut self.role {
            Role::Filter(root) => {
                // A filter root configured before the sync root of its VM.
                if sync_in_this_vm() {
                    root.stand_by(&host);
                }
                root.on_tick(&host)
            }
            Role::Sync(root) => root.on_tick(&host),
            Role::Unconfigured => {}
        }
    }

    fn on_queue_ready(&mut self, queue_id: u32) {
        if let Role::Filter(root) = &mut self.role {
            if sync_in_this_vm() {
                root.stand_by(&WasmHost);
            }
            root.on_queue_ready(&WasmHost, queue_id);
        }
    }

    fn create_http_context(&self, _: u32) -> Option<Box<dyn HttpContext>> {
        match &self.role {
            Role::Filter(root) => Some(Box::new(LatetHttp {
                exchange: Some(Exchange::new(root.worker())),
            })),
            // Not configured as a filter: a context that forwards nothing
            // unmasked (the SDK panics on None).
            _ => Some(Box::new(LatetHttp { exchange: None })),
        }
    }

    fn get_type(&self) -> Option<ContextType> {
        Some(ContextType::HttpContext)
    }
}

/// One request's context.
struct LatetHttp {
    /// `None` when the root is not a configured filter: every request is refused.
    exchange: Option<Exchange>,
}

impl LatetHttp {
    fn refuse_unconfigured(&self) -> Action {
        crate::reply::Refusal::VaultNotReady.send(&WasmHost);
        Action::Pause
    }
}

impl Context for LatetHttp {
    fn on_http_call_response(&mut self, token: u32, _: usize, body_size: usize, _: usize) {
        let host = WasmHost;
        let answer = host.callout_answer(body_size);
        if let Some(exchange) = &mut self.exchange {
            exchange.on_callout(&host, token, &answer);
        }
    }
}

impl HttpContext for LatetHttp {
    fn on_http_request_headers(&mut self, _: usize, end_of_stream: bool) -> Action {
        #[cfg(feature = "fault-probe")]
        crate::fault_probe::on_request_headers();
        match &mut self.exchange {
            Some(exchange) => action(exchange.on_request_headers(&WasmHost, end_of_stream)),
            None => self.refuse_unconfigured(),
        }
    }

    fn on_http_request_body(&mut self, size: usize, end_of_stream: bool) -> Action {
        match &mut self.exchange {
            Some(exchange) => action(exchange.on_request_body(&WasmHost, size, end_of_stream)),
            None => Action::Pause,
        }
    }

    fn on_http_request_trailers(&mut self, _: usize) -> Action {
        match &mut self.exchange {
            Some(exchange) => action(exchange.on_request_trailers(&WasmHost)),
            None => Action::Pause,
        }
    }

    fn on_http_response_headers(&mut self, _: usize, end_of_stream: bool) -> Action {
        match &mut self.exchange {
            Some(exchange) => action(exchange.on_response_headers(&WasmHost, end_of_stream)),
            None => Action::Continue,
        }
    }

    fn on_http_response_body(&mut self, size: usize, end_of_stream: bool) -> Action {
        match &mut self.exchange {
            Some(exchange) => action(exchange.on_response_body(&WasmHost, size, end_of_stream)),
            None => Action::Continue,
        }
    }
}
