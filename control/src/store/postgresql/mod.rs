//! The shared store: one PostgreSQL database behind several stateless
//! `latet serve` replicas. Same tables and the same transactions as the
//! SQLite store; a write that changes a key's feed (entries, forget, token
//! revocation, deletion) first locks the key's row (`SELECT … FOR UPDATE`),
//! so writers of one key take turns across replicas and `seq` stays
//! gap-free. Every such transaction sends a `NOTIFY` at commit that wakes the
//! other replicas' long-polls ([`feed_listener`]).

pub mod feed_listener;
pub mod pool;
pub mod shared;

use super::schema::POSTGRES_SCHEMA;
use super::*;
use crate::store::database::PostgresUrl;
use latet_core::wire::RetiredHash;
use postgres::types::ToSql;
use postgres::{GenericClient, IsolationLevel, NoTls, Row, Transaction};
use r2d2_postgres::r2d2::{Pool, PooledConnection};
use std::collections::HashMap;
use std::time::Duration;

/// The channel of feed notifications: payload `KEY_ID SEQ` (a new head) or
/// `KEY_ID` (a token revoked, the key deleted: polls check their token).
pub const FEED_CHANNEL: &str = "latet_feed";
/// Connections kept per replica.
const POOL_SIZE: u32 = 8;
/// An arbitrary constant: the advisory lock held while the schema is made.
const SCHEMA_LOCK: i64 = 0x006c_6174_6574;

type Manager = pool::CheckedWhenIdle;
type Conn = PooledConnection<Manager>;
type Params<'a> = [&'a (dyn ToSql + Sync)];

/// The PostgreSQL store.
pub struct PostgresStore {
    pool: Pool<Manager>,
    feed_keep: u64,
}

impl PostgresStore {
    /// Connects and makes the schema (idempotent). Blocking: call it
    /// outside the async runtime.
    pub fn open(url: &PostgresUrl, feed_keep: u64) -> Result<Self> {
        // One connection first: a wrong host, port or password is told at
        // once and why (the pool would retry until its timeout).
        let first = url.config().connect(NoTls).map_err(|err| {
            let reason = match ControlError::from(err) {
                ControlError::Store(reason) => reason,
                other => other.to_string(),
            };
            ControlError::Store(format!(
                "cannot connect to the {}: {reason}",
                url.describe()
            ))
        })?;
        drop(first);
        let manager = pool::CheckedWhenIdle::new(url.config().clone());
        let pool = Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(1))
            .connection_timeout(Duration::from_secs(10))
            .build(manager)
            .map_err(|_| unreachable_database(url))?;
        let store = Self {
            pool,
            feed_keep: feed_keep.max(1),
        };
        let mut conn = store.conn()?;
        let mut tx = conn.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])?;
        tx.batch_execute(POSTGRES_SCHEMA)?;
        tx.commit()?;
        Ok(store)
    }

    fn conn(&self) -> Result<Conn> {
        self.pool.get().map_err(|_| {
            ControlError::Store(
                "no PostgreSQL connection within 10 s (pool exhausted or server unreachable)"
                    .into(),
            )
        })
    }

    /// A connection of the pool (the shared settings, tests).
    pub fn connection(&self) -> Result<Conn> {
        self.conn()
    }
}

fn unreachable_database(url: &PostgresUrl) -> ControlError {
    ControlError::Store(format!(
        "cannot connect to the {} (check --db: host, port, user, password)",
        url.describe()
    ))
}

/// A write transaction (READ COMMITTED: every statement sees what committed
/// before it, which, after the key's row lock, is the key's latest state).
fn write_tx(conn: &mut Conn) -> Result<Transaction<'_>> {
    Ok(conn.transaction()?)
}

/// A read transaction: entries, retired, generation and seq from one state.
fn read_tx(conn: &mut Conn) -> Result<Transaction<'_>> {
    Ok(conn
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?)
}

