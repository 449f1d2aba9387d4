//! Reading and writing a VM's linear memory from inside a host call, and
//! handing the guest bytes it owns (allocated by its own
//! `proxy_on_memory_allocate`, as the SDK frees them with `Vec::from_raw_parts`).

use crate::vm::VmCtx;
use wasmtime::{Caller, Extern, Memory, Result};

/// Guest memory access through a host call's `Caller`.
pub trait GuestMemory {
    /// Copies `len` bytes at `ptr`; `None` if out of bounds.
    fn read(&mut self, ptr: i32, len: i32) -> Option<Vec<u8>>;
    /// Reads a UTF-8 string (lossy); `None` if out of bounds.
    fn read_str(&mut self, ptr: i32, len: i32) -> Option<String>;
    /// Writes bytes at `ptr`; false if out of bounds.
    fn write(&mut self, ptr: i32, bytes: &[u8]) -> bool;
    /// Writes a little-endian u32.
    fn write_u32(&mut self, ptr: i32, value: u32) -> bool;
    /// Writes a little-endian u64.
    fn write_u64(&mut self, ptr: i32, value: u64) -> bool;
    /// Gives the guest a copy of `bytes` in memory it allocated, and writes
    /// its address and size at `ptr_out` / `size_out` (null and 0 when
    /// empty, like Envoy). Returns false if memory could not be written.
    fn hand_over(&mut self, bytes: &[u8], ptr_out: i32, size_out: i32) -> Result<bool>;
}

fn memory(caller: &mut Caller<'_, VmCtx>) -> Option<Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(memory)) => Some(memory),
        _ => None,
    }
}

fn range(ptr: i32, len: usize) -> Option<std::ops::Range<usize>> {
    let start = u32::try_from(ptr).ok()? as usize;
    Some(start..start.checked_add(len)?)
}

impl GuestMemory for Caller<'_, VmCtx> {
    fn read(&mut self, ptr: i32, len: i32) -> Option<Vec<u8>> {
        let len = u32::try_from(len).ok()? as usize;
        if len == 0 {
            return Some(Vec::new());
        }
        let memory = memory(self)?;
        memory
            .data(&*self)
            .get(range(ptr, len)?)
            .map(<[u8]>::to_vec)
    }

    fn read_str(&mut self, ptr: i32, len: i32) -> Option<String> {
        self.read(ptr, len)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    }

    fn write(&mut self, ptr: i32, bytes: &[u8]) -> bool {
        let Some(memory) = memory(self) else {
            return false;
        };
        let Some(range) = range(ptr, bytes.len()) else {
            return false;
        };
        match memory.data_mut(&mut *self).get_mut(range) {
            Some(slot) => {
                slot.copy_from_slice(bytes);
                true
            }
            None => false,
        }
    }

    fn write_u32(&mut self, ptr: i32, value: u32) -> bool {
        self.write(ptr, &value.to_le_bytes())
    }

    fn write_u64(&mut self, ptr: i32, value: u64) -> bool {
        self.write(ptr, &value.to_le_bytes())
    }

    fn hand_over(&mut self, bytes: &[u8], ptr_out: i32, size_out: i32) -> Result<bool> {
        if bytes.is_empty() {
            return Ok(self.write_u32(ptr_out, 0) && self.write_u32(size_out, 0));
        }
        let allocate = ["proxy_on_memory_allocate", "malloc"]
            .iter()
            .find_map(|name| self.get_export(name).and_then(Extern::into_func))
            .ok_or_else(|| {
                wasmtime::format_err!("the module exports no proxy_on_memory_allocate or malloc")
            })?;
        let allocate = allocate.typed::<i32, i32>(&*self)?;
        let size = i32::try_from(bytes.len())?;
        let address = allocate.call(&mut *self, size)?;
        if address == 0 {
            return Ok(false);
        }
        Ok(self.write(address, bytes)
            && self.write_u32(ptr_out, address as u32)
            && self.write_u32(size_out, size as u32))
    }
}
