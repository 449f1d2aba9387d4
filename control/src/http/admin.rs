//! Admin routes for the CLI, authenticated with the admin token.

use super::apps::ForgetRequest;
use super::{blocking, body, ok, require_admin, AppState};
use crate::error::Result;
use crate::tokens::Permissions;
use crate::vault::ForgetActor;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::Response;
use serde::{Deserialize, Serialize};

/// Body of `POST /_latet/admin/v1/keys`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyRequest {
    pub name: String,
    #[serde(default)]
    pub value_limit: Option<u64>,
}

/// Answer of `POST /_latet/admin/v1/keys` and of adding a token: the token, shown once.
#[derive(Debug, Deserialize, Serialize)]
pub struct TokenAnswer {
    pub key: String,
    pub token_name: String,
    pub permissions: Vec<String>,
    pub token: String,
}

/// One key as listed.
#[derive(Debug, Deserialize, Serialize)]
pub struct KeyListing {
    pub name: String,
    pub enabled: bool,
    pub values: u64,
    pub retired: u64,
    pub value_limit: u64,
    pub generation: u64,
    pub seq: u64,
    pub tokens: u64,
}

/// Body of `POST /_latet/admin/v1/keys/{name}/tokens`.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AddTokenRequest {
    pub name: String,
    pub permissions: Vec<String>,
}