fn insert_log(tx: &mut Transaction<'_>, log: &AdminLogRecord) -> Result<()> {
    tx.execute(
        "INSERT INTO admin_log (at, action, key_name, token, requested, forgotten, unknown, retired, tokens)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        &[
            &log.at,
            &log.action,
            &log.key,
            &log.token,
            &log.requested.map(to_i64),
            &log.forgotten.map(to_i64),
            &log.unknown.map(to_i64),
            &log.retired.map(to_i64),
            &log.tokens.map(to_i64),
        ],
    )?;
    Ok(())
}

/// Sends a feed notification at commit (nothing if the transaction rolls back).
fn notify(tx: &mut Transaction<'_>, key_id: i64, seq: Option<u64>) -> Result<()> {
    let payload = match seq {
        Some(seq) => format!("{key_id} {seq}"),
        None => key_id.to_string(),
    };
    tx.execute("SELECT pg_notify($1, $2)", &[&FEED_CHANNEL, &payload])?;
    Ok(())
}

const KEY_COLUMNS: &str = "id, name, enabled, value_limit, generation, seq, wrapped_secrets";

fn key_from_row(row: &Row) -> Result<KeyRecord> {
    Ok(KeyRecord {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        enabled: row.try_get(2)?,
        value_limit: to_u64(row.try_get(3)?),
        generation: to_u64(row.try_get(4)?),
        seq: to_u64(row.try_get(5)?),
        wrapped_secrets: row.try_get(6)?,
    })
}

const ENTRY_COLUMNS: &str = "id, surrogate_hash, lead, kind, generation, sealed";

fn entry_from_row(row: &Row) -> Result<EntryRow> {
    let id: Vec<u8> = row.try_get(0)?;
    let surrogate_hash: Vec<u8> = row.try_get(1)?;
    Ok(EntryRow {
        id: EntryId(hash16(&id, "entry id")?),
        surrogate_hash: hash16(&surrogate_hash, "surrogate hash")?,
        lead: u32::try_from(row.try_get::<_, i64>(2)?).unwrap_or(0),
        kind: row.try_get(3)?,
        generation: to_u64(row.try_get(4)?),
        sealed: row.try_get(5)?,
    })
}

fn query_key(
    client: &mut impl GenericClient,
    sql: &str,
    params: &Params<'_>,
) -> Result<Option<KeyRecord>> {
    client
        .query_opt(sql, params)?
        .map(|row| key_from_row(&row))
        .transpose()
}

/// Locks the key's row for this transaction; `KeyDeleted` when it is gone.
fn lock_key(tx: &mut Transaction<'_>, key_id: i64) -> Result<KeyRecord> {
    query_key(
        tx,
        &format!("SELECT {KEY_COLUMNS} FROM keys WHERE id = $1 FOR UPDATE"),
        &[&key_id],
    )?
    // Callers hold the id of an authenticated key: gone since means deleted.
    .ok_or(ControlError::KeyDeleted)
}

/// Locks the named key's row; `NotFound` when there is none.
fn lock_key_named(tx: &mut Transaction<'_>, name: &str) -> Result<i64> {
    let row = tx.query_opt("SELECT id FROM keys WHERE name = $1 FOR UPDATE", &[&name])?;
    match row {
        Some(row) => Ok(row.try_get(0)?),
        None => Err(ControlError::NotFound("key".into())),
    }
}

fn count(tx: &mut Transaction<'_>, table: &str, key_id: i64) -> Result<u64> {
    let row = tx.query_one(
        &format!("SELECT COUNT(*) FROM {table} WHERE key_id = $1"),
        &[&key_id],
    )?;
    Ok(to_u64(row.try_get(0)?))
}

/// The entries of `ids` that exist, in the order of `ids`.
fn entries_in_order(
    client: &mut impl GenericClient,
    key_id: i64,
    ids: &[EntryId],
) -> Result<Vec<EntryRow>> {
    let wanted: Vec<&[u8]> = ids.iter().map(|id| &id.0[..]).collect();
    let rows = client.query(
        &format!("SELECT {ENTRY_COLUMNS} FROM entries WHERE key_id = $1 AND id = ANY($2)"),
        &[&key_id, &wanted],
    )?;
    let mut found: HashMap<EntryId, EntryRow> = HashMap::with_capacity(rows.len());
    for row in &rows {
        let entry = entry_from_row(row)?;
        found.insert(entry.id, entry);
    }
    Ok(ids.iter().filter_map(|id| found.remove(id)).collect())
}

