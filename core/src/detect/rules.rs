//! (being built)

use super::{Finding, RuleConfig};
use crate::error::CoreError;

/// Compiled operator rules.
#[derive(Clone, Debug, Default)]
pub(super) struct RuleSet;

impl RuleSet {
    pub(super) fn new(_rules: &[RuleConfig]) -> Result<Self, CoreError> {
        Ok(RuleSet)
    }

    /// Appends the rules' findings in `text` to `out`.
    pub(super) fn find(&self, _text: &str, _out: &mut Vec<Finding>) {}
}
