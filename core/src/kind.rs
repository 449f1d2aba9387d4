//! The kind of a sensitive value: what a detector found, or what an operator
//! rule names.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The kind of a value. Built-in kinds have fixed names on the wire;
/// operator rules bring their own kind names (`[a-z0-9_-]{1,32}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Email,
    /// A company domain, stored as a value of its own (rule V5,
    /// docs/product-rules.md#v5).
    Domain,
    Phone,
    Iban,
    Card,
    Ip,
    Secret,
    /// A person's name (from dictionaries or added to the vault).
    Name,
    /// An operator-defined kind.
    Custom(String),
}

impl Kind {
    /// The wire name of the kind.
    pub fn as_str(&self) -> &str {
        match self {
            Kind::Email => "email",
            Kind::Domain => "domain",
            Kind::Phone => "phone",
            Kind::Iban => "iban",
            Kind::Card => "card",
            Kind::Ip => "ip",
            Kind::Secret => "secret",
            Kind::Name => "name",
            Kind::Custom(name) => name,
        }
    }

    /// Parses a wire name. Unknown names that are valid kind names become
    /// [`Kind::Custom`]; anything else is `None`.
    pub fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "email" => Kind::Email,
            "domain" => Kind::Domain,
            "phone" => Kind::Phone,
            "iban" => Kind::Iban,
            "card" => Kind::Card,
            "ip" => Kind::Ip,
            "secret" => Kind::Secret,
            "name" => Kind::Name,
            other if is_valid_custom_name(other) => Kind::Custom(other.to_string()),
            _ => return None,
        })
    }

    /// The placeholder used by the `redact` failure mode (`[EMAIL]`, …):
    /// never restorable.
    pub fn placeholder(&self) -> String {
        format!("[{}]", self.as_str().to_ascii_uppercase())
    }
}

/// A custom kind name: 1–32 of `[a-z0-9_-]`, starting with a letter.
pub fn is_valid_custom_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 32
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_' || *b == b'-')
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        Kind::parse(&name).ok_or_else(|| serde::de::Error::custom("invalid kind name"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for kind in [
            Kind::Email,
            Kind::Domain,
            Kind::Phone,
            Kind::Iban,
            Kind::Card,
            Kind::Ip,
            Kind::Secret,
            Kind::Name,
            Kind::Custom("employee-id".into()),
        ] {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(serde_json::from_str::<Kind>(&json).unwrap(), kind);
        }
    }

    #[test]
    fn invalid_custom_names_are_refused() {
        for bad in ["", "Upper", "1digit", "has space", "x".repeat(33).as_str()] {
            assert_eq!(Kind::parse(bad), None, "{bad:?}");
        }
        assert_eq!(Kind::Email.placeholder(), "[EMAIL]");
    }
}
