//! The path of the JSON field at a byte offset (`routes[1].shape`, `.` for
//! the whole document): what a configuration error names.
//!
//! serde tells where in the text an error is (line and column), not which
//! field that is. Rather than wrap the deserializer to track the path
//! (`serde_path_to_error` did: a copy of every visitor, ~43 KB of the
//! filter's `.wasm`), the text is walked again up to the error's offset.
//! serde_json reports an error in a field's value at or just after that
//! value, an unknown field just after its key, and a missing field just
//! after its object's `}`; the path here is the last key (or array
//! element) opened and not yet closed at that offset, which names the
//! value, the key, and the enclosing object respectively.

/// One open object or array.
enum Frame {
    /// An object, its last key read, and whether the next string is a key.
    Object { key: Option<String>, want_key: bool },
    /// An array and the index of its element at hand (None: none yet).
    Array { index: Option<usize> },
}

/// The byte offset of serde_json's `line` (1-based) and `column` (bytes
/// after the line's start) in `bytes`; the end of `bytes` when past it.
pub(super) fn offset_of(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(line - 2)
            .map_or(bytes.len(), |(at, _)| at + 1)
    };
    line_start.saturating_add(column).min(bytes.len())
}

/// The path of the field open at `offset` of `bytes` (JSON as far as it
/// goes; the walk stops at the offset, past it only to the end of a
/// string that crosses it).
pub(super) fn path_at(bytes: &[u8], offset: usize) -> String {
    let mut stack: Vec<Frame> = Vec::new();
    let mut at = 0;
    let end = offset.min(bytes.len());
    while at < end {
        match bytes[at] {
            // An object or array is itself an element of the one around it.
            b'{' => {
                element_starts(&mut stack);
                stack.push(Frame::Object {
                    key: None,
                    want_key: true,
                });
            }
            b'[' => {
                element_starts(&mut stack);
                stack.push(Frame::Array { index: None });
            }
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                if let Some(Frame::Object { want_key, .. }) = stack.last_mut() {
                    *want_key = false;
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { want_key, .. }) => *want_key = true,
                Some(Frame::Array { index }) => *index = Some(index.map_or(1, |i| i + 1)),
                None => {}
            },
            b'"' => {
                let closed_at = string_end(bytes, at);
                let close = closed_at.unwrap_or(bytes.len());
                if let Some(Frame::Object {
                    key,
                    want_key: want_key @ true,
                }) = stack.last_mut()
                {
                    // Only a key closed before the error is a name: an
                    // unclosed one runs on into whatever follows (a token).
                    let closed = closed_at.is_some_and(|close| close <= end);
                    let inner = &bytes[at + 1..close.saturating_sub(1).max(at + 1)];
                    *key = closed.then(|| String::from_utf8_lossy(inner).into_owned());
                    // The next string is this key's value even when the
                    // colon is missing: never a key to name (it may be
                    // the token).
                    *want_key = false;
                } else {
                    element_starts(&mut stack);
                }
                at = close;
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => element_starts(&mut stack), // a number, true, false, null
        }
        at += 1;
    }
    // An error reported at the first byte of a value (serde_json does so
    // for an object or array of the wrong type) is about that value.
    let next = bytes.get(at..).and_then(|rest| {
        rest.iter()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    });
    if at == end && next.is_some_and(|b| !matches!(b, b']' | b'}' | b',' | b':')) {
        element_starts(&mut stack);
    }
    render(&stack)
}

/// A value starts in the innermost frame: an array's first element.
fn element_starts(stack: &mut [Frame]) {
    if let Some(Frame::Array {
        index: index @ None,
    }) = stack.last_mut()
    {
        *index = Some(0);
    }
}

/// The byte after the string that opens at `start` (its closing quote
/// included), or None when it is not closed.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return Some(at + 1),
            _ => at += 1,
        }
    }
    None
}

