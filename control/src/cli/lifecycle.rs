//! `keys tokens`, `keys revoke-token` and `keys delete`: a key's tokens
//! listed (names and permissions, never a token), one revoked, or the key
//! deleted with every value of its vault.

use super::client::{segment, AdminClient};
use super::forget::{answer_to, check_key};
use super::utc_time;
use crate::error::Result;
use crate::http::admin::{KeyDeletedAnswer, TokensAnswer};
use std::io::IsTerminal;

/// `keys tokens KEY`: one line per token.
pub fn list_tokens(client: &AdminClient, key: &str) -> Result<i32> {
    let answer: TokensAnswer = client.get(&format!("/keys/{}/tokens", segment(key)))?;
    println!("{:<24} {:<21} PERMISSIONS", "TOKEN", "CREATED");
    for token in &answer.tokens {
        println!(
            "{:<24} {:<21} {}",
            token.name,
            utc_time(token.created_at),
            token.permissions.join(",")
        );
    }
    if answer.tokens.is_empty() {
        println!("(no tokens)");
    }
    Ok(0)
}

/// `keys revoke-token KEY NAME`.
pub fn revoke_token(client: &AdminClient, key: &str, token: &str) -> Result<i32> {
    let _: serde_json::Value =
        client.delete(&format!("/keys/{}/tokens/{}", segment(key), segment(token)))?;
    println!("Token \"{token}\" of key \"{key}\" revoked: it is refused from now on.");
    Ok(0)
}

/// `keys delete KEY [--yes]`: asks for the key's name at a terminal;
/// without one, needs `--yes`.
pub fn delete_key(client: &AdminClient, key: &str, yes: bool) -> Result<i32> {
    // The key and the admin token first: a typo is named before any question.
    check_key(client, key)?;
    if !yes {
        if !std::io::stdin().is_terminal() {
            eprintln!(
                "latet: no terminal to ask for confirmation: in a script, pass --yes \
                 (keys delete erases every value of the vault)"
            );
            return Ok(2);
        }
        eprintln!(
            "This deletes key \"{key}\": every value of its vault, its retired surrogates, \
             its feed and its tokens. The gateways drop what they cached and refuse its \
             requests. It cannot be undone."
        );
        if answer_to("Type the key's name to delete it:")? != key {
            eprintln!("Nothing deleted.");
            return Ok(1);
        }
    }
    let answer: KeyDeletedAnswer = client.delete(&format!("/keys/{}", segment(key)))?;
    println!(
        "Key \"{}\" deleted: {} values, {} retired surrogates, {} tokens, {} feed events erased.",
        answer.key, answer.values, answer.retired, answer.tokens, answer.events
    );
    Ok(0)
}
