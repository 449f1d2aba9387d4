//! The snapshot in its compact form (`Accept:
//! application/vnd.latet.snapshot.v1`) and its ETag: the same content as
//! the JSON one; an unchanged vault answers 304 to `If-None-Match`; every
//! `added` or `forgotten` event changes the tag; JSON stays the default.
//! Runs on SQLite, and on PostgreSQL with `LATET_TEST_STORE=postgres`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use latet_core::wire::{decode_snapshot, parse_snapshot, SNAPSHOT_MEDIA_TYPE};
use serde_json::json;
use std::io::Read;

const PATH: &str = "/_latet/gateway/v1/snapshot";

/// (status, ETag, Content-Type, body) of a snapshot call.
fn fetch(
    server: &Server,
    token: &str,
    accept: Option<&str>,
    if_none_match: Option<&str>,
) -> (u16, String, String, Vec<u8>) {
    let mut request = agent()
        .get(&format!("{}{PATH}", server.url))
        .set("Authorization", &format!("Bearer {token}"));
    if let Some(accept) = accept {
        request = request.set("Accept", accept);
    }
    if let Some(tag) = if_none_match {
        request = request.set("If-None-Match", tag);
    }
    let response = match request.call() {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(err) => panic!("snapshot call failed: {err}"),
    };
    let status = response.status();
    let tag = response.header("etag").unwrap_or_default().to_string();
    let content_type = response
        .header("content-type")
        .unwrap_or_default()
        .to_string();
    let mut body = Vec::new();
    response.into_reader().read_to_end(&mut body).unwrap();
    (status, tag, content_type, body)
}

#[test]
fn the_compact_snapshot_holds_the_json_content_and_its_tag_follows_the_vault() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    server.entries(
        &gateway,
        &[("email", "mario.rossi@acme.it"), ("name", "Giulia Neri")],
    );

    // JSON by default, the compact form when asked; the same content.
    let (status, json_tag, json_type, json_body) = fetch(&server, &gateway, None, None);
    assert_eq!((status, json_type.as_str()), (200, "application/json"));
    let (status, tag, content_type, compact) =
        fetch(&server, &gateway, Some(SNAPSHOT_MEDIA_TYPE), None);
    assert_eq!((status, content_type.as_str()), (200, SNAPSHOT_MEDIA_TYPE));
    let from_json = parse_snapshot(&json_body).unwrap();
    assert_eq!(decode_snapshot(&compact).unwrap(), from_json);
    assert_eq!(
        from_json.entries.len(),
        3,
        "two values and the company domain"
    );
    assert!(compact.len() < json_body.len());
    assert!(
        tag.starts_with('"') && tag.ends_with('"'),
        "a strong tag: {tag}"
    );
    assert_ne!(tag, json_tag, "one tag per form");

    // Unchanged: 304, no body; the same bytes when asked again without a tag.
    let (status, again, _, body) = fetch(&server, &gateway, Some(SNAPSHOT_MEDIA_TYPE), Some(&tag));
    assert_eq!((status, again.as_str(), body.len()), (304, tag.as_str(), 0));
    let (status, _, _, body) = fetch(&server, &gateway, None, Some(&json_tag));
    assert_eq!((status, body.len()), (304, 0));
    let (_, _, _, same) = fetch(&server, &gateway, Some(SNAPSHOT_MEDIA_TYPE), None);
    assert_eq!(same, compact, "one state, one encoding");
    // A tag of the other form, or none known, gets the whole snapshot.
    let (status, _, _, _) = fetch(
        &server,
        &gateway,
        Some(SNAPSHOT_MEDIA_TYPE),
        Some(&json_tag),
    );
    assert_eq!(status, 200);

    // An `added` event changes the tag.
    server.entries(&gateway, &[("name", "Anna Verdi")]);
    let (status, added_tag, _, body) =
        fetch(&server, &gateway, Some(SNAPSHOT_MEDIA_TYPE), Some(&tag));
    assert_eq!(status, 200);
    assert_ne!(added_tag, tag);
    assert_eq!(decode_snapshot(&body).unwrap().entries.len(), 4);

    // A `forgotten` event changes it too, and the value is gone from the bytes.
    let (status, answer) = server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": ["Giulia Neri"]}),
    );
    assert_eq!(status, 200, "{answer}");
    let (status, forgot_tag, _, body) = fetch(
        &server,
        &gateway,
        Some(SNAPSHOT_MEDIA_TYPE),
        Some(&added_tag),
    );
    assert_eq!(status, 200);
    assert_ne!(forgot_tag, added_tag);
    let after = decode_snapshot(&body).unwrap();
    assert_eq!(after.entries.len(), 3);
    assert_eq!(after.retired.len(), 1);
    assert!(!String::from_utf8_lossy(&body).contains("Giulia Neri"));
    let (status, _, _, _) = fetch(
        &server,
        &gateway,
        Some(SNAPSHOT_MEDIA_TYPE),
        Some(&forgot_tag),
    );
    assert_eq!(status, 304);

    // A forget of nothing known appends no event: the tag stays.
    let (status, _) = server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": ["nobody@nowhere.test"]}),
    );
    assert_eq!(status, 200);
    let (status, _, _, _) = fetch(
        &server,
        &gateway,
        Some(SNAPSHOT_MEDIA_TYPE),
        Some(&forgot_tag),
    );
    assert_eq!(status, 304);

    // The tag never answers for another key.
    let other = server.create_key("Other");
    let (status, _, _, _) = fetch(
        &server,
        &other,
        Some(SNAPSHOT_MEDIA_TYPE),
        Some(&forgot_tag),
    );
    assert_eq!(status, 200);
    // Authentication comes before the tag: a bad token gets 401, not 304.
    let (status, _, _, _) = fetch(
        &server,
        "lt_0000",
        Some(SNAPSHOT_MEDIA_TYPE),
        Some(&forgot_tag),
    );
    assert_eq!(status, 401);
}
