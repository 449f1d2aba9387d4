//! The texts of a request outside its body: the path, the query string,
//! headers and trailers. Deny by default: all of them are examined, but the
//! credential headers below (each with its reason), and the pseudo-headers
//! `:method` and `:scheme` (fixed vocabularies Envoy validates). The path
//! and query are split into their components, percent-decoded (a `+` in the
//! query is a space), examined, and written back percent-encoded where a
//! value was replaced.

use std::ops::Range;

/// Headers kept as sent, with the form each must have to be kept: a value
/// of another form is examined like any header.
const KEPT_HEADERS: &[(&str, &str)] = &[
    (
        "authorization",
        "the provider's credential (or a request signature): it must arrive as sent, and the secret detector would take it for a leaked key",
    ),
    (
        "proxy-authorization",
        "a credential for a proxy on the way: it must arrive as sent",
    ),
    (
        "x-api-key",
        "the provider's API key (Anthropic and others): it must arrive as sent",
    ),
    (
        "api-key",
        "the provider's API key (Azure OpenAI): it must arrive as sent",
    ),
    (
        "x-goog-api-key",
        "the provider's API key (Gemini): it must arrive as sent",
    ),
    (
        "x-amz-security-token",
        "an AWS session token, signed into the request: it must arrive as sent",
    ),
    (":method", "the request method: a token Envoy validates"),
    (":scheme", "http or https: Envoy validates it"),
];

/// Why header `name` is kept as sent, when it is and `value` has the form
/// its kind promises (printable ASCII without `@` or `%`, at most 8 KiB: no
/// e-mail address fits, and a credential has no other form); `None` when
/// it must be examined. `name` is matched ASCII-case-insensitively.
pub fn header_kept(name: &str, value: &str) -> Option<&'static str> {
    let (_, reason) = KEPT_HEADERS
        .iter()
        .find(|(kept, _)| kept.eq_ignore_ascii_case(name))?;
    // No `%` either: an escape could spell an `@` (`%40`).
    let credential_form = value.len() <= 8 << 10
        && value
            .bytes()
            .all(|b| (0x20..0x7f).contains(&b) && b != b'@' && b != b'%');
    credential_form.then_some(*reason)
}

/// One examined component of a request target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetPiece {
    /// Where it is in the target (as sent, still encoded).
    pub range: Range<usize>,
    /// Its decoded text (what is examined). Not `Debug`-safe for logs: it
    /// is request text.
    pub decoded: String,
    /// A query component (`+` is a space there) or a path segment.
    pub in_query: bool,
}

/// The components of `target` (`/path?query`) to examine: every non-empty
/// path segment, and every query parameter's name and value, each
/// percent-decoded (an escape outside UTF-8 stays as written), and a
/// fragment.
pub fn target_pieces(target: &str) -> Vec<TargetPiece> {
    let (path_end, query_start) = match target.find('?') {
        Some(q) => (q, q + 1),
        None => (target.len(), target.len()),
    };
    let query_end = target[query_start..]
        .find('#')
        .map_or(target.len(), |h| query_start + h);
    let mut pieces = Vec::new();
    let mut push = |range: Range<usize>, in_query: bool| {
        if range.is_empty() {
            return;
        }
        let raw = &target[range.clone()];
        let decoded = percent_decode(raw, in_query).unwrap_or_else(|| raw.to_string());
        pieces.push(TargetPiece {
            range,
            decoded,
            in_query,
        });
    };
    let mut start = 0;
    for (i, b) in target[..path_end].bytes().enumerate() {
        if b == b'/' {
            push(start..i, false);
            start = i + 1;
        }
    }
    push(start..path_end, false);
    if query_start < query_end {
        let mut part_start = query_start;
        let query = &target[query_start..query_end];
        for (i, b) in query.bytes().chain(std::iter::once(b'&')).enumerate() {
            if b != b'&' {
                continue;
            }
            let part = part_start..query_start + i;
            match target[part.clone()].find('=') {
                Some(eq) => {
                    push(part.start..part.start + eq, true);
                    push(part.start + eq + 1..part.end, true);
                }
                None => push(part, true),
            }
            part_start = query_start + i + 1;
        }
    }
    // A fragment (Envoy normally refuses one in `:path`) is examined too;
    // last, so the pieces stay in target order.
    if query_end < target.len() {
        push(query_end + 1..target.len(), false);
    }
    pieces
}

/// `target` with each piece that has a masked text written in its place,
/// percent-encoded (everything but unreserved characters); `None` when no
/// piece changed.
pub fn rewrite_target(
    target: &str,
    pieces: &[TargetPiece],
    masked: &[Option<String>],
) -> Option<String> {
    let mut out = String::with_capacity(target.len() + 16);
    let mut copied = 0;
    for (piece, masked) in pieces.iter().zip(masked) {
        let Some(text) = masked else { continue };
        out.push_str(&target[copied..piece.range.start]);
        percent_encode_into(text, &mut out);
        copied = piece.range.end;
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&target[copied..]);
    Some(out)
}

/// `raw` decoded; escapes outside UTF-8 stay as written, `None` when
/// nothing decodes.
fn percent_decode(raw: &str, plus_is_space: bool) -> Option<String> {
    super::views::percent_decode_mapped(raw, plus_is_space).map(|(text, _)| text)
}

fn percent_encode_into(text: &str, out: &mut String) {
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b & 15)]));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_kept_only_in_credential_form() {
        assert!(header_kept("Authorization", "Bearer sk-proj-abc123").is_some());
        assert!(header_kept("x-api-key", "sk-ant-api03-xyz").is_some());
        assert!(header_kept("authorization", "Bearer mario.rossi@example.org").is_none());
        assert!(header_kept("authorization", "Bearer caf\u{e9}").is_none());
        assert!(header_kept("x-user-email", "anything").is_none());
        assert!(header_kept("user-agent", "OpenAI/Python 1.0").is_none());
        for (name, reason) in KEPT_HEADERS {
            assert!(reason.split_whitespace().count() >= 5, "{name}");
        }
    }

    #[test]
    fn target_pieces_are_decoded_and_rewritten_in_place() {
        let target = "/v1/files/mario%2Erossi%40example.org/content?email=a%40b.it&q=hello+world&flag&=x#frag";
        let pieces = target_pieces(target);
        let decoded: Vec<&str> = pieces.iter().map(|p| p.decoded.as_str()).collect();
        assert_eq!(
            decoded,
            [
                "v1",
                "files",
                "mario.rossi@example.org",
                "content",
                "email",
                "a@b.it",
                "q",
                "hello world",
                "flag",
                "x",
                "frag"
            ]
        );
        let mut masked = vec![None; pieces.len()];
        masked[2] = Some("laura bianchi@x.it".to_string());
        masked[5] = Some("c@d.it".to_string());
        assert_eq!(
            rewrite_target(target, &pieces, &masked).unwrap(),
            "/v1/files/laura%20bianchi%40x.it/content?email=c%40d.it&q=hello+world&flag&=x#frag"
        );
        assert_eq!(
            rewrite_target(target, &pieces, &vec![None; pieces.len()]),
            None
        );
        // Escapes that are not UTF-8 stay as written, the rest decode; a
        // stray % stays.
        let pieces = target_pieces("/a%ff%40b/b%/c%4");
        let decoded: Vec<&str> = pieces.iter().map(|p| p.decoded.as_str()).collect();
        assert_eq!(decoded, ["a%ff@b", "b%", "c%4"]);
    }
}
