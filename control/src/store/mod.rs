//! Storage behind one trait: the embedded SQLite file ([`sqlite`]) or a
//! PostgreSQL database shared by several replicas ([`postgresql`]), chosen by
//! `--db` ([`database`]). The store sees values only sealed: ids and surrogate
//! hashes are keyed hashes, entries are AEAD blobs opened by the vault layer.
//!
//! Every method that changes something is one transaction.

pub mod database;
pub mod postgresql;
pub mod schema;
pub mod sqlite;

use crate::error::{ControlError, Result};
use latet_core::wire::{EntryId, RetiredSurrogate};

/// A key (API key) as stored.
#[derive(Debug, Clone)]
pub struct KeyRecord {
    pub id: i64,
    pub name: String,
    pub enabled: bool,
    /// Most values the vault may hold (retired surrogates do not count).
    pub value_limit: u64,
    pub generation: u64,
    /// Newest event seq (0: none yet).
    pub seq: u64,
    /// The key's secrets, wrapped by the master key.
    pub wrapped_secrets: Vec<u8>,
}

/// A key with its counts (listing, metrics).
#[derive(Debug, Clone)]
pub struct KeyStatus {
    pub key: KeyRecord,
    pub values: u64,
    pub retired: u64,
    pub tokens: u64,
}

/// A token to store (its hash only).
#[derive(Debug, Clone)]
pub struct NewToken {
    pub name: String,
    pub hash: [u8; 32],
    pub permissions: String,
}

/// A stored token, found by its hash.
#[derive(Debug, Clone)]
pub struct TokenRecord {
    pub key_id: i64,
    pub name: String,
    /// Comma-separated permission names.
    pub permissions: String,
}

/// One stored entry: keyed hashes and the sealed value and surrogate.
#[derive(Clone)]
pub struct EntryRow {
    pub id: EntryId,
    /// `retired_hash(salt, surrogate)`: finds an active surrogate without
    /// holding it, and becomes the retired hash on forget.
    pub surrogate_hash: [u8; 16],
    /// `lead_bucket(surrogate)`, kept for the retired row.
    pub lead: u32,
    pub kind: String,
    pub generation: u64,
    /// Value and surrogate, sealed with the key's root key.
    pub sealed: Vec<u8>,
}

impl std::fmt::Debug for EntryRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntryRow")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// One admin-log row: counts and names, never a value.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AdminLogRecord {
    /// Unix seconds.
    pub at: i64,
    /// `key.created`, `key.enabled`, `key.disabled`, `token.added`,
    /// `token.revoked`, `apps.token_revoked`, `key.forgotten`,
    /// `apps.forgotten`, `key.deleted`.
    pub action: String,
    pub key: Option<String>,
    pub token: Option<String>,
    pub requested: Option<u64>,
    pub forgotten: Option<u64>,
    pub unknown: Option<u64>,
    /// `key.deleted`: retired surrogates erased with the vault.
    #[serde(default)]
    pub retired: Option<u64>,
    /// `key.deleted`: tokens revoked with the key.
    #[serde(default)]
    pub tokens: Option<u64>,
}

/// A token as listed: its name and permissions, never its text or hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenListing {
    pub name: String,
    /// Comma-separated permission names.
    pub permissions: String,
    /// Unix seconds.
    pub created_at: i64,
}

/// What deleting a key erased.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyDeletion {
    pub key_id: i64,
    /// Values (entries) erased.
    pub values: u64,
    /// Retired surrogates (keyed hashes) erased.
    pub retired: u64,
    /// Tokens revoked (their hashes kept to answer `key_deleted`).
    pub tokens: u64,
    /// Feed events erased.
    pub events: u64,
}

/// What a snapshot is made of, read in one transaction.
#[derive(Debug, Clone)]
pub struct SnapshotRows {
    pub generation: u64,
    pub seq: u64,
    pub entries: Vec<EntryRow>,
    pub retired: Vec<RetiredSurrogate>,
}

