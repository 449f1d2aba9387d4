//! The WASI preview-1 calls a `wasm32-wasip1` build of a proxy-wasm filter
//! imports, on the host's clock and seeded random source. No files, no
//! arguments; stdout and stderr become recorded lines.

use super::memory::GuestMemory;
use crate::record::Event;
use crate::vm::VmCtx;
use wasmtime::{Caller, Linker, Result};

type C<'a> = Caller<'a, VmCtx>;

const WASI: &str = "wasi_snapshot_preview1";
const ERRNO_SUCCESS: i32 = 0;
const ERRNO_BADF: i32 = 8;
const ERRNO_FAULT: i32 = 21;
const ERRNO_INVAL: i32 = 28;
const ERRNO_NOSYS: i32 = 52;

fn errno(ok: bool) -> i32 {
    if ok {
        ERRNO_SUCCESS
    } else {
        ERRNO_FAULT
    }
}

/// Defines the WASI imports.
pub fn define(linker: &mut Linker<VmCtx>) -> Result<()> {
    linker.func_wrap(
        WASI,
        "environ_sizes_get",
        |mut c: C, count: i32, size: i32| -> Result<i32> {
            let (n, bytes) = table_sizes(&c.data().env);
            Ok(errno(c.write_u32(count, n) && c.write_u32(size, bytes)))
        },
    )?;
    linker.func_wrap(
        WASI,
        "environ_get",
        |mut c: C, ptrs: i32, buf: i32| -> Result<i32> {
            let env = c.data().env.clone();
            Ok(errno(write_table(&mut c, &env, ptrs, buf)))
        },
    )?;
    linker.func_wrap(
        WASI,
        "args_sizes_get",
        |mut c: C, count: i32, size: i32| -> Result<i32> {
            Ok(errno(c.write_u32(count, 0) && c.write_u32(size, 0)))
        },
    )?;
    linker.func_wrap(WASI, "args_get", |_: C, _: i32, _: i32| -> Result<i32> {
        Ok(ERRNO_SUCCESS)
    })?;
    linker.func_wrap(WASI, "fd_write", fd_write)?;
    linker.func_wrap(
        WASI,
        "fd_read",
        |mut c: C, fd: i32, _: i32, _: i32, nread: i32| -> Result<i32> {
            // stdin is empty; nothing else is open.
            if fd == 0 {
                Ok(errno(c.write_u32(nread, 0)))
            } else {
                Ok(ERRNO_BADF)
            }
        },
    )?;
    linker.func_wrap(WASI, "fd_close", |_: C, _: i32| -> Result<i32> {
        Ok(ERRNO_BADF)
    })?;
    linker.func_wrap(
        WASI,
        "fd_seek",
        |_: C, _: i32, _: i64, _: i32, _: i32| -> Result<i32> { Ok(ERRNO_BADF) },
    )?;
    linker.func_wrap(
        WASI,
        "fd_fdstat_get",
        |mut c: C, fd: i32, out: i32| -> Result<i32> {
            if !(0..=2).contains(&fd) {
                return Ok(ERRNO_BADF);
            }
            // filetype character device (2), no flags, all rights.
            let mut stat = [0u8; 24];
            stat[0] = 2;
            stat[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
            Ok(errno(c.write(out, &stat)))
        },
    )?;
    linker.func_wrap(
        WASI,
        "fd_prestat_get",
        |_: C, _: i32, _: i32| -> Result<i32> { Ok(ERRNO_BADF) },
    )?;
    linker.func_wrap(
        WASI,
        "fd_prestat_dir_name",
        |_: C, _: i32, _: i32, _: i32| -> Result<i32> { Ok(ERRNO_BADF) },
    )?;
    linker.func_wrap(
        WASI,
        "clock_time_get",
        |mut c: C, clock: i32, _precision: i64, out: i32| -> Result<i32> {
            // Realtime (0) and the monotonic clocks all read the host clock:
            // time moves only when the test advances it.
            if !(0..=3).contains(&clock) {
                return Ok(ERRNO_INVAL);
            }
            let now = c.data().host.borrow().now_ns;
            Ok(errno(c.write_u64(out, now)))
        },
    )?;
    linker.func_wrap(
        WASI,
        "clock_res_get",
        |mut c: C, _clock: i32, out: i32| -> Result<i32> { Ok(errno(c.write_u64(out, 1))) },
    )?;
    linker.func_wrap(
        WASI,
        "random_get",
        |mut c: C, buf: i32, len: i32| -> Result<i32> {
            let mut bytes = vec![0u8; len as u32 as usize];
            c.data().host.borrow_mut().fill_random(&mut bytes);
            Ok(errno(c.write(buf, &bytes)))
        },
    )?;
    linker.func_wrap(WASI, "sched_yield", |_: C| -> Result<i32> {
        Ok(ERRNO_SUCCESS)
    })?;
    linker.func_wrap(
        WASI,
        "poll_oneoff",
        |_: C, _: i32, _: i32, _: i32, _: i32| -> Result<i32> { Ok(ERRNO_NOSYS) },
    )?;
    linker.func_wrap(WASI, "proc_exit", |c: C, code: i32| -> Result<()> {
        c.data().record(Event::Note(format!("proc_exit({code})")));
        Err(wasmtime::format_err!("the module called proc_exit({code})"))
    })?;
    Ok(())
}

/// Count and total size of `KEY=VALUE\0` strings.
fn table_sizes(env: &[(String, String)]) -> (u32, u32) {
    let bytes: usize = env.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
    (env.len() as u32, bytes as u32)
}

fn write_table(c: &mut C, env: &[(String, String)], ptrs: i32, buf: i32) -> bool {
    let mut at = buf;
    for (index, (key, value)) in env.iter().enumerate() {
        let entry = format!("{key}={value}\0");
        if !(c.write_u32(ptrs + 4 * index as i32, at as u32) && c.write(at, entry.as_bytes())) {
            return false;
        }
        at += entry.len() as i32;
    }
    true
}

fn fd_write(mut c: C, fd: i32, iovs: i32, iovs_len: i32, nwritten: i32) -> Result<i32> {
    if fd != 1 && fd != 2 {
        return Ok(ERRNO_BADF);
    }
    let mut written = Vec::new();
    for index in 0..iovs_len {
        let Some(iov) = c.read(iovs + 8 * index, 8) else {
            return Ok(ERRNO_FAULT);
        };
        let ptr = i32::from_le_bytes([iov[0], iov[1], iov[2], iov[3]]);
        let len = i32::from_le_bytes([iov[4], iov[5], iov[6], iov[7]]);
        let Some(bytes) = c.read(ptr, len) else {
            return Ok(ERRNO_FAULT);
        };
        written.extend_from_slice(&bytes);
    }
    let total = written.len() as u32;
    c.data_mut().write_output(fd as u32, &written);
    Ok(errno(c.write_u32(nwritten, total)))
}