/// Whether `key` has the shape of our configuration's field names (ASCII
/// letters, camelCase or kebab-case words, at most 40 bytes): only those
/// are named in a path. Any other key is written `<key>`: a key is what
/// the operator typed, and a token typed where a key goes (found by the
/// fuzz smoke: `"gatewayToken<token>", …`) must not reach Envoy's log; a
/// gateway token always holds digits or `_` (`lt_` and hex).
pub(super) fn is_field_name(key: &str) -> bool {
    !key.is_empty() && key.len() <= 40 && key.bytes().all(|b| b.is_ascii_alphabetic() || b == b'-')
}

/// `a.b[0].c`, or `.` when no field is open.
fn render(stack: &[Frame]) -> String {
    let mut path = String::new();
    for frame in stack {
        match frame {
            Frame::Object { key: Some(key), .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(if is_field_name(key) { key } else { "<key>" });
            }
            Frame::Array { index: Some(i) } => {
                path.push('[');
                path.push_str(&i.to_string());
                path.push(']');
            }
            _ => {}
        }
    }
    if path.is_empty() {
        path.push('.');
    }
    path
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The path at the offset of `^` in `marked` (the caret removed).
    fn path_of(marked: &str) -> String {
        let offset = marked.find('^').unwrap();
        let text = marked.replacen('^', "", 1);
        path_at(text.as_bytes(), offset)
    }

    #[test]
    fn paths_of_values_keys_and_objects() {
        let cases = [
            (r#"^{"a": 1}"#, "."),
            (r#"{"a": ^1}"#, "a"),
            (r#"{"a": 1^}"#, "a"),
            (r#"{"a": "x,y"^, "b": 2}"#, "a"),
            (r#"{"a": 1, "b"^: 2}"#, "b"),
            (r#"{"a": {"b": [1, {"c": ^true}]}}"#, "a.b[1].c"),
            (r#"{"a": {"b": [1, {"c": true}]^}}"#, "a.b"),
            (r#"{"a": {"b": [1, {"c": true}^]}}"#, "a.b[1]"),
            (r#"{"r": [{"p": 1}, {"q": 2}]^}"#, "r"),
            (r#"{"r": [{"p": 1}, {"q": 2}^]}"#, "r[1]"),
            (r#"{"r": [^7]}"#, "r[0]"),
            (r#"{"r": [ ^[1]]}"#, "r[0]"),
            (r#"{"r": [^]}"#, "r"),
            (r#"{"r": ["a", "b", ^"c"]}"#, "r[2]"),
            (r#"{"r": [[1, 2], [3, ^4]]}"#, "r[1][1]"),
            // Not shaped like our field names: not named (it may be a
            // token typed where a key goes).
            (r#"{"k\"ey": ^1}"#, "<key>"),
            (r#"{"a": {"lt_0a1b": ^1}}"#, "a.<key>"),
            (r#"{"route-x": {"pathPrefix": ^1}}"#, "route-x.pathPrefix"),
            (r#"{"a": "unclosed ^"#, "a"),
            (r#"{"a": [1, 2]}^"#, "."),
        ];
        for (marked, expected) in cases {
            assert_eq!(path_of(marked), expected, "{marked}");
        }
    }

    proptest::proptest! {
        /// Any bytes and any offset (a fuzzer's configuration): a path,
        /// never a panic.
        #[test]
        fn any_text_gives_a_path(
            text in proptest::collection::vec(proptest::sample::select(
                b"{}[]:,\"\\ ab1\n".to_vec()), 0..64),
            offset in 0usize..80,
        ) {
            proptest::prop_assert!(!path_at(&text, offset).is_empty());
        }
    }

    #[test]
    fn offsets_from_line_and_column() {
        let text = b"{\n  \"a\": 1,\n  \"b\": x\n}";
        assert_eq!(offset_of(text, 1, 0), 0);
        assert_eq!(offset_of(text, 3, 7), 19);
        assert_eq!(text[19], b'x');
        assert_eq!(offset_of(text, 9, 0), text.len());
        assert_eq!(offset_of(text, 1, 999), text.len());
    }
}
