//! JSON scanning that keeps bytes as they came: string spans with their
//! paths, escape decoding and minimal re-encoding.
