//! Gateway routes (token with `gateway`): snapshot, event feed (long-poll),
//! entries for new values.

use super::shared_feed_reads::{FeedBody, FeedReadKey};
use super::{blocking, body, caller, ok, AppState};
use crate::error::{ControlError, Result};
use crate::tokens::{token_hash, Permission};
use crate::vault::Vaults;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use latet_core::wire::{
    check_version, encode_snapshot, EntriesRequest, FeedAnswer, SNAPSHOT_MEDIA_TYPE, WIRE_VERSION,
};
use std::time::Duration;

/// Longest long-poll wait.
pub const MAX_WAIT_MS: u64 = 60_000;

/// `GET /_latet/gateway/v1/snapshot`: JSON, or the compact form when
/// `Accept` names [`SNAPSHOT_MEDIA_TYPE`]; with a strong `ETag`, and 304
/// for an `If-None-Match` that names the vault's current state (checked
/// against the key record read by the authentication, before any entry is
/// read or opened).
pub async fn snapshot(State(state): State<AppState>, headers: HeaderMap) -> Result<Response> {
    let caller = caller(&state, &headers, Permission::Gateway).await?;
    let form = SnapshotForm::asked(&headers);
    let known = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let current = snapshot_tag(form, caller.key.id, caller.key.generation, caller.key.seq);
    if known.as_deref().is_some_and(|k| tag_matches(k, &current)) {
        return Ok(not_modified(&current));
    }
    let vaults = state.vaults.clone();
    let key_id = caller.key.id;
    let snapshot = blocking(move || vaults.snapshot(&caller.key)).await?;
    // The state the rows were read at (a change may have landed since the
    // authentication).
    let tag = snapshot_tag(form, key_id, snapshot.generation, snapshot.seq);
    if known.as_deref().is_some_and(|k| tag_matches(k, &tag)) {
        return Ok(not_modified(&tag));
    }
    let (body, content_type) = match form {
        SnapshotForm::Json => (
            serde_json::to_vec(&snapshot)
                .map_err(|_| ControlError::Store("snapshot: JSON encoding".into()))?,
            "application/json",
        ),
        SnapshotForm::Compact => (
            encode_snapshot(&snapshot).map_err(|err| ControlError::Store(err.to_string()))?,
            SNAPSHOT_MEDIA_TYPE,
        ),
    };
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, content_type)],
        tag_headers(&tag),
        body,
    )
        .into_response())
}

/// The two forms a snapshot is served in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SnapshotForm {
    Json,
    Compact,
}

impl SnapshotForm {
    /// The compact form when `Accept` names its media type, else JSON.
    fn asked(headers: &HeaderMap) -> Self {
        let compact = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(|range| range.split(';').next())
            .any(|media| media.trim().eq_ignore_ascii_case(SNAPSHOT_MEDIA_TYPE));
        if compact {
            SnapshotForm::Compact
        } else {
            SnapshotForm::Json
        }
    }
}

/// The strong ETag of a key's snapshot: every change to a vault's entries
/// or retired set appends an event, which moves `seq` (and a forget the
/// generation), and both stores read the rows in key order, so the key,
/// its state and the form name the bytes. Key ids are never given again.
fn snapshot_tag(form: SnapshotForm, key_id: i64, generation: u64, seq: u64) -> String {
    let form = match form {
        SnapshotForm::Json => "json",
        SnapshotForm::Compact => "c1",
    };
    format!("\"{form}-k{key_id}-g{generation}-s{seq}\"")
}

/// Whether an `If-None-Match` value names `tag` (`*`, or one of a list;
/// a weak `W/` form compares equal, as RFC 9110 has it for this header).
fn tag_matches(if_none_match: &str, tag: &str) -> bool {
    if_none_match.split(',').map(str::trim).any(|candidate| {
        candidate == "*" || candidate.strip_prefix("W/").unwrap_or(candidate) == tag
    })
}

fn not_modified(tag: &str) -> Response {
    (StatusCode::NOT_MODIFIED, tag_headers(tag)).into_response()
}

