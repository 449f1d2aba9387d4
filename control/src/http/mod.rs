//! The HTTP API: gateway, apps and admin routes, `/metrics`,
//! `/openapi.json`. Handlers authenticate, then run the vault's
//! (synchronous, over the store) work on blocking threads.

pub mod admin;
pub mod apps;
pub mod body;
pub mod errors;
#[cfg(test)]
mod feed_wake_tests;
pub mod gateway;
pub mod shared_feed_reads;

use crate::error::{ControlError, Result};
use crate::metrics::Metrics;
use crate::tokens::{hashes_equal, token_hash, Permission};
use crate::vault::{Caller, Vaults};
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use std::sync::Arc;

/// Largest request body (mask/restore batches of log lines).
pub const BODY_LIMIT_BYTES: usize = 16 * 1024 * 1024;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub vaults: Arc<Vaults>,
    pub metrics: Arc<Metrics>,
    /// SHA-256 of the admin token.
    pub admin_hash: [u8; 32],
    /// The detectors of the apps mask API (`latet serve --detectors`).
    pub detectors: Arc<latet_core::detect::Detectors>,
    /// The reads woken long-polls share.
    pub feed_reads: Arc<shared_feed_reads::SharedFeedReads>,
}

/// The service's routes.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(root))
        .route("/openapi.json", get(openapi))
        .route("/metrics", get(crate::metrics::render))
        .route("/_latet/gateway/v1/snapshot", get(gateway::snapshot))
        .route("/_latet/gateway/v1/events", get(gateway::events))
        .route("/_latet/gateway/v1/entries", post(gateway::entries))
        .route("/_latet/apps/v1/forget", post(apps::forget))
        .route("/_latet/apps/v1/mask", post(apps::mask))
        .route("/_latet/apps/v1/restore", post(apps::restore))
        .route(
            "/_latet/apps/v1/token",
            get(apps::whoami).delete(apps::revoke_own_token),
        )
        .route(
            "/_latet/admin/v1/keys",
            get(admin::list_keys).post(admin::create_key),
        )
        .route("/_latet/admin/v1/keys/{name}", delete(admin::delete_key))
        .route(
            "/_latet/admin/v1/keys/{name}/enable",
            post(admin::enable_key),
        )
        .route(
            "/_latet/admin/v1/keys/{name}/disable",
            post(admin::disable_key),
        )
        .route(
            "/_latet/admin/v1/keys/{name}/tokens",
            get(admin::list_tokens).post(admin::add_token),
        )
        .route(
            "/_latet/admin/v1/keys/{name}/tokens/{token}",
            delete(admin::revoke_token),
        )
        .route("/_latet/admin/v1/keys/{name}/forget", post(admin::forget))
        .route("/_latet/admin/v1/log", get(admin::log))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            count_requests,
        ))
        .layer(DefaultBodyLimit::max(BODY_LIMIT_BYTES))
        .with_state(state)
}

async fn root() -> Json<serde_json::Value> {
    Json(serde_json::json!({"service": "latet", "version": env!("CARGO_PKG_VERSION")}))
}

async fn openapi() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        include_str!("../../openapi.json"),
    )
}

async fn count_requests(State(state): State<AppState>, request: Request, next: Next) -> Response {
    // The route template, never the path itself (a path could hold anything).
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let response = next.run(request).await;
    state
        .metrics
        .count_request(&route, response.status().as_u16());
    response
}

/// The bearer token of a request.
pub fn bearer(headers: &HeaderMap) -> Result<&str> {
    let value = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .ok_or(ControlError::Unauthorized)?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .ok_or(ControlError::Unauthorized)?
        .trim();
    if token.is_empty() {
        return Err(ControlError::Unauthorized);
    }
    Ok(token)
}

/// Runs synchronous vault work on a blocking thread.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| ControlError::Store("worker thread failed".into()))?
}

/// Authenticates a token and checks one permission.
pub async fn caller(
    state: &AppState,
    headers: &HeaderMap,
    permission: Permission,
) -> Result<Caller> {
    let token = bearer(headers)?.to_string();
    let vaults = state.vaults.clone();
    let caller = blocking(move || vaults.authenticate(&token)).await?;
    Vaults::require(&caller, permission)?;
    Ok(caller)
}

/// Checks the admin token.
pub fn require_admin(state: &AppState, headers: &HeaderMap) -> Result<()> {
    let token = bearer(headers)?;
    if hashes_equal(&token_hash(token), &state.admin_hash) {
        Ok(())
    } else {
        Err(ControlError::Unauthorized)
    }
}

/// A JSON answer with status 200.
pub fn ok<T: serde::Serialize>(body: &T) -> Response {
    (StatusCode::OK, Json(body)).into_response()
}
