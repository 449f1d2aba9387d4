//! Restoring surrogates in answers, whole and streamed (SSE).
