//! Who polls when there is no singleton: a lease in shared data, taken and
//! renewed by compare-and-swap. A holder that stops renewing (its VM went
//! away) loses it when it expires, and the next worker to tick takes it.
//! The singleton sync service takes it unconditionally.

use crate::host::{Host, HostError};
use crate::shared::{read_lease, write_json, Lease, LEASE_KEY};

/// Renews the lease if `holder` has it, takes it if it is free or expired;
/// true when `holder` holds it afterwards.
pub fn hold(host: &dyn Host, holder: &str, lease_ms: u64) -> bool {
    let now = host.now_ms();
    let (current, cas) = read_lease(host);
    let free = match &current {
        None => true,
        Some(lease) => lease.holder == holder || lease.expires_at_ms <= now,
    };
    if !free {
        return false;
    }
    let lease = Lease {
        holder: holder.to_string(),
        expires_at_ms: now.saturating_add(lease_ms),
    };
    // An absent key has no CAS token: the first write is unconditional, and
    // two first writers both "win" once; the next renewal sorts it out.
    write_json(host, LEASE_KEY, &lease, cas).is_ok()
}

/// Takes the lease whoever holds it (the singleton sync service).
pub fn seize(host: &dyn Host, holder: &str, lease_ms: u64) -> bool {
    for _ in 0..8 {
        let (_, cas) = read_lease(host);
        let lease = Lease {
            holder: holder.to_string(),
            expires_at_ms: host.now_ms().saturating_add(lease_ms),
        };
        match write_json(host, LEASE_KEY, &lease, cas) {
            Ok(()) => return true,
            Err(HostError::CasMismatch) => continue,
            Err(_) => return false,
        }
    }
    false
}
