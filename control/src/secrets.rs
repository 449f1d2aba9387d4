//! Key material: random bytes, the master key that wraps every key's
//! secrets, and the AEAD (XChaCha20-Poly1305) that seals entries at rest.
//!
//! Nothing here implements `Display`, and every `Debug` hides the bytes.

use crate::error::{ControlError, Result};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use latet_core::keyed_hash::{from_hex, to_hex};
use std::fmt;
use std::path::{Path, PathBuf};

/// Bytes of a symmetric key.
pub const KEY_LEN: usize = 32;
const NONCE_LEN: usize = 24;

/// Environment variable that may hold the master key (64 hex digits).
pub const MASTER_KEY_ENV: &str = "LATET_MASTER_KEY";

/// Fills an array from the operating system's random source.
pub fn random_bytes<const N: usize>() -> Result<[u8; N]> {
    let mut out = [0u8; N];
    getrandom::getrandom(&mut out)
        .map_err(|err| ControlError::Crypto(format!("random source: {err}")))?;
    Ok(out)
}

/// Seals `plaintext` under `key` with a fresh random nonce: nonce ‖ ciphertext.
pub fn seal(key: &[u8; KEY_LEN], aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>> {
    let cipher = XChaCha20Poly1305::new(key.into());
    let nonce: [u8; NONCE_LEN] = random_bytes()?;
    let sealed = cipher
        .encrypt(
            XNonce::from_slice(&nonce),
            Payload {
                msg: plaintext,
                aad,
            },
        )
        .map_err(|_| ControlError::Crypto("sealing failed".into()))?;
    let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Ok(out)
}

/// Opens what [`seal`] made; fails on a wrong key, wrong AAD or tampering.
pub fn open(key: &[u8; KEY_LEN], aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>> {
    if sealed.len() < NONCE_LEN {
        return Err(ControlError::Crypto("sealed blob too short".into()));
    }
    let (nonce, body) = sealed.split_at(NONCE_LEN);
    XChaCha20Poly1305::new(key.into())
        .decrypt(XNonce::from_slice(nonce), Payload { msg: body, aad })
        .map_err(|_| {
            ControlError::Crypto("sealed blob does not open (wrong key or damaged)".into())
        })
}

/// The master key: wraps every key's secrets. From `--master-key-file`, the
/// `LATET_MASTER_KEY` environment variable, or generated beside the database.
#[derive(Clone)]
pub struct MasterKey([u8; KEY_LEN]);

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MasterKey(..)")
    }
}

/// Where the master key came from (said once at start-up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MasterKeySource {
    Env,
    File(PathBuf),
    Generated(PathBuf),
}

impl MasterKey {
    /// A master key from raw bytes (tests, tools).
    pub fn from_bytes(bytes: [u8; KEY_LEN]) -> Self {
        Self(bytes)
    }

    /// Loads the master key: the env variable first, then `file`, then
    /// `default_file` (created with mode 0600 when missing).
    pub fn load(file: Option<&Path>, default_file: &Path) -> Result<(Self, MasterKeySource)> {
        if let Ok(hex) = std::env::var(MASTER_KEY_ENV) {
            return Ok((Self::parse(&hex, MASTER_KEY_ENV)?, MasterKeySource::Env));
        }
        if let Some(path) = file {
            let key = Self::read(path)?;
            return Ok((key, MasterKeySource::File(path.to_path_buf())));
        }
        if default_file.exists() {
            let key = Self::read(default_file)?;
            return Ok((key, MasterKeySource::File(default_file.to_path_buf())));
        }
        let key = Self(random_bytes()?);
        crate::files::write_private(default_file, format!("{}\n", to_hex(&key.0)).as_bytes())?;
        Ok((key, MasterKeySource::Generated(default_file.to_path_buf())))
    }

    /// Loads a master key that was given (the env variable first, then
    /// `file`), never generating one: replicas over one shared database
    /// must all hold the same key, so none may make its own.
    pub fn load_given(file: Option<&Path>) -> Result<(Self, MasterKeySource)> {
        if let Ok(hex) = std::env::var(MASTER_KEY_ENV) {
            return Ok((Self::parse(&hex, MASTER_KEY_ENV)?, MasterKeySource::Env));
        }
        match file {
            Some(path) => Ok((Self::read(path)?, MasterKeySource::File(path.to_path_buf()))),
            None => Err(ControlError::Config(format!(
                "a shared database needs the master key given: --master-key-file FILE \
                 or {MASTER_KEY_ENV} (64 hex digits), the same for every replica"
            ))),
        }
    }

