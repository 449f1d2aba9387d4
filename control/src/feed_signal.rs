//! Wakes long-polls: one watch channel per key carries the newest seq, sent
//! right after the transaction that appended an event commits.

use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::watch;

/// The per-key feed heads, as channels a long-poll can wait on.
#[derive(Default)]
pub struct FeedSignals {
    heads: Mutex<HashMap<i64, watch::Sender<u64>>>,
}

impl FeedSignals {
    /// A receiver that sees every head sent after this call.
    pub fn subscribe(&self, key_id: i64) -> Option<watch::Receiver<u64>> {
        let mut heads = self.heads.lock().ok()?;
        Some(
            heads
                .entry(key_id)
                .or_insert_with(|| watch::channel(0).0)
                .subscribe(),
        )
    }

    /// Announces a new head for a key.
    pub fn announce(&self, key_id: i64, seq: u64) {
        if let Ok(heads) = self.heads.lock() {
            if let Some(sender) = heads.get(&key_id) {
                sender.send_replace(seq);
            }
        }
    }
}
