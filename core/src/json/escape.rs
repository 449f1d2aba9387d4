//! JSON string escapes: decoding a raw string body (the bytes between the
//! quotes) and minimal re-encoding.

use super::error::JsonError;
use super::scan::find_special;
use std::borrow::Cow;

/// Decodes the raw bytes of a JSON string (between the quotes, as sent).
/// Borrows when there is no escape. Refuses non-UTF-8 bytes, raw control
/// characters and unescaped quotes, escapes JSON does not define and
/// unpaired `\uD800`–`\uDFFF` escapes; offsets in errors are relative to
/// `raw`.
pub fn decode(raw: &[u8]) -> Result<Cow<'_, str>, JsonError> {
    let text = std::str::from_utf8(raw).map_err(|e| JsonError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    let Some(first_escape) = check_plain(raw, 0)? else {
        return Ok(Cow::Borrowed(text));
    };
    let mut out = String::with_capacity(raw.len());
    out.push_str(&text[..first_escape]);
    let mut pos = first_escape;
    while pos < raw.len() {
        // Copy the run of plain bytes up to the next backslash in one go.
        let run_end = check_plain(raw, pos)?.unwrap_or(raw.len());
        if run_end > pos {
            out.push_str(&text[pos..run_end]);
            pos = run_end;
            continue;
        }
        pos = decode_escape(raw, pos, &mut out)?;
    }
    Ok(Cow::Owned(out))
}

/// Checks plain string bytes from `from` on (no control characters, no
/// bare quote) and returns the offset of the first backslash, if any.
fn check_plain(raw: &[u8], from: usize) -> Result<Option<usize>, JsonError> {
    let i = find_special(raw, from);
    match raw.get(i) {
        None => Ok(None),
        Some(b'\\') => Ok(Some(i)),
        Some(b'"') => Err(JsonError::Syntax {
            offset: i,
            what: "unescaped quote in string",
        }),
        Some(_) => Err(JsonError::Syntax {
            offset: i,
            what: "control character in string",
        }),
    }
}

/// Decodes the escape starting at `raw[pos] == b'\\'`, pushes its char and
/// returns the offset after it.
fn decode_escape(raw: &[u8], pos: usize, out: &mut String) -> Result<usize, JsonError> {
    let bad = JsonError::BadEscape { offset: pos };
    let Some(&code) = raw.get(pos + 1) else {
        return Err(bad);
    };
    let simple = match code {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let high = hex4(raw, pos + 2).ok_or(bad)?;
            return match high {
                0xD800..=0xDBFF => {
                    // Must be followed by a low surrogate escape.
                    let low = if raw.get(pos + 6) == Some(&b'\\') && raw.get(pos + 7) == Some(&b'u')
                    {
                        hex4(raw, pos + 8)
                    } else {
                        None
                    };
                    match low {
                        Some(low @ 0xDC00..=0xDFFF) => {
                            let cp = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                            let c = char::from_u32(cp)
                                .ok_or(JsonError::LoneSurrogate { offset: pos })?;
                            out.push(c);
                            Ok(pos + 12)
                        }
                        _ => Err(JsonError::LoneSurrogate { offset: pos }),
                    }
                }
                0xDC00..=0xDFFF => Err(JsonError::LoneSurrogate { offset: pos }),
                cp => {
                    let c = char::from_u32(cp).ok_or(bad)?;
                    out.push(c);
                    Ok(pos + 6)
                }
            };
        }
        _ => return Err(bad),
    };
    out.push(simple);
    Ok(pos + 2)
}

/// Four hex digits at `raw[at..at + 4]`.
fn hex4(raw: &[u8], at: usize) -> Option<u32> {
    let digits = raw.get(at..at + 4)?;
    let mut value = 0u32;
    for &d in digits {
        let nibble = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        value = (value << 4) | u32::from(nibble);
    }
    Some(value)
}