/// A stored event: `added` names entry ids (the entries are read from the
/// vault when served, so a forgotten value leaves the feed too); `forgotten`
/// is stored whole (ids and hashes only).
#[derive(Debug, Clone)]
pub enum StoredEvent {
    Added {
        seq: u64,
        entries: Vec<EntryRow>,
    },
    Forgotten {
        seq: u64,
        ids: Vec<EntryId>,
        retired: Vec<RetiredSurrogate>,
        generation: u64,
    },
}

/// A slice of the feed.
#[derive(Debug, Clone)]
pub struct FeedRows {
    /// Oldest kept seq (`head + 1` when none is kept).
    pub oldest: u64,
    pub head: u64,
    pub events: Vec<StoredEvent>,
}

/// What a forget did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForgetOutcome {
    /// Ids that were in the vault and are gone.
    pub forgotten: Vec<EntryId>,
    /// The vault's generation after the forget.
    pub generation: u64,
    /// The `forgotten` event's seq (None when nothing was forgotten).
    pub seq: Option<u64>,
}

/// Lookups and inserts inside an entries transaction.
pub trait EntryTx {
    /// The vault's current generation and its number of values.
    fn generation(&self) -> u64;
    fn value_count(&mut self) -> Result<u64>;
    /// The entry stored under `id`.
    fn entry(&mut self, id: &EntryId) -> Result<Option<EntryRow>>;
    /// Whether a surrogate hash is taken: an active entry's or a retired one.
    fn surrogate_taken(&mut self, surrogate_hash: &[u8; 16]) -> Result<bool>;
    /// The active entry whose surrogate has this hash, if any.
    fn entry_by_surrogate(&mut self, surrogate_hash: &[u8; 16]) -> Result<Option<EntryRow>>;
    /// Inserts a new entry (visible to later lookups of this transaction).
    fn insert(&mut self, row: EntryRow) -> Result<()>;
    /// Announces lookups to come: the entries under `ids`, and the active
    /// entries and retired surrogates under `surrogate_hashes`. A store whose
    /// lookups are round trips (PostgreSQL) fetches them all at once and
    /// answers the lookups from what it fetched; an embedded one needs not.
    fn prefetch(&mut self, _ids: &[EntryId], _surrogate_hashes: &[[u8; 16]]) -> Result<()> {
        Ok(())
    }
    /// Whether [`EntryTx::prefetch`] saves anything here.
    fn batches_lookups(&self) -> bool {
        false
    }
}

/// Plans and inserts entries inside an [`EntryTx`]; returns what it decided.
pub type EntryPlanner<'a, T> = dyn FnMut(&mut dyn EntryTx) -> Result<T> + 'a;

