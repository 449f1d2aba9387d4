//! The vault snapshot as a gateway holds it: value → entry and surrogate →
//! entry lookups, the retired set, events applied in order, and the matchers
//! that find vault values and active surrogates where they are written.
