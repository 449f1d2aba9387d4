//! Masking one plain text without a memo: the control service's apps API
//! (`POST /_latet/apps/v1/mask`) and anything else that masks a single text.

use super::find::{mask_text_once, MaskedText, NewValues, Scratch};
use super::masker::MaskStats;
use super::MaskOptions;
use crate::detect::Detectors;
use crate::snapshot::SnapshotIndex;
use crate::wire::NewValue;

/// What masking one text gave. Its `Debug` shows sizes and counts only.
#[derive(Clone, PartialEq, Eq)]
pub enum TextOutcome {
    /// The text, masked; `text` is `None` when nothing changed.
    Masked {
        text: Option<String>,
        stats: MaskStats,
    },
    /// Distinct new values that need entries first, in the order found.
    NeedEntries { values: Vec<NewValue> },
}

impl std::fmt::Debug for TextOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextOutcome::Masked { text, stats } => f
                .debug_struct("Masked")
                .field("text_bytes", &text.as_ref().map(String::len))
                .field("stats", stats)
                .finish(),
            TextOutcome::NeedEntries { values } => f
                .debug_struct("NeedEntries")
                .field("values", values)
                .finish(),
        }
    }
}

/// Masks `text` against `index` and `detectors`: vault values and detector
/// findings become their surrogates; new values are returned for entries
/// (or, in redact mode, become placeholders).
pub fn mask_text(
    detectors: &Detectors,
    index: &SnapshotIndex,
    text: &str,
    options: MaskOptions,
) -> TextOutcome {
    let mut new_values = NewValues::default();
    let masking = mask_text_once(
        detectors,
        index,
        text,
        options,
        &mut Scratch::default(),
        &mut new_values,
        false,
    );
    if !new_values.is_empty() {
        return TextOutcome::NeedEntries {
            values: new_values.into_list(),
        };
    }
    TextOutcome::Masked {
        text: masking.masked.map(MaskedText::into_string),
        stats: MaskStats {
            texts: 1,
            values_masked: masking.values_masked,
            redacted: masking.redacted,
            memo_hits: 0,
        },
    }
}
