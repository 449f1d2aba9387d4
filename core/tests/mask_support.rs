//! Shared helpers of the `mask_*` tests: a small vault, a masker, the
//! resumable loop, and a simple surrogate → value restore (independent of
//! the restore module, so these tests judge masking alone).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::json::{Document, NodeKind, PathSeg, Splice};
use latet_core::kind::Kind;
use latet_core::mask::{MaskOptions, MaskOutcome, MaskStats, Masker};
use latet_core::provider::ProviderRef;
use latet_core::snapshot::SnapshotIndex;
use latet_core::wire::{Entry, EntryId, NewValue, Snapshot};

pub const SALT_HEX: &str = "00112233445566778899aabbccddeeff";

pub fn salt() -> Vec<u8> {
    (0..16).map(|i| (i * 0x11) as u8).collect()
}

/// The vault every table test starts from.
pub const VAULT: &[(&str, &str, &str)] = &[
    ("Mario Rossi", "Laura Bianchi", "name"),
    ("José García", "Iñigo Pérez", "name"),
    (
        "mario.rossi@acme.it",
        "laura.bianchi@brightvale.it",
        "email",
    ),
];

pub fn entry(n: u32, value: &str, surrogate: &str, kind: &str, generation: u64) -> Entry {
    let mut id = [0u8; 16];
    id[..4].copy_from_slice(&n.to_be_bytes());
    id[15] = 0xee;
    Entry {
        id: EntryId(id),
        value: value.into(),
        surrogate: surrogate.into(),
        kind: Kind::parse(kind).unwrap(),
        generation,
    }
}

/// The id of the active entry of `value`: the index keeps only its
/// fingerprint, and every id these tests give is numbered ([`entry`]), so
/// it is found by number.
pub fn id_of(index: &SnapshotIndex, value: &str) -> EntryId {
    let fingerprint = index.by_value(value).unwrap().fingerprint;
    (0..1_000_000u32)
        .map(|n| entry(n, "v", "s", "name", 1).id)
        .find(|id| id.fingerprint() == fingerprint)
        .expect("a numbered id")
}

pub fn index_with(entries: &[(&str, &str, &str)]) -> SnapshotIndex {
    SnapshotIndex::from_snapshot(Snapshot {
        version: 1,
        generation: 1,
        seq: 1,
        retired_salt: SALT_HEX.into(),
        retired: vec![],
        entries: entries
            .iter()
            .enumerate()
            .map(|(i, (v, s, k))| entry(i as u32 + 1, v, s, k, 1))
            .collect(),
    })
    .unwrap()
}

pub fn demo_index() -> SnapshotIndex {
    index_with(VAULT)
}

/// A masker with every built-in detector but names: these tests follow
/// vault values, the memo and forgets through texts that name people the
/// vault holds (or held); names found by the person detector are tested
/// with [`masker_with_names`].
pub fn masker(memo_bytes: usize) -> Masker {
    let config = DetectorConfig {
        person: false,
        ..DetectorConfig::default()
    };
    Masker::new(Detectors::new(&config).unwrap(), memo_bytes)
}

/// A masker with every built-in detector, names included (the default).
pub fn masker_with_names(memo_bytes: usize) -> Masker {
    Masker::new(
        Detectors::new(&DetectorConfig::default()).unwrap(),
        memo_bytes,
    )
}

pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/requests/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Masks, expecting a complete result; returns the output bytes (the input
/// when nothing changed) and the stats.
pub fn mask_ok(
    masker: &mut Masker,
    index: &SnapshotIndex,
    shape: ProviderRef,
    body: &[u8],
) -> (Vec<u8>, MaskStats) {
    match masker
        .mask_request(index, shape, body, MaskOptions::default())
        .unwrap()
    {
        MaskOutcome::Masked {
            body: Some(out),
            stats,
            ..
        } => (out, stats),
        MaskOutcome::Masked {
            body: None, stats, ..
        } => (body.to_vec(), stats),
        MaskOutcome::NeedEntries { values } => panic!("unexpected new values: {values:?}"),
    }
}

/// Masks, expecting new values to be asked for; returns them.
pub fn need_entries(
    masker: &mut Masker,
    index: &SnapshotIndex,
    shape: ProviderRef,
    body: &[u8],
) -> Vec<NewValue> {
    match masker
        .mask_request(index, shape, body, MaskOptions::default())
        .unwrap()
    {
        MaskOutcome::NeedEntries { values } => values,
        outcome => panic!("expected new values, got {outcome:?}"),
    }
}

/// A surrogate for a new value that keeps the word-boundary class of its
/// first and last char (so it is found where the value was).
pub fn fake_surrogate(n: usize, value: &str) -> String {
    let first = value.chars().next().unwrap();
    let last = value.chars().next_back().unwrap();
    format!("{first}Zq{n}q{last}")
}

/// What the control service does for new values, simplified.
pub fn entries_for(index: &SnapshotIndex, values: &[NewValue], counter: &mut u32) -> Vec<Entry> {
    values
        .iter()
        .map(|v| {
            *counter += 1;
            entry(
                1000 + *counter,
                &v.value,
                &fake_surrogate(*counter as usize, &v.value),
                v.kind.as_str(),
                index.generation(),
            )
        })
        .collect()
}

/// The resumable loop a caller runs: mask; on NeedEntries get entries, add
/// them, mask again.
pub fn mask_resuming(
    masker: &mut Masker,
    index: &mut SnapshotIndex,
    shape: ProviderRef,
    body: &[u8],
    counter: &mut u32,
) -> Vec<u8> {
    for _ in 0..3 {
        match masker
            .mask_request(index, shape, body, MaskOptions::default())
            .unwrap()
        {
            MaskOutcome::Masked { body: out, .. } => return out.unwrap_or_else(|| body.to_vec()),
            MaskOutcome::NeedEntries { values } => {
                assert!(!values.is_empty());
                let entries = entries_for(index, &values, counter);
                index.add_entries(index.generation(), entries).unwrap();
            }
        }
    }
    panic!("masking did not settle after entries were added");
}

/// Active surrogates → values in a text (word-bounded, via the index).
pub fn restore_text_simple(index: &SnapshotIndex, text: &str) -> String {
    let mut found = Vec::new();
    index.find_surrogates(text, &mut found);
    let mut out = String::new();
    let mut pos = 0;
    for m in found {
        out.push_str(&text[pos..m.start]);
        out.push_str(index.entry(m.slot).unwrap().value);
        pos = m.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// Every string value of a JSON body restored; a string that holds a JSON
/// object or array (tool-call arguments) is restored inside, value by value.
pub fn restore_json_simple(index: &SnapshotIndex, body: &[u8]) -> Vec<u8> {
    let doc = Document::parse(body).unwrap();
    let mut splice = Splice::new();
    for node in doc.strings() {
        let text = doc.str_value(node).unwrap().unwrap();
        let holds_json = Document::parse(text.as_bytes()).is_ok_and(|inner| {
            matches!(
                inner.kind(inner.root()),
                NodeKind::Object | NodeKind::Array | NodeKind::String
            )
        });
        let restored = if holds_json {
            String::from_utf8(restore_json_simple(index, text.as_bytes())).unwrap()
        } else {
            restore_text_simple(index, &text)
        };
        if restored != text {
            splice.replace_string(doc.span(node), &restored);
        }
    }
    splice.apply(body).unwrap()
}

/// A readable path: `messages.1.content.0.text`.
pub fn path_of(doc: &Document<'_>, node: latet_core::json::NodeId) -> String {
    doc.path(node)
        .iter()
        .map(|seg| match seg {
            PathSeg::Key(k) => String::from_utf8_lossy(k).into_owned(),
            PathSeg::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Compares two bodies of the same structure node by node: returns the
/// paths of string values whose bytes changed, and asserts that every key
/// and every non-string scalar is byte-identical.
pub fn changed_strings(before: &[u8], after: &[u8]) -> Vec<String> {
    let a = Document::parse(before).unwrap();
    let b = Document::parse(after).unwrap();
    assert_eq!(a.len(), b.len(), "structure changed");
    let mut changed = Vec::new();
    for (na, nb) in document_order(&a).into_iter().zip(document_order(&b)) {
        assert_eq!(a.kind(na), b.kind(nb));
        assert_eq!(
            a.key_raw(na),
            b.key_raw(nb),
            "key changed at {}",
            path_of(&a, na)
        );
        match a.kind(na) {
            NodeKind::String => {
                if a.raw(na) != b.raw(nb) {
                    changed.push(path_of(&a, na));
                }
            }
            NodeKind::Object | NodeKind::Array => {}
            _ => assert_eq!(a.raw(na), b.raw(nb)),
        }
    }
    changed
}

/// Every node in document order.
pub fn document_order(doc: &Document<'_>) -> Vec<latet_core::json::NodeId> {
    let mut stack = vec![doc.root()];
    let mut order = Vec::new();
    while let Some(n) = stack.pop() {
        order.push(n);
        let children: Vec<_> = doc.children(n).collect();
        stack.extend(children.into_iter().rev());
    }
    order
}

/// The decoded string at a readable path.
pub fn string_at(body: &[u8], path: &str) -> String {
    let doc = Document::parse(body).unwrap();
    let mut node = doc.root();
    for seg in path.split('.') {
        node = match seg.parse::<usize>() {
            Ok(i) if doc.kind(node) == NodeKind::Array => doc.children(node).nth(i).unwrap(),
            _ => doc
                .get(node, seg)
                .unwrap_or_else(|| panic!("no {seg} in {path}")),
        };
    }
    doc.str_value(node).unwrap().unwrap().into_owned()
}

/// Every decoded string value of a body.
pub fn all_strings(body: &[u8]) -> Vec<String> {
    let doc = Document::parse(body).unwrap();
    doc.strings()
        .map(|n| doc.str_value(n).unwrap().unwrap().into_owned())
        .collect()
}
