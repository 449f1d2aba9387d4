//! Apps routes: forget (rule F3, docs/product-rules.md#f3), mask and restore
//! of plain text.

use super::{bearer, blocking, body, caller, ok, AppState};
use crate::error::Result;
use crate::text_adapter::{self, TextBody};
use crate::tokens::Permission;
use crate::vault::ForgetActor;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;

/// Body of `POST /_latet/apps/v1/forget` (and the admin forget).
#[derive(Debug, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ForgetRequest {
    pub values: Vec<String>,
}

/// `POST /_latet/apps/v1/forget`: `{"values": [...]}` → `{"forgotten": N, "unknown": M}`.
pub async fn forget(
    State(state): State<AppState>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response> {
    let caller = caller(&state, &headers, Permission::Forget).await?;
    let request: ForgetRequest = body::parse(&bytes)?;
    let vaults = state.vaults.clone();
    let actor = ForgetActor::App {
        token_name: caller.token_name.clone(),
    };
    let result = blocking(move || vaults.forget(&caller.key, &request.values, &actor)).await;
    state.metrics.count_forget("apps", &result);
    Ok(ok(&result?))
}

/// `GET /_latet/apps/v1/token`: the calling token's key, name and
/// permissions (any permission; never the token).
pub async fn whoami(State(state): State<AppState>, headers: HeaderMap) -> Result<Response> {
    let token = bearer(&headers)?.to_string();
    let vaults = state.vaults.clone();
    let caller = blocking(move || vaults.authenticate(&token)).await?;
    Ok(ok(&serde_json::json!({
        "key": caller.key.name,
        "token": caller.token_name,
        "permissions": caller.permissions.names(),
        "enabled": caller.key.enabled,
    })))
}

/// `DELETE /_latet/apps/v1/token`: the calling token revokes itself (a
/// leaked or retired token; any permission). One `apps.token_revoked` log
/// entry.
pub async fn revoke_own_token(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response> {
    let token = bearer(&headers)?.to_string();
    let vaults = state.vaults.clone();
    let (key, name) = blocking(move || {
        let caller = vaults.authenticate(&token)?;
        vaults.revoke_own_token(&caller, &token)?;
        Ok((caller.key.name, caller.token_name))
    })
    .await?;
    Ok(ok(
        &serde_json::json!({ "key": key, "token": name, "revoked": true }),
    ))
}

/// `POST /_latet/apps/v1/mask`: `{"text": "..."}` or `{"texts": [...]}`.
pub async fn mask(
    State(state): State<AppState>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response> {
    let caller = caller(&state, &headers, Permission::Mask).await?;
    let request: TextBody = body::parse(&bytes)?;
    let vaults = state.vaults.clone();
    let detectors = state.detectors.clone();
    let answer =
        blocking(move || text_adapter::mask(&vaults, &detectors, &caller.key, request)).await?;
    Ok(ok(&answer))
}

/// `POST /_latet/apps/v1/restore`: `{"text": "..."}` or `{"texts": [...]}`.
pub async fn restore(
    State(state): State<AppState>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response> {
    let caller = caller(&state, &headers, Permission::Restore).await?;
    let request: TextBody = body::parse(&bytes)?;
    let vaults = state.vaults.clone();
    let answer = blocking(move || text_adapter::restore(&vaults, &caller.key, request)).await?;
    Ok(ok(&answer))
}
