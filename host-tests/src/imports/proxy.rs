//! proxy-wasm ABI 0.2.1 host functions (module `env`), with the statuses the
//! Rust SDK 0.2.5 expects (anything else makes its wrappers panic).

use super::memory::GuestMemory;
use crate::abi::{self, status, BufferType, Headers, MapType, MetricKind};
use crate::callout::CalloutRequest;
use crate::record::Event;
use crate::stream_state::LocalReply;
use crate::vm::VmCtx;
use wasmtime::{Caller, ExternType, Linker, Module, Result, Val};

type C<'a> = Caller<'a, VmCtx>;

/// Defines every implemented `env` import.
pub fn define(linker: &mut Linker<VmCtx>) -> Result<()> {
    linker.func_wrap("env", "proxy_log", log)?;
    linker.func_wrap(
        "env",
        "proxy_get_log_level",
        |mut c: C, out: i32| -> Result<i32> {
            let level = c.data().host.borrow().log_level;
            Ok(ok_if(c.write_u32(out, level)))
        },
    )?;
    linker.func_wrap(
        "env",
        "proxy_get_current_time_nanoseconds",
        |mut c: C, out: i32| -> Result<i32> {
            let now = c.data().host.borrow().now_ns;
            Ok(ok_if(c.write_u64(out, now)))
        },
    )?;
    linker.func_wrap("env", "proxy_set_tick_period_milliseconds", set_tick_period)?;
    linker.func_wrap("env", "proxy_get_buffer_bytes", get_buffer_bytes)?;
    linker.func_wrap("env", "proxy_set_buffer_bytes", set_buffer_bytes)?;
    linker.func_wrap("env", "proxy_get_header_map_pairs", get_header_map_pairs)?;
    linker.func_wrap("env", "proxy_set_header_map_pairs", set_header_map_pairs)?;
    linker.func_wrap("env", "proxy_get_header_map_value", get_header_map_value)?;
    linker.func_wrap(
        "env",
        "proxy_replace_header_map_value",
        |c: C, m: i32, kp: i32, kl: i32, vp: i32, vl: i32| {
            change_header(c, m, kp, kl, Some((vp, vl)), "replace")
        },
    )?;
    linker.func_wrap(
        "env",
        "proxy_add_header_map_value",
        |c: C, m: i32, kp: i32, kl: i32, vp: i32, vl: i32| {
            change_header(c, m, kp, kl, Some((vp, vl)), "add")
        },
    )?;
    linker.func_wrap(
        "env",
        "proxy_remove_header_map_value",
        |c: C, m: i32, kp: i32, kl: i32| change_header(c, m, kp, kl, None, "remove"),
    )?;
    linker.func_wrap("env", "proxy_get_property", get_property)?;
    linker.func_wrap("env", "proxy_set_property", set_property)?;
    linker.func_wrap("env", "proxy_get_shared_data", get_shared_data)?;
    linker.func_wrap("env", "proxy_set_shared_data", set_shared_data)?;
    linker.func_wrap("env", "proxy_register_shared_queue", register_shared_queue)?;
    linker.func_wrap("env", "proxy_resolve_shared_queue", resolve_shared_queue)?;
    linker.func_wrap("env", "proxy_enqueue_shared_queue", enqueue_shared_queue)?;
    linker.func_wrap("env", "proxy_dequeue_shared_queue", dequeue_shared_queue)?;
    linker.func_wrap("env", "proxy_continue_stream", |c: C, kind: i32| {
        stream_effect(c, kind, false)
    })?;
    linker.func_wrap("env", "proxy_close_stream", |c: C, kind: i32| {
        stream_effect(c, kind, true)
    })?;
    linker.func_wrap("env", "proxy_send_local_response", send_local_response)?;
    linker.func_wrap("env", "proxy_http_call", http_call)?;
    linker.func_wrap(
        "env",
        "proxy_set_effective_context",
        |mut c: C, context: i32| -> Result<i32> {
            let context = context as u32;
            let ctx = c.data_mut();
            if ctx.roots.contains_key(&context) || ctx.streams.contains_key(&context) {
                ctx.effective = context;
                Ok(status::OK)
            } else {
                Ok(status::BAD_ARGUMENT)
            }
        },
    )?;
    linker.func_wrap(
        "env",
        "proxy_call_foreign_function",
        |_: C, _: i32, _: i32, _: i32, _: i32, _: i32, _: i32| -> Result<i32> {
            Ok(status::NOT_FOUND)
        },
    )?;
    linker.func_wrap("env", "proxy_done", |c: C| -> Result<i32> {
        c.data().record(Event::Note("proxy_done".into()));
        Ok(status::OK)
    })?;
    linker.func_wrap("env", "proxy_define_metric", define_metric)?;
    linker.func_wrap(
        "env",
        "proxy_increment_metric",
        |c: C, id: i32, offset: i64| change_metric(c, id, offset, "increment"),
    )?;
    linker.func_wrap("env", "proxy_record_metric", |c: C, id: i32, value: i64| {
        change_metric(c, id, value, "record")
    })?;
    linker.func_wrap(
        "env",
        "proxy_get_metric",
        |mut c: C, id: i32, out: i32| -> Result<i32> {
            let value = {
                let host = c.data().host.clone();
                let mut host = host.borrow_mut();
                host.metric_mut(id as u32).map(|(_, metric)| metric.value)
            };
            match value {
                Some(value) => Ok(ok_if(c.write_u64(out, value as u64))),
                None => Ok(status::NOT_FOUND),
            }
        },
    )?;
    Ok(())
}

