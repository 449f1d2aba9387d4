//! Wakes long-polls: one watch channel per key carries the newest seq, sent
//! right after the transaction that appended an event commits, and an epoch
//! that changes at every send (a wake-up without a new head included: the
//! polls woken by one send share one read, keyed by it); one more says
//! the server is shutting down, so open polls answer at once instead of
//! holding the graceful shutdown for up to their `wait_ms`. On PostgreSQL,
//! heads committed by other replicas arrive through
//! `store::postgresql::feed_listener` ([`FeedSignals::announce_newer`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tokio::sync::watch;

/// What a key's channel carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FeedHead {
    /// The newest seq known here.
    pub seq: u64,
    /// Changes at every send, across all keys (never repeats, even for a
    /// key whose channel was made again): a read started after a poll saw
    /// it reflects everything that send announced.
    pub epoch: u64,
}

/// The per-key feed heads, as channels a long-poll can wait on.
pub struct FeedSignals {
    heads: Mutex<HashMap<i64, watch::Sender<FeedHead>>>,
    epochs: AtomicU64,
    /// Counts every announcement and wake-up, for any key, whether or not
    /// a channel listened (bumped under the `heads` lock, as `subscribe`
    /// takes it): see [`FeedSignals::notices`].
    notices: AtomicU64,
    closing: watch::Sender<bool>,
}

impl Default for FeedSignals {
    fn default() -> Self {
        FeedSignals {
            heads: Mutex::default(),
            epochs: AtomicU64::new(0),
            notices: AtomicU64::new(0),
            closing: watch::channel(false).0,
        }
    }
}

impl FeedSignals {
    /// A receiver that sees every head sent after this call.
    pub fn subscribe(&self, key_id: i64) -> Option<watch::Receiver<FeedHead>> {
        let mut heads = self.heads.lock().ok()?;
        Some(
            heads
                .entry(key_id)
                .or_insert_with(|| watch::channel(FeedHead::default()).0)
                .subscribe(),
        )
    }

    /// How many announcements and wake-ups this replica has seen, for any
    /// key. A poll that reads it before authenticating and again after
    /// subscribing, and finds it unchanged, knows nothing was announced in
    /// between that its channel could have missed: a head committed after
    /// its key row was read either moved this count first or reaches the
    /// channel it now holds.
    pub fn notices(&self) -> u64 {
        self.notices.load(Ordering::SeqCst)
    }

    fn notice(&self) {
        self.notices.fetch_add(1, Ordering::SeqCst);
    }

    fn next_epoch(&self) -> u64 {
        self.epochs.fetch_add(1, Ordering::Relaxed) + 1
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
            self.notice();
            if let Some(sender) = heads.get(&key_id) {
                sender.send_modify(|head| head.epoch = self.next_epoch());
            }
        }
    }

    /// Announces a head learnt from elsewhere (another replica): wakes the
    /// key's polls only when it is newer than the one known here.
    pub fn announce_newer(&self, key_id: i64, seq: u64) {
        if let Ok(heads) = self.heads.lock() {
            self.notice();
            if let Some(sender) = heads.get(&key_id) {
                sender.send_if_modified(|head| {
                    let newer = seq > head.seq;
                    if newer {
                        head.seq = seq;
                        head.epoch = self.next_epoch();
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
            self.notice();
            for sender in heads.values() {
                sender.send_modify(|head| head.epoch = self.next_epoch());
            }
        }
    }

    /// How many receivers a key's channel has (tests: polls parked).
    #[cfg(test)]
    pub(crate) fn listeners(&self, key_id: i64) -> usize {
        self.heads
            .lock()
            .map(|heads| heads.get(&key_id).map_or(0, |s| s.receiver_count()))
            .unwrap_or(0)
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
            self.notice();
            if let Some(sender) = heads.get(&key_id) {
                sender.send_modify(|head| {
                    head.seq = seq;
                    head.epoch = self.next_epoch();
                });
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn every_announcement_moves_the_notices_a_key_nobody_waits_on_included() {
        let signals = FeedSignals::default();
        type SendFn = dyn Fn(&FeedSignals);
        let sends: [&SendFn; 4] = [
            &|s| s.announce(9, 1),
            &|s| s.announce_newer(9, 2),
            &|s| s.wake(9),
            &|s| s.wake_all(),
        ];
        for (i, send) in sends.iter().enumerate() {
            let before = signals.notices();
            send(&signals);
            assert_eq!(signals.notices(), before + 1, "send {i}, no channel");
        }
        let _head = signals.subscribe(9).unwrap();
        let before = signals.notices();
        signals.announce_newer(9, 1);
        assert_eq!(signals.notices(), before + 1, "an older head still counts");
    }

    #[test]
    fn every_send_moves_the_epoch_a_wake_without_a_head_included() {
        let signals = FeedSignals::default();
        let mut head = signals.subscribe(7).unwrap();
        let mut epochs = vec![head.borrow_and_update().epoch];
        type SendFn = dyn Fn(&FeedSignals);
        // (send, woken, seq after)
        let sends: [(&SendFn, bool, u64); 6] = [
            (&|s| s.announce(7, 3), true, 3),
            (&|s| s.wake(7), true, 3),
            (&|s| s.announce_newer(7, 3), false, 3),
            (&|s| s.announce_newer(7, 4), true, 4),
            (&|s| s.wake_all(), true, 4),
            (&|s| s.wake(8), false, 4),
        ];
        for (i, (send, woken, seq)) in sends.iter().enumerate() {
            send(&signals);
            assert_eq!(head.has_changed().unwrap(), *woken, "send {i}");
            let now = *head.borrow_and_update();
            assert_eq!(now.seq, *seq, "send {i}");
            if *woken {
                assert!(!epochs.contains(&now.epoch), "send {i}: epoch repeated");
                epochs.push(now.epoch);
            } else {
                assert_eq!(Some(&now.epoch), epochs.last(), "send {i}");
            }
        }
    }
}
