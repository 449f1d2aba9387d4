//! `latet serve --tls-cert/--tls-key` with throwaway certificates made at
//! test time (rcgen): the CLI over HTTPS with a private CA (by flag and by
//! environment), what a wrong CA, a plain-HTTP client and an HTTPS client
//! of a plain server are told, and bad certificate files named, never
//! quoted.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
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

/// A CA and a server certificate it signed, as PEM files in `dir`:
/// `<name>-ca.pem`, `<name>-cert.pem` (for `localhost` and 127.0.0.1),
/// `<name>-key.pem`.
struct TestPki {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    key_pem: String,
}

fn make_pki(dir: &Path, name: &str, server_names: &[&str]) -> TestPki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("latet test CA {name}"));
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();

    let key = KeyPair::generate().unwrap();
    let names: Vec<String> = server_names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, "latet-control");
    let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();

    let pki = TestPki {
        ca: dir.join(format!("{name}-ca.pem")),
        cert: dir.join(format!("{name}-cert.pem")),
        key: dir.join(format!("{name}-key.pem")),
        key_pem: key.serialize_pem(),
    };
    std::fs::write(&pki.ca, ca_cert.pem()).unwrap();
    std::fs::write(&pki.cert, cert.pem()).unwrap();
    std::fs::write(&pki.key, &pki.key_pem).unwrap();
    pki
}

fn tls_server(dir: &Path, pki: &TestPki) -> Server {
    let server = Server::start_with(
        dir,
        &[
            "--tls-cert",
            pki.cert.to_str().unwrap(),
            "--tls-key",
            pki.key.to_str().unwrap(),
        ],
    );
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    server
}

/// `latet server … keys list` against `url`, with these extra arguments
/// before `keys`.
fn keys_list(url: &str, dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut command = Command::new(BIN);
    clean_env(&mut command)
        .args(["server", "--server", url, "--admin-token-file"])
        .arg(dir.join("admin.token"))
        .args(extra)
        .args(["keys", "list"]);
    run(&mut command)
}

#[test]
fn the_cli_speaks_https_to_a_tls_server_with_a_private_ca() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path(), "ok", &["localhost", "127.0.0.1"]);
    let server = tls_server(dir.path(), &pki);
    let ca = pki.ca.to_str().unwrap();
    // A client that connects and says nothing holds up no one else: each
    // handshake runs on its own.
    let _idle = std::net::TcpStream::connect(server.url.trim_start_matches("https://")).unwrap();

    let mut create = server.cli();
    create.args(["--ca-cert", ca, "keys", "create", "demo", "--out"]);
    create.arg(dir.path().join("demo.token"));
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = run(&mut create);
    assert_eq!(code, 0, "{stderr}");
    // Handshakes one after another would have waited for the idle one's
    // 10-second timeout.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(8),
        "the idle connection held up the CLI's: {:?}",
        started.elapsed()
    );
    assert!(stdout.contains("key \"demo\""), "{stdout}");

    // By name as well as by address: the certificate holds both.
    let by_name = server.url.replace("127.0.0.1", "localhost");
    let (code, stdout, stderr) = keys_list(&by_name, dir.path(), &["--ca-cert", ca]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("demo ")), "{stdout}");
}

#[test]
fn the_environment_stands_in_for_the_flags_and_a_flag_wins() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path(), "env", &["localhost", "127.0.0.1"]);
    let server = tls_server(dir.path(), &pki);
    server.create_key_over_cli(&pki.ca);

    // Only the environment: server, token file and CA.
    let mut command = Command::new(BIN);
    clean_env(&mut command)
        .env("LATET_SERVER", &server.url)
        .env("LATET_ADMIN_TOKEN_FILE", dir.path().join("admin.token"))
        .env("LATET_CA_CERT", &pki.ca)
        .args(["server", "keys", "list"]);
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("demo ")), "{stdout}");

    // Flags win over each variable: the environment names a server that is
    // not there, a token file that does not exist and another CA.
    let other = make_pki(dir.path(), "other", &["localhost", "127.0.0.1"]);
    let mut command = Command::new(BIN);
    clean_env(&mut command)
        .env("LATET_SERVER", "https://127.0.0.1:9")
        .env("LATET_ADMIN_TOKEN_FILE", dir.path().join("no-such.token"))
        .env("LATET_CA_CERT", &other.ca)
        .args(["server", "--server", &server.url, "--admin-token-file"])
        .arg(dir.path().join("admin.token"))
        .arg("--ca-cert")
        .arg(&pki.ca)
        .args(["keys", "list"]);
    let (code, stdout, stderr) = run(&mut command);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("demo ")), "{stdout}");

    // And the variable is what is used when no flag is given: the wrong CA
    // from the environment is refused.
    let mut command = Command::new(BIN);
    clean_env(&mut command)
        .env("LATET_CA_CERT", &other.ca)
        .args(["server", "--server", &server.url, "--admin-token-file"])
        .arg(dir.path().join("admin.token"))
        .args(["keys", "list"]);
    let (code, _, stderr) = run(&mut command);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("certificate was refused"), "{stderr}");
}

