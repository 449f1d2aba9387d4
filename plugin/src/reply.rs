//! Local replies: a JSON error that names the problem, never a value.

use crate::host::{Host, HostError};
use latet_core::wire::ControlRefusal;

/// Why the filter answered a request itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The body is over `bodyLimitBytes` (413).
    BodyTooLarge,
    /// The body has a `content-encoding` the filter cannot read (415).
    EncodedBody,
    /// No snapshot yet (503).
    VaultNotReady,
    /// Published events could not be applied: serving would use a cache
    /// that may predate a forget (503).
    VaultBehind,
    /// New values, and the control service could not give entries (503):
    /// unreachable, timed out, or an answer the filter could not use.
    EntriesUnavailable,
    /// `controlCluster` names no cluster Envoy knows: no call to the
    /// control service can leave (503; a configuration error).
    ControlClusterUnknown,
    /// The control service refused the gateway's token: unknown, revoked,
    /// or without the gateway permission (503; give the gateway a token).
    TokenRefused,
    /// An operator disabled the gateway's key at the control service (503;
    /// values already in the vault are still masked).
    KeyDisabled,
    /// The body could not be read as its provider's (400).
    BadBody,
    /// A field the provider signs holds a value: it cannot be masked
    /// without breaking the signature (422).
    ValueInVerbatimField,
    /// A header name holds a value, or a header value does and
    /// `headerFindings` is `refuse` (422).
    ValueInHeader,
    /// The request's headers or trailers could not be read, so they could
    /// not be examined (400).
    BadHeaders,
    /// The control service deleted the gateway's key: its vault is gone
    /// from this gateway too (403; retrying does not help).
    KeyDeleted,
}

impl Refusal {
    /// The causes the sync service publishes for the workers when its own
    /// calls fail (a worker without a snapshot refuses with the cause).
    pub const SYNC_CAUSES: [Refusal; 3] = [
        Refusal::ControlClusterUnknown,
        Refusal::TokenRefused,
        Refusal::KeyDisabled,
    ];

    /// The sync cause named `error_type`, if it is one.
    pub fn sync_cause(error_type: &str) -> Option<Refusal> {
        Self::SYNC_CAUSES
            .into_iter()
            .find(|cause| cause.error_type() == error_type)
    }

    /// The refusal for a call to the control service that Envoy would not
    /// send, and its cause for the log (a configuration name, never a
    /// value): Envoy answers BadArgument for a cluster it does not know.
    pub fn of_dispatch_error(err: HostError, cluster: &str) -> (Refusal, String) {
        if err == HostError::BadArgument {
            (
                Refusal::ControlClusterUnknown,
                format!("Envoy has no cluster named \"{cluster}\" (controlCluster)"),
            )
        } else {
            (Refusal::EntriesUnavailable, format!("{err:?}"))
        }
    }

    /// The refusal for a refused call to the control service.
    pub fn of_control(refusal: ControlRefusal) -> Refusal {
        match refusal {
            ControlRefusal::KeyDeleted => Refusal::KeyDeleted,
            ControlRefusal::KeyDisabled => Refusal::KeyDisabled,
            ControlRefusal::TokenRefused => Refusal::TokenRefused,
        }
    }

    /// HTTP status.
    pub fn status(self) -> u16 {
        match self {
            Refusal::BodyTooLarge => 413,
            Refusal::EncodedBody => 415,
            Refusal::BadBody => 400,
            Refusal::ValueInVerbatimField | Refusal::ValueInHeader => 422,
            Refusal::BadHeaders => 400,
            Refusal::KeyDeleted => 403,
            Refusal::VaultNotReady
            | Refusal::VaultBehind
            | Refusal::EntriesUnavailable
            | Refusal::ControlClusterUnknown
            | Refusal::TokenRefused
            | Refusal::KeyDisabled => 503,
        }
    }

    /// The error's `type`.
    pub fn error_type(self) -> &'static str {
        match self {
            Refusal::BodyTooLarge => "latet_body_too_large",
            Refusal::EncodedBody => "latet_encoded_body",
            Refusal::VaultNotReady => "latet_vault_not_ready",
            Refusal::VaultBehind => "latet_vault_behind",
            Refusal::EntriesUnavailable => "latet_entries_unavailable",
            Refusal::ControlClusterUnknown => "latet_control_cluster_unknown",
            Refusal::TokenRefused => "latet_token_refused",
            Refusal::KeyDisabled => "latet_key_disabled",
            Refusal::BadBody => "latet_bad_body",
            Refusal::ValueInVerbatimField => "latet_value_in_verbatim_field",
            Refusal::ValueInHeader => "latet_value_in_header",
            Refusal::BadHeaders => "latet_bad_headers",
            Refusal::KeyDeleted => "latet_key_deleted",
        }
    }

    fn message(self) -> &'static str {
        match self {
            Refusal::BodyTooLarge => "the request body is larger than the gateway masks (bodyLimitBytes); nothing was forwarded",
            Refusal::EncodedBody => "the request body has a content-encoding the gateway cannot read; send it uncompressed",
            Refusal::VaultNotReady => "the gateway has no vault snapshot yet; nothing was forwarded",
            Refusal::VaultBehind => "the gateway could not apply the latest vault events; nothing was forwarded",
            Refusal::EntriesUnavailable => "the control service could not give entries for new values (unreachable, timed out, or an unusable answer); nothing was forwarded",
            Refusal::ControlClusterUnknown => "the filter's controlCluster names no cluster this Envoy knows, so the control service cannot be reached; nothing was forwarded; fix the configuration",
            Refusal::TokenRefused => "the control service refused the gateway's token (unknown, revoked, or without the gateway permission); nothing was forwarded; give the gateway a valid token",
            Refusal::KeyDisabled => "the gateway's key is disabled at the control service, which gives no entries for new values; nothing was forwarded",
            Refusal::BadBody => "the request body could not be read as its provider's API; nothing was forwarded",
            Refusal::ValueInHeader => "a request header name (or, with headerFindings refuse, a header value) holds a personal value; nothing was forwarded",
            Refusal::BadHeaders => "the request headers or trailers could not be read, so they could not be examined; nothing was forwarded",
            Refusal::KeyDeleted => "the gateway's key was deleted at the control service: its vault is gone and nothing was forwarded; give the gateway a token of another key",
            Refusal::ValueInVerbatimField => "a field of the request that cannot be changed (a signed thinking block, encrypted reasoning, a media file) holds a personal value; it cannot be masked without breaking it, so nothing was forwarded",
        }
    }

    /// The JSON body.
    pub fn body(self) -> String {
        serde_json::json!({
            "error": {"type": self.error_type(), "message": self.message()}
        })
        .to_string()
    }

    /// Sends the reply.
    pub fn send(self, host: &dyn Host) {
        host.send_reply(
            self.status(),
            &[("content-type", "application/json")],
            self.body().as_bytes(),
        );
    }
}
