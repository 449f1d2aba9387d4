//! The vaults: what a call may do, and what it changes. Opens and seals
//! entries, derives surrogates (latet-core's formats under the vault's
//! generation), counts forgets, and announces new events. Synchronous: the
//! HTTP layer runs it on blocking threads. Rule labels (F2, F3, F4, V5) are
//! those of docs/product-rules.md.

use crate::error::{ControlError, Result};
use crate::feed_signal::FeedSignals;
use crate::secrets::{self, KeySecrets, MasterKey};
use crate::store::{
    AdminLogRecord, EntryRow, EntryTx, KeyDeletion, KeyRecord, KeyStatus, NewToken, Store,
    StoredEvent, TokenListing,
};
use crate::tokens::{new_token, token_hash, Permission, Permissions};
use latet_core::keyed_hash::{entry_id, retired_hash, to_hex};
use latet_core::surrogate;
use latet_core::text::lead_bucket;
use latet_core::wire::{
    EntriesResponse, Entry, EntryId, Event, EventBody, FeedAnswer, NewValue, Snapshot, WIRE_VERSION,
};
use latet_core::Kind;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// Most values one forget or entries call may carry (F3): the wire's, which
/// the gateway splits its entries calls by.
pub const MAX_VALUES_PER_CALL: usize = latet_core::wire::MAX_VALUES_PER_CALL;
/// Most events one feed answer carries.
pub const MAX_EVENTS_PER_ANSWER: u64 = 1_000;
/// Longest value accepted (bytes).
pub const MAX_VALUE_BYTES: usize = 4_096;
/// Default value limit of a new key.
pub const DEFAULT_VALUE_LIMIT: u64 = 1_000_000;
/// Derivation gives up after this many collisions (never seen in practice).
const MAX_DERIVE_COUNTER: u32 = 10_000;

/// Who called: a token's key, name and permissions.
#[derive(Debug, Clone)]
pub struct Caller {
    pub key: KeyRecord,
    pub token_name: String,
    pub permissions: Permissions,
}

/// Who forgets: an app's token (`apps.forgotten`) or the admin CLI (`key.forgotten`).
#[derive(Debug, Clone)]
pub enum ForgetActor {
    App { token_name: String },
    Admin,
}

/// The answer of a forget (F3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ForgetCounts {
    pub forgotten: u64,
    pub unknown: u64,
}

/// A new key and its first token (shown once).
#[derive(Debug)]
pub struct CreatedKey {
    pub key: KeyRecord,
    pub token: String,
}

/// The vaults over a store.
pub struct Vaults {
    store: Arc<dyn Store>,
    master: MasterKey,
    secrets: Mutex<HashMap<i64, Arc<KeySecrets>>>,
    signals: FeedSignals,
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn check_name(name: &str, what: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().count() <= 64
        && !name.chars().any(|c| c.is_control())
        && name.trim() == name;
    if ok {
        Ok(())
    } else {
        Err(ControlError::BadRequest(format!(
            "{what}: 1 to 64 characters, no control characters, no surrounding spaces"
        )))
    }
}

impl Vaults {
    /// Vaults over `store`, with key secrets wrapped by `master`.
    pub fn new(store: Arc<dyn Store>, master: MasterKey) -> Self {
        Self {
            store,
            master,
            secrets: Mutex::new(HashMap::new()),
            signals: FeedSignals::default(),
        }
    }

    /// The store (metrics read counts from it).
    pub fn store(&self) -> &dyn Store {
        self.store.as_ref()
    }

    /// The long-poll signals.
    pub fn signals(&self) -> &FeedSignals {
        &self.signals
    }

    /// The caller a bearer token names; `Unauthorized` for an unknown or
    /// revoked one, `KeyDeleted` for a token of a deleted key. Read from the
    /// store at every call: a revocation holds from the next request on.
    pub fn authenticate(&self, token: &str) -> Result<Caller> {
        let hash = token_hash(token);
        let Some(record) = self.store.token_by_hash(&hash)? else {
            return Err(if self.store.token_of_deleted_key(&hash)? {
                ControlError::KeyDeleted
            } else {
                ControlError::Unauthorized
            });
        };
        let key = self
            .store
            .key_by_id(record.key_id)?
            .ok_or(ControlError::KeyDeleted)?;
        Ok(Caller {
            key,
            token_name: record.name,
            permissions: Permissions::parse_names(record.permissions.split(','))?,
        })
    }