/// The headers a snapshot answer and its 304 both carry.
fn tag_headers(tag: &str) -> [(header::HeaderName, String); 3] {
    [
        (header::ETAG, tag.to_string()),
        (header::VARY, "accept".into()),
        // Values in clear: no shared cache keeps a copy.
        (header::CACHE_CONTROL, "no-store".into()),
    ]
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
    let signals = state.vaults.signals();
    let notices = signals.notices();
    let caller = caller(&state, &headers, Permission::Gateway).await?;
    // Subscribe before reading, so an event committed in between still wakes us.
    let mut head = signals.subscribe(caller.key.id);
    let deadline = tokio::time::Instant::now() + Duration::from_millis(wait_ms);
    let mut answer = if caller.key.seq == after && signals.notices() == notices {
        // At the head the key row showed, and nothing announced since it
        // was read: no event to read (the poll of a gateway that just got
        // one parks again without a feed read; a head committed since
        // reaches the channel subscribed above).
        FeedBody::of(&FeedAnswer::Events {
            version: WIRE_VERSION,
            head: after,
            events: Vec::new(),
        })?
    } else {
        // Authenticated just now: the first read needs no second check.
        let vaults = state.vaults.clone();
        let key = caller.key.clone();
        blocking(move || FeedBody::of(&vaults.feed(&key, after)?)).await?
    };
    let token_digest = token_hash(&token);
    loop {
        if !answer.is_empty() || tokio::time::Instant::now() >= deadline {
            return Ok(answer.into_response());
        }
        let Some(receiver) = head.as_mut() else {
            return Ok(answer.into_response());
        };
        tokio::select! {
            woke = tokio::time::timeout_at(deadline, receiver.changed()) => match woke {
                Ok(Ok(())) => {}
                // Timed out, or the sender went away: answer with what there is.
                _ => return Ok(answer.into_response()),
            },
            // Shutting down: answer now rather than hold the shutdown.
            () = state.vaults.signals().closed() => return Ok(answer.into_response()),
        }
        // The token again at every wake-up: one revoked, or a key deleted or
        // disabled, while the poll waited gets no event after that. The
        // polls woken by the same send share that read (its epoch is new at
        // every send, a revocation's wake-up included, so a read shared
        // here always started after the send the poll woke for).
        let shared = FeedReadKey {
            key_id: caller.key.id,
            token_hash: token_digest,
            after,
            epoch: receiver.borrow_and_update().epoch,
        };
        answer = state
            .feed_reads
            .read(shared, || read_feed(&state, &token, after))
            .await?;
    }
}

/// Authenticates `token` again and reads the feed after `after`.
async fn read_feed(state: &AppState, token: &str, after: u64) -> Result<FeedBody> {
    let vaults = state.vaults.clone();
    let token = token.to_string();
    blocking(move || {
        let caller = vaults.authenticate(&token)?;
        Vaults::require(&caller, Permission::Gateway)?;
        FeedBody::of(&vaults.feed(&caller.key, after)?)
    })
    .await
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

    #[test]
    fn the_form_follows_accept_and_the_tag_names_form_key_and_state() {
        let asked = |accept: &[&str]| {
            let mut headers = HeaderMap::new();
            for a in accept {
                headers.append(header::ACCEPT, a.parse().unwrap());
            }
            SnapshotForm::asked(&headers)
        };
        assert_eq!(asked(&[]), SnapshotForm::Json);
        assert_eq!(asked(&["application/json"]), SnapshotForm::Json);
        assert_eq!(asked(&["*/*"]), SnapshotForm::Json);
        assert_eq!(asked(&[SNAPSHOT_MEDIA_TYPE]), SnapshotForm::Compact);
        assert_eq!(
            asked(&["application/json;q=0.1, application/vnd.latet.snapshot.v1;q=1"]),
            SnapshotForm::Compact
        );
        assert_eq!(
            asked(&["application/json", "Application/Vnd.Latet.Snapshot.V1"]),
            SnapshotForm::Compact
        );
        let tag = snapshot_tag(SnapshotForm::Compact, 3, 2, 40);
        assert_eq!(tag, "\"c1-k3-g2-s40\"");
        assert_ne!(tag, snapshot_tag(SnapshotForm::Json, 3, 2, 40));
        assert_ne!(tag, snapshot_tag(SnapshotForm::Compact, 4, 2, 40));
        assert_ne!(tag, snapshot_tag(SnapshotForm::Compact, 3, 2, 41));
        let cases = [
            ("\"c1-k3-g2-s40\"", true),
            ("W/\"c1-k3-g2-s40\"", true),
            ("\"x\", \"c1-k3-g2-s40\"", true),
            ("*", true),
            ("\"c1-k3-g2-s4\"", false),
            ("c1-k3-g2-s40", false),
            ("", false),
        ];
        for (header, want) in cases {
            assert_eq!(tag_matches(header, &tag), want, "{header}");
        }
    }
}