/// Appends an event at `seq`, moves the key's head and prunes the feed.
fn append_event(
    tx: &mut Transaction<'_>,
    key_id: i64,
    seq: u64,
    kind: &str,
    body: &[u8],
    keep: u64,
) -> Result<()> {
    tx.execute(
        "INSERT INTO events (key_id, seq, type, body) VALUES ($1, $2, $3, $4)",
        &[&key_id, &to_i64(seq), &kind, &body],
    )?;
    tx.execute(
        "UPDATE keys SET seq = $2 WHERE id = $1",
        &[&key_id, &to_i64(seq)],
    )?;
    if seq > keep {
        tx.execute(
            "DELETE FROM events WHERE key_id = $1 AND seq <= $2",
            &[&key_id, &to_i64(seq - keep)],
        )?;
    }
    notify(tx, key_id, Some(seq))
}

/// What an entries transaction knows of the key's entries and retired
/// surrogates: fetched in batches ([`EntryTx::prefetch`]), or one lookup at
/// a time for what was not announced, and kept current by its own inserts.
/// It stays true for the whole transaction: every writer of the key's
/// entries and retired surrogates first locks the key's row, which this
/// transaction holds.
#[derive(Default)]
struct KnownRows {
    /// Entry id → the entry, or None when the vault has none.
    by_id: HashMap<EntryId, Option<EntryRow>>,
    /// Surrogate hash → the active entry with that surrogate, or None.
    by_surrogate: HashMap<[u8; 16], Option<EntryRow>>,
    /// Surrogate hash → whether it is retired.
    retired: HashMap<[u8; 16], bool>,
}

impl KnownRows {
    fn learn(&mut self, row: EntryRow) {
        self.by_surrogate
            .insert(row.surrogate_hash, Some(row.clone()));
        self.by_id.insert(row.id, Some(row));
    }
}

struct PgEntryTx<'t, 'c> {
    tx: &'t mut Transaction<'c>,
    key_id: i64,
    generation: u64,
    known: KnownRows,
    /// Rows to insert, in order; written by [`PgEntryTx::write_inserted`].
    inserted: Vec<EntryRow>,
}

impl PgEntryTx<'_, '_> {
    /// Fetches the entries under `ids` or `hashes`, and which of `hashes`
    /// are retired, in two statements; records what is absent too.
    fn fetch(&mut self, ids: &[EntryId], hashes: &[[u8; 16]]) -> Result<()> {
        let ids: Vec<&[u8]> = ids
            .iter()
            .filter(|id| !self.known.by_id.contains_key(*id))
            .map(|id| &id.0[..])
            .collect();
        let entry_hashes: Vec<&[u8]> = hashes
            .iter()
            .filter(|hash| !self.known.by_surrogate.contains_key(*hash))
            .map(|hash| &hash[..])
            .collect();
        let retired_hashes: Vec<&[u8]> = hashes
            .iter()
            .filter(|hash| !self.known.retired.contains_key(*hash))
            .map(|hash| &hash[..])
            .collect();
        if !ids.is_empty() || !entry_hashes.is_empty() {
            let rows = self.tx.query(
                &format!(
                    "SELECT {ENTRY_COLUMNS} FROM entries
                     WHERE key_id = $1 AND (id = ANY($2) OR surrogate_hash = ANY($3))"
                ),
                &[&self.key_id, &ids, &entry_hashes],
            )?;
            for row in &rows {
                self.known.learn(entry_from_row(row)?);
            }
            for id in &ids {
                self.known
                    .by_id
                    .entry(EntryId(hash16(id, "entry id")?))
                    .or_insert(None);
            }
            for hash in &entry_hashes {
                self.known
                    .by_surrogate
                    .entry(hash16(hash, "surrogate hash")?)
                    .or_insert(None);
            }
        }
        if !retired_hashes.is_empty() {
            let rows = self.tx.query(
                "SELECT hash FROM retired WHERE key_id = $1 AND hash = ANY($2)",
                &[&self.key_id, &retired_hashes],
            )?;
            for hash in &retired_hashes {
                self.known
                    .retired
                    .insert(hash16(hash, "retired hash")?, false);
            }
            for row in &rows {
                let hash: Vec<u8> = row.try_get(0)?;
                self.known
                    .retired
                    .insert(hash16(&hash, "retired hash")?, true);
            }
        }
        Ok(())
    }

