//! Wire types shared by the gateway and the control service (JSON, versioned).
//!
//! Every document carries `"version": 1`. Values travel only inside
//! [`Entry`]; events name values by [`EntryId`] and retired surrogates by
//! [`RetiredHash`], never by content.

use crate::error::CoreError;
use crate::keyed_hash::{from_hex, to_hex, Hash128};
use crate::kind::Kind;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

pub mod compact_snapshot;
pub mod snapshot_parts;
pub use compact_snapshot::{
    decode_snapshot, encode_snapshot, is_compact_snapshot, scrub_compact_snapshot, CompactSnapshot,
    SNAPSHOT_MEDIA_TYPE,
};

/// The wire version this build speaks.
pub const WIRE_VERSION: u32 = 1;

macro_rules! hex_id {
    ($name:ident, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub Hash128);

        impl $name {
            /// Lower-case hex form.
            pub fn to_hex(&self) -> String {
                to_hex(&self.0)
            }
            /// Parses the hex form (32 hex digits).
            pub fn from_hex(hex: &str) -> Option<Self> {
                from_hex::<16>(hex).map(Self)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.to_hex())
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.to_hex())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_hex())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let hex = std::borrow::Cow::<str>::deserialize(d)?;
                Self::from_hex(&hex).ok_or_else(|| {
                    serde::de::Error::custom(concat!(stringify!($name), ": expected 32 hex digits"))
                })
            }
        }
    };
}

hex_id!(
    EntryId,
    "An entry's id: the keyed hash of its value (never the value)."
);
/// Eight bytes that stand for an [`EntryId`] in a worker's records
/// ([`crate::snapshot`]): half the bytes of the id, mixed from all 16 of
/// them. Two ids may share one (about one chance in 2^64 a pair), so a
/// fingerprint alone never decides that an entry is forgotten: a forget
/// confirms it by the retired hash its event carries for the entry's
/// surrogate (`SnapshotIndex::apply_event`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryFingerprint(pub u64);

impl EntryId {
    /// This id's [`EntryFingerprint`].
    #[inline]
    pub fn fingerprint(&self) -> EntryFingerprint {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        lo.copy_from_slice(&self.0[..8]);
        hi.copy_from_slice(&self.0[8..]);
        // Ids are keyed hashes (uniform), but tests and replays use
        // patterned ones (`[n; 16]`, a counter in either half): the high
        // half is mixed before it is folded into the low one.
        let mut high = u64::from_le_bytes(hi).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        high ^= high >> 32;
        EntryFingerprint(u64::from_le_bytes(lo) ^ high)
    }
}

impl fmt::Debug for EntryFingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EntryFingerprint({:016x})", self.0)
    }
}

hex_id!(
    RetiredHash,
    "The keyed hash of a retired surrogate (see [`crate::keyed_hash::retired_hash`])."
);

/// A retired surrogate as the gateway may know it: its keyed hash, and the
/// 24-bit [`crate::text::lead_bucket`] of its first token (so that restore can
/// find candidates cheaply and count what it declines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetiredSurrogate {
    pub hash: RetiredHash,
    pub lead: u32,
}

/// One vault entry: a value, its surrogate, its kind and the generation it
/// was derived under.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub id: EntryId,
    pub value: String,
    pub surrogate: String,
    pub kind: Kind,
    pub generation: u64,
}

impl fmt::Debug for Entry {
    // Never print the value or the surrogate.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// A key's whole vault as a gateway sees it (`GET /_latet/gateway/v1/snapshot`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub version: u32,
    /// The vault's current generation.
    pub generation: u64,
    /// The feed position this snapshot is current to: the next event to
    /// apply is `seq + 1`.
    pub seq: u64,
    /// Hex salt under which retired surrogates are hashed.
    pub retired_salt: String,
    /// Every retired surrogate of the vault, as keyed hash and lead bucket.
    pub retired: Vec<RetiredSurrogate>,
    /// Every active entry.
    pub entries: Vec<Entry>,
}

/// What an event does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum EventBody {
    /// New entries were created (by any gateway or the apps API).
    Added { entries: Vec<Entry> },
    /// Entries were forgotten: their ids, their surrogates' retired hashes
    /// (one per id: a worker confirms each entry it drops by it, and
    /// refuses an event with another count), and the vault's new
    /// generation.
    Forgotten {
        ids: Vec<EntryId>,
        retired: Vec<RetiredSurrogate>,
        generation: u64,
    },
}

