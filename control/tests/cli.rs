//! The admin CLI against a real server: keys, tokens, log, and `keys forget`
//! (file mode, --yes, refusals, batching).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::process::{Command, Output, Stdio};

fn run(command: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = command.stdin(Stdio::null()).output().unwrap();
    (
        status.code().unwrap_or(-1),
        String::from_utf8(stdout).unwrap(),
        String::from_utf8(stderr).unwrap(),
    )
}

fn values_file(dir: &std::path::Path, values: &[String]) -> std::path::PathBuf {
    erasure_file(dir, &(values.join("\n") + "\n"))
}

/// `erasure.txt` in `dir`, holding `text` byte for byte.
fn erasure_file(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("erasure.txt");
    std::fs::write(&path, text).unwrap();
    path
}

/// A server in `dir` with a key `Shop` whose vault holds `entries` (kind,
/// value); the key's token.
fn shop_holding(dir: &std::path::Path, entries: &[(&str, &str)]) -> (Server, String) {
    let server = Server::start(dir);
    let token = server.create_key("Shop");
    server.entries(&token, entries);
    (server, token)
}

#[test]
fn keys_tokens_and_log_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let out = dir.path().join("shop.token");
    let (code, stdout, _) = run(server
        .cli()
        .args(["keys", "create", "Shop", "--out"])
        .arg(&out));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("gateway, analyze, mask, restore"),
        "{stdout}"
    );
    let token = std::fs::read_to_string(&out).unwrap().trim().to_string();
    assert!(!stdout.contains(&token), "the token is never printed");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let admin = std::fs::metadata(dir.path().join("admin.token")).unwrap();
        assert_eq!(admin.permissions().mode() & 0o777, 0o600);
    }
    server.entries(&token, &[("name", "Mario Rossi")]);

    let eraser_file = dir.path().join("erasure.token");
    let (code, stdout, _) = run(server
        .cli()
        .args(["keys", "add-token", "Shop", "erasure", "--forget", "--out"])
        .arg(&eraser_file));
    assert_eq!(code, 0, "{stdout}");
    let eraser = std::fs::read_to_string(&eraser_file)
        .unwrap()
        .trim()
        .to_string();
    let (status, _) = server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": ["Mario Rossi"]}),
    );
    assert_eq!(status, 200);

    let (code, _, stderr) = run(server
        .cli()
        .args(["keys", "add-token", "Shop", "none", "--out"])
        .arg(dir.path().join("x")));
    assert_eq!(code, 2);
    assert!(stderr.contains("at least one permission"));

    assert_eq!(run(server.cli().args(["keys", "disable", "Shop"])).0, 0);
    let (code, stdout, _) = run(server.cli().args(["keys", "list"]));
    assert_eq!(code, 0);
    let line = stdout.lines().find(|l| l.starts_with("Shop")).unwrap();
    assert!(line.contains("disabled"), "{line}");
    assert_eq!(
        line.split_whitespace().collect::<Vec<_>>()[2..5],
        ["0", "1", "1000000"]
    );
    assert_eq!(run(server.cli().args(["keys", "enable", "Shop"])).0, 0);

    let (code, stdout, _) = run(server.cli().args(["log", "--action", "apps.forgotten"]));
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.contains(
            "apps.forgotten key=\"Shop\" token=\"erasure\" requested=1 forgotten=1 unknown=0"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("Mario"));
    let (_, stdout, _) = run(server.cli().arg("log"));
    for action in [
        "key.created",
        "token.added",
        "key.disabled",
        "key.enabled",
        "apps.forgotten",
    ] {
        assert!(stdout.contains(action), "{action} missing from {stdout}");
    }

    let (code, _, stderr) = run(server.cli().args(["keys", "enable", "Nope"]));
    assert_eq!(code, 1);
    assert!(stderr.contains("not found"), "{stderr}");
}