    /// Writes the new rows in one statement; returns their ids in order.
    fn write_inserted(self) -> Result<Vec<EntryId>> {
        if self.inserted.is_empty() {
            return Ok(Vec::new());
        }
        let rows = &self.inserted;
        let ids: Vec<&[u8]> = rows.iter().map(|r| &r.id.0[..]).collect();
        let hashes: Vec<&[u8]> = rows.iter().map(|r| &r.surrogate_hash[..]).collect();
        let leads: Vec<i64> = rows.iter().map(|r| i64::from(r.lead)).collect();
        let kinds: Vec<&str> = rows.iter().map(|r| r.kind.as_str()).collect();
        let generations: Vec<i64> = rows.iter().map(|r| to_i64(r.generation)).collect();
        let sealed: Vec<&[u8]> = rows.iter().map(|r| &r.sealed[..]).collect();
        self.tx.execute(
            "INSERT INTO entries (key_id, id, surrogate_hash, lead, kind, generation, sealed)
             SELECT $1, id, surrogate_hash, lead, kind, generation, sealed
             FROM unnest($2::bytea[], $3::bytea[], $4::bigint[], $5::text[], $6::bigint[], $7::bytea[])
                  AS r(id, surrogate_hash, lead, kind, generation, sealed)",
            &[
                &self.key_id,
                &ids,
                &hashes,
                &leads,
                &kinds,
                &generations,
                &sealed,
            ],
        )?;
        Ok(self.inserted.iter().map(|r| r.id).collect())
    }
}

impl EntryTx for PgEntryTx<'_, '_> {
    fn generation(&self) -> u64 {
        self.generation
    }

    fn value_count(&mut self) -> Result<u64> {
        count(self.tx, "entries", self.key_id)
    }

    fn entry(&mut self, id: &EntryId) -> Result<Option<EntryRow>> {
        if !self.known.by_id.contains_key(id) {
            self.fetch(std::slice::from_ref(id), &[])?;
        }
        Ok(self.known.by_id.get(id).cloned().flatten())
    }

    fn entry_by_surrogate(&mut self, surrogate_hash: &[u8; 16]) -> Result<Option<EntryRow>> {
        if !self.known.by_surrogate.contains_key(surrogate_hash) {
            self.fetch(&[], std::slice::from_ref(surrogate_hash))?;
        }
        Ok(self
            .known
            .by_surrogate
            .get(surrogate_hash)
            .cloned()
            .flatten())
    }

    fn surrogate_taken(&mut self, surrogate_hash: &[u8; 16]) -> Result<bool> {
        if !self.known.by_surrogate.contains_key(surrogate_hash)
            || !self.known.retired.contains_key(surrogate_hash)
        {
            self.fetch(&[], std::slice::from_ref(surrogate_hash))?;
        }
        let active = matches!(self.known.by_surrogate.get(surrogate_hash), Some(Some(_)));
        let retired = self.known.retired.get(surrogate_hash) == Some(&true);
        Ok(active || retired)
    }

    fn insert(&mut self, row: EntryRow) -> Result<()> {
        self.known.learn(row.clone());
        self.inserted.push(row);
        Ok(())
    }

    fn prefetch(&mut self, ids: &[EntryId], surrogate_hashes: &[[u8; 16]]) -> Result<()> {
        self.fetch(ids, surrogate_hashes)
    }

    fn batches_lookups(&self) -> bool {
        true
    }
}

