//! The event feed's wake-ups through the handler, over a store that counts
//! its reads: polls woken by one send share one read, a revocation still
//! refuses the revoked token's polls (and only theirs).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::gateway::events;
use super::AppState;
use crate::error::{ControlError, Result};
use crate::metrics::Metrics;
use crate::secrets::MasterKey;
use crate::store::sqlite::SqliteStore;
use crate::store::*;
use crate::tokens::Permissions;
use crate::vault::Vaults;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap};
use axum::response::Response;
use latet_core::wire::{EntryId, NewValue};
use latet_core::Kind;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A SQLite store that counts the reads a poll makes; once `slow` is set,
/// each feed read takes 200 ms more (time for every woken poll to join).
struct CountingStore {
    inner: SqliteStore,
    feed_reads: AtomicUsize,
    token_reads: AtomicUsize,
    slow: AtomicBool,
}

impl Store for CountingStore {
    fn create_key(
        &self,
        name: &str,
        wrapped_secrets: &[u8],
        value_limit: u64,
        first_token: &NewToken,
        log: &AdminLogRecord,
    ) -> Result<KeyRecord> {
        self.inner
            .create_key(name, wrapped_secrets, value_limit, first_token, log)
    }
    fn list_keys(&self) -> Result<Vec<KeyStatus>> {
        self.inner.list_keys()
    }
    fn key_by_name(&self, name: &str) -> Result<Option<KeyRecord>> {
        self.inner.key_by_name(name)
    }
    fn key_by_id(&self, id: i64) -> Result<Option<KeyRecord>> {
        self.inner.key_by_id(id)
    }
    fn set_key_enabled(&self, name: &str, enabled: bool, log: &AdminLogRecord) -> Result<()> {
        self.inner.set_key_enabled(name, enabled, log)
    }
    fn add_token(&self, key_name: &str, token: &NewToken, log: &AdminLogRecord) -> Result<()> {
        self.inner.add_token(key_name, token, log)
    }
    fn token_by_hash(&self, hash: &[u8; 32]) -> Result<Option<TokenRecord>> {
        self.token_reads.fetch_add(1, Ordering::SeqCst);
        self.inner.token_by_hash(hash)
    }
    fn token_of_deleted_key(&self, hash: &[u8; 32]) -> Result<bool> {
        self.inner.token_of_deleted_key(hash)
    }
    fn list_tokens(&self, key_name: &str) -> Result<Vec<TokenListing>> {
        self.inner.list_tokens(key_name)
    }
    fn revoke_token(&self, key_name: &str, token_name: &str, log: &AdminLogRecord) -> Result<i64> {
        self.inner.revoke_token(key_name, token_name, log)
    }
    fn revoke_token_by_hash(&self, hash: &[u8; 32], log: &AdminLogRecord) -> Result<()> {
        self.inner.revoke_token_by_hash(hash, log)
    }
    fn delete_key(
        &self,
        key_name: &str,
        log: &mut dyn FnMut(&KeyDeletion) -> AdminLogRecord,
    ) -> Result<KeyDeletion> {
        self.inner.delete_key(key_name, log)
    }
    fn snapshot_rows(&self, key_id: i64) -> Result<SnapshotRows> {
        self.inner.snapshot_rows(key_id)
    }
    fn events_after(&self, key_id: i64, after: u64, limit: u64) -> Result<FeedRows> {
        self.feed_reads.fetch_add(1, Ordering::SeqCst);
        if self.slow.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(200));
        }
        self.inner.events_after(key_id, after, limit)
    }
    fn add_entries(&self, key_id: i64, plan: &mut EntryPlanner<'_, ()>) -> Result<Option<u64>> {
        self.inner.add_entries(key_id, plan)
    }
    fn forget(
        &self,
        key_id: i64,
        ids: &[EntryId],
        log: &mut dyn FnMut(u64) -> AdminLogRecord,
    ) -> Result<ForgetOutcome> {
        self.inner.forget(key_id, ids, log)
    }
    fn admin_log(&self, action: Option<&str>) -> Result<Vec<AdminLogRecord>> {
        self.inner.admin_log(action)
    }
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<CountingStore>,
    state: AppState,
    key: KeyRecord,
    token: String,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(CountingStore {
        inner: SqliteStore::open(&dir.path().join("feed.db"), 100).unwrap(),
        feed_reads: AtomicUsize::new(0),
        token_reads: AtomicUsize::new(0),
        slow: AtomicBool::new(false),
    });
    let vaults = Arc::new(Vaults::new(store.clone(), MasterKey::from_bytes([3; 32])));
    let created = vaults.create_key("Shop", None).unwrap();
    let state = AppState {
        vaults,
        metrics: Arc::new(Metrics::default()),
        admin_hash: [0; 32],
        detectors: Arc::new(
            latet_core::detect::Detectors::new(&latet_core::detect::DetectorConfig::default())
                .unwrap(),
        ),
        feed_reads: Arc::default(),
    };
    Fixture {
        _dir: dir,
        store,
        state,
        key: created.key,
        token: created.token,
    }
}

type PollAnswer = std::result::Result<serde_json::Value, ControlError>;