#[test]
fn keys_forget_from_a_file_with_yes() {
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = shop_holding(
        dir.path(),
        &[
            ("email", "mario.rossi@acme.it"),
            ("phone", "+39 347 123 4567"),
        ],
    );
    let file = values_file(
        dir.path(),
        &[
            "mario.rossi@acme.it".into(),
            "Mario Rossi".into(),
            "mario.rossi@acme.it".into(),
        ],
    );
    let (code, stdout, stderr) = run(server
        .cli()
        .args(["keys", "forget", "Shop", "--yes", "--file"])
        .arg(&file));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Read 3 values (2 distinct)."), "{stdout}");
    assert!(stdout.contains("Forgotten: 1"), "{stdout}");
    assert!(stdout.contains("Unknown: 1"), "{stdout}");
    assert!(
        stdout.contains(&format!("Delete {}", file.display())),
        "{stdout}"
    );
    assert!(
        !stdout.contains("mario") && !stderr.contains("mario"),
        "no value printed"
    );
    let snapshot = server.snapshot(&token);
    assert!(surrogate_of(&snapshot, "mario.rossi@acme.it").is_none());
    assert!(surrogate_of(&snapshot, "+39 347 123 4567").is_some());
    let log = server.admin_log("key.forgotten");
    assert_eq!(log.len(), 1);
    assert_eq!(
        (
            log[0]["requested"].as_u64(),
            log[0]["forgotten"].as_u64(),
            log[0]["unknown"].as_u64()
        ),
        (Some(3), Some(1), Some(1))
    );

    // Rerunning is safe: the forgotten value now counts as unknown.
    let (code, stdout, _) = run(server
        .cli()
        .args(["keys", "forget", "Shop", "--yes", "--file"])
        .arg(&file));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Forgotten: 0") && stdout.contains("Unknown: 2"),
        "{stdout}"
    );
}

#[test]
fn keys_forget_refusals_send_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = shop_holding(dir.path(), &[("email", "mario.rossi@acme.it")]);
    let file = values_file(dir.path(), &["mario.rossi@acme.it".into()]);
    let before = server.snapshot(&token);

    // (what, extra args, extra env, message fragment)
    type Case<'a> = (&'a str, Vec<String>, Option<(&'a str, &'a str)>, &'a str);
    let cases: [Case; 5] = [
        (
            "no terminal, no --yes",
            vec!["--file".into(), file.display().to_string()],
            None,
            "--yes",
        ),
        (
            "no terminal, no --file",
            vec!["--yes".into()],
            None,
            "--file",
        ),
        (
            "inside an agent",
            vec!["--yes".into(), "--file".into(), file.display().to_string()],
            Some(("CLAUDECODE", "1")),
            "AI agent",
        ),
        (
            "inside another agent",
            vec!["--yes".into(), "--file".into(), file.display().to_string()],
            Some(("AIDER_MODEL", "x")),
            "AI agent",
        ),
        (
            "a value on argv",
            vec!["mario.rossi@acme.it".into(), "--yes".into()],
            None,
            "never takes values from the command line",
        ),
    ];
    for (what, args, env, fragment) in cases {
        let mut command = server.cli();
        command.args(["keys", "forget", "Shop"]).args(&args);
        if let Some((name, value)) = env {
            command.env(name, value);
        }
        let (code, stdout, stderr) = run(&mut command);
        assert_eq!(code, 2, "{what}: {stdout}{stderr}");
        assert!(stderr.contains(fragment), "{what}: {stderr}");
        assert!(
            !stderr.contains("mario") && !stdout.contains("mario"),
            "{what}: a value was echoed"
        );
    }
    assert_eq!(server.snapshot(&token), before);
    assert!(server.admin_log("key.forgotten").is_empty());
}