    /// Checks a permission; a disabled key refuses everything but forget (F4).
    pub fn require(caller: &Caller, permission: Permission) -> Result<()> {
        if !caller.permissions.has(permission) {
            return Err(ControlError::Forbidden(permission));
        }
        if !caller.key.enabled && permission != Permission::Forget {
            return Err(ControlError::KeyDisabled);
        }
        Ok(())
    }

    fn secrets_of(&self, key: &KeyRecord) -> Result<Arc<KeySecrets>> {
        let mut cache = self
            .secrets
            .lock()
            .map_err(|_| ControlError::Crypto("secrets cache poisoned".into()))?;
        if let Some(found) = cache.get(&key.id) {
            return Ok(found.clone());
        }
        let unwrapped = Arc::new(
            self.master
                .unwrap_secrets(&key.wrapped_secrets, &key.name)?,
        );
        cache.insert(key.id, unwrapped.clone());
        Ok(unwrapped)
    }

    // ---- admin ----------------------------------------------------------

    /// Creates a key and its first token (gateway, analyze, mask, restore).
    pub fn create_key(&self, name: &str, value_limit: Option<u64>) -> Result<CreatedKey> {
        check_name(name, "key name")?;
        let secrets = KeySecrets::generate()?;
        let wrapped = self.master.wrap(&secrets, name)?;
        let token = new_token()?;
        let first = NewToken {
            name: "default".into(),
            hash: token_hash(&token),
            permissions: Permissions::first_token().to_list(),
        };
        let log = AdminLogRecord {
            at: now(),
            action: "key.created".into(),
            key: Some(name.into()),
            token: Some(first.name.clone()),
            ..Default::default()
        };
        let limit = value_limit.unwrap_or(DEFAULT_VALUE_LIMIT).max(1);
        let key = self.store.create_key(name, &wrapped, limit, &first, &log)?;
        Ok(CreatedKey { key, token })
    }

    /// Every key with its counts.
    pub fn list_keys(&self) -> Result<Vec<KeyStatus>> {
        self.store.list_keys()
    }

    /// Enables or disables a key.
    pub fn set_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        let log = AdminLogRecord {
            at: now(),
            action: if enabled {
                "key.enabled"
            } else {
                "key.disabled"
            }
            .into(),
            key: Some(name.into()),
            ..Default::default()
        };
        self.store.set_key_enabled(name, enabled, &log)
    }

    /// Adds a token to a key; returns it (shown once).
    pub fn add_token(
        &self,
        key_name: &str,
        token_name: &str,
        permissions: Permissions,
    ) -> Result<String> {
        check_name(token_name, "token name")?;
        if permissions.is_empty() {
            return Err(ControlError::BadRequest(
                "permissions: name at least one".into(),
            ));
        }
        let token = new_token()?;
        let record = NewToken {
            name: token_name.into(),
            hash: token_hash(&token),
            permissions: permissions.to_list(),
        };
        let log = AdminLogRecord {
            at: now(),
            action: "token.added".into(),
            key: Some(key_name.into()),
            token: Some(token_name.into()),
            ..Default::default()
        };
        self.store.add_token(key_name, &record, &log)?;
        Ok(token)
    }

    /// A key's tokens: names and permissions, never a secret.
    pub fn list_tokens(&self, key_name: &str) -> Result<Vec<TokenListing>> {
        self.store.list_tokens(key_name)
    }

    /// Revokes a key's token by name (`token.revoked`). Open long-polls of
    /// the key are woken: they authenticate again and answer 401.
    pub fn revoke_token(&self, key_name: &str, token_name: &str) -> Result<()> {
        let log = AdminLogRecord {
            at: now(),
            action: "token.revoked".into(),
            key: Some(key_name.into()),
            token: Some(token_name.into()),
            ..Default::default()
        };
        let key_id = self.store.revoke_token(key_name, token_name, &log)?;
        self.signals.wake(key_id);
        Ok(())
    }

