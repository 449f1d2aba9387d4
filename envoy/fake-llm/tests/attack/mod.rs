//! The attack runner's parts: the corpus, the client, the leak rule.

#![allow(dead_code)]

pub mod client;
pub mod corpus;
pub mod leak;