/// One event of the feed, numbered without gaps from 1.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub seq: u64,
    #[serde(flatten)]
    pub body: EventBody,
}

/// The answer of `GET /_latet/gateway/v1/events?after=SEQ&wait_ms=N`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case", deny_unknown_fields)]
pub enum FeedAnswer {
    /// Events after `after`, in order (possibly none when the wait ended);
    /// `head` is the newest seq the service holds.
    Events {
        version: u32,
        head: u64,
        events: Vec<Event>,
    },
    /// `after` is older than the kept feed: take a new snapshot.
    SnapshotRequired {
        version: u32,
        oldest: u64,
        head: u64,
    },
}

/// A value that needs an entry (`POST /_latet/gateway/v1/entries`).
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewValue {
    pub kind: Kind,
    pub value: String,
}

impl fmt::Debug for NewValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NewValue({}, {} bytes)", self.kind, self.value.len())
    }
}

/// Body of `POST /_latet/gateway/v1/entries`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntriesRequest {
    pub version: u32,
    pub values: Vec<NewValue>,
}

/// Answer of `POST /_latet/gateway/v1/entries`: one entry per requested
/// value, in order (plus entries the service created alongside, such as a
/// company domain's own entry), under `generation`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntriesResponse {
    pub version: u32,
    pub generation: u64,
    pub entries: Vec<Entry>,
}

/// Most values one entries call (and one forget call) may carry. The
/// gateway asks for more in several calls; the control service refuses a
/// call over it.
pub const MAX_VALUES_PER_CALL: usize = 1_000;

/// The error code the control service answers (status 410) to every call
/// made with a token of a deleted key.
pub const KEY_DELETED_ERROR: &str = "key_deleted";

/// The error code the control service answers (status 403) to every call
/// made with a token of a disabled key.
pub const KEY_DISABLED_ERROR: &str = "key_disabled";

/// Why the control service refused a gateway's call, as its answer says.
/// Each cause has its own remedy, so the gateway names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlRefusal {
    /// 410 `key_deleted`: the key and its vault are gone for good.
    KeyDeleted,
    /// 403 `key_disabled`: an operator disabled the key.
    KeyDisabled,
    /// 401, or 403 for any other reason: the token is unknown, revoked,
    /// or lacks the gateway permission.
    TokenRefused,
}

/// The refusal an answer of the control service carries, if it is one.
pub fn control_refusal(status: u16, body: &[u8]) -> Option<ControlRefusal> {
    #[derive(Deserialize)]
    struct ErrorBody<'a> {
        #[serde(borrow)]
        error: std::borrow::Cow<'a, str>,
    }
    let code = || serde_json::from_slice::<ErrorBody<'_>>(body).ok();
    match status {
        401 => Some(ControlRefusal::TokenRefused),
        403 if code().is_some_and(|b| b.error == KEY_DISABLED_ERROR) => {
            Some(ControlRefusal::KeyDisabled)
        }
        403 => Some(ControlRefusal::TokenRefused),
        410 if code().is_some_and(|b| b.error == KEY_DELETED_ERROR) => {
            Some(ControlRefusal::KeyDeleted)
        }
        _ => None,
    }
}

/// Whether an answer of the control service says the caller's key was
/// deleted: status 410 and `{"error": "key_deleted", …}`. The gateway then
/// drops everything it cached for the key.
pub fn is_key_deleted(status: u16, body: &[u8]) -> bool {
    control_refusal(status, body) == Some(ControlRefusal::KeyDeleted)
}

/// Checks a document's version.
pub fn check_version(found: u32) -> Result<(), CoreError> {
    if found == WIRE_VERSION {
        Ok(())
    } else {
        Err(CoreError::WireVersion {
            found,
            supported: WIRE_VERSION,
        })
    }
}

/// Parses a snapshot and checks its version.
pub fn parse_snapshot(bytes: &[u8]) -> Result<Snapshot, CoreError> {
    let snapshot: Snapshot = serde_json::from_slice(bytes).map_err(wire_error)?;
    check_version(snapshot.version)?;
    Ok(snapshot)
}

/// Parses a feed answer and checks its version.
pub fn parse_feed_answer(bytes: &[u8]) -> Result<FeedAnswer, CoreError> {
    let answer: FeedAnswer = serde_json::from_slice(bytes).map_err(wire_error)?;
    let version = match &answer {
        FeedAnswer::Events { version, .. } | FeedAnswer::SnapshotRequired { version, .. } => {
            *version
        }
    };
    check_version(version)?;
    Ok(answer)
}