/// Defines the gRPC imports the SDK's dispatcher always pulls in (and any
/// other `proxy_grpc_*`/`proxy_get_status` the module names) as functions
/// that answer Unimplemented and leave a note: the filter does not use gRPC.
pub fn define_unsupported(linker: &mut Linker<VmCtx>, module: &Module) -> Result<()> {
    for import in module.imports() {
        let name = import.name();
        let unsupported = import.module() == "env"
            && (name.starts_with("proxy_grpc_") || name == "proxy_get_status");
        let ExternType::Func(ty) = import.ty() else {
            continue;
        };
        if !unsupported {
            continue;
        }
        let label = name.to_string();
        linker.func_new(
            "env",
            name,
            ty,
            move |c: C, _: &[Val], results: &mut [Val]| {
                c.data()
                    .record(Event::Note(format!("unsupported host call {label}")));
                if let Some(slot) = results.first_mut() {
                    *slot = Val::I32(status::UNIMPLEMENTED);
                }
                Ok(())
            },
        )?;
    }
    Ok(())
}

fn ok_if(written: bool) -> i32 {
    if written {
        status::OK
    } else {
        status::BAD_ARGUMENT
    }
}

fn log(mut c: C, level: i32, ptr: i32, len: i32) -> Result<i32> {
    let Some(message) = c.read_str(ptr, len) else {
        return Ok(status::BAD_ARGUMENT);
    };
    c.data().record(Event::Log {
        level: level as u32,
        message,
    });
    Ok(status::OK)
}

fn set_tick_period(mut c: C, period_ms: i32) -> Result<i32> {
    let now = c.data().host.borrow().now_ns;
    let ctx = c.data_mut();
    let effective = ctx.effective;
    let Some(root) = ctx.roots.get_mut(&effective) else {
        return Ok(status::BAD_ARGUMENT);
    };
    root.tick_period_ms = period_ms as u32 as u64;
    root.next_tick_ns = (root.tick_period_ms > 0).then(|| now + root.tick_period_ms * 1_000_000);
    Ok(status::OK)
}

fn get_buffer_bytes(
    mut c: C,
    kind: i32,
    start: i32,
    max: i32,
    ptr_out: i32,
    size_out: i32,
) -> Result<i32> {
    let Some(kind) = BufferType::from_raw(kind) else {
        return Ok(status::NOT_FOUND);
    };
    let Some(buffer) = c.data_mut().buffer_mut(kind).map(|buffer| buffer.clone()) else {
        return Ok(status::NOT_FOUND);
    };
    let start = (start as u32 as usize).min(buffer.len());
    let end = start.saturating_add(max as u32 as usize).min(buffer.len());
    Ok(ok_if(c.hand_over(
        &buffer[start..end],
        ptr_out,
        size_out,
    )?))
}

fn set_buffer_bytes(mut c: C, kind: i32, start: i32, size: i32, ptr: i32, len: i32) -> Result<i32> {
    let Some(kind) = BufferType::from_raw(kind) else {
        return Ok(status::NOT_FOUND);
    };
    let Some(data) = c.read(ptr, len) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let ctx = c.data_mut();
    let Some(buffer) = ctx.buffer_mut(kind) else {
        return Ok(status::NOT_FOUND);
    };
    // Envoy's Buffer::copyFrom: start 0 drains `size` bytes then prepends;
    // start at or past the end appends; anything else is refused.
    let (start, size) = (start as u32 as usize, size as u32 as usize);
    if start == 0 {
        buffer.drain(..size.min(buffer.len()));
        buffer.splice(0..0, data);
    } else if start >= buffer.len() {
        buffer.extend_from_slice(&data);
    } else {
        return Ok(status::BAD_ARGUMENT);
    }
    let body = buffer.clone();
    ctx.record(Event::BodyChange {
        buffer: format!("{kind:?}"),
        body,
    });
    Ok(status::OK)
}