    /// Revokes the caller's own token (`apps.token_revoked`).
    pub fn revoke_own_token(&self, caller: &Caller, token: &str) -> Result<()> {
        let log = AdminLogRecord {
            at: now(),
            action: "apps.token_revoked".into(),
            key: Some(caller.key.name.clone()),
            token: Some(caller.token_name.clone()),
            ..Default::default()
        };
        self.store.revoke_token_by_hash(&token_hash(token), &log)?;
        self.signals.wake(caller.key.id);
        Ok(())
    }

    /// Deletes a key and every value of its vault in one transaction
    /// (`key.deleted`, with the counts). Its tokens answer `key_deleted`
    /// from then on, open long-polls included, so the gateways drop what
    /// they cached; a key created later under the same name is a new vault
    /// (new secrets, a new id).
    pub fn delete_key(&self, name: &str) -> Result<KeyDeletion> {
        let deletion = self
            .store
            .delete_key(name, &mut |d: &KeyDeletion| AdminLogRecord {
                at: now(),
                action: "key.deleted".into(),
                key: Some(name.into()),
                forgotten: Some(d.values),
                retired: Some(d.retired),
                tokens: Some(d.tokens),
                ..Default::default()
            })?;
        if let Ok(mut cache) = self.secrets.lock() {
            cache.remove(&deletion.key_id);
        }
        self.signals.wake(deletion.key_id);
        Ok(deletion)
    }

    /// A key by name (`NotFound` when absent).
    pub fn key_named(&self, name: &str) -> Result<KeyRecord> {
        self.store
            .key_by_name(name)?
            .ok_or_else(|| ControlError::NotFound("key".into()))
    }

    /// The admin log, optionally of one action.
    pub fn admin_log(&self, action: Option<&str>) -> Result<Vec<AdminLogRecord>> {
        self.store.admin_log(action)
    }

    // ---- gateway ---------------------------------------------------------

    fn open_entry(&self, secrets: &KeySecrets, key_id: i64, row: &EntryRow) -> Result<Entry> {
        let plain = secrets::open(&secrets.root, &entry_aad(key_id, &row.id), &row.sealed)?;
        let (value, surrogate) = split_sealed(&plain)?;
        Ok(Entry {
            id: row.id,
            value,
            surrogate,
            kind: Kind::parse(&row.kind)
                .ok_or_else(|| ControlError::Store("entry: unknown kind".into()))?,
            generation: row.generation,
        })
    }

    /// The key's whole vault.
    pub fn snapshot(&self, key: &KeyRecord) -> Result<Snapshot> {
        let secrets = self.secrets_of(key)?;
        let rows = self.store.snapshot_rows(key.id)?;
        let entries = rows
            .entries
            .iter()
            .map(|row| self.open_entry(&secrets, key.id, row))
            .collect::<Result<Vec<_>>>()?;
        Ok(Snapshot {
            version: WIRE_VERSION,
            generation: rows.generation,
            seq: rows.seq,
            retired_salt: to_hex(&secrets.retired_salt),
            retired: rows.retired,
            entries,
        })
    }

    /// Events after `after`, or `snapshot_required` when `after` is older
    /// than the kept feed or newer than its head.
    pub fn feed(&self, key: &KeyRecord, after: u64) -> Result<FeedAnswer> {
        let rows = self
            .store
            .events_after(key.id, after, MAX_EVENTS_PER_ANSWER)?;
        if after > rows.head || (after < rows.head && after + 1 < rows.oldest) {
            return Ok(FeedAnswer::SnapshotRequired {
                version: WIRE_VERSION,
                oldest: rows.oldest,
                head: rows.head,
            });
        }
        let secrets = self.secrets_of(key)?;
        let mut events = Vec::with_capacity(rows.events.len());
        for stored in rows.events {
            events.push(match stored {
                StoredEvent::Added { seq, entries } => Event {
                    seq,
                    body: EventBody::Added {
                        entries: entries
                            .iter()
                            .map(|row| self.open_entry(&secrets, key.id, row))
                            .collect::<Result<Vec<_>>>()?,
                    },
                },
                StoredEvent::Forgotten {
                    seq,
                    ids,
                    retired,
                    generation,
                } => Event {
                    seq,
                    body: EventBody::Forgotten {
                        ids,
                        retired,
                        generation,
                    },
                },
            });
        }
        Ok(FeedAnswer::Events {
            version: WIRE_VERSION,
            head: rows.head,
            events,
        })
    }

