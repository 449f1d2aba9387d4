//! The embedded store: one SQLite file (bundled SQLite, WAL), one connection
//! behind a mutex. Writes are short transactions (`BEGIN IMMEDIATE`).

use super::schema::{ADDED_COLUMNS, SCHEMA};
use super::*;
use crate::error::ControlError;
use latet_core::wire::RetiredHash;
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// Events kept per key by default (older ones answer `snapshot_required`).
pub const DEFAULT_FEED_KEEP: u64 = 10_000;

/// The SQLite store.
pub struct SqliteStore {
    conn: Mutex<Connection>,
    feed_keep: u64,
}

impl SqliteStore {
    /// Opens (or creates) the database file and its schema.
    pub fn open(path: &Path, feed_keep: u64) -> Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|err| ControlError::Io(format!("{}: {err}", dir.display())))?;
        }
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // FULL: a committed forget survives a power cut, not only a crash.
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(SCHEMA)?;
        add_missing_columns(&conn)?;
        Ok(Self {
            conn: Mutex::new(conn),
            feed_keep: feed_keep.max(1),
        })
    }

    fn lock(&self) -> Result<MutexGuard<'_, Connection>> {
        self.conn
            .lock()
            .map_err(|_| ControlError::Store("connection lock poisoned".into()))
    }
}

/// Adds the columns of [`ADDED_COLUMNS`] a database of an earlier version lacks.
fn add_missing_columns(conn: &Connection) -> Result<()> {
    for (table, column, kind) in ADDED_COLUMNS {
        let has: bool = conn
            .prepare(&format!(
                "SELECT 1 FROM pragma_table_info('{table}') WHERE name = ?1"
            ))?
            .exists(params![column])?;
        if !has {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
        }
    }
    Ok(())
}

fn write_tx(conn: &mut Connection) -> Result<Transaction<'_>> {
    Ok(conn.transaction_with_behavior(TransactionBehavior::Immediate)?)
}

fn insert_log(tx: &Transaction<'_>, log: &AdminLogRecord) -> Result<()> {
    tx.execute(
        "INSERT INTO admin_log (at, action, key_name, token, requested, forgotten, unknown, retired, tokens)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            log.at,
            log.action,
            log.key,
            log.token,
            log.requested.map(to_i64),
            log.forgotten.map(to_i64),
            log.unknown.map(to_i64),
            log.retired.map(to_i64),
            log.tokens.map(to_i64)
        ],
    )?;
    Ok(())
}

const KEY_COLUMNS: &str = "id, name, enabled, value_limit, generation, seq, wrapped_secrets";

fn key_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<KeyRecord> {
    Ok(KeyRecord {
        id: row.get(0)?,
        name: row.get(1)?,
        enabled: row.get::<_, i64>(2)? != 0,
        value_limit: to_u64(row.get(3)?),
        generation: to_u64(row.get(4)?),
        seq: to_u64(row.get(5)?),
        wrapped_secrets: row.get(6)?,
    })
}

/// An entry row as read: id, surrogate hash, lead, kind, generation, sealed.
type RawEntry = (Vec<u8>, Vec<u8>, i64, String, i64, Vec<u8>);

const ENTRY_COLUMNS: &str = "id, surrogate_hash, lead, kind, generation, sealed";

fn entry_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawEntry> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
    ))
}

fn entry_row(raw: RawEntry) -> Result<EntryRow> {
    let (id, surrogate_hash, lead, kind, generation, sealed) = raw;
    Ok(EntryRow {
        id: EntryId(hash16(&id, "entry id")?),
        surrogate_hash: hash16(&surrogate_hash, "surrogate hash")?,
        lead: u32::try_from(lead).unwrap_or(0),
        kind,
        generation: to_u64(generation),
        sealed,
    })
}

fn read_entry(conn: &Connection, key_id: i64, id: &EntryId) -> Result<Option<EntryRow>> {
    let raw = conn
        .prepare_cached(&format!(
            "SELECT {ENTRY_COLUMNS} FROM entries WHERE key_id = ?1 AND id = ?2"
        ))?
        .query_row(params![key_id, &id.0[..]], entry_from_row)
        .optional()?;
    raw.map(entry_row).transpose()
}

