//! Wakes long-polls: one watch channel per key carries the newest seq, sent
//! right after the transaction that appended an event commits; one more says
//! the server is shutting down, so open polls answer at once instead of
//! holding the graceful shutdown for up to their `wait_ms`. On PostgreSQL,
//! heads committed by other replicas arrive through
//! `store::postgresql::feed_listener` ([`FeedSignals::announce_newer`]).

use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::watch;

/// The per-key feed heads, as channels a long-poll can wait on.
pub struct FeedSignals {
    heads: Mutex<HashMap<i64, watch::Sender<u64>>>,
    closing: watch::Sender<bool>,
}

impl Default for FeedSignals {
    fn default() -> Self {
        FeedSignals {
            heads: Mutex::default(),
            closing: watch::channel(false).0,
        }
    }
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

    /// Tells every open and future long-poll that the server is shutting
    /// down: they answer with what they have.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Resolves once [`FeedSignals::close`] was called (at once if it was).
    pub fn closed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut closing = self.closing.subscribe();
        async move {
            // An error means the sender is gone: nothing will wake us, so
            // stop waiting as if closed.
            let _ = closing.wait_for(|closed| *closed).await;
        }
    }

    /// Wakes a key's open long-polls without a new head (a token revoked,
    /// the key deleted): they check their token again.
    pub fn wake(&self, key_id: i64) {
        if let Ok(heads) = self.heads.lock() {
            if let Some(sender) = heads.get(&key_id) {
                sender.send_modify(|_| {});
            }
        }
    }

    /// Announces a head learnt from elsewhere (another replica): wakes the
    /// key's polls only when it is newer than the one known here.
    pub fn announce_newer(&self, key_id: i64, seq: u64) {
        if let Ok(heads) = self.heads.lock() {
            if let Some(sender) = heads.get(&key_id) {
                sender.send_if_modified(|head| {
                    let newer = seq > *head;
                    if newer {
                        *head = seq;
                    }
                    newer
                });
            }
        }
    }

    /// Wakes every open long-poll (after a lost connection to the shared
    /// database, when notifications may have been missed).
    pub fn wake_all(&self) {
        if let Ok(heads) = self.heads.lock() {
            for sender in heads.values() {
                sender.send_modify(|_| {});
            }
        }
    }

    /// The keys some long-poll waits on (the periodic re-read asks only for those).
    pub fn watched_keys(&self) -> Vec<i64> {
        self.heads
            .lock()
            .map(|heads| {
                heads
                    .iter()
                    .filter(|(_, sender)| sender.receiver_count() > 0)
                    .map(|(key, _)| *key)
                    .collect()
            })
            .unwrap_or_default()
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