    /// A check value of the key (HMAC-SHA256 of a fixed label under it):
    /// tells whether two replicas hold the same key without revealing it.
    pub fn check_value(&self) -> [u8; 32] {
        use hmac::{Hmac, Mac};
        let Ok(mut mac) = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&self.0) else {
            // HMAC takes a key of any length; unreachable.
            return [0; 32];
        };
        mac.update(b"latet/master-key-check/v1");
        mac.finalize().into_bytes().into()
    }

    fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|err| {
            ControlError::Io(format!("master key file {}: {err}", path.display()))
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    fn parse(hex: &str, origin: &str) -> Result<Self> {
        from_hex::<KEY_LEN>(hex.trim())
            .map(Self)
            .ok_or_else(|| ControlError::Crypto(format!("{origin}: expected 64 hex digits")))
    }

    /// Wraps a key's secrets (AAD: the key's name, so rows cannot be swapped).
    pub fn wrap(&self, secrets: &KeySecrets, key_name: &str) -> Result<Vec<u8>> {
        seal(&self.0, &wrap_aad(key_name), &secrets.to_bytes())
    }

    /// Unwraps what [`MasterKey::wrap`] made.
    pub fn unwrap_secrets(&self, wrapped: &[u8], key_name: &str) -> Result<KeySecrets> {
        let bytes = open(&self.0, &wrap_aad(key_name), wrapped)?;
        KeySecrets::from_bytes(&bytes)
    }
}

fn wrap_aad(key_name: &str) -> Vec<u8> {
    let mut aad = b"latet/key-secrets/v1\0".to_vec();
    aad.extend_from_slice(key_name.as_bytes());
    aad
}

/// One key's secrets, all random: the root key seals entries, the id key
/// makes entry ids, the derive key derives surrogates, the retired salt hashes
/// surrogates (active and retired) and travels in the snapshot.
#[derive(Clone)]
pub struct KeySecrets {
    pub root: [u8; KEY_LEN],
    pub id_key: [u8; KEY_LEN],
    pub derive_key: [u8; KEY_LEN],
    pub retired_salt: [u8; KEY_LEN],
}

impl fmt::Debug for KeySecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeySecrets(..)")
    }
}

impl KeySecrets {
    /// Four fresh random keys.
    pub fn generate() -> Result<Self> {
        Ok(Self {
            root: random_bytes()?,
            id_key: random_bytes()?,
            derive_key: random_bytes()?,
            retired_salt: random_bytes()?,
        })
    }

    fn to_bytes(&self) -> Vec<u8> {
        [self.root, self.id_key, self.derive_key, self.retired_salt].concat()
    }

    fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() != 4 * KEY_LEN {
            return Err(ControlError::Crypto(
                "wrapped key secrets have the wrong length".into(),
            ));
        }
        let part = |i: usize| {
            let mut out = [0u8; KEY_LEN];
            out.copy_from_slice(&bytes[i * KEY_LEN..(i + 1) * KEY_LEN]);
            out
        };
        Ok(Self {
            root: part(0),
            id_key: part(1),
            derive_key: part(2),
            retired_salt: part(3),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn seal_opens_only_with_its_key_and_aad() {
        let key = [7u8; KEY_LEN];
        let sealed = seal(&key, b"aad", b"mario").unwrap();
        assert_eq!(open(&key, b"aad", &sealed).unwrap(), b"mario");
        assert!(open(&key, b"other", &sealed).is_err());
        assert!(open(&[8u8; KEY_LEN], b"aad", &sealed).is_err());
        assert!(!sealed.windows(5).any(|w| w == b"mario"));
    }

    #[test]
    fn secrets_wrap_round_trip_and_hide_in_debug() {
        let master = MasterKey::from_bytes([1u8; KEY_LEN]);
        let secrets = KeySecrets::generate().unwrap();
        let wrapped = master.wrap(&secrets, "shop").unwrap();
        let back = master.unwrap_secrets(&wrapped, "shop").unwrap();
        assert_eq!(back.root, secrets.root);
        assert_eq!(back.retired_salt, secrets.retired_salt);
        assert!(master.unwrap_secrets(&wrapped, "other").is_err());
        assert_eq!(
            format!("{secrets:?} {master:?}"),
            "KeySecrets(..) MasterKey(..)"
        );
    }
}