fn get_header_map_pairs(mut c: C, map: i32, ptr_out: i32, size_out: i32) -> Result<i32> {
    let pairs = MapType::from_raw(map)
        .and_then(|map| c.data_mut().map_mut(map).map(|headers| headers.clone()))
        .unwrap_or_default();
    Ok(ok_if(c.hand_over(
        &abi::encode_map(&pairs),
        ptr_out,
        size_out,
    )?))
}

fn set_header_map_pairs(mut c: C, map: i32, ptr: i32, len: i32) -> Result<i32> {
    let Some(map) = MapType::from_raw(map) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let Some(pairs) = c.read(ptr, len).and_then(|bytes| abi::decode_map(&bytes)) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let ctx = c.data_mut();
    let Some(headers) = ctx.map_mut(map) else {
        return Ok(status::NOT_FOUND);
    };
    *headers = pairs;
    ctx.record(Event::HeaderChange {
        map: format!("{map:?}"),
        op: "set_pairs",
        name: String::new(),
        value: String::new(),
    });
    Ok(status::OK)
}

fn get_header_map_value(
    mut c: C,
    map: i32,
    kp: i32,
    kl: i32,
    ptr_out: i32,
    size_out: i32,
) -> Result<i32> {
    let (Some(map), Some(key)) = (MapType::from_raw(map), c.read_str(kp, kl)) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let key = key.to_lowercase();
    let value = c.data_mut().map_mut(map).and_then(|headers| {
        headers
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| value.clone())
    });
    match value {
        Some(value) => Ok(ok_if(c.hand_over(value.as_bytes(), ptr_out, size_out)?)),
        None => Ok(status::NOT_FOUND),
    }
}

fn change_header(
    mut c: C,
    map: i32,
    kp: i32,
    kl: i32,
    value: Option<(i32, i32)>,
    op: &'static str,
) -> Result<i32> {
    let (Some(map), Some(key)) = (MapType::from_raw(map), c.read_str(kp, kl)) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let value = match value {
        Some((ptr, len)) => match c.read_str(ptr, len) {
            Some(value) => value,
            None => return Ok(status::BAD_ARGUMENT),
        },
        None => String::new(),
    };
    let key = key.to_lowercase();
    let ctx = c.data_mut();
    let Some(headers) = ctx.map_mut(map) else {
        return Ok(status::NOT_FOUND);
    };
    apply_header_change(headers, op, &key, &value);
    ctx.record(Event::HeaderChange {
        map: format!("{map:?}"),
        op,
        name: key,
        value,
    });
    Ok(status::OK)
}

/// Envoy's semantics: replace sets the first value and drops the others
/// (adding it if absent); add appends; remove drops every value.
fn apply_header_change(headers: &mut Headers, op: &str, key: &str, value: &str) {
    match op {
        "add" => headers.push((key.to_string(), value.to_string())),
        "remove" => headers.retain(|(name, _)| name != key),
        _ => match headers.iter().position(|(name, _)| name == key) {
            Some(first) => {
                headers[first].1 = value.to_string();
                let mut index = 0;
                headers.retain(|(name, _)| {
                    index += 1;
                    index - 1 == first || name != key
                });
            }
            None => headers.push((key.to_string(), value.to_string())),
        },
    }
}

fn get_property(mut c: C, pp: i32, pl: i32, ptr_out: i32, size_out: i32) -> Result<i32> {
    let Some(path) = c.read(pp, pl) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let path = abi::decode_property_path(&path);
    match c.data().property(&path) {
        Some(value) => Ok(ok_if(c.hand_over(&value, ptr_out, size_out)?)),
        None => Ok(status::NOT_FOUND),
    }
}

fn set_property(mut c: C, pp: i32, pl: i32, vp: i32, vl: i32) -> Result<i32> {
    let (Some(path), Some(value)) = (c.read(pp, pl), c.read(vp, vl)) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let path = abi::decode_property_path(&path);
    c.data_mut().set_property(path, value);
    Ok(status::OK)
}

fn get_shared_data(
    mut c: C,
    kp: i32,
    kl: i32,
    ptr_out: i32,
    size_out: i32,
    cas_out: i32,
) -> Result<i32> {
    let Some(key) = c.read_str(kp, kl) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let found = c.data().host.borrow().get_shared(&c.data().vm_id, &key);
    match found {
        Some((value, cas)) => Ok(ok_if(
            c.hand_over(&value, ptr_out, size_out)? && c.write_u32(cas_out, cas),
        )),
        None => Ok(status::NOT_FOUND),
    }
}