/// Parses an entries answer and checks its version.
pub fn parse_entries_response(bytes: &[u8]) -> Result<EntriesResponse, CoreError> {
    let answer: EntriesResponse = serde_json::from_slice(bytes).map_err(wire_error)?;
    check_version(answer.version)?;
    Ok(answer)
}

/// serde_json's messages carry line/column and the expected shape, never the
/// input's content, except for unknown variants/fields (names, not values).
fn wire_error(err: serde_json::Error) -> CoreError {
    CoreError::Wire(format!(
        "{:?} error at line {} column {}",
        err.classify(),
        err.line(),
        err.column()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_refusals_are_told_apart_by_status_and_code() {
        let deleted = br#"{"error":"key_deleted","message":"m"}"#;
        let disabled = br#"{"error":"key_disabled","message":"m"}"#;
        let forbidden = br#"{"error":"forbidden","message":"m"}"#;
        let cases: &[(u16, &[u8], Option<ControlRefusal>)] = &[
            (410, deleted, Some(ControlRefusal::KeyDeleted)),
            (410, b"", None),
            (403, disabled, Some(ControlRefusal::KeyDisabled)),
            (403, forbidden, Some(ControlRefusal::TokenRefused)),
            (403, b"not json", Some(ControlRefusal::TokenRefused)),
            (401, b"", Some(ControlRefusal::TokenRefused)),
            (400, disabled, None),
            (503, deleted, None),
            (200, b"{}", None),
        ];
        for (status, body, want) in cases {
            assert_eq!(control_refusal(*status, body), *want, "status {status}");
        }
        assert!(is_key_deleted(410, deleted));
        assert!(!is_key_deleted(403, disabled));
    }

    fn entry(n: u8) -> Entry {
        Entry {
            id: EntryId([n; 16]),
            value: format!("value{n}"),
            surrogate: format!("surrogate{n}"),
            kind: Kind::Name,
            generation: 1,
        }
    }

    #[test]
    fn events_round_trip_with_their_tags() {
        let added = Event {
            seq: 7,
            body: EventBody::Added {
                entries: vec![entry(1)],
            },
        };
        let json = serde_json::to_string(&added).unwrap();
        assert!(json.contains(r#""type":"added""#), "{json}");
        assert_eq!(serde_json::from_str::<Event>(&json).unwrap(), added);

        let forgotten = Event {
            seq: 8,
            body: EventBody::Forgotten {
                ids: vec![EntryId([1; 16])],
                retired: vec![RetiredSurrogate {
                    hash: RetiredHash([2; 16]),
                    lead: 5,
                }],
                generation: 2,
            },
        };
        let json = serde_json::to_string(&forgotten).unwrap();
        assert!(!json.contains("value1") && !json.contains("surrogate1"));
        assert_eq!(serde_json::from_str::<Event>(&json).unwrap(), forgotten);
    }

    #[test]
    fn feed_answers_parse_and_versions_are_checked() {
        let answer = FeedAnswer::SnapshotRequired {
            version: 1,
            oldest: 10,
            head: 20,
        };
        let bytes = serde_json::to_vec(&answer).unwrap();
        assert_eq!(parse_feed_answer(&bytes).unwrap(), answer);
        let wrong = br#"{"status":"events","version":9,"head":0,"events":[]}"#;
        assert_eq!(
            parse_feed_answer(wrong),
            Err(CoreError::WireVersion {
                found: 9,
                supported: 1
            })
        );
    }

    #[test]
    fn a_key_deleted_answer_is_known_by_status_and_code() {
        let body = br#"{"error":"key_deleted","message":"the key was deleted"}"#;
        assert!(is_key_deleted(410, body));
        assert!(!is_key_deleted(401, body));
        assert!(!is_key_deleted(410, br#"{"error":"unauthorized"}"#));
        assert!(!is_key_deleted(410, b"gone"));
    }

    #[test]
    fn errors_and_debug_never_show_a_value() {
        let e = entry(3);
        let debug = format!("{e:?}");
        assert!(!debug.contains("value3") && !debug.contains("surrogate3"));
        let bad = br#"{"version":1,"generation":1,"seq":0,"retired_salt":"00","retired":[],"entries":[{"id":"zz","value":"secret-value"}]}"#;
        let err = parse_snapshot(bad).unwrap_err().to_string();
        assert!(!err.contains("secret-value"), "{err}");
    }
}
