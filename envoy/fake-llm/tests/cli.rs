//! The binary: `--listen 127.0.0.1:0` binds, prints its address, serves.

// Tests may unwrap and panic: a failure is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

#[test]
fn binary_prints_its_address_and_serves() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_latet-fake-llm"))
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap()
        .to_owned();

    let mut stream = TcpStream::connect(&addr).unwrap();
    stream
        .write_all(b"GET /_fake/health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("ok\n"));
}

#[test]
fn bad_arguments_are_refused() {
    for args in [
        &["--bogus"][..],
        &["--chunk-delay-ms", "soon"],
        &["--listen"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_latet-fake-llm"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}