fn set_shared_data(mut c: C, kp: i32, kl: i32, vp: i32, vl: i32, cas: i32) -> Result<i32> {
    let (Some(key), Some(value)) = (c.read_str(kp, kl), c.read(vp, vl)) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let ctx = c.data();
    let result = ctx
        .host
        .borrow_mut()
        .set_shared(&ctx.vm_id, &key, value, cas as u32);
    let outcome = if result == status::OK {
        "ok"
    } else {
        "cas-mismatch"
    };
    ctx.record(Event::SharedData { key, outcome });
    Ok(result)
}

fn register_shared_queue(mut c: C, np: i32, nl: i32, id_out: i32) -> Result<i32> {
    let Some(name) = c.read_str(np, nl) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let ctx = c.data();
    let id = ctx
        .host
        .borrow_mut()
        .register_queue(&ctx.vm_id, &name, ctx.index, ctx.effective);
    ctx.record(Event::Note(format!("registered queue {name} as #{id}")));
    Ok(ok_if(c.write_u32(id_out, id)))
}

fn resolve_shared_queue(mut c: C, vp: i32, vl: i32, np: i32, nl: i32, id_out: i32) -> Result<i32> {
    let (Some(vm_id), Some(name)) = (c.read_str(vp, vl), c.read_str(np, nl)) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let found = c.data().host.borrow().find_queue(&vm_id, &name);
    match found {
        Some(id) => Ok(ok_if(c.write_u32(id_out, id))),
        None => Ok(status::NOT_FOUND),
    }
}

fn enqueue_shared_queue(mut c: C, id: i32, vp: i32, vl: i32) -> Result<i32> {
    let Some(message) = c.read(vp, vl) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let ctx = c.data();
    let name = {
        let mut host = ctx.host.borrow_mut();
        let Some(queue) = host.queue_mut(id as u32) else {
            return Ok(status::NOT_FOUND);
        };
        queue.items.push_back(message.clone());
        let name = queue.name.clone();
        host.queue_ready.push_back(id as u32);
        name
    };
    ctx.record(Event::Enqueue {
        queue: name,
        message,
    });
    Ok(status::OK)
}

fn dequeue_shared_queue(mut c: C, id: i32, ptr_out: i32, size_out: i32) -> Result<i32> {
    let item = {
        let mut host = c.data().host.borrow_mut();
        let Some(queue) = host.queue_mut(id as u32) else {
            return Ok(status::NOT_FOUND);
        };
        queue.items.pop_front()
    };
    match item {
        Some(message) => Ok(ok_if(c.hand_over(&message, ptr_out, size_out)?)),
        None => Ok(status::EMPTY),
    }
}

/// `proxy_continue_stream` (close = false) and `proxy_close_stream`.
fn stream_effect(mut c: C, kind: i32, close: bool) -> Result<i32> {
    let ctx = c.data_mut();
    let effective = ctx.effective;
    let Some(stream) = ctx.streams.get_mut(&effective) else {
        ctx.record(Event::Note(format!(
            "continue/close stream {kind} outside an HTTP context ignored"
        )));
        return Ok(status::OK);
    };
    if kind != 0 && kind != 1 {
        ctx.record(Event::Note(format!(
            "continue/close of TCP stream type {kind} ignored"
        )));
        return Ok(status::OK);
    }
    let direction = stream.direction_mut(kind == 1);
    let what = if close {
        direction.reset = true;
        "reset"
    } else {
        direction.resume_requested = true;
        "resume requested"
    };
    let side = if kind == 1 { "response" } else { "request" };
    ctx.record(Event::Note(format!("{side} {what}")));
    Ok(status::OK)
}

#[allow(clippy::too_many_arguments)] // the ABI's shape
fn send_local_response(
    mut c: C,
    code: i32,
    dp: i32,
    dl: i32,
    bp: i32,
    bl: i32,
    hp: i32,
    hl: i32,
    _grpc: i32,
) -> Result<i32> {
    let (Some(details), Some(body), Some(headers)) = (
        c.read_str(dp, dl),
        c.read(bp, bl),
        c.read(hp, hl).and_then(|bytes| abi::decode_map(&bytes)),
    ) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let reply = LocalReply {
        status: code as u32,
        details,
        headers,
        body,
    };
    let ctx = c.data_mut();
    ctx.record(Event::LocalReply {
        status: reply.status,
        details: reply.details.clone(),
        headers: reply.headers.clone(),
        body: reply.body.clone(),
    });
    let effective = ctx.effective;
    match ctx.streams.get_mut(&effective) {
        Some(stream) if stream.local_reply.is_none() => {
            stream.local_reply = Some(reply);
            stream.local_reply_pending = true;
        }
        Some(_) => ctx.record(Event::Note("second local reply ignored".into())),
        None => ctx.record(Event::Note(
            "local reply outside an HTTP context ignored".into(),
        )),
    }
    Ok(status::OK)
}