#[test]
fn a_wrong_ca_a_wrong_name_and_the_public_roots_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path(), "srv", &["localhost"]);
    let other = make_pki(dir.path(), "other", &["localhost"]);
    let server = tls_server(dir.path(), &pki);
    let by_name = server.url.replace("127.0.0.1", "localhost");

    let cases: [(&str, Vec<&str>, &str); 3] = [
        // Another CA signed the server's certificate.
        (
            &by_name,
            vec!["--ca-cert", other.ca.to_str().unwrap()],
            "UnknownIssuer",
        ),
        // The built-in public roots do not hold the private CA.
        (&by_name, vec![], "UnknownIssuer"),
        // The right CA, but the certificate does not name 127.0.0.1.
        (
            &server.url,
            vec!["--ca-cert", pki.ca.to_str().unwrap()],
            "not valid for name",
        ),
    ];
    for (url, extra, reason) in cases {
        let (code, stdout, stderr) = keys_list(url, dir.path(), &extra);
        assert_eq!(code, 1, "{extra:?}: {stdout} {stderr}");
        assert!(
            stderr.contains("certificate was refused") && stderr.contains(reason),
            "{extra:?}: {stderr}"
        );
        assert!(stderr.contains("--ca-cert"), "names the fix: {stderr}");
        assert!(!stderr.contains(&server.admin_token()), "{stderr}");
    }
}

#[test]
fn plain_http_on_the_tls_port_is_told_to_use_https() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path(), "srv", &["localhost", "127.0.0.1"]);
    let server = tls_server(dir.path(), &pki);
    let plain_url = server.url.replace("https://", "http://");

    // The CLI pointed at http:// gets the server's reason.
    let (code, _, stderr) = keys_list(&plain_url, dir.path(), &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("HTTPS only"), "{stderr}");

    // Any plain HTTP client gets a 400 with the API's error shape, and the
    // bearer token it sent is not answered.
    let addr = plain_url.trim_start_matches("http://");
    let mut tcp = std::net::TcpStream::connect(addr).unwrap();
    write!(
        tcp,
        "GET /_latet/admin/v1/keys HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {}\r\n\r\n",
        server.admin_token()
    )
    .unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    let body: serde_json::Value =
        serde_json::from_str(answer.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["error"], "https_required", "{answer}");

    // A CA with a plain-HTTP URL is refused before anything is sent.
    let (code, _, stderr) = keys_list(
        &plain_url,
        dir.path(),
        &["--ca-cert", pki.ca.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("plain HTTP"), "{stderr}");

    // The server still serves HTTPS after all that.
    let (code, _, stderr) = keys_list(
        &server.url,
        dir.path(),
        &["--ca-cert", pki.ca.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn https_to_a_plain_server_says_it_is_not_tls() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let tls_url = server.url.replace("http://", "https://");
    let (code, _, stderr) = keys_list(&tls_url, dir.path(), &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("did not answer with TLS"), "{stderr}");
}

#[test]
fn bad_certificate_files_are_named_never_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let pki = make_pki(dir.path(), "srv", &["localhost"]);
    let other = make_pki(dir.path(), "other", &["localhost"]);
    let missing = dir.path().join("missing.pem");
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let broken = dir.path().join("broken.pem");
    // A key with its END line cut off.
    std::fs::write(
        &broken,
        pki.key_pem.replace("-----END PRIVATE KEY-----", ""),
    )
    .unwrap();

    let cases: [(&Path, &Path, &str); 6] = [
        (&missing, &pki.key, "No such file"),
        // The key file given as the certificate: no certificate in it.
        (&pki.key, &pki.key, "no certificate found"),
        (&empty, &pki.key, "no certificate found"),
        (&pki.cert, &pki.cert, "no private key found"),
        (&pki.cert, &broken, "no END line"),
        (&pki.cert, &other.key, "does not match the certificate"),
    ];
    for (cert, key, reason) in cases {
        let db = dir.path().join("never.db");
        let mut command = Command::new(BIN);
        clean_env(&mut command)
            .args(["serve", "--listen", "127.0.0.1:0", "--db"])
            .arg(&db)
            .arg("--admin-token-file")
            .arg(dir.path().join("never.token"))
            .arg("--tls-cert")
            .arg(cert)
            .arg("--tls-key")
            .arg(key);
        let (code, stdout, stderr) = run(&mut command);
        assert_eq!(code, 1, "{cert:?} {key:?}: {stdout} {stderr}");
        assert!(stderr.contains(reason), "{cert:?} {key:?}: {stderr}");
        // The file in question is named (the option and its path).
        let key_side = ["private key", "END", "match"]
            .iter()
            .any(|r| reason.contains(r));
        let named = if key_side {
            format!("--tls-key {}", key.display())
        } else {
            format!("--tls-cert {}", cert.display())
        };
        assert!(stderr.contains(&named), "{named}: {stderr}");
        // Not a line of the key's body in any message.
        for line in pki.key_pem.lines().filter(|l| !l.starts_with("-----")) {
            assert!(!stderr.contains(line), "a key line in: {stderr}");
        }
        // Nothing was created: the files are checked before the store.
        assert!(!db.exists(), "{cert:?} {key:?}: the database was created");
        assert!(!dir.path().join("never.token").exists());
    }

    // Half of the pair is refused by the parser.
    let mut command = Command::new(BIN);
    clean_env(&mut command)
        .args(["serve", "--listen", "127.0.0.1:0", "--tls-cert"])
        .arg(&pki.cert);
    let (code, _, stderr) = run(&mut command);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--tls-key"), "{stderr}");
}

trait CliKey {
    fn create_key_over_cli(&self, ca: &Path);
}

impl CliKey for Server {
    /// Creates key `demo` with the CLI over HTTPS.
    fn create_key_over_cli(&self, ca: &Path) {
        let mut create = self.cli();
        create
            .arg("--ca-cert")
            .arg(ca)
            .args(["keys", "create", "demo", "--out"])
            .arg(self.dir.join("demo.token"));
        let (code, _, stderr) = run(&mut create);
        assert_eq!(code, 0, "{stderr}");
    }
}