/// Appends an event at `seq` and prunes the feed to `keep` events.
fn append_event(
    tx: &Transaction<'_>,
    key_id: i64,
    seq: u64,
    kind: &str,
    body: &[u8],
    keep: u64,
) -> Result<()> {
    tx.execute(
        "INSERT INTO events (key_id, seq, type, body) VALUES (?1, ?2, ?3, ?4)",
        params![key_id, to_i64(seq), kind, body],
    )?;
    tx.execute(
        "UPDATE keys SET seq = ?2 WHERE id = ?1",
        params![key_id, to_i64(seq)],
    )?;
    if seq > keep {
        tx.execute(
            "DELETE FROM events WHERE key_id = ?1 AND seq <= ?2",
            params![key_id, to_i64(seq - keep)],
        )?;
    }
    Ok(())
}

fn key_in_tx(tx: &Transaction<'_>, key_id: i64) -> Result<KeyRecord> {
    tx.query_row(
        &format!("SELECT {KEY_COLUMNS} FROM keys WHERE id = ?1"),
        params![key_id],
        key_from_row,
    )
    .optional()?
    // Callers hold the id of an authenticated key: gone since means deleted.
    .ok_or(ControlError::KeyDeleted)
}

fn key_id_named(tx: &Transaction<'_>, name: &str) -> Result<i64> {
    tx.query_row(
        "SELECT id FROM keys WHERE name = ?1",
        params![name],
        |row| row.get(0),
    )
    .optional()?
    .ok_or_else(|| ControlError::NotFound("key".into()))
}

fn count(tx: &Transaction<'_>, sql: &str, key_id: i64) -> Result<u64> {
    let n: i64 = tx.query_row(sql, params![key_id], |row| row.get(0))?;
    Ok(to_u64(n))
}

struct SqliteEntryTx<'t, 'c> {
    tx: &'t Transaction<'c>,
    key_id: i64,
    generation: u64,
    inserted: Vec<EntryId>,
}

impl EntryTx for SqliteEntryTx<'_, '_> {
    fn generation(&self) -> u64 {
        self.generation
    }

    fn value_count(&mut self) -> Result<u64> {
        let n: i64 = self.tx.query_row(
            "SELECT COUNT(*) FROM entries WHERE key_id = ?1",
            params![self.key_id],
            |row| row.get(0),
        )?;
        Ok(to_u64(n))
    }

    fn entry(&mut self, id: &EntryId) -> Result<Option<EntryRow>> {
        read_entry(self.tx, self.key_id, id)
    }

    fn entry_by_surrogate(&mut self, surrogate_hash: &[u8; 16]) -> Result<Option<EntryRow>> {
        let raw = self
            .tx
            .prepare_cached(&format!(
                "SELECT {ENTRY_COLUMNS} FROM entries WHERE key_id = ?1 AND surrogate_hash = ?2"
            ))?
            .query_row(params![self.key_id, &surrogate_hash[..]], entry_from_row)
            .optional()?;
        raw.map(entry_row).transpose()
    }

    fn surrogate_taken(&mut self, surrogate_hash: &[u8; 16]) -> Result<bool> {
        let active: Option<i64> = self
            .tx
            .prepare_cached("SELECT 1 FROM entries WHERE key_id = ?1 AND surrogate_hash = ?2")?
            .query_row(params![self.key_id, &surrogate_hash[..]], |row| row.get(0))
            .optional()?;
        if active.is_some() {
            return Ok(true);
        }
        let retired: Option<i64> = self
            .tx
            .prepare_cached("SELECT 1 FROM retired WHERE key_id = ?1 AND hash = ?2")?
            .query_row(params![self.key_id, &surrogate_hash[..]], |row| row.get(0))
            .optional()?;
        Ok(retired.is_some())
    }

    fn insert(&mut self, row: EntryRow) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO entries (key_id, id, surrogate_hash, lead, kind, generation, sealed)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                self.key_id,
                &row.id.0[..],
                &row.surrogate_hash[..],
                i64::from(row.lead),
                row.kind,
                to_i64(row.generation),
                row.sealed
            ])?;
        self.inserted.push(row.id);
        Ok(())
    }
}

