//! Request masking by API shape, resumable when new values need entries.