impl Store for PostgresStore {
    fn create_key(
        &self,
        name: &str,
        wrapped_secrets: &[u8],
        value_limit: u64,
        first_token: &NewToken,
        log: &AdminLogRecord,
    ) -> Result<KeyRecord> {
        let mut conn = self.conn()?;
        let mut tx = write_tx(&mut conn)?;
        // ON CONFLICT: two replicas creating one name, the second is told so.
        let key = query_key(
            &mut tx,
            &format!(
                "INSERT INTO keys (id, name, enabled, value_limit, generation, seq, wrapped_secrets, created_at)
                 VALUES (nextval('key_ids'), $1, TRUE, $2, 1, 0, $3, $4)
                 ON CONFLICT (name) DO NOTHING
                 RETURNING {KEY_COLUMNS}"
            ),
            &[&name, &to_i64(value_limit), &wrapped_secrets, &log.at],
        )?
        .ok_or_else(|| ControlError::Conflict("a key of that name exists".into()))?;
        tx.execute(
            "INSERT INTO tokens (key_id, name, hash, permissions, created_at) VALUES ($1, $2, $3, $4, $5)",
            &[&key.id, &first_token.name, &&first_token.hash[..], &first_token.permissions, &log.at],
        )?;
        insert_log(&mut tx, log)?;
        tx.commit()?;
        Ok(key)
    }

    fn list_keys(&self) -> Result<Vec<KeyStatus>> {
        let mut conn = self.conn()?;
        let rows = conn.query(
            &format!(
                "SELECT {KEY_COLUMNS},
                    (SELECT COUNT(*) FROM entries e WHERE e.key_id = keys.id),
                    (SELECT COUNT(*) FROM retired r WHERE r.key_id = keys.id),
                    (SELECT COUNT(*) FROM tokens t WHERE t.key_id = keys.id)
                 FROM keys ORDER BY name COLLATE \"C\""
            ),
            &[],
        )?;
        rows.iter()
            .map(|row| {
                Ok(KeyStatus {
                    key: key_from_row(row)?,
                    values: to_u64(row.try_get(7)?),
                    retired: to_u64(row.try_get(8)?),
                    tokens: to_u64(row.try_get(9)?),
                })
            })
            .collect()
    }

    fn key_by_name(&self, name: &str) -> Result<Option<KeyRecord>> {
        query_key(
            &mut **self.conn()?,
            &format!("SELECT {KEY_COLUMNS} FROM keys WHERE name = $1"),
            &[&name],
        )
    }

    fn key_by_id(&self, id: i64) -> Result<Option<KeyRecord>> {
        query_key(
            &mut **self.conn()?,
            &format!("SELECT {KEY_COLUMNS} FROM keys WHERE id = $1"),
            &[&id],
        )
    }

    fn set_key_enabled(&self, name: &str, enabled: bool, log: &AdminLogRecord) -> Result<()> {
        let mut conn = self.conn()?;
        let mut tx = write_tx(&mut conn)?;
        let changed = tx.execute(
            "UPDATE keys SET enabled = $2 WHERE name = $1",
            &[&name, &enabled],
        )?;
        if changed == 0 {
            return Err(ControlError::NotFound("key".into()));
        }
        insert_log(&mut tx, log)?;
        tx.commit()?;
        Ok(())
    }

    fn add_token(&self, key_name: &str, token: &NewToken, log: &AdminLogRecord) -> Result<()> {
        let mut conn = self.conn()?;
        let mut tx = write_tx(&mut conn)?;
        let key_id = lock_key_named(&mut tx, key_name)?;
        let added = tx.execute(
            "INSERT INTO tokens (key_id, name, hash, permissions, created_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (key_id, name) DO NOTHING",
            &[&key_id, &token.name, &&token.hash[..], &token.permissions, &log.at],
        )?;
        if added == 0 {
            return Err(ControlError::Conflict(
                "the key has a token of that name".into(),
            ));
        }
        insert_log(&mut tx, log)?;
        tx.commit()?;
        Ok(())
    }

