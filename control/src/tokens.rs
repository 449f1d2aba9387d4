//! Tokens and their permissions. A token is `lt_` + 64 hex digits of random,
//! shown once; the service keeps only its SHA-256. Rule labels (F3) are
//! those of docs/product-rules.md.

use crate::error::{ControlError, Result};
use latet_core::keyed_hash::to_hex;
use sha2::{Digest, Sha256};

/// Prefix that makes a Latet token recognisable (secret scanners, people).
pub const TOKEN_PREFIX: &str = "lt_";

/// One permission a token may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Permission {
    Gateway,
    Analyze,
    Mask,
    Restore,
    /// Held only when granted by name: no other permission implies it (F3).
    Forget,
}

impl Permission {
    /// All permissions, in their canonical order.
    pub const ALL: [Permission; 5] = [
        Permission::Gateway,
        Permission::Analyze,
        Permission::Mask,
        Permission::Restore,
        Permission::Forget,
    ];

    /// The permission's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Gateway => "gateway",
            Permission::Analyze => "analyze",
            Permission::Mask => "mask",
            Permission::Restore => "restore",
            Permission::Forget => "forget",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// Parses a permission name.
    pub fn parse(name: &str) -> Option<Permission> {
        Self::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

/// A set of permissions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Permissions(u8);

impl Permissions {
    /// A key's first token: everything but `forget` (F3).
    pub fn first_token() -> Self {
        Self::of(&[
            Permission::Gateway,
            Permission::Analyze,
            Permission::Mask,
            Permission::Restore,
        ])
    }

    /// The set of the given permissions.
    pub fn of(list: &[Permission]) -> Self {
        Self(list.iter().fold(0, |bits, p| bits | p.bit()))
    }

    /// Whether the set holds `permission` (exactly: none implies another).
    pub fn has(self, permission: Permission) -> bool {
        self.0 & permission.bit() != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The names, in canonical order.
    pub fn names(self) -> Vec<&'static str> {
        Permission::ALL
            .into_iter()
            .filter(|p| self.has(*p))
            .map(Permission::as_str)
            .collect()
    }

    /// Comma-separated names (storage form).
    pub fn to_list(self) -> String {
        self.names().join(",")
    }

    /// Parses names (a list or a comma-separated string).
    pub fn parse_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self> {
        let mut set = Self::default();
        for name in names {
            let name = name.trim();
            if name.is_empty() {
                continue;
            }
            let permission = Permission::parse(name)
                .ok_or_else(|| ControlError::BadRequest(format!("unknown permission `{name}`")))?;
            set.0 |= permission.bit();
        }
        Ok(set)
    }
}

/// A new random token (`lt_…`).
pub fn new_token() -> Result<String> {
    let bytes: [u8; 32] = crate::secrets::random_bytes()?;
    Ok(format!("{TOKEN_PREFIX}{}", to_hex(&bytes)))
}

/// The stored form of a token: SHA-256 of its text.
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Constant-time equality of two hashes (admin token check).
pub fn hashes_equal(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn first_token_never_forgets_and_nothing_implies_forget() {
        let first = Permissions::first_token();
        assert!(!first.has(Permission::Forget));
        assert_eq!(first.to_list(), "gateway,analyze,mask,restore");
        let all_but_forget =
            Permissions::parse_names(["gateway", "analyze", "mask", "restore"]).unwrap();
        assert!(!all_but_forget.has(Permission::Forget));
        assert!(Permissions::of(&[Permission::Forget]).has(Permission::Forget));
        assert!(Permissions::parse_names(["admin"]).is_err());
    }

    #[test]
    fn tokens_are_prefixed_random_and_hashed() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() == 67);
        assert_ne!(a, b);
        assert!(hashes_equal(&token_hash(&a), &token_hash(&a)));
        assert!(!hashes_equal(&token_hash(&a), &token_hash(&b)));
    }
}
