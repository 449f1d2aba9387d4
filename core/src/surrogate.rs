//! Surrogate formats the control service derives entries with.