#[allow(clippy::too_many_arguments)] // the ABI's shape
fn http_call(
    mut c: C,
    up: i32,
    ul: i32,
    hp: i32,
    hl: i32,
    bp: i32,
    bl: i32,
    tp: i32,
    tl: i32,
    timeout_ms: i32,
    token_out: i32,
) -> Result<i32> {
    let (Some(upstream), Some(headers), Some(body), Some(trailers)) = (
        c.read_str(up, ul),
        c.read(hp, hl).and_then(|bytes| abi::decode_map(&bytes)),
        c.read(bp, bl),
        c.read(tp, tl).and_then(|bytes| abi::decode_map(&bytes)),
    ) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let ctx = c.data();
    // Envoy refuses an unknown cluster, and a callout missing a pseudo-header.
    let has = |name: &str| headers.iter().any(|(key, _)| key == name);
    let known = ctx.host.borrow().upstream_exists(&upstream);
    if !known || !has(":method") || !has(":path") || !has(":authority") {
        ctx.record(Event::Note(format!(
            "callout to {upstream} refused (BadArgument)"
        )));
        return Ok(status::BAD_ARGUMENT);
    }
    let request = CalloutRequest {
        token: 0,
        upstream: upstream.clone(),
        headers: headers.clone(),
        body: body.clone(),
        trailers,
        timeout_ms: timeout_ms as u32,
    };
    let token = ctx
        .host
        .borrow_mut()
        .add_callout(ctx.index, ctx.effective, request);
    ctx.record(Event::Callout {
        token,
        upstream,
        headers,
        body,
    });
    Ok(ok_if(c.write_u32(token_out, token)))
}

fn define_metric(mut c: C, kind: i32, np: i32, nl: i32, id_out: i32) -> Result<i32> {
    let (Some(kind), Some(name)) = (MetricKind::from_raw(kind), c.read_str(np, nl)) else {
        return Ok(status::BAD_ARGUMENT);
    };
    let ctx = c.data();
    let id = ctx.host.borrow_mut().define_metric(kind, &name);
    ctx.record(Event::Metric {
        name,
        op: "define",
        value: 0,
    });
    Ok(ok_if(c.write_u32(id_out, id)))
}

fn change_metric(c: C, id: i32, value: i64, op: &'static str) -> Result<i32> {
    let ctx = c.data();
    let name = {
        let mut host = ctx.host.borrow_mut();
        let Some((name, metric)) = host.metric_mut(id as u32) else {
            return Ok(status::NOT_FOUND);
        };
        match (op, metric.kind) {
            ("increment", MetricKind::Histogram) => return Ok(status::BAD_ARGUMENT),
            ("increment", MetricKind::Counter) if value < 0 => return Ok(status::BAD_ARGUMENT),
            ("increment", _) => metric.value += value,
            (_, MetricKind::Histogram) => {
                metric.samples.push(value as u64);
                metric.value = value;
            }
            _ => metric.value = value,
        }
        name
    };
    ctx.record(Event::Metric { name, op, value });
    Ok(status::OK)
}

#[cfg(test)]
mod tests {
    use super::apply_header_change;

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn header_changes_follow_envoy() {
        let cases = [
            (
                "add",
                "a",
                "3",
                headers(&[("a", "1"), ("b", "2"), ("a", "3")]),
            ),
            ("remove", "a", "", headers(&[("b", "2")])),
            ("replace", "a", "9", headers(&[("a", "9"), ("b", "2")])),
            (
                "replace",
                "c",
                "9",
                headers(&[("a", "1"), ("b", "2"), ("c", "9")]),
            ),
        ];
        for (op, key, value, expected) in cases {
            let mut map = headers(&[("a", "1"), ("b", "2")]);
            apply_header_change(&mut map, op, key, value);
            assert_eq!(map, expected, "{op} {key}");
        }
        let mut twice = headers(&[("a", "1"), ("b", "2"), ("a", "3")]);
        apply_header_change(&mut twice, "replace", "a", "x");
        assert_eq!(twice, headers(&[("a", "x"), ("b", "2")]));
    }
}
