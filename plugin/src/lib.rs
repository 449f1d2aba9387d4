//! The Latet Envoy filter (being built).