impl Store for SqliteStore {
    fn create_key(
        &self,
        name: &str,
        wrapped_secrets: &[u8],
        value_limit: u64,
        first_token: &NewToken,
        log: &AdminLogRecord,
    ) -> Result<KeyRecord> {
        let mut conn = self.lock()?;
        let tx = write_tx(&mut conn)?;
        let taken: Option<i64> = tx
            .query_row(
                "SELECT id FROM keys WHERE name = ?1",
                params![name],
                |row| row.get(0),
            )
            .optional()?;
        if taken.is_some() {
            return Err(ControlError::Conflict("a key of that name exists".into()));
        }
        // The id after every id ever given, deleted keys' included: a new
        // key never takes a deleted one's id (SQLite would reuse the
        // highest rowid once its row is gone).
        tx.execute(
            "INSERT INTO keys (id, name, enabled, value_limit, generation, seq, wrapped_secrets, created_at)
             VALUES (MAX(COALESCE((SELECT MAX(id) FROM keys), 0),
                         COALESCE((SELECT MAX(id) FROM deleted_keys), 0)) + 1,
                     ?1, 1, ?2, 1, 0, ?3, ?4)",
            params![name, to_i64(value_limit), wrapped_secrets, log.at],
        )?;
        let key_id = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO tokens (key_id, name, hash, permissions, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![key_id, first_token.name, &first_token.hash[..], first_token.permissions, log.at],
        )?;
        insert_log(&tx, log)?;
        let key = key_in_tx(&tx, key_id)?;
        tx.commit()?;
        Ok(key)
    }