    /// Entries for `values`: existing ones as they are, new ones derived
    /// under the current generation; an e-mail's company domain becomes an
    /// entry of its own, returned after the requested ones (V5).
    pub fn entries(&self, key: &KeyRecord, values: &[NewValue]) -> Result<EntriesResponse> {
        if values.len() > MAX_VALUES_PER_CALL {
            return Err(ControlError::BadRequest(format!(
                "values: {} given, at most {MAX_VALUES_PER_CALL} a call",
                values.len()
            )));
        }
        for (i, v) in values.iter().enumerate() {
            check_value(&v.value, i)?;
            if v.kind == Kind::Domain && surrogate::is_provider_domain(&v.value) {
                return Err(ControlError::BadRequest(format!(
                    "values[{i}]: a mail provider's domain is never stored"
                )));
            }
        }
        let secrets = self.secrets_of(key)?;
        let mut answer = Vec::with_capacity(values.len());
        let mut alongside: Vec<Entry> = Vec::new();
        let mut generation = key.generation;
        let seq = self
            .store
            .add_entries(key.id, &mut |tx: &mut dyn EntryTx| {
                answer.clear();
                alongside.clear();
                generation = tx.generation();
                let mut planner = EntryPlanner {
                    vaults: self,
                    secrets: &secrets,
                    key,
                    count: tx.value_count()?,
                    tx,
                };
                planner.prefetch(values)?;
                for v in values {
                    let entry = match (&v.kind, surrogate::email_company_domain(&v.value)) {
                        (Kind::Email, Some(domain)) if planner.lookup(&v.value)?.is_none() => {
                            let domain_entry =
                                planner.get_or_create(&Kind::Domain, domain, None)?;
                            let entry = planner.get_or_create(
                                &v.kind,
                                &v.value,
                                Some(&domain_entry.surrogate),
                            )?;
                            if !alongside.iter().any(|e| e.id == domain_entry.id) {
                                alongside.push(domain_entry);
                            }
                            entry
                        }
                        _ => planner.get_or_create(&v.kind, &v.value, None)?,
                    };
                    answer.push(entry);
                }
                Ok(())
            })?;
        if let Some(seq) = seq {
            self.signals.announce(key.id, seq);
        }
        for extra in alongside {
            if !answer.iter().any(|e| e.id == extra.id) {
                answer.push(extra);
            }
        }
        Ok(EntriesResponse {
            version: WIRE_VERSION,
            generation,
            entries: answer,
        })
    }

    /// Forgets `values` in one transaction and writes the admin log in it
    /// (F2, F3). Each distinct value counts once, as forgotten or unknown.
    pub fn forget(
        &self,
        key: &KeyRecord,
        values: &[String],
        actor: &ForgetActor,
    ) -> Result<ForgetCounts> {
        if values.len() > MAX_VALUES_PER_CALL {
            return Err(ControlError::BadRequest(format!(
                "values: {} given, at most {MAX_VALUES_PER_CALL} a call",
                values.len()
            )));
        }
        let secrets = self.secrets_of(key)?;
        let distinct: HashSet<&str> = values.iter().map(String::as_str).collect();
        let ids: Vec<EntryId> = distinct
            .iter()
            .map(|v| EntryId(entry_id(&secrets.id_key, v)))
            .collect();
        let (action, token) = match actor {
            ForgetActor::App { token_name } => ("apps.forgotten", Some(token_name.clone())),
            ForgetActor::Admin => ("key.forgotten", None),
        };
        // Counts are known before the transaction only as "at most": the
        // store says which ids it found, and the log row is written with the
        // final counts inside the same transaction.
        let outcome = self
            .store
            .forget(key.id, &ids, &mut |found: u64| AdminLogRecord {
                at: now(),
                action: action.into(),
                key: Some(key.name.clone()),
                token: token.clone(),
                requested: Some(values.len() as u64),
                forgotten: Some(found),
                unknown: Some(ids.len() as u64 - found),
                ..Default::default()
            })?;
        if let Some(seq) = outcome.seq {
            self.signals.announce(key.id, seq);
        }
        let forgotten = outcome.forgotten.len() as u64;
        Ok(ForgetCounts {
            forgotten,
            unknown: ids.len() as u64 - forgotten,
        })
    }
}