/// `count` long-polls of `token` after `after`, waiting up to 20 s.
fn polls(
    state: &AppState,
    token: &str,
    after: u64,
    count: usize,
) -> Vec<tokio::task::JoinHandle<PollAnswer>> {
    (0..count)
        .map(|_| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::AUTHORIZATION,
                format!("Bearer {token}").parse().unwrap(),
            );
            let query = RawQuery(Some(format!("after={after}&wait_ms=20000")));
            let state = state.clone();
            tokio::spawn(async move {
                let response: Response = events(State(state), headers, query).await?;
                let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .unwrap();
                Ok(serde_json::from_slice(&bytes).unwrap())
            })
        })
        .collect()
}

/// Until `count` polls wait on the key's channel.
async fn until_parked(state: &AppState, key: &KeyRecord, count: usize) {
    let start = Instant::now();
    while state.vaults.signals().listeners(key.id) < count {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "polls not parked"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn add_value(state: &AppState, key: &KeyRecord, value: &str) {
    let (vaults, key) = (state.vaults.clone(), key.clone());
    let values = vec![NewValue {
        kind: Kind::Email,
        value: value.into(),
    }];
    tokio::task::spawn_blocking(move || vaults.entries(&key, &values))
        .await
        .unwrap()
        .unwrap();
}

/// The seqs of the events a poll answered.
fn seqs(answer: &serde_json::Value) -> Vec<u64> {
    answer["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect()
}

const POLLS: usize = 40;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polls_woken_by_one_event_share_one_read() {
    let f = fixture();
    let parked = polls(&f.state, &f.token, 0, POLLS);
    until_parked(&f.state, &f.key, POLLS).await;
    let tokens_before = f.store.token_reads.load(Ordering::SeqCst);
    f.store.slow.store(true, Ordering::SeqCst);
    add_value(&f.state, &f.key, "mario.rossi@acme.it").await;
    for poll in parked {
        let answer = poll.await.unwrap().unwrap();
        assert_eq!(answer["status"], "events");
        assert_eq!(seqs(&answer), vec![1]);
    }
    // At the head, no poll read before parking; the wake-up read once
    // for all.
    assert_eq!(f.store.feed_reads.load(Ordering::SeqCst), 1);
    assert_eq!(
        f.store.token_reads.load(Ordering::SeqCst) - tokens_before,
        1
    );
    assert_eq!(f.state.feed_reads.len_for_tests(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_while_parked_refuses_that_token_polls_and_not_the_others() {
    let f = fixture();
    let other = f
        .state
        .vaults
        .add_token(
            "Shop",
            "second",
            Permissions::parse_names(["gateway"]).unwrap(),
        )
        .unwrap();
    let kept = polls(&f.state, &f.token, 0, POLLS);
    let revoked = polls(&f.state, &other, 0, POLLS);
    until_parked(&f.state, &f.key, 2 * POLLS).await;
    let tokens_before = f.store.token_reads.load(Ordering::SeqCst);
    f.store.slow.store(true, Ordering::SeqCst);
    let vaults = f.state.vaults.clone();
    tokio::task::spawn_blocking(move || vaults.revoke_token("Shop", "second"))
        .await
        .unwrap()
        .unwrap();
    // An event right after: the revoked polls must not get it.
    add_value(&f.state, &f.key, "mario.rossi@acme.it").await;
    for poll in revoked {
        let refused = poll.await.unwrap().expect_err("a revoked token's poll");
        assert!(matches!(refused, ControlError::Unauthorized), "{refused}");
        assert_eq!(refused.status_and_code().0, 401);
    }
    for poll in kept {
        assert_eq!(seqs(&poll.await.unwrap().unwrap()), vec![1]);
    }
    // One authentication per token and wake-up when every poll wakes at
    // once: the revocation's and the event's, so 2 to 4. A poll the
    // scheduler wakes after its group's read has ended starts a read of its
    // own: on a loaded machine there were 7 (80 polls). What must
    // hold is that polls share reads, never one per poll: at most one
    // read per 8 polls.
    let tokens = f.store.token_reads.load(Ordering::SeqCst) - tokens_before;
    assert!(
        (2..=2 * POLLS / 8).contains(&tokens),
        "{tokens} token reads for {} polls",
        2 * POLLS
    );
    let feeds = f.store.feed_reads.load(Ordering::SeqCst);
    assert!((1..=POLLS / 8).contains(&feeds), "{feeds} feed reads");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_at_the_head_parks_without_reading_and_one_behind_reads_at_once() {
    let f = fixture();
    add_value(&f.state, &f.key, "mario.rossi@acme.it").await;
    let reads = || f.store.feed_reads.load(Ordering::SeqCst);
    let at_head = polls(&f.state, &f.token, 1, 1);
    until_parked(&f.state, &f.key, 1).await;
    assert_eq!(reads(), 0, "a poll at the head read the feed");
    let behind = polls(&f.state, &f.token, 0, 1).pop().unwrap();
    assert_eq!(seqs(&behind.await.unwrap().unwrap()), vec![1]);
    assert_eq!(reads(), 1);
    // Past the head: the store's answer (snapshot_required), not a park.
    let ahead = polls(&f.state, &f.token, 5, 1).pop().unwrap();
    assert_eq!(ahead.await.unwrap().unwrap()["status"], "snapshot_required");
    add_value(&f.state, &f.key, "anna.verdi@acme.it").await;
    for poll in at_head {
        assert_eq!(seqs(&poll.await.unwrap().unwrap()), vec![2]);
    }
}
