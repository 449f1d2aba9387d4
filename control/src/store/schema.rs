//! The schemas (SQLite, PostgreSQL: the same tables). Values never appear in clear: `entries.sealed` holds
//! value and surrogate under the key's root key; ids and surrogate hashes are
//! keyed hashes.

/// Statements run at every open (idempotent).
pub const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS keys (
    id              INTEGER PRIMARY KEY,
    name            TEXT    NOT NULL UNIQUE,
    enabled         INTEGER NOT NULL,
    value_limit     INTEGER NOT NULL,
    generation      INTEGER NOT NULL,
    seq             INTEGER NOT NULL,
    wrapped_secrets BLOB    NOT NULL,
    created_at      INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
    id          INTEGER PRIMARY KEY,
    key_id      INTEGER NOT NULL REFERENCES keys(id),
    name        TEXT    NOT NULL,
    hash        BLOB    NOT NULL UNIQUE,
    permissions TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (key_id, name)
);
CREATE TABLE IF NOT EXISTS entries (
    key_id         INTEGER NOT NULL REFERENCES keys(id),
    id             BLOB    NOT NULL,
    surrogate_hash BLOB    NOT NULL,
    lead           INTEGER NOT NULL,
    kind           TEXT    NOT NULL,
    generation     INTEGER NOT NULL,
    sealed         BLOB    NOT NULL,
    PRIMARY KEY (key_id, id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS entries_by_surrogate ON entries (key_id, surrogate_hash);
CREATE TABLE IF NOT EXISTS retired (
    key_id INTEGER NOT NULL REFERENCES keys(id),
    hash   BLOB    NOT NULL,
    lead   INTEGER NOT NULL,
    PRIMARY KEY (key_id, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
    key_id INTEGER NOT NULL REFERENCES keys(id),
    seq    INTEGER NOT NULL,
    type   TEXT    NOT NULL,
    -- added: concatenated 16-byte entry ids; forgotten: JSON (ids, hashes).
    body   BLOB    NOT NULL,
    PRIMARY KEY (key_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS admin_log (
    id        INTEGER PRIMARY KEY,
    at        INTEGER NOT NULL,
    action    TEXT    NOT NULL,
    key_name  TEXT,
    token     TEXT,
    requested INTEGER,
    forgotten INTEGER,
    unknown   INTEGER
);
CREATE INDEX IF NOT EXISTS admin_log_by_action ON admin_log (action, id);
-- A deleted key keeps its id here, so that no later key is given it (ids
-- name secrets in caches, feed signals and sealing AADs).
CREATE TABLE IF NOT EXISTS deleted_keys (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    deleted_at INTEGER NOT NULL
);
-- The SHA-256 of every token of a deleted key: such a token answers
-- `key_deleted` (410), so a gateway knows to drop what it cached.
CREATE TABLE IF NOT EXISTS deleted_tokens (
    hash   BLOB    PRIMARY KEY,
    key_id INTEGER NOT NULL
) WITHOUT ROWID;
"#;

/// Columns added to tables of earlier versions: (table, column, type).
/// `ALTER TABLE … ADD COLUMN` has no `IF NOT EXISTS`: the store adds each
/// one its table lacks at open.
pub const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    // key.deleted: retired surrogates and tokens erased with the key.
    ("admin_log", "retired", "INTEGER"),
    ("admin_log", "tokens", "INTEGER"),
];

/// The PostgreSQL schema, run at every start (idempotent) under an advisory
/// lock, so that replicas starting together do not race on it. The tables
/// are SQLite's, with PostgreSQL's types; key ids come from a sequence,
/// which never gives a number twice (deleted keys' ids included).
pub const POSTGRES_SCHEMA: &str = r#"
CREATE SEQUENCE IF NOT EXISTS key_ids;
CREATE TABLE IF NOT EXISTS keys (
    id              BIGINT  PRIMARY KEY,
    name            TEXT    NOT NULL UNIQUE,
    enabled         BOOLEAN NOT NULL,
    value_limit     BIGINT  NOT NULL,
    generation      BIGINT  NOT NULL,
    seq             BIGINT  NOT NULL,
    wrapped_secrets BYTEA   NOT NULL,
    created_at      BIGINT  NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
    id          BIGSERIAL PRIMARY KEY,
    key_id      BIGINT NOT NULL REFERENCES keys(id),
    name        TEXT   NOT NULL,
    hash        BYTEA  NOT NULL UNIQUE,
    permissions TEXT   NOT NULL,
    created_at  BIGINT NOT NULL,
    UNIQUE (key_id, name)
);
CREATE TABLE IF NOT EXISTS entries (
    key_id         BIGINT NOT NULL REFERENCES keys(id),
    id             BYTEA  NOT NULL,
    surrogate_hash BYTEA  NOT NULL,
    lead           BIGINT NOT NULL,
    kind           TEXT   NOT NULL,
    generation     BIGINT NOT NULL,
    sealed         BYTEA  NOT NULL,
    PRIMARY KEY (key_id, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS entries_by_surrogate ON entries (key_id, surrogate_hash);
CREATE TABLE IF NOT EXISTS retired (
    key_id BIGINT NOT NULL REFERENCES keys(id),
    hash   BYTEA  NOT NULL,
    lead   BIGINT NOT NULL,
    PRIMARY KEY (key_id, hash)
);
CREATE TABLE IF NOT EXISTS events (
    key_id BIGINT NOT NULL REFERENCES keys(id),
    seq    BIGINT NOT NULL,
    type   TEXT   NOT NULL,
    -- added: concatenated 16-byte entry ids; forgotten: JSON (ids, hashes).
    body   BYTEA  NOT NULL,
    PRIMARY KEY (key_id, seq)
);
CREATE TABLE IF NOT EXISTS admin_log (
    id        BIGSERIAL PRIMARY KEY,
    at        BIGINT NOT NULL,
    action    TEXT   NOT NULL,
    key_name  TEXT,
    token     TEXT,
    requested BIGINT,
    forgotten BIGINT,
    unknown   BIGINT,
    retired   BIGINT,
    tokens    BIGINT
);
CREATE INDEX IF NOT EXISTS admin_log_by_action ON admin_log (action, id);
CREATE TABLE IF NOT EXISTS deleted_keys (
    id         BIGINT PRIMARY KEY,
    name       TEXT   NOT NULL,
    deleted_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS deleted_tokens (
    hash   BYTEA  PRIMARY KEY,
    key_id BIGINT NOT NULL
);
-- What every replica must agree on: the admin token's SHA-256 and a check
-- value of the master key (an HMAC under it, never the key).
CREATE TABLE IF NOT EXISTS settings (
    name  TEXT  PRIMARY KEY,
    value BYTEA NOT NULL
);
"#;