    fn list_keys(&self) -> Result<Vec<KeyStatus>> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare(&format!(
            "SELECT {KEY_COLUMNS},
                (SELECT COUNT(*) FROM entries e WHERE e.key_id = keys.id),
                (SELECT COUNT(*) FROM retired r WHERE r.key_id = keys.id),
                (SELECT COUNT(*) FROM tokens t WHERE t.key_id = keys.id)
             FROM keys ORDER BY name"
        ))?;
        let rows = stmt.query_map([], |row| {
            Ok(KeyStatus {
                key: key_from_row(row)?,
                values: to_u64(row.get(7)?),
                retired: to_u64(row.get(8)?),
                tokens: to_u64(row.get(9)?),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn key_by_name(&self, name: &str) -> Result<Option<KeyRecord>> {
        let conn = self.lock()?;
        Ok(conn
            .query_row(
                &format!("SELECT {KEY_COLUMNS} FROM keys WHERE name = ?1"),
                params![name],
                key_from_row,
            )
            .optional()?)
    }

    fn key_by_id(&self, id: i64) -> Result<Option<KeyRecord>> {
        let conn = self.lock()?;
        let key = conn
            .prepare_cached(&format!("SELECT {KEY_COLUMNS} FROM keys WHERE id = ?1"))?
            .query_row(params![id], key_from_row)
            .optional()?;
        Ok(key)
    }

    fn set_key_enabled(&self, name: &str, enabled: bool, log: &AdminLogRecord) -> Result<()> {
        let mut conn = self.lock()?;
        let tx = write_tx(&mut conn)?;
        let changed = tx.execute(
            "UPDATE keys SET enabled = ?2 WHERE name = ?1",
            params![name, i64::from(enabled)],
        )?;
        if changed == 0 {
            return Err(ControlError::NotFound("key".into()));
        }
        insert_log(&tx, log)?;
        tx.commit()?;
        Ok(())
    }

    fn add_token(&self, key_name: &str, token: &NewToken, log: &AdminLogRecord) -> Result<()> {
        let mut conn = self.lock()?;
        let tx = write_tx(&mut conn)?;
        let key_id = key_id_named(&tx, key_name)?;
        let taken: Option<i64> = tx
            .query_row(
                "SELECT id FROM tokens WHERE key_id = ?1 AND name = ?2",
                params![key_id, token.name],
                |row| row.get(0),
            )
            .optional()?;
        if taken.is_some() {
            return Err(ControlError::Conflict(
                "the key has a token of that name".into(),
            ));
        }
        tx.execute(
            "INSERT INTO tokens (key_id, name, hash, permissions, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![key_id, token.name, &token.hash[..], token.permissions, log.at],
        )?;
        insert_log(&tx, log)?;
        tx.commit()?;
        Ok(())
    }

    fn token_by_hash(&self, hash: &[u8; 32]) -> Result<Option<TokenRecord>> {
        let conn = self.lock()?;
        let token = conn
            .prepare_cached("SELECT key_id, name, permissions FROM tokens WHERE hash = ?1")?
            .query_row(params![&hash[..]], |row| {
                Ok(TokenRecord {
                    key_id: row.get(0)?,
                    name: row.get(1)?,
                    permissions: row.get(2)?,
                })
            })
            .optional()?;
        Ok(token)
    }

    fn token_of_deleted_key(&self, hash: &[u8; 32]) -> Result<bool> {
        let conn = self.lock()?;
        let found = conn
            .prepare_cached("SELECT 1 FROM deleted_tokens WHERE hash = ?1")?
            .exists(params![&hash[..]])?;
        Ok(found)
    }

    fn list_tokens(&self, key_name: &str) -> Result<Vec<TokenListing>> {
        let mut conn = self.lock()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let key_id = key_id_named(&tx, key_name)?;
        let tokens = {
            let mut stmt = tx.prepare(
                "SELECT name, permissions, created_at FROM tokens WHERE key_id = ?1 ORDER BY name",
            )?;
            let rows = stmt.query_map(params![key_id], |row| {
                Ok(TokenListing {
                    name: row.get(0)?,
                    permissions: row.get(1)?,
                    created_at: row.get(2)?,
                })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()?
        };
        tx.commit()?;
        Ok(tokens)
    }

    fn revoke_token(&self, key_name: &str, token_name: &str, log: &AdminLogRecord) -> Result<i64> {
        let mut conn = self.lock()?;
        let tx = write_tx(&mut conn)?;
        let key_id = key_id_named(&tx, key_name)?;
        let removed = tx.execute(
            "DELETE FROM tokens WHERE key_id = ?1 AND name = ?2",
            params![key_id, token_name],
        )?;
        if removed == 0 {
            return Err(ControlError::NotFound("token".into()));
        }
        insert_log(&tx, log)?;
        tx.commit()?;
        Ok(key_id)
    }

    fn revoke_token_by_hash(&self, hash: &[u8; 32], log: &AdminLogRecord) -> Result<()> {
        let mut conn = self.lock()?;
        let tx = write_tx(&mut conn)?;
        let removed = tx.execute("DELETE FROM tokens WHERE hash = ?1", params![&hash[..]])?;
        if removed == 0 {
            // Revoked or deleted in between: the caller is not authenticated.
            return Err(ControlError::Unauthorized);
        }
        insert_log(&tx, log)?;
        tx.commit()?;
        Ok(())
    }

    fn delete_key(
        &self,
        key_name: &str,
        log: &mut dyn FnMut(&KeyDeletion) -> AdminLogRecord,
    ) -> Result<KeyDeletion> {
        let mut conn = self.lock()?;
        let tx = write_tx(&mut conn)?;
        let key_id = key_id_named(&tx, key_name)?;
        let deletion = KeyDeletion {
            key_id,
            values: count(
                &tx,
                "SELECT COUNT(*) FROM entries WHERE key_id = ?1",
                key_id,
            )?,
            retired: count(
                &tx,
                "SELECT COUNT(*) FROM retired WHERE key_id = ?1",
                key_id,
            )?,
            tokens: count(&tx, "SELECT COUNT(*) FROM tokens WHERE key_id = ?1", key_id)?,
            events: count(&tx, "SELECT COUNT(*) FROM events WHERE key_id = ?1", key_id)?,
        };
        tx.execute(
            "INSERT OR IGNORE INTO deleted_tokens (hash, key_id)
             SELECT hash, key_id FROM tokens WHERE key_id = ?1",
            params![key_id],
        )?;
        for table in ["entries", "retired", "events", "tokens"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE key_id = ?1"),
                params![key_id],
            )?;
        }
        tx.execute(
            "INSERT INTO deleted_keys (id, name, deleted_at) VALUES (?1, ?2, ?3)",
            params![key_id, key_name, crate::vault::now()],
        )?;
        // Deleted rows stay in SQLite's free pages and WAL until reused, as
        // for a forget (control/README.md, "What a forget clears here").
        tx.execute("DELETE FROM keys WHERE id = ?1", params![key_id])?;
        insert_log(&tx, &log(&deletion))?;
        tx.commit()?;
        Ok(deletion)
    }

    fn snapshot_rows(&self, key_id: i64) -> Result<SnapshotRows> {
        let mut conn = self.lock()?;
        // A read transaction: entries, retired and seq from one state. In
        // key order: one state, one snapshot, byte for byte (its ETag names
        // the state).
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let key = key_in_tx(&tx, key_id)?;
        let entries = {
            let mut stmt = tx.prepare(&format!(
                "SELECT {ENTRY_COLUMNS} FROM entries WHERE key_id = ?1 ORDER BY id"
            ))?;
            let raw = stmt.query_map(params![key_id], entry_from_row)?;
            let mut out = Vec::new();
            for row in raw {
                out.push(entry_row(row?)?);
            }
            out
        };
        let retired = {
            let mut stmt =
                tx.prepare("SELECT hash, lead FROM retired WHERE key_id = ?1 ORDER BY hash")?;
            let raw = stmt.query_map(params![key_id], |row| {
                Ok((row.get::<_, Vec<u8>>(0)?, row.get::<_, i64>(1)?))
            })?;
            let mut out = Vec::new();
            for row in raw {
                let (hash, lead) = row?;
                out.push(RetiredSurrogate {
                    hash: RetiredHash(hash16(&hash, "retired hash")?),
                    lead: u32::try_from(lead).unwrap_or(0),
                });
            }
            out
        };
        tx.commit()?;
        Ok(SnapshotRows {
            generation: key.generation,
            seq: key.seq,
            entries,
            retired,
        })
    }

    fn events_after(&self, key_id: i64, after: u64, limit: u64) -> Result<FeedRows> {
        let mut conn = self.lock()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let key = key_in_tx(&tx, key_id)?;
        let oldest: Option<i64> = tx.query_row(
            "SELECT MIN(seq) FROM events WHERE key_id = ?1",
            params![key_id],
            |row| row.get(0),
        )?;
        let oldest = oldest.map(to_u64).unwrap_or(key.seq + 1);
        let mut events = Vec::new();
        {
            let mut stmt = tx.prepare_cached(
                "SELECT seq, type, body FROM events WHERE key_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![key_id, to_i64(after), to_i64(limit)], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, Vec<u8>>(2)?,
                ))
            })?;
            for row in rows {
                let (seq, kind, body) = row?;
                let seq = to_u64(seq);
                events.push(decode_event(seq, &kind, &body, |ids| {
                    let mut entries = Vec::with_capacity(ids.len());
                    for id in ids {
                        if let Some(entry) = read_entry(&tx, key_id, id)? {
                            entries.push(entry);
                        }
                    }
                    Ok(entries)
                })?);
            }
        }
        tx.commit()?;
        Ok(FeedRows {
            oldest,
            head: key.seq,
            events,
        })
    }

    fn add_entries(&self, key_id: i64, plan: &mut EntryPlanner<'_, ()>) -> Result<Option<u64>> {
        let mut conn = self.lock()?;
        let tx = write_tx(&mut conn)?;
        let key = key_in_tx(&tx, key_id)?;
        let mut entry_tx = SqliteEntryTx {
            tx: &tx,
            key_id,
            generation: key.generation,
            inserted: Vec::new(),
        };
        plan(&mut entry_tx)?;
        let inserted = entry_tx.inserted;
        if inserted.is_empty() {
            return Ok(None);
        }
        let body: Vec<u8> = inserted.iter().flat_map(|id| id.0).collect();
        let seq = key.seq + 1;
        append_event(&tx, key_id, seq, "added", &body, self.feed_keep)?;
        tx.commit()?;
        Ok(Some(seq))
    }

    fn forget(
        &self,
        key_id: i64,
        ids: &[EntryId],
        log: &mut dyn FnMut(u64) -> AdminLogRecord,
    ) -> Result<ForgetOutcome> {
        let mut conn = self.lock()?;
        let tx = write_tx(&mut conn)?;
        let key = key_in_tx(&tx, key_id)?;
        let mut forgotten = Vec::new();
        let mut retired = Vec::new();
        for id in ids {
            let Some(entry) = read_entry(&tx, key_id, id)? else {
                continue;
            };
            tx.prepare_cached("DELETE FROM entries WHERE key_id = ?1 AND id = ?2")?
                .execute(params![key_id, &id.0[..]])?;
            // OR IGNORE: a hash retired before stays retired (never reissued anyway).
            tx.prepare_cached(
                "INSERT OR IGNORE INTO retired (key_id, hash, lead) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![
                key_id,
                &entry.surrogate_hash[..],
                i64::from(entry.lead)
            ])?;
            forgotten.push(*id);
            retired.push(RetiredSurrogate {
                hash: RetiredHash(entry.surrogate_hash),
                lead: entry.lead,
            });
        }
        let mut outcome = ForgetOutcome {
            forgotten: Vec::new(),
            generation: key.generation,
            seq: None,
        };
        if !forgotten.is_empty() {
            let generation = key.generation + 1;
            tx.execute(
                "UPDATE keys SET generation = ?2 WHERE id = ?1",
                params![key_id, to_i64(generation)],
            )?;
            let body = serde_json::to_vec(&ForgottenBody {
                ids: forgotten.clone(),
                retired,
                generation,
            })
            .map_err(|_| ControlError::Store("forgotten event body".into()))?;
            let seq = key.seq + 1;
            append_event(&tx, key_id, seq, "forgotten", &body, self.feed_keep)?;
            outcome = ForgetOutcome {
                forgotten,
                generation,
                seq: Some(seq),
            };
        }
        // In the same transaction: if the log refuses, nothing is forgotten.
        insert_log(&tx, &log(outcome.forgotten.len() as u64))?;
        tx.commit()?;
        Ok(outcome)
    }

    fn admin_log(&self, action: Option<&str>) -> Result<Vec<AdminLogRecord>> {
        let conn = self.lock()?;
        let mut stmt = conn.prepare(
            "SELECT at, action, key_name, token, requested, forgotten, unknown, retired, tokens FROM admin_log
             WHERE ?1 IS NULL OR action = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![action], |row| {
            Ok(AdminLogRecord {
                at: row.get(0)?,
                action: row.get(1)?,
                key: row.get(2)?,
                token: row.get(3)?,
                requested: row.get::<_, Option<i64>>(4)?.map(to_u64),
                forgotten: row.get::<_, Option<i64>>(5)?.map(to_u64),
                unknown: row.get::<_, Option<i64>>(6)?.map(to_u64),
                retired: row.get::<_, Option<i64>>(7)?.map(to_u64),
                tokens: row.get::<_, Option<i64>>(8)?.map(to_u64),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn a_database_of_an_earlier_version_gets_the_new_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch(
                "CREATE TABLE admin_log (id INTEGER PRIMARY KEY, at INTEGER NOT NULL,
                    action TEXT NOT NULL, key_name TEXT, token TEXT, requested INTEGER,
                    forgotten INTEGER, unknown INTEGER);
                 INSERT INTO admin_log (at, action) VALUES (1, 'key.created');",
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path, 10).unwrap();
        let log = AdminLogRecord {
            at: 2,
            action: "key.deleted".into(),
            forgotten: Some(3),
            retired: Some(1),
            tokens: Some(2),
            ..Default::default()
        };
        store
            .create_key(
                "K",
                b"w",
                5,
                &NewToken {
                    name: "default".into(),
                    hash: [1; 32],
                    permissions: "gateway".into(),
                },
                &AdminLogRecord {
                    at: 2,
                    action: "key.created".into(),
                    ..Default::default()
                },
            )
            .unwrap();
        store.delete_key("K", &mut |_| log.clone()).unwrap();
        let rows = store.admin_log(Some("key.deleted")).unwrap();
        assert_eq!(rows, vec![log]);
        assert_eq!(store.admin_log(None).unwrap()[0].retired, None);
        // Opening again finds the columns there and adds nothing.
        drop(store);
        SqliteStore::open(&path, 10).unwrap();
    }
}
