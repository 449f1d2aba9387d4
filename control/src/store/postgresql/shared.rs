//! What every replica over one database must share, kept in its `settings`
//! table: the admin token's SHA-256 (so any replica answers the admin API)
//! and a check value of the master key (an HMAC under it: a replica started
//! with another key refuses to start instead of failing on every vault).
//! The master key itself never enters the database: a dump of it alone
//! opens no vault.

use super::PostgresStore;
use crate::error::{ControlError, Result};

/// The settings row of the admin token's hash.
const ADMIN_TOKEN_HASH: &str = "admin_token_hash";
/// The settings row of the master key's check value.
const MASTER_KEY_CHECK: &str = "master_key_check";

impl PostgresStore {
    /// Records `value` under `name` unless some replica did first; returns
    /// the recorded value (this one or the first one).
    fn setting_first_wins(&self, name: &str, value: &[u8]) -> Result<Vec<u8>> {
        let mut conn = self.conn()?;
        conn.execute(
            "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
            &[&name, &value],
        )?;
        let row = conn.query_one("SELECT value FROM settings WHERE name = $1", &[&name])?;
        Ok(row.try_get(0)?)
    }

    /// The recorded value of `name`, if any.
    fn setting(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let row = self
            .conn()?
            .query_opt("SELECT value FROM settings WHERE name = $1", &[&name])?;
        Ok(row.map(|row| row.try_get(0)).transpose()?)
    }

    /// Checks the master key against the database's: the first replica
    /// records its check value, every later one must match it.
    pub fn check_master_key(&self, check: &[u8; 32]) -> Result<()> {
        if self.setting_first_wins(MASTER_KEY_CHECK, check)? != check {
            return Err(ControlError::Crypto(
                "the master key (--master-key-file or LATET_MASTER_KEY) is not the one this \
                 database's vaults are sealed with: give every replica the same key"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The admin token's hash every replica accepts: `from_file` when this
    /// replica has a token file (recorded if the database has none yet; an
    /// error if it holds another), else the database's, else `generate`
    /// makes a token (writing its file) whose hash is recorded — unless
    /// another replica recorded one in between, whose hash wins and
    /// `discard` removes the file just written.
    pub fn shared_admin_token(
        &self,
        from_file: Option<[u8; 32]>,
        generate: &mut dyn FnMut() -> Result<[u8; 32]>,
        discard: &mut dyn FnMut(),
    ) -> Result<AdminToken> {
        if let Some(hash) = from_file {
            if self.setting_first_wins(ADMIN_TOKEN_HASH, &hash)? != hash {
                return Err(ControlError::Config(
                    "--admin-token-file: not the admin token of this database (another \
                     replica made it): copy that replica's token file, or remove this one"
                        .into(),
                ));
            }
            return Ok(AdminToken::FromFile(hash));
        }
        if let Some(recorded) = self.setting(ADMIN_TOKEN_HASH)? {
            return Ok(AdminToken::FromDatabase(to_hash(&recorded)?));
        }
        let made = generate()?;
        let recorded = to_hash(&self.setting_first_wins(ADMIN_TOKEN_HASH, &made)?)?;
        if recorded == made {
            Ok(AdminToken::Generated(made))
        } else {
            discard();
            Ok(AdminToken::FromDatabase(recorded))
        }
    }
}

/// Where a replica's admin token hash came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdminToken {
    /// Its token file, which matches the database's.
    FromFile([u8; 32]),
    /// Made by this replica (its file written, its hash recorded).
    Generated([u8; 32]),
    /// Recorded by another replica; this one has no copy of the token.
    FromDatabase([u8; 32]),
}

impl AdminToken {
    /// The hash to accept.
    pub fn hash(&self) -> [u8; 32] {
        match self {
            AdminToken::FromFile(hash)
            | AdminToken::Generated(hash)
            | AdminToken::FromDatabase(hash) => *hash,
        }
    }
}

fn to_hash(bytes: &[u8]) -> Result<[u8; 32]> {
    <[u8; 32]>::try_from(bytes)
        .map_err(|_| ControlError::Store("settings: admin token hash is not 32 bytes".into()))
}
