//! Tests across detectors: overlap resolution, configuration, invariants.

use super::*;

/// The substrings of `text` named by `findings`, in order.
pub(super) fn spans_of<'t>(text: &'t str, findings: &[Finding]) -> Vec<&'t str> {
    findings.iter().map(|f| &text[f.start..f.end]).collect()
}