#[test]
fn keys_forget_sends_batches_of_at_most_1000() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let token = server.create_key("Shop");
    let values: Vec<String> = (0..2500).map(|i| format!("Persona Lote{i}")).collect();
    for chunk in values[..1200].chunks(1000) {
        let pairs: Vec<(&str, &str)> = chunk.iter().map(|v| ("name", v.as_str())).collect();
        server.entries(&token, &pairs);
    }
    let file = values_file(dir.path(), &values);
    let (code, stdout, stderr) = run(server
        .cli()
        .args(["keys", "forget", "Shop", "--yes", "--file"])
        .arg(&file));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Read 2500 values"), "{stdout}");
    assert!(stdout.contains("Batch 3 of 3"), "{stdout}");
    assert!(
        stdout.contains("Forgotten: 1200") && stdout.contains("Unknown: 1300"),
        "{stdout}"
    );
    let log = server.admin_log("key.forgotten");
    let requested: Vec<u64> = log
        .iter()
        .map(|r| r["requested"].as_u64().unwrap())
        .collect();
    assert_eq!(requested, vec![1000, 1000, 500]);
    assert_eq!(server.snapshot(&token)["entries"], json!([]));
}

#[test]
fn bad_arguments_print_a_short_usage_naming_the_mistake() {
    let cases: [(&[&str], &str); 4] = [
        (&[], "requires a subcommand"),
        (&["frobnicate"], "frobnicate"),
        (&["serve", "--listen", "nowhere"], "--listen"),
        (&["server", "keys", "list"], "--server"),
    ];
    for (args, fragment) in cases {
        let mut command = Command::new(BIN);
        let (code, _, stderr) = run(clean_env(&mut command).args(args));
        assert_eq!(code, 2, "{args:?}");
        assert!(stderr.contains(fragment), "{args:?}: {stderr}");
        assert!(stderr.contains("Usage"), "{args:?}: {stderr}");
        assert!(
            stderr.lines().count() < 12,
            "{args:?}: usage is short: {stderr}"
        );
    }
}

/// `cmd` run in a real terminal (a pseudo-terminal from util-linux's
/// `script`), with `answers` typed at it; its exit status and everything
/// it printed.
fn run_in_terminal(cmd: &Command, answers: &str) -> (i32, String) {
    use std::io::Write;
    let mut line = String::from("env");
    for (name, value) in cmd.get_envs() {
        let name = name.to_str().unwrap();
        match value {
            Some(value) => line.push_str(&format!(" {name}='{}'", value.to_str().unwrap())),
            None => line.push_str(&format!(" -u {name}")),
        }
    }
    line.push(' ');
    line.push_str(&format!("'{}'", cmd.get_program().to_str().unwrap()));
    for arg in cmd.get_args() {
        line.push_str(&format!(" '{}'", arg.to_str().unwrap()));
    }
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answers.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn keys_forget_drops_a_byte_order_mark_and_names_padded_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = shop_holding(
        dir.path(),
        &[
            ("email", "mario.rossi@acme.it"),
            ("email", "anna.bianchi@acme.it"),
        ],
    );
    // As a spreadsheet saves it: a BOM, CRLF, a trailing space on line 3.
    let file = erasure_file(
        dir.path(),
        "\u{feff}mario.rossi@acme.it\r\n\r\nanna.bianchi@acme.it \r\n",
    );
    let forget = |extra: &[&str]| {
        let mut command = server.cli();
        command
            .args(["keys", "forget", "Shop", "--yes", "--file"])
            .arg(&file)
            .args(extra);
        run(&mut command)
    };

    // --yes alone: refused, the line named, nothing sent.
    let (code, stdout, stderr) = forget(&[]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("byte-order mark"), "{stderr}");
    assert!(stderr.contains("(lines 3)"), "{stderr}");
    assert!(
        stderr.contains("--trim") && stderr.contains("--exact"),
        "{stderr}"
    );
    assert!(server.admin_log("key.forgotten").is_empty());

    // --exact: the padded value is sent as written and is unknown.
    let (code, stdout, stderr) = forget(&["--exact"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("Forgotten: 1") && stdout.contains("Unknown: 1"),
        "{stdout}"
    );
    let snapshot = server.snapshot(&token);
    assert!(surrogate_of(&snapshot, "mario.rossi@acme.it").is_none());
    assert!(surrogate_of(&snapshot, "anna.bianchi@acme.it").is_some());

    // --trim: now it is found.
    let (code, stdout, stderr) = forget(&["--trim"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("Trimmed 1 values."), "{stderr}");
    assert!(stdout.contains("Forgotten: 1"), "{stdout}");
    assert!(surrogate_of(&server.snapshot(&token), "anna.bianchi@acme.it").is_none());
    for out in [&stdout, &stderr] {
        assert!(!out.contains("acme"), "a value was echoed: {out}");
    }
}

#[test]
fn keys_forget_in_a_terminal_asks_about_padded_values() {
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = shop_holding(
        dir.path(),
        &[
            ("email", "mario.rossi@acme.it"),
            ("phone", "+39 347 123 4567"),
        ],
    );
    let file = erasure_file(
        dir.path(),
        "\u{feff} mario.rossi@acme.it\n+39 347 123 4567\u{a0}\n",
    );
    let mut command = server.cli();
    command
        .args(["keys", "forget", "Shop", "--file"])
        .arg(&file);

    // "x" to the whitespace question: nothing is sent.
    let (code, out) = run_in_terminal(&command, "x\n");
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("lines 1, 2") && out.contains("Nothing sent."),
        "{out}"
    );
    assert!(surrogate_of(&server.snapshot(&token), "mario.rossi@acme.it").is_some());

    // "y" (trim), then "y" (forget): both values found.
    let (code, out) = run_in_terminal(&command, "y\ny\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Dropped a byte-order mark"), "{out}");
    assert!(out.contains("Trimmed 2 values."), "{out}");
    assert!(out.contains("Forgotten: 2"), "{out}");
    assert!(
        !out.contains("acme") && !out.contains("347"),
        "a value was echoed: {out}"
    );
    let snapshot = server.snapshot(&token);
    assert!(surrogate_of(&snapshot, "mario.rossi@acme.it").is_none());
    assert!(surrogate_of(&snapshot, "+39 347 123 4567").is_none());
}

