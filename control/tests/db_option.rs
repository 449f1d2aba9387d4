//! `latet serve --db`: a value with a scheme the service does not know is
//! refused with a clear error (never a file of that name), and a
//! PostgreSQL URL's password never reaches an error or a log line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use std::process::{Command, Stdio};

/// `latet serve --db DB EXTRA…` run in `cwd`; returns (status, stderr).
fn serve_in(cwd: &std::path::Path, db: &str, extra: &[&str]) -> (i32, String) {
    let mut command = Command::new(BIN);
    clean_env(&mut command)
        .current_dir(cwd)
        .args(["serve", "--listen", "127.0.0.1:0", "--db", db])
        .args(extra)
        .stdin(Stdio::null());
    let output = command.output().unwrap();
    assert!(output.stdout.is_empty(), "it never listened");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn an_unknown_scheme_is_an_error_and_creates_no_file() {
    for (db, scheme) in [
        ("mysql://root:hunter2@db.internal/latet", "mysql"),
        ("sqlite://latet.db", "sqlite"),
        ("redis:6379", "redis"),
    ] {
        let cwd = tempfile::tempdir().unwrap();
        let (status, stderr) = serve_in(cwd.path(), db, &[]);
        assert_eq!(status, 1, "{db}: {stderr}");
        assert!(
            stderr.contains(&format!("--db: unknown scheme `{scheme}`")),
            "{db}: {stderr}"
        );
        assert!(!stderr.contains("hunter2"), "{stderr}");
        let left: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
        assert!(left.is_empty(), "{db}: created {left:?}");
    }
}

#[test]
fn a_postgres_url_needs_a_given_master_key_and_never_prints_its_password() {
    let cwd = tempfile::tempdir().unwrap();
    // Port 1 on loopback: nothing listens, the connection is refused.
    let db = "postgres://latet:hunter2@127.0.0.1:1/vaults";
    let (status, stderr) = serve_in(cwd.path(), db, &[]);
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("--master-key-file"), "{stderr}");
    assert!(
        !cwd.path().join(".latet").exists(),
        "no key or file generated"
    );

    let key = master_key_file(cwd.path());
    let (status, stderr) = serve_in(
        cwd.path(),
        db,
        &["--master-key-file", key.to_str().unwrap()],
    );
    assert_eq!(status, 1, "{stderr}");
    assert!(stderr.contains("vaults on 127.0.0.1"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}
