//! `latet-fake-llm --listen 127.0.0.1:8788`: runs the fake LLM. Prints
//! `listening on http://ADDR` once bound (useful with port 0).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use latet_fake_llm::{serve, RequestLog};
use tokio::net::TcpListener;

const USAGE: &str = "usage: latet-fake-llm [--listen ADDR]   (default 127.0.0.1:8788)";

fn parse_listen(mut args: impl Iterator<Item = String>) -> Result<String, String> {
    let mut listen = "127.0.0.1:8788".to_owned();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => listen = args.next().ok_or("--listen needs an address")?,
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => {
                if let Some(value) = other.strip_prefix("--listen=") {
                    listen = value.to_owned();
                } else {
                    return Err(format!("unknown argument `{other}`\n{USAGE}"));
                }
            }
        }
    }
    Ok(listen)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let listen = match parse_listen(std::env::args().skip(1)) {
        Ok(listen) => listen,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let listener = match TcpListener::bind(&listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("latet-fake-llm: cannot listen on {listen}: {error}");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(addr) => println!("listening on http://{addr}"),
        Err(error) => eprintln!("latet-fake-llm: {error}"),
    }
    let _ = std::io::stdout().flush();
    match serve(listener, Arc::new(RequestLog::default())).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("latet-fake-llm: {error}");
            ExitCode::FAILURE
        }
    }
}
