//! `latet-fake-llm --listen 127.0.0.1:8788 [--chunk-delay-ms N]`: runs the
//! fake LLM. Prints `listening on http://ADDR` once bound (useful with port 0).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use latet_fake_llm::server::DEFAULT_CHUNK_DELAY;
use latet_fake_llm::{serve, FakeLlm, RequestLog};
use tokio::net::TcpListener;

const USAGE: &str = "usage: latet-fake-llm [--listen ADDR] [--chunk-delay-ms N]
  --listen ADDR        address to serve (default 127.0.0.1:8788; port 0 picks one)
  --chunk-delay-ms N   pause between two writes of a stream unless the request's
                       x-fake-chunk-delay-ms says otherwise (default 1)";

/// What the command line asks for.
struct Options {
    listen: String,
    chunk_delay: Duration,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        listen: "127.0.0.1:8788".to_owned(),
        chunk_delay: DEFAULT_CHUNK_DELAY,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => options.listen = args.next().ok_or("--listen needs an address")?,
            "--chunk-delay-ms" => {
                let value = args.next().ok_or("--chunk-delay-ms needs a number")?;
                let ms = value
                    .parse::<u64>()
                    .map_err(|_| "--chunk-delay-ms needs a number of milliseconds")?;
                options.chunk_delay = Duration::from_millis(ms);
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(options)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let listen = options.listen;
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
    let fake = FakeLlm {
        log: RequestLog::default(),
        default_delay: options.chunk_delay,
    };
    match serve(listener, Arc::new(fake)).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("latet-fake-llm: {error}");
            ExitCode::FAILURE
        }
    }
}