fn check_value(value: &str, position: usize) -> Result<()> {
    if value.is_empty() || value.len() > MAX_VALUE_BYTES {
        return Err(ControlError::BadRequest(format!(
            "values[{position}]: 1 to {MAX_VALUE_BYTES} bytes"
        )));
    }
    Ok(())
}

fn entry_aad(key_id: i64, id: &EntryId) -> Vec<u8> {
    let mut aad = b"latet/entry/v1\0".to_vec();
    aad.extend_from_slice(&key_id.to_be_bytes());
    aad.extend_from_slice(&id.0);
    aad
}

fn join_sealed(value: &str, surrogate: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + value.len() + surrogate.len());
    out.extend_from_slice(&(value.len() as u32).to_be_bytes());
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(surrogate.as_bytes());
    out
}

fn split_sealed(plain: &[u8]) -> Result<(String, String)> {
    let bad = || ControlError::Crypto("sealed entry has a bad layout".into());
    let len_bytes: [u8; 4] = plain
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(bad)?;
    let len = u32::from_be_bytes(len_bytes) as usize;
    let value = plain.get(4..4 + len).ok_or_else(bad)?;
    let surrogate = plain.get(4 + len..).ok_or_else(bad)?;
    Ok((
        String::from_utf8(value.to_vec()).map_err(|_| bad())?,
        String::from_utf8(surrogate.to_vec()).map_err(|_| bad())?,
    ))
}

/// Gets or creates entries inside one entries transaction.
struct EntryPlanner<'a, 't> {
    vaults: &'a Vaults,
    secrets: &'a KeySecrets,
    key: &'a KeyRecord,
    count: u64,
    tx: &'t mut dyn EntryTx,
}

impl EntryPlanner<'_, '_> {
    /// Tells the store, in two batches, what `get_or_create` is about to ask
    /// for `values`: first their ids and surrogate hashes (and their company
    /// domains'), then the first draw of each value not in the vault. A
    /// later draw (a collision, rare) is asked for on its own. Decides
    /// nothing: the loop that follows does, as it would without it.
    fn prefetch(&mut self, values: &[NewValue]) -> Result<()> {
        if !self.tx.batches_lookups() {
            return Ok(()); // the draws would be derived twice for nothing
        }
        let mut asked: Vec<(Kind, &str)> = Vec::with_capacity(values.len() + 16);
        let mut seen: HashSet<&str> = HashSet::with_capacity(values.len() + 16);
        for v in values {
            if let (Kind::Email, Some(domain)) =
                (&v.kind, surrogate::email_company_domain(&v.value))
            {
                if seen.insert(domain) {
                    asked.push((Kind::Domain, domain));
                }
            }
        }
        for v in values {
            if seen.insert(&v.value) {
                asked.push((v.kind.clone(), &v.value));
            }
        }
        let ids: Vec<EntryId> = asked
            .iter()
            .map(|(_, value)| EntryId(entry_id(&self.secrets.id_key, value)))
            .collect();
        let hashes: Vec<[u8; 16]> = asked
            .iter()
            .map(|(_, value)| retired_hash(&self.secrets.retired_salt, value))
            .collect();
        self.tx.prefetch(&ids, &hashes)?;

        // The first draw of each new value; an e-mail's draws carry its
        // domain's surrogate (the stored one, or the domain's own first draw).
        let generation = self.tx.generation();
        let mut domain_surrogates: HashMap<&str, String> = HashMap::new();
        let mut draw_ids = Vec::new();
        let mut draw_hashes = Vec::new();
        for ((kind, value), id) in asked.iter().zip(&ids) {
            let domain_surrogate = match (kind, surrogate::email_company_domain(value)) {
                (Kind::Email, Some(domain)) => domain_surrogates.get(domain).map(String::as_str),
                _ => None,
            };
            let surrogate = match self.tx.entry(id)? {
                // Only a domain's surrogate is needed (its e-mails' draws).
                Some(row) if *kind == Kind::Domain => {
                    self.vaults
                        .open_entry(self.secrets, self.key.id, &row)?
                        .surrogate
                }
                Some(_) => continue,
                None => {
                    let candidate = surrogate::derive(
                        &self.secrets.derive_key,
                        generation,
                        kind,
                        value,
                        0,
                        domain_surrogate,
                    );
                    draw_ids.push(EntryId(entry_id(&self.secrets.id_key, &candidate)));
                    draw_hashes.push(retired_hash(&self.secrets.retired_salt, &candidate));
                    candidate
                }
            };
            if *kind == Kind::Domain {
                domain_surrogates.insert(*value, surrogate);
            }
        }
        self.tx.prefetch(&draw_ids, &draw_hashes)
    }

