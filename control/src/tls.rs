//! TLS for the control service (rustls on ring): the server's certificate
//! and key (`latet serve --tls-cert/--tls-key`), the CLI's private CA
//! (`--ca-cert`), and a listener that hands axum only connections whose
//! handshake completed. Errors name the option, the file and the reason,
//! never a byte of the file.

use crate::error::{ControlError, Result};
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// How long a client may take to finish its handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Handshakes that may run at once (each holds a socket and a task).
const HANDSHAKES_IN_FLIGHT: usize = 256;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// What a PEM read error means, without the line it quotes.
fn pem_reason(err: &pem::Error) -> String {
    match err {
        pem::Error::Io(err) => format!("cannot read it: {err}"),
        pem::Error::MissingSectionEnd { .. } => "a PEM section has no END line".into(),
        pem::Error::IllegalSectionStart { .. } => "a PEM BEGIN line is malformed".into(),
        pem::Error::Base64Decode(_) => "a PEM section is not valid base64".into(),
        pem::Error::SectionTooLarge => "a PEM section is too large".into(),
        pem::Error::NoItemsFound => "nothing in it".into(),
        _ => "not PEM".into(),
    }
}

/// Reads a file first, so that "cannot read" names the OS's reason.
fn read(option: &str, path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path)
        .map_err(|err| ControlError::Config(format!("{option} {}: {err}", path.display())))
}

/// Every certificate of a PEM file; at least one.
pub fn read_certificates(option: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let bytes = read(option, path)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|err| {
            ControlError::Config(format!("{option} {}: {}", path.display(), pem_reason(&err)))
        })?;
    if certs.is_empty() {
        return Err(ControlError::Config(format!(
            "{option} {}: no certificate found (expected PEM `BEGIN CERTIFICATE` sections)",
            path.display()
        )));
    }
    Ok(certs)
}

/// The first private key of a PEM file (PKCS#8, PKCS#1 or SEC1).
fn read_private_key(option: &str, path: &Path) -> Result<PrivateKeyDer<'static>> {
    let bytes = read(option, path)?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|err| {
        let reason = match err {
            pem::Error::NoItemsFound => {
                "no private key found (expected a PEM `BEGIN PRIVATE KEY`, \
                 `BEGIN RSA PRIVATE KEY` or `BEGIN EC PRIVATE KEY` section)"
                    .to_string()
            }
            other => pem_reason(&other),
        };
        ControlError::Config(format!("{option} {}: {reason}", path.display()))
    })
}

