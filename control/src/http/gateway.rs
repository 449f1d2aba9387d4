//! Gateway routes (token with `gateway`): snapshot, event feed (long-poll),
//! entries for new values.

use super::{blocking, body, caller, ok, AppState};
use crate::error::{ControlError, Result};
use crate::tokens::Permission;
use crate::vault::Vaults;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use latet_core::wire::{check_version, EntriesRequest, FeedAnswer};
use std::time::Duration;

/// Longest long-poll wait.
pub const MAX_WAIT_MS: u64 = 60_000;

/// `GET /_latet/gateway/v1/snapshot`
pub async fn snapshot(State(state): State<AppState>, headers: HeaderMap) -> Result<Response> {
    let caller = caller(&state, &headers, Permission::Gateway).await?;
    let vaults = state.vaults.clone();
    let snapshot = blocking(move || vaults.snapshot(&caller.key)).await?;
    Ok(ok(&snapshot))
}

/// `after` and `wait_ms` of a feed request.
fn feed_query(raw: Option<&str>) -> Result<(u64, u64)> {
    let (mut after, mut wait_ms) = (0u64, 0u64);
    for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let parsed = || {
            value.parse::<u64>().map_err(|_| {
                ControlError::BadRequest(format!("query `{name}`: not a whole number"))
            })
        };
        match name {
            "after" => after = parsed()?,
            "wait_ms" => wait_ms = parsed()?,
            _ => {}
        }
    }
    Ok((after, wait_ms.min(MAX_WAIT_MS)))
}

/// `GET /_latet/gateway/v1/events?after=SEQ&wait_ms=N`
pub async fn events(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    let (after, wait_ms) = feed_query(raw.as_deref())?;
    let token = super::bearer(&headers)?.to_string();
    let caller = caller(&state, &headers, Permission::Gateway).await?;
    // Subscribe before reading, so an event committed in between still wakes us.
    let mut head = state.vaults.signals().subscribe(caller.key.id);
    let deadline = tokio::time::Instant::now() + Duration::from_millis(wait_ms);
    loop {
        let vaults = state.vaults.clone();
        let token = token.clone();
        // The token again at every wake-up: one revoked, or a key deleted or
        // disabled, while the poll waited gets no event after that.
        let answer = blocking(move || {
            let caller = vaults.authenticate(&token)?;
            Vaults::require(&caller, Permission::Gateway)?;
            vaults.feed(&caller.key, after)
        })
        .await?;
        let empty = matches!(&answer, FeedAnswer::Events { events, .. } if events.is_empty());
        if !empty || tokio::time::Instant::now() >= deadline {
            return Ok(ok(&answer));
        }
        let Some(receiver) = head.as_mut() else {
            return Ok(ok(&answer));
        };
        tokio::select! {
            woke = tokio::time::timeout_at(deadline, receiver.changed()) => match woke {
                Ok(Ok(())) => continue,
                // Timed out, or the sender went away: answer with what there is.
                _ => return Ok(ok(&answer)),
            },
            // Shutting down: answer now rather than hold the shutdown.
            () = state.vaults.signals().closed() => return Ok(ok(&answer)),
        }
    }
}

/// `POST /_latet/gateway/v1/entries`
pub async fn entries(
    State(state): State<AppState>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response> {
    let caller = caller(&state, &headers, Permission::Gateway).await?;
    let request: EntriesRequest = body::parse(&bytes)?;
    check_version(request.version).map_err(|err| ControlError::BadRequest(err.to_string()))?;
    let vaults = state.vaults.clone();
    let answer = blocking(move || vaults.entries(&caller.key, &request.values)).await?;
    Ok(ok(&answer))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn feed_query_table() {
        assert_eq!(feed_query(None).unwrap(), (0, 0));
        assert_eq!(feed_query(Some("after=5&wait_ms=100")).unwrap(), (5, 100));
        assert_eq!(
            feed_query(Some("wait_ms=999999")).unwrap(),
            (0, MAX_WAIT_MS)
        );
        assert!(feed_query(Some("after=-1")).is_err());
        assert!(feed_query(Some("after=x")).is_err());
    }
}