/// Appends `s` as the body of a JSON string (no surrounding quotes) with
/// minimal escaping: quote, backslash and control characters. Non-ASCII is
/// kept as UTF-8.
pub fn encode_into(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len());
    let mut run_start = 0;
    loop {
        // Plain bytes are skipped eight at a time and copied in one go.
        let i = find_special(bytes, run_start);
        out.extend_from_slice(&bytes[run_start..i]);
        let Some(&b) = bytes.get(i) else {
            return;
        };
        run_start = i + 1;
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            _ => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
                continue;
            }
        };
        out.extend_from_slice(short);
    }
}

/// Whether `s` holds a byte [`encode_into`] escapes (a quote, a backslash
/// or a control character); when it does not, its bytes are already a valid
/// JSON string body.
pub fn needs_escape(s: &str) -> bool {
    find_special(s.as_bytes(), 0) < s.len()
}

/// `s` as the body of a JSON string (see [`encode_into`]).
pub fn encode(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    encode_into(s, &mut out);
    // encode_into only adds ASCII escapes around whole UTF-8 runs.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn decode_table() {
        let cases: &[(&[u8], &str)] = &[
            (b"plain", "plain"),
            (br#"a\"b"#, "a\"b"),
            (br"back\\slash\/", "back\\slash/"),
            (br"\b\f\n\r\t", "\u{8}\u{c}\n\r\t"),
            (br"Jos\u00e9", "José"),
            (br"Jos\u00E9", "José"),
            (br"\ud83d\ude00!", "😀!"),
            ("José 😀".as_bytes(), "José 😀"),
            (br"\u0000", "\0"),
            (b"", ""),
        ];
        for (raw, expected) in cases {
            assert_eq!(decode(raw).unwrap(), *expected, "{raw:?}");
        }
        assert!(matches!(decode(b"plain").unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn decode_refuses_bad_input_with_positions() {
        let cases: &[(&[u8], JsonError)] = &[
            (br"ab\x", JsonError::BadEscape { offset: 2 }),
            (br"ab\u12", JsonError::BadEscape { offset: 2 }),
            (br"\u12g4", JsonError::BadEscape { offset: 0 }),
            (br"x\", JsonError::BadEscape { offset: 1 }),
            (br"x\ud83d", JsonError::LoneSurrogate { offset: 1 }),
            (br"x\ud83dz", JsonError::LoneSurrogate { offset: 1 }),
            (br"x\ud83d\u0041", JsonError::LoneSurrogate { offset: 1 }),
            (br"x\ude00", JsonError::LoneSurrogate { offset: 1 }),
            (
                b"a\"b",
                JsonError::Syntax {
                    offset: 1,
                    what: "unescaped quote in string",
                },
            ),
            (
                b"a\\n\nb",
                JsonError::Syntax {
                    offset: 3,
                    what: "control character in string",
                },
            ),
            (b"ab\xff", JsonError::NotUtf8 { offset: 2 }),
        ];
        for (raw, expected) in cases {
            assert_eq!(decode(raw).unwrap_err(), *expected, "{raw:?}");
        }
    }

    #[test]
    fn encode_is_minimal() {
        let cases = [
            ("plain", "plain"),
            ("a\"b\\c", r#"a\"b\\c"#),
            ("l1\nl2\r\t", r"l1\nl2\r\t"),
            ("\u{8}\u{c}\u{1}\u{1f}", r"\b\f\u0001\u001f"),
            ("José 😀 /", "José 😀 /"),
        ];
        for (text, expected) in cases {
            assert_eq!(encode(text), expected, "{text:?}");
            assert_eq!(decode(expected.as_bytes()).unwrap(), text);
        }
    }

    proptest::proptest! {
        #[test]
        fn encode_then_decode_round_trips(s in "\\PC*|[\\x00-\\x7f]*") {
            let encoded = encode(&s);
            proptest::prop_assert_eq!(decode(encoded.as_bytes()).unwrap(), s.as_str());
            // And serde_json agrees on the encoding.
            let quoted = format!("\"{encoded}\"");
            proptest::prop_assert_eq!(serde_json::from_str::<String>(&quoted).unwrap(), s);
        }
    }
}
