//! Buffer-only floor filter (being built).