/// `POST /_latet/admin/v1/keys`
pub async fn create_key(
    State(state): State<AppState>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Response> {
    require_admin(&state, &headers)?;
    let request: CreateKeyRequest = body::parse(&bytes)?;
    let vaults = state.vaults.clone();
    let created = blocking(move || vaults.create_key(&request.name, request.value_limit)).await?;
    Ok(ok(&TokenAnswer {
        key: created.key.name,
        token_name: "default".into(),
        permissions: Permissions::first_token()
            .names()
            .into_iter()
            .map(String::from)
            .collect(),
        token: created.token,
    }))
}

/// `GET /_latet/admin/v1/keys`
pub async fn list_keys(State(state): State<AppState>, headers: HeaderMap) -> Result<Response> {
    require_admin(&state, &headers)?;
    let vaults = state.vaults.clone();
    let keys = blocking(move || vaults.list_keys()).await?;
    let listing: Vec<KeyListing> = keys
        .into_iter()
        .map(|k| KeyListing {
            name: k.key.name,
            enabled: k.key.enabled,
            values: k.values,
            retired: k.retired,
            value_limit: k.key.value_limit,
            generation: k.key.generation,
            seq: k.key.seq,
            tokens: k.tokens,
        })
        .collect();
    Ok(ok(&serde_json::json!({ "keys": listing })))
}

async fn set_enabled(
    state: AppState,
    headers: HeaderMap,
    name: String,
    enabled: bool,
) -> Result<Response> {
    require_admin(&state, &headers)?;
    let vaults = state.vaults.clone();
    let key = name.clone();
    blocking(move || vaults.set_enabled(&key, enabled)).await?;
    Ok(ok(&serde_json::json!({ "key": name, "enabled": enabled })))
}

/// `POST /_latet/admin/v1/keys/{name}/enable`
pub async fn enable_key(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Response> {
    set_enabled(state, headers, name, true).await
}

/// `POST /_latet/admin/v1/keys/{name}/disable`
pub async fn disable_key(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Response> {
    set_enabled(state, headers, name, false).await
}

/// `POST /_latet/admin/v1/keys/{name}/tokens`
pub async fn add_token(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
    bytes: Bytes,
) -> Result<Response> {
    require_admin(&state, &headers)?;
    let request: AddTokenRequest = body::parse(&bytes)?;
    let permissions = Permissions::parse_names(request.permissions.iter().map(String::as_str))?;
    let vaults = state.vaults.clone();
    let (key, token_name) = (name.clone(), request.name.clone());
    let token = blocking(move || vaults.add_token(&key, &token_name, permissions)).await?;
    Ok(ok(&TokenAnswer {
        key: name,
        token_name: request.name,
        permissions: permissions.names().into_iter().map(String::from).collect(),
        token,
    }))
}

/// One token as listed: name and permissions, never the token.
#[derive(Debug, Deserialize, Serialize)]
pub struct TokenListingAnswer {
    pub name: String,
    pub permissions: Vec<String>,
    /// Unix seconds.
    pub created_at: i64,
}

/// Answer of `GET /_latet/admin/v1/keys/{name}/tokens`.
#[derive(Debug, Deserialize, Serialize)]
pub struct TokensAnswer {
    pub key: String,
    pub tokens: Vec<TokenListingAnswer>,
}

/// Answer of `DELETE /_latet/admin/v1/keys/{name}`: what was erased.
#[derive(Debug, Deserialize, Serialize)]
pub struct KeyDeletedAnswer {
    pub key: String,
    pub deleted: bool,
    pub values: u64,
    pub retired: u64,
    pub tokens: u64,
    pub events: u64,
}

/// `GET /_latet/admin/v1/keys/{name}/tokens`
pub async fn list_tokens(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Response> {
    require_admin(&state, &headers)?;
    let vaults = state.vaults.clone();
    let key = name.clone();
    let tokens = blocking(move || vaults.list_tokens(&key)).await?;
    let tokens = tokens
        .into_iter()
        .map(|t| {
            Ok(TokenListingAnswer {
                name: t.name,
                permissions: Permissions::parse_names(t.permissions.split(','))?
                    .names()
                    .into_iter()
                    .map(String::from)
                    .collect(),
                created_at: t.created_at,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ok(&TokensAnswer { key: name, tokens }))
}

/// `DELETE /_latet/admin/v1/keys/{name}/tokens/{token}`: one `token.revoked` log entry.
pub async fn revoke_token(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((name, token)): Path<(String, String)>,
) -> Result<Response> {
    require_admin(&state, &headers)?;
    let vaults = state.vaults.clone();
    let (key, token_name) = (name.clone(), token.clone());
    blocking(move || vaults.revoke_token(&key, &token_name)).await?;
    Ok(ok(
        &serde_json::json!({ "key": name, "token": token, "revoked": true }),
    ))
}

/// `DELETE /_latet/admin/v1/keys/{name}`: the key and its whole vault; one
/// `key.deleted` log entry with the counts.
pub async fn delete_key(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Result<Response> {
    require_admin(&state, &headers)?;
    let vaults = state.vaults.clone();
    let key = name.clone();
    let deletion = blocking(move || vaults.delete_key(&key)).await?;
    Ok(ok(&KeyDeletedAnswer {
        key: name,
        deleted: true,
        values: deletion.values,
        retired: deletion.retired,
        tokens: deletion.tokens,
        events: deletion.events,
    }))
}

/// `POST /_latet/admin/v1/keys/{name}/forget`: one `key.forgotten` log entry.
pub async fn forget(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
    bytes: Bytes,
) -> Result<Response> {
    require_admin(&state, &headers)?;
    let request: ForgetRequest = body::parse(&bytes)?;
    let vaults = state.vaults.clone();
    let result = blocking(move || {
        let key = vaults.key_named(&name)?;
        vaults.forget(&key, &request.values, &ForgetActor::Admin)
    })
    .await;
    state.metrics.count_forget("admin", &result);
    Ok(ok(&result?))
}

/// `GET /_latet/admin/v1/log?action=ACTION`
pub async fn log(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    require_admin(&state, &headers)?;
    let action = raw
        .as_deref()
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("action="))
        .filter(|a| !a.is_empty())
        .map(String::from);
    let vaults = state.vaults.clone();
    let log = blocking(move || vaults.admin_log(action.as_deref())).await?;
    Ok(ok(&serde_json::json!({ "log": log })))
}