    fn lookup(&mut self, value: &str) -> Result<Option<Entry>> {
        let id = EntryId(entry_id(&self.secrets.id_key, value));
        match self.tx.entry(&id)? {
            Some(row) => Ok(Some(self.vaults.open_entry(
                self.secrets,
                self.key.id,
                &row,
            )?)),
            None => Ok(None),
        }
    }

    fn get_or_create(
        &mut self,
        kind: &Kind,
        value: &str,
        domain_surrogate: Option<&str>,
    ) -> Result<Entry> {
        if let Some(found) = self.lookup(value)? {
            return Ok(found);
        }
        // One of this vault's active surrogates, sent by a gateway that has
        // not heard of it yet (its feed is a moment behind the entries call
        // that made it): its own entry, so the gateway learns it is a
        // surrogate and leaves it as written. Never an entry of its own: a
        // surrogate is not a person's value, and a second surrogate for it
        // would restore to the first, not to the value it stands for.
        let hash = retired_hash(&self.secrets.retired_salt, value);
        if let Some(row) = self.tx.entry_by_surrogate(&hash)? {
            return self.vaults.open_entry(self.secrets, self.key.id, &row);
        }
        if self.count >= self.key.value_limit {
            return Err(ControlError::VaultFull {
                values: self.count,
                limit: self.key.value_limit,
            });
        }
        let generation = self.tx.generation();
        for counter in 0..MAX_DERIVE_COUNTER {
            let candidate = surrogate::derive(
                &self.secrets.derive_key,
                generation,
                kind,
                value,
                counter,
                domain_surrogate,
            );
            let candidate_id = EntryId(entry_id(&self.secrets.id_key, &candidate));
            if self.tx.entry(&candidate_id)?.is_some() {
                continue; // an active value
            }
            let surrogate_hash = retired_hash(&self.secrets.retired_salt, &candidate);
            if self.tx.surrogate_taken(&surrogate_hash)? {
                continue; // an active or retired surrogate
            }
            let id = EntryId(entry_id(&self.secrets.id_key, value));
            let row = EntryRow {
                id,
                surrogate_hash,
                lead: lead_bucket(&candidate),
                kind: kind.as_str().to_string(),
                generation,
                sealed: secrets::seal(
                    &self.secrets.root,
                    &entry_aad(self.key.id, &id),
                    &join_sealed(value, &candidate),
                )?,
            };
            self.tx.insert(row)?;
            self.count += 1;
            return Ok(Entry {
                id,
                value: value.to_string(),
                surrogate: candidate,
                kind: kind.clone(),
                generation,
            });
        }
        Err(ControlError::Conflict(format!(
            "no free surrogate of kind {kind} after {MAX_DERIVE_COUNTER} draws"
        )))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn sealed_layout_round_trips() {
        let joined = join_sealed("mario", "laura@x.it");
        assert_eq!(
            split_sealed(&joined).unwrap(),
            ("mario".into(), "laura@x.it".into())
        );
        assert!(split_sealed(&[0, 0, 0, 9, b'a']).is_err());
    }
}