#[test]
fn keys_forget_checks_the_key_and_the_token_before_reading_values() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    server.create_key("Shop");
    // The file does not exist: a check that came after reading would name it.
    let missing = dir.path().join("no-such-file.txt");
    let (code, stdout, stderr) = run(server
        .cli()
        .args(["keys", "forget", "Shpo", "--yes", "--file"])
        .arg(&missing));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("key \"Shpo\" not found"), "{stderr}");
    assert!(!stderr.contains("no-such-file"), "{stderr}");

    let bad_token = dir.path().join("bad.token");
    std::fs::write(&bad_token, "not-the-admin-token\n").unwrap();
    let (code, _, stderr) = run(clean_env(&mut Command::new(BIN))
        .args(["server", "--server", &server.url, "--admin-token-file"])
        .arg(&bad_token)
        .args(["keys", "forget", "Shop", "--yes", "--file"])
        .arg(&missing));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("refused the admin token"), "{stderr}");
    assert!(!stderr.contains("no-such-file"), "{stderr}");
}

#[test]
fn keys_tokens_revoke_token_and_delete_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let (server, gateway) = shop_holding(
        dir.path(),
        &[("email", "mario.rossi@acme.it"), ("name", "Anna Verdi")],
    );
    let eraser_file = dir.path().join("erasure.token");
    let (code, _, stderr) = run(server
        .cli()
        .args(["keys", "add-token", "Shop", "erasure", "--forget", "--out"])
        .arg(&eraser_file));
    assert_eq!(code, 0, "{stderr}");
    let eraser = std::fs::read_to_string(&eraser_file)
        .unwrap()
        .trim()
        .to_string();

    let (code, stdout, _) = run(server.cli().args(["keys", "tokens", "Shop"]));
    assert_eq!(code, 0);
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    assert_eq!(
        (rows[0][0], rows[0][2]),
        ("default", "gateway,analyze,mask,restore")
    );
    assert_eq!((rows[1][0], rows[1][2]), ("erasure", "forget"));
    assert!(
        !stdout.contains(&gateway) && !stdout.contains(&eraser),
        "a token was printed"
    );

    let (code, stdout, _) = run(server
        .cli()
        .args(["keys", "revoke-token", "Shop", "erasure"]));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Token \"erasure\" of key \"Shop\" revoked"),
        "{stdout}"
    );
    let (status, _) = server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": ["Anna Verdi"]}),
    );
    assert_eq!(status, 401);
    let (code, _, stderr) = run(server
        .cli()
        .args(["keys", "revoke-token", "Shop", "erasure"]));
    assert_eq!(code, 1);
    assert!(stderr.contains("token not found"), "{stderr}");

    // Without a terminal, delete needs --yes; a missing key is named first.
    let (code, _, stderr) = run(server.cli().args(["keys", "delete", "Shop"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
    assert_eq!(
        server.get("/_latet/gateway/v1/snapshot", Some(&gateway)).0,
        200
    );
    let (code, _, stderr) = run(server.cli().args(["keys", "delete", "Shpo", "--yes"]));
    assert_eq!(code, 1);
    assert!(stderr.contains("key \"Shpo\" not found"), "{stderr}");

    let (code, stdout, stderr) = run(server.cli().args(["keys", "delete", "Shop", "--yes"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("Key \"Shop\" deleted: 3 values, 0 retired surrogates, 1 tokens"),
        "{stdout}"
    );
    let (status, body) = server.get("/_latet/gateway/v1/snapshot", Some(&gateway));
    assert_eq!((status, body["error"].as_str()), (410, Some("key_deleted")));
    let (_, stdout, _) = run(server.cli().args(["log", "--action", "key.deleted"]));
    assert!(
        stdout.contains("key.deleted key=\"Shop\" forgotten=3 retired=0 tokens=1"),
        "{stdout}"
    );
    let (_, stdout, _) = run(server.cli().arg("log"));
    assert!(
        stdout.contains("token.revoked key=\"Shop\" token=\"erasure\""),
        "{stdout}"
    );
    assert!(
        !stdout.contains("acme") && !stdout.contains("Anna"),
        "{stdout}"
    );
}

#[test]
fn keys_delete_in_a_terminal_asks_for_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let (server, gateway) = shop_holding(dir.path(), &[("name", "Mario Rossi")]);
    let mut command = server.cli();
    command.args(["keys", "delete", "Shop"]);
    let (code, out) = run_in_terminal(&command, "y\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Nothing deleted."), "{out}");
    assert_eq!(
        server.get("/_latet/gateway/v1/snapshot", Some(&gateway)).0,
        200
    );
    let (code, out) = run_in_terminal(&command, "Shop\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Key \"Shop\" deleted: 1 values"), "{out}");
    assert_eq!(
        server.get("/_latet/gateway/v1/snapshot", Some(&gateway)).0,
        410
    );
}

#[test]
fn out_refuses_an_existing_file_unless_force() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let out = dir.path().join("shop.token");
    std::fs::write(&out, "keep me\n").unwrap();
    let (code, stdout, stderr) = run(server
        .cli()
        .args(["keys", "create", "Shop", "--out"])
        .arg(&out));
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("exists") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
    // Refused before the server was asked: no key was created.
    let (_, stdout, _) = run(server.cli().args(["keys", "list"]));
    assert!(!stdout.contains("Shop"), "{stdout}");

    let (code, _, stderr) = run(server
        .cli()
        .args(["keys", "create", "Shop", "--force", "--out"])
        .arg(&out));
    assert_eq!(code, 0, "{stderr}");
    let token = std::fs::read_to_string(&out).unwrap().trim().to_string();
    assert!(token.starts_with("lt_"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    // add-token alike: refused over the key's first token, no token added.
    let (code, _, stderr) = run(server
        .cli()
        .args(["keys", "add-token", "Shop", "erasure", "--forget", "--out"])
        .arg(&out));
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap().trim(), token);
    let (_, stdout, _) = run(server.cli().args(["keys", "tokens", "Shop"]));
    assert!(!stdout.contains("erasure"), "{stdout}");
    // A link is refused too (it could point at any file).
    #[cfg(unix)]
    {
        let link = dir.path().join("link.token");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        let (code, _, _) = run(server
            .cli()
            .args(["keys", "add-token", "Shop", "erasure", "--forget", "--out"])
            .arg(&link));
        assert_eq!(code, 2);
        assert!(!dir.path().join("elsewhere").exists());
    }
}