/// The server's TLS configuration from `--tls-cert` (the certificate chain,
/// leaf first) and `--tls-key`. Refused when the key is not the
/// certificate's.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>> {
    let chain = read_certificates("--tls-cert", cert)?;
    let private_key = read_private_key("--tls-key", key)?;
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|err| ControlError::Config(format!("TLS: {err}")))?
        .with_no_client_auth();
    let mut config = builder
        .with_single_cert(chain, private_key)
        .map_err(|err| {
            ControlError::Config(match err {
                rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => format!(
                    "--tls-key {} does not match the certificate of --tls-cert {}",
                    key.display(),
                    cert.display()
                ),
                rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown) => format!(
                    "--tls-key {}: cannot tell whether it matches the certificate of --tls-cert {}",
                    key.display(),
                    cert.display()
                ),
                rustls::Error::InvalidCertificate(reason) => {
                    format!("--tls-cert {}: {reason}", cert.display())
                }
                // rustls names the problem (an unsupported key type, a
                // malformed key), never the key's bytes.
                other => format!("--tls-key {}: {other}", key.display()),
            })
        })?;
    // HTTP/1.1 only, as the plain server (axum is built with `http1`).
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A client configuration that trusts only the CAs of `ca` (`--ca-cert`),
/// as `curl --cacert` does.
pub fn client_config(option: &str, ca: &Path) -> Result<Arc<ClientConfig>> {
    let mut roots = RootCertStore::empty();
    for cert in read_certificates(option, ca)? {
        roots
            .add(cert)
            .map_err(|err| ControlError::Config(format!("{option} {}: {err}", ca.display())))?;
    }
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|err| ControlError::Config(format!("TLS: {err}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The body of the answer to a plain-HTTP request on the TLS port: the
/// API's error shape, so that a client pointed at `http://` learns why.
const PLAIN_HTTP_BODY: &str = r#"{"error":"https_required","message":"this server speaks HTTPS only: use an https:// URL for it"}"#;

/// That answer: HTTP/1.1 400, then the connection closes.
fn plain_http_answer() -> String {
    format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{PLAIN_HTTP_BODY}",
        PLAIN_HTTP_BODY.len()
    )
}

/// A TLS listener for `axum::serve`: a task accepts TCP connections and
/// runs each handshake in its own task (a slow client holds up no other);
/// `accept` yields the connections whose handshake completed. A connection
/// that opens with plain HTTP gets a 400 naming HTTPS, then is closed.
pub struct TlsListener {
    incoming: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    accept_task: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    /// Starts accepting on `listener` with `config`.
    pub fn new(listener: TcpListener, config: Arc<ServerConfig>) -> std::io::Result<TlsListener> {
        let local = listener.local_addr()?;
        let (sender, incoming) = mpsc::channel(64);
        let acceptor = TlsAcceptor::from(config);
        let slots = Arc::new(tokio::sync::Semaphore::new(HANDSHAKES_IN_FLIGHT));
        let accept_task = tokio::spawn(async move {
            loop {
                let Ok(slot) = slots.clone().acquire_owned().await else {
                    return;
                };
                let (tcp, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(err) => {
                        // Out of file descriptors and the like: wait, retry.
                        crate::log::warn(&format!("accept: {err}"));
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let sender = sender.clone();
                tokio::spawn(async move {
                    let outcome =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(&acceptor, tcp)).await;
                    drop(slot);
                    match outcome {
                        Ok(Ok(Some(stream))) => {
                            let _ = sender.send((stream, peer)).await;
                        }
                        Ok(Ok(None)) => {}
                        Ok(Err(reason)) => {
                            crate::log::info(&format!("TLS handshake failed: {reason}"))
                        }
                        Err(_) => crate::log::info(&format!(
                            "TLS handshake did not finish within {} s",
                            HANDSHAKE_TIMEOUT.as_secs()
                        )),
                    }
                });
            }
        });
        Ok(TlsListener {
            incoming,
            local,
            accept_task,
        })
    }
}

/// One handshake: `None` when the connection closed before a byte, or
/// opened with plain HTTP (answered and closed).
async fn handshake(
    acceptor: &TlsAcceptor,
    mut tcp: TcpStream,
) -> std::result::Result<Option<TlsStream<TcpStream>>, String> {
    let mut first = [0u8; 1];
    let read = tcp
        .peek(&mut first)
        .await
        .map_err(|err| format!("reading: {err}"))?;
    if read == 0 {
        return Ok(None);
    }
    // Every TLS connection opens with a handshake record (content type 22).
    if first[0] != 22 {
        if first[0].is_ascii_alphabetic() {
            answer_plain_http(&mut tcp).await;
            crate::log::info(
                "a plain-HTTP request on the TLS port was answered 400 https_required",
            );
            return Ok(None);
        }
        return Err("the client did not open with a TLS handshake".into());
    }
    acceptor.accept(tcp).await.map(Some).map_err(|err| {
        // rustls's reasons: an alert the client sent (`UnknownCA`, …), a
        // protocol or version mismatch. They name no secret.
        err.to_string()
    })
}

/// Reads the request head (and drops it unread: it may hold a bearer
/// token), answers [`plain_http_answer`], and reads on until the client
/// closes: closing with unread bytes would reset the connection and the
/// client could lose the answer.
async fn answer_plain_http(tcp: &mut TcpStream) {
    const HEAD_LIMIT: usize = 16 * 1024;
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while head.len() < HEAD_LIMIT && !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match tcp.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
    }
    head.clear();
    if tcp.write_all(plain_http_answer().as_bytes()).await.is_err() {
        return;
    }
    let _ = tcp.shutdown().await;
    // Whatever else the client sends (a body) until it closes; bounded by
    // the handshake timeout around the caller.
    while let Ok(n) = tcp.read(&mut chunk).await {
        if n == 0 {
            break;
        }
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accept_task.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.incoming.recv().await {
            Some(accepted) => accepted,
            // The accept task ended (it never does while the listener
            // lives): no more connections.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_http_answer_is_well_framed() {
        let answer = plain_http_answer();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let json: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(json["error"], "https_required");
    }
}