/// The storage of the control service.
pub trait Store: Send + Sync {
    /// Creates a key with its first token; fails with `Conflict` when the name is taken.
    fn create_key(
        &self,
        name: &str,
        wrapped_secrets: &[u8],
        value_limit: u64,
        first_token: &NewToken,
        log: &AdminLogRecord,
    ) -> Result<KeyRecord>;
    /// Every key with its counts.
    fn list_keys(&self) -> Result<Vec<KeyStatus>>;
    fn key_by_name(&self, name: &str) -> Result<Option<KeyRecord>>;
    fn key_by_id(&self, id: i64) -> Result<Option<KeyRecord>>;
    /// Enables or disables a key; `NotFound` when it does not exist.
    fn set_key_enabled(&self, name: &str, enabled: bool, log: &AdminLogRecord) -> Result<()>;
    /// Adds a token to a key; `Conflict` when the key has a token of that name.
    fn add_token(&self, key_name: &str, token: &NewToken, log: &AdminLogRecord) -> Result<()>;
    fn token_by_hash(&self, hash: &[u8; 32]) -> Result<Option<TokenRecord>>;
    /// Whether `hash` is a token of a deleted key.
    fn token_of_deleted_key(&self, hash: &[u8; 32]) -> Result<bool>;
    /// A key's tokens (names and permissions), by name; `NotFound` for the key.
    fn list_tokens(&self, key_name: &str) -> Result<Vec<TokenListing>>;
    /// Revokes a key's token by name, the log row in the same transaction;
    /// returns the key's id. `NotFound` names the key or the token.
    fn revoke_token(&self, key_name: &str, token_name: &str, log: &AdminLogRecord) -> Result<i64>;
    /// Revokes the token whose hash is `hash` (a token revoking itself).
    fn revoke_token_by_hash(&self, hash: &[u8; 32], log: &AdminLogRecord) -> Result<()>;
    /// Deletes a key in one transaction: every entry, retired surrogate,
    /// event and token of it; the token hashes and the key id are kept as
    /// tombstones (a deleted key's token answers `key_deleted`, its id is
    /// never given again); the admin-log row `log(counts)` written — or
    /// nothing at all when any step fails. `NotFound` for the key.
    fn delete_key(
        &self,
        key_name: &str,
        log: &mut dyn FnMut(&KeyDeletion) -> AdminLogRecord,
    ) -> Result<KeyDeletion>;
    /// Entries, retired surrogates, generation and seq, read consistently.
    fn snapshot_rows(&self, key_id: i64) -> Result<SnapshotRows>;
    /// Up to `limit` events after `after`.
    fn events_after(&self, key_id: i64, after: u64, limit: u64) -> Result<FeedRows>;
    /// Runs `plan` in one transaction; when it inserted entries, appends one
    /// `added` event and returns its seq. A planner error rolls back.
    fn add_entries(&self, key_id: i64, plan: &mut EntryPlanner<'_, ()>) -> Result<Option<u64>>;
    /// Forgets `ids` in one transaction: entries deleted, their surrogate
    /// hashes retired, generation +1 and a `forgotten` event when any existed,
    /// and the admin-log row `log(number forgotten)` written — or nothing at
    /// all when any step fails.
    fn forget(
        &self,
        key_id: i64,
        ids: &[EntryId],
        log: &mut dyn FnMut(u64) -> AdminLogRecord,
    ) -> Result<ForgetOutcome>;
    /// The admin log, oldest first, optionally of one action.
    fn admin_log(&self, action: Option<&str>) -> Result<Vec<AdminLogRecord>>;
}

/// The stored body of a `forgotten` event (ids and hashes only), the same
/// in every backend.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct ForgottenBody {
    pub ids: Vec<EntryId>,
    pub retired: Vec<RetiredSurrogate>,
    pub generation: u64,
}

pub(crate) fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(crate) fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

pub(crate) fn hash16(bytes: &[u8], what: &str) -> Result<[u8; 16]> {
    <[u8; 16]>::try_from(bytes).map_err(|_| ControlError::Store(format!("{what}: not 16 bytes")))
}

/// Decodes one stored event row. `entries_of` reads an `added` event's
/// entries by id, in order, leaving out those forgotten since (their values
/// left the service).
pub(crate) fn decode_event(
    seq: u64,
    kind: &str,
    body: &[u8],
    entries_of: impl FnOnce(&[EntryId]) -> Result<Vec<EntryRow>>,
) -> Result<StoredEvent> {
    match kind {
        "added" => {
            let ids = body
                .chunks_exact(16)
                .map(|chunk| Ok(EntryId(hash16(chunk, "event entry id")?)))
                .collect::<Result<Vec<_>>>()?;
            Ok(StoredEvent::Added {
                seq,
                entries: entries_of(&ids)?,
            })
        }
        "forgotten" => {
            let parsed: ForgottenBody = serde_json::from_slice(body).map_err(|_| {
                crate::error::ControlError::Store(format!("event {seq}: unreadable forgotten body"))
            })?;
            Ok(StoredEvent::Forgotten {
                seq,
                ids: parsed.ids,
                retired: parsed.retired,
                generation: parsed.generation,
            })
        }
        _ => Err(crate::error::ControlError::Store(format!(
            "event {seq}: unknown type"
        ))),
    }
}
