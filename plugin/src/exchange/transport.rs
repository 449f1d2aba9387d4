//! A request's texts outside its body — path, query string, headers and
//! trailers — examined and masked (deny by default). Which header is kept
//! as sent, and how a target is split and written back, is latet-core's
//! (`latet_core::mask::transport`); this is the glue that reads them from
//! the host and writes the masked ones back.

use crate::config::HeaderFindings;
use crate::host::Host;
use crate::reply::Refusal;
use latet_core::mask::transport::{header_kept, rewrite_target, target_pieces, TargetPiece};
use latet_core::mask::{MaskOptions, TextsOutcome};
use latet_core::snapshot::Slot;
use latet_core::wire::{EntryFingerprint, NewValue};
use latet_core::CoreError;

/// Headers or trailers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Section {
    Headers,
    Trailers,
}

/// What examining a section gave.
#[derive(Debug)]
pub(super) enum SectionOutcome {
    /// Examined; anything found is masked in place.
    /// `used`: the entries its masking used (the answer's restore scope).
    Done {
        values_masked: usize,
        used: Vec<(Slot, EntryFingerprint)>,
    },
    /// New values need entries first (headers only).
    NeedEntries(Vec<NewValue>),
    /// The request must be refused.
    Refuse(Refusal),
}

/// The texts of one section, in the order they are examined. Names and
/// values are borrowed from the pairs as read: nothing is copied per
/// header unless something in it is replaced.
struct SectionTexts<'a> {
    /// Header names, each once (a value in a name refuses the request).
    names: Vec<&'a str>,
    /// Which pairs are examined (the others are kept, with a reason).
    examined: Vec<bool>,
    /// `:path` and its components (headers only).
    target: Option<(&'a str, Vec<TargetPiece>)>,
}

/// The texts of a section's `pairs`.
fn texts(pairs: &[(String, String)], section: Section) -> SectionTexts<'_> {
    let mut names: Vec<&str> = Vec::with_capacity(pairs.len());
    let mut examined = Vec::with_capacity(pairs.len());
    let mut target = None;
    for (name, value) in pairs {
        if section == Section::Headers && name == ":path" {
            target = Some((value.as_str(), target_pieces(value)));
            examined.push(false);
            continue;
        }
        if !name.starts_with(':') && !names.contains(&name.as_str()) {
            names.push(name);
        }
        // Kept as sent: credentials in credential form, `:method`,
        // `:scheme` (see `header_kept` for each reason).
        examined.push(header_kept(name, value).is_none());
    }
    SectionTexts {
        names,
        examined,
        target,
    }
}

/// Examines one section of the request and writes the masked texts back.
/// `redact_new`: new values become placeholders instead of asking for
/// entries (the failure mode, and trailers: they come after the body, so
/// nothing waits for a callout there). `pairs`: the section as the caller
/// just read it from the host (`None`: read it here).
pub(super) fn mask_section(
    host: &dyn Host,
    vault: &mut crate::vault::WorkerVault,
    section: Section,
    pairs: Option<Vec<(String, String)>>,
    findings: HeaderFindings,
    redact_new: bool,
) -> Result<SectionOutcome, CoreError> {
    // The section as the caller read it, else read here (one host call).
    let pairs = match (pairs, section) {
        (Some(pairs), _) => Ok(pairs),
        (None, Section::Headers) => host.request_headers(),
        (None, Section::Trailers) => host.request_trailers(),
    };
    let Ok(pairs) = pairs else {
        // Unreadable: not examined, so not forwarded.
        return Ok(SectionOutcome::Refuse(Refusal::BadHeaders));
    };
    let SectionTexts {
        names,
        examined,
        target,
    } = texts(&pairs, section);
    // The names first, then the values examined, then the target's pieces.
    let mut list = names;
    let values_at = list.len();
    for ((_, value), examined) in pairs.iter().zip(&examined) {
        if *examined {
            list.push(value);
        }
    }
    let pieces_at = list.len();
    if let Some((_, pieces)) = &target {
        list.extend(pieces.iter().map(|p| p.decoded.as_str()));
    }
    let outcome = vault.mask_texts(&list, MaskOptions { redact_new })?;
    let (masked, stats, used) = match outcome {
        TextsOutcome::NeedEntries { values } => return Ok(SectionOutcome::NeedEntries(values)),
        TextsOutcome::Masked { texts, stats, used } => (texts, stats, used),
    };
    if masked[..values_at].iter().any(Option::is_some) {
        return Ok(SectionOutcome::Refuse(Refusal::ValueInHeader));
    }
    let changed = masked[values_at..].iter().any(Option::is_some);
    if changed && findings == HeaderFindings::Refuse {
        return Ok(SectionOutcome::Refuse(Refusal::ValueInHeader));
    }
    let values_masked = stats.values_masked + stats.redacted;
    if !changed {
        // Every text examined and none replaced: nothing to write back.
        return Ok(SectionOutcome::Done {
            values_masked,
            used,
        });
    }
    // Values back, grouped by name (a repeated header keeps its order).
    let mut next = masked[values_at..pieces_at].iter();
    let mut new_pairs: Vec<(String, String, bool)> = Vec::with_capacity(pairs.len());
    for ((name, value), examined) in pairs.iter().zip(&examined) {
        let replaced = if *examined {
            next.next().cloned().flatten()
        } else {
            None
        };
        let changed = replaced.is_some();
        new_pairs.push((
            name.clone(),
            replaced.unwrap_or_else(|| value.clone()),
            changed,
        ));
    }
    let mut done: Vec<&str> = Vec::new();
    for (name, _, changed) in &new_pairs {
        if !changed || done.contains(&name.as_str()) || name == ":path" {
            continue;
        }
        let values: Vec<String> = new_pairs
            .iter()
            .filter(|(n, _, _)| n == name)
            .map(|(_, v, _)| v.clone())
            .collect();
        match section {
            Section::Headers => host.set_request_header(name, &values),
            Section::Trailers => host.set_request_trailer(name, &values),
        }
        done.push(name);
    }
    if let Some((target, pieces)) = &target {
        if let Some(rewritten) = rewrite_target(target, pieces, &masked[pieces_at..]) {
            host.set_request_header(":path", &[rewritten]);
        }
    }
    Ok(SectionOutcome::Done {
        values_masked,
        used,
    })
}