    fn token_by_hash(&self, hash: &[u8; 32]) -> Result<Option<TokenRecord>> {
        let row = self.conn()?.query_opt(
            "SELECT key_id, name, permissions FROM tokens WHERE hash = $1",
            &[&&hash[..]],
        )?;
        row.map(|row| {
            Ok(TokenRecord {
                key_id: row.try_get(0)?,
                name: row.try_get(1)?,
                permissions: row.try_get(2)?,
            })
        })
        .transpose()
    }

    fn token_of_deleted_key(&self, hash: &[u8; 32]) -> Result<bool> {
        let row = self.conn()?.query_opt(
            "SELECT 1 FROM deleted_tokens WHERE hash = $1",
            &[&&hash[..]],
        )?;
        Ok(row.is_some())
    }

    fn list_tokens(&self, key_name: &str) -> Result<Vec<TokenListing>> {
        let mut conn = self.conn()?;
        let mut tx = read_tx(&mut conn)?;
        let Some(key) = tx.query_opt("SELECT id FROM keys WHERE name = $1", &[&key_name])? else {
            return Err(ControlError::NotFound("key".into()));
        };
        let key_id: i64 = key.try_get(0)?;
        let rows = tx.query(
            "SELECT name, permissions, created_at FROM tokens WHERE key_id = $1 ORDER BY name COLLATE \"C\"",
            &[&key_id],
        )?;
        let tokens = rows
            .iter()
            .map(|row| {
                Ok(TokenListing {
                    name: row.try_get(0)?,
                    permissions: row.try_get(1)?,
                    created_at: row.try_get(2)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        tx.commit()?;
        Ok(tokens)
    }

    fn revoke_token(&self, key_name: &str, token_name: &str, log: &AdminLogRecord) -> Result<i64> {
        let mut conn = self.conn()?;
        let mut tx = write_tx(&mut conn)?;
        let key_id = lock_key_named(&mut tx, key_name)?;
        let removed = tx.execute(
            "DELETE FROM tokens WHERE key_id = $1 AND name = $2",
            &[&key_id, &token_name],
        )?;
        if removed == 0 {
            return Err(ControlError::NotFound("token".into()));
        }
        insert_log(&mut tx, log)?;
        notify(&mut tx, key_id, None)?;
        tx.commit()?;
        Ok(key_id)
    }

    fn revoke_token_by_hash(&self, hash: &[u8; 32], log: &AdminLogRecord) -> Result<()> {
        let mut conn = self.conn()?;
        let mut tx = write_tx(&mut conn)?;
        let removed = tx.query_opt(
            "DELETE FROM tokens WHERE hash = $1 RETURNING key_id",
            &[&&hash[..]],
        )?;
        let Some(removed) = removed else {
            // Revoked or deleted in between: the caller is not authenticated.
            return Err(ControlError::Unauthorized);
        };
        insert_log(&mut tx, log)?;
        notify(&mut tx, removed.try_get(0)?, None)?;
        tx.commit()?;
        Ok(())
    }

    fn delete_key(
        &self,
        key_name: &str,
        log: &mut dyn FnMut(&KeyDeletion) -> AdminLogRecord,
    ) -> Result<KeyDeletion> {
        let mut conn = self.conn()?;
        let mut tx = write_tx(&mut conn)?;
        let key_id = lock_key_named(&mut tx, key_name)?;
        let deletion = KeyDeletion {
            key_id,
            values: count(&mut tx, "entries", key_id)?,
            retired: count(&mut tx, "retired", key_id)?,
            tokens: count(&mut tx, "tokens", key_id)?,
            events: count(&mut tx, "events", key_id)?,
        };
        tx.execute(
            "INSERT INTO deleted_tokens (hash, key_id)
             SELECT hash, key_id FROM tokens WHERE key_id = $1
             ON CONFLICT (hash) DO NOTHING",
            &[&key_id],
        )?;
        for table in ["entries", "retired", "events", "tokens"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE key_id = $1"),
                &[&key_id],
            )?;
        }
        tx.execute(
            "INSERT INTO deleted_keys (id, name, deleted_at) VALUES ($1, $2, $3)",
            &[&key_id, &key_name, &crate::vault::now()],
        )?;
        // Deleted rows stay in PostgreSQL's pages and WAL until vacuumed and
        // recycled, as for a forget (control/README.md).
        tx.execute("DELETE FROM keys WHERE id = $1", &[&key_id])?;
        insert_log(&mut tx, &log(&deletion))?;
        notify(&mut tx, key_id, None)?;
        tx.commit()?;
        Ok(deletion)
    }

    fn snapshot_rows(&self, key_id: i64) -> Result<SnapshotRows> {
        let mut conn = self.conn()?;
        let mut tx = read_tx(&mut conn)?;
        let key = query_key(
            &mut tx,
            &format!("SELECT {KEY_COLUMNS} FROM keys WHERE id = $1"),
            &[&key_id],
        )?
        .ok_or(ControlError::KeyDeleted)?;
        let entries = tx
            .query(
                // In key order: one state, one snapshot, byte for byte (its
                // ETag names the state).
                &format!("SELECT {ENTRY_COLUMNS} FROM entries WHERE key_id = $1 ORDER BY id"),
                &[&key_id],
            )?
            .iter()
            .map(entry_from_row)
            .collect::<Result<Vec<_>>>()?;
        let retired = tx
            .query(
                "SELECT hash, lead FROM retired WHERE key_id = $1 ORDER BY hash",
                &[&key_id],
            )?
            .iter()
            .map(|row| {
                let hash: Vec<u8> = row.try_get(0)?;
                Ok(RetiredSurrogate {
                    hash: RetiredHash(hash16(&hash, "retired hash")?),
                    lead: u32::try_from(row.try_get::<_, i64>(1)?).unwrap_or(0),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        tx.commit()?;
        Ok(SnapshotRows {
            generation: key.generation,
            seq: key.seq,
            entries,
            retired,
        })
    }

    fn events_after(&self, key_id: i64, after: u64, limit: u64) -> Result<FeedRows> {
        let mut conn = self.conn()?;
        let mut tx = read_tx(&mut conn)?;
        let key = query_key(
            &mut tx,
            &format!("SELECT {KEY_COLUMNS} FROM keys WHERE id = $1"),
            &[&key_id],
        )?
        .ok_or(ControlError::KeyDeleted)?;
        let oldest: Option<i64> = tx
            .query_one("SELECT MIN(seq) FROM events WHERE key_id = $1", &[&key_id])?
            .try_get(0)?;
        let oldest = oldest.map(to_u64).unwrap_or(key.seq + 1);
        let rows = tx.query(
            "SELECT seq, type, body FROM events WHERE key_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            &[&key_id, &to_i64(after), &to_i64(limit)],
        )?;
        let mut events = Vec::with_capacity(rows.len());
        for row in &rows {
            let seq = to_u64(row.try_get(0)?);
            let kind: String = row.try_get(1)?;
            let body: Vec<u8> = row.try_get(2)?;
            events.push(decode_event(seq, &kind, &body, |ids| {
                entries_in_order(&mut tx, key_id, ids)
            })?);
        }
        tx.commit()?;
        Ok(FeedRows {
            oldest,
            head: key.seq,
            events,
        })
    }

    fn add_entries(&self, key_id: i64, plan: &mut EntryPlanner<'_, ()>) -> Result<Option<u64>> {
        let mut conn = self.conn()?;
        let mut tx = write_tx(&mut conn)?;
        // The key's row lock: a replica adding the same value at the same
        // time waits here, then finds the entry this one made.
        let key = lock_key(&mut tx, key_id)?;
        let inserted = {
            let mut entry_tx = PgEntryTx {
                tx: &mut tx,
                key_id,
                generation: key.generation,
                known: KnownRows::default(),
                inserted: Vec::new(),
            };
            plan(&mut entry_tx)?;
            entry_tx.write_inserted()?
        };
        if inserted.is_empty() {
            return Ok(None);
        }
        let body: Vec<u8> = inserted.iter().flat_map(|id| id.0).collect();
        let seq = key.seq + 1;
        append_event(&mut tx, key_id, seq, "added", &body, self.feed_keep)?;
        tx.commit()?;
        Ok(Some(seq))
    }

    fn forget(
        &self,
        key_id: i64,
        ids: &[EntryId],
        log: &mut dyn FnMut(u64) -> AdminLogRecord,
    ) -> Result<ForgetOutcome> {
        let mut conn = self.conn()?;
        let mut tx = write_tx(&mut conn)?;
        let key = lock_key(&mut tx, key_id)?;
        let wanted: Vec<&[u8]> = ids.iter().map(|id| &id.0[..]).collect();
        let deleted = tx.query(
            "DELETE FROM entries WHERE key_id = $1 AND id = ANY($2) RETURNING id, surrogate_hash, lead",
            &[&key_id, &wanted],
        )?;
        let mut found: HashMap<EntryId, RetiredSurrogate> = HashMap::with_capacity(deleted.len());
        for row in &deleted {
            let id: Vec<u8> = row.try_get(0)?;
            let hash: Vec<u8> = row.try_get(1)?;
            found.insert(
                EntryId(hash16(&id, "entry id")?),
                RetiredSurrogate {
                    hash: RetiredHash(hash16(&hash, "surrogate hash")?),
                    lead: u32::try_from(row.try_get::<_, i64>(2)?).unwrap_or(0),
                },
            );
        }
        // In the order asked, as the SQLite store does.
        let mut forgotten = Vec::with_capacity(found.len());
        let mut retired = Vec::with_capacity(found.len());
        for id in ids {
            if let Some(surrogate) = found.remove(id) {
                forgotten.push(*id);
                retired.push(surrogate);
            }
        }
        let mut outcome = ForgetOutcome {
            forgotten: Vec::new(),
            generation: key.generation,
            seq: None,
        };
        if !forgotten.is_empty() {
            let hashes: Vec<&[u8]> = retired.iter().map(|r| &r.hash.0[..]).collect();
            let leads: Vec<i64> = retired.iter().map(|r| i64::from(r.lead)).collect();
            // DO NOTHING: a hash retired before stays retired (never reissued anyway).
            tx.execute(
                "INSERT INTO retired (key_id, hash, lead)
                 SELECT $1, hash, lead FROM unnest($2::bytea[], $3::bigint[]) AS r(hash, lead)
                 ON CONFLICT (key_id, hash) DO NOTHING",
                &[&key_id, &hashes, &leads],
            )?;
            let generation = key.generation + 1;
            tx.execute(
                "UPDATE keys SET generation = $2 WHERE id = $1",
                &[&key_id, &to_i64(generation)],
            )?;
            let body = serde_json::to_vec(&ForgottenBody {
                ids: forgotten.clone(),
                retired,
                generation,
            })
            .map_err(|_| ControlError::Store("forgotten event body".into()))?;
            let seq = key.seq + 1;
            append_event(&mut tx, key_id, seq, "forgotten", &body, self.feed_keep)?;
            outcome = ForgetOutcome {
                forgotten,
                generation,
                seq: Some(seq),
            };
        }
        // In the same transaction: if the log refuses, nothing is forgotten.
        insert_log(&mut tx, &log(outcome.forgotten.len() as u64))?;
        tx.commit()?;
        Ok(outcome)
    }

    fn admin_log(&self, action: Option<&str>) -> Result<Vec<AdminLogRecord>> {
        let rows = self.conn()?.query(
            "SELECT at, action, key_name, token, requested, forgotten, unknown, retired, tokens FROM admin_log
             WHERE $1::text IS NULL OR action = $1::text ORDER BY id",
            &[&action],
        )?;
        rows.iter()
            .map(|row| {
                let count = |i: usize| -> Result<Option<u64>> {
                    Ok(row.try_get::<_, Option<i64>>(i)?.map(to_u64))
                };
                Ok(AdminLogRecord {
                    at: row.try_get(0)?,
                    action: row.try_get(1)?,
                    key: row.try_get(2)?,
                    token: row.try_get(3)?,
                    requested: count(4)?,
                    forgotten: count(5)?,
                    unknown: count(6)?,
                    retired: count(7)?,
                    tokens: count(8)?,
                })
            })
            .collect()
    }
}
