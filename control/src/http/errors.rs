//! Errors as HTTP answers: `{"error": "code", "message": "…"}`. Messages
//! name fields and counts, never a value.

use crate::error::ControlError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use latet_core::wire::{KEY_DELETED_ERROR, KEY_DISABLED_ERROR};

impl ControlError {
    /// The HTTP status and stable error code of this error.
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ControlError::BadRequest(_) | ControlError::Refused(_) => {
                (StatusCode::BAD_REQUEST, "bad_request")
            }
            ControlError::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized"),
            ControlError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            ControlError::KeyDisabled => (StatusCode::FORBIDDEN, KEY_DISABLED_ERROR),
            ControlError::KeyDeleted => (StatusCode::GONE, KEY_DELETED_ERROR),
            ControlError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            ControlError::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            ControlError::VaultFull { .. } => (StatusCode::CONFLICT, "vault_full"),
            ControlError::Store(_)
            | ControlError::Crypto(_)
            | ControlError::Io(_)
            | ControlError::Config(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        }
    }
}

impl IntoResponse for ControlError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            // The message names tables and constraints, never a value.
            crate::log::warn(&format!("request failed: {self}"));
        }
        let body = serde_json::json!({"error": code, "message": self.to_string()});
        (status, Json(body)).into_response()
    }
}
