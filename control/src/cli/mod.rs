//! The command line: `latet serve …` runs the service; `latet server …`
//! administers one. Bad arguments print a short usage that names the mistake.

pub mod client;
pub mod forget;
pub mod lifecycle;

use crate::error::{ControlError, Result};
use crate::files::{read_token, OutFile};
use crate::http::admin::{AddTokenRequest, CreateKeyRequest, KeyListing, TokenAnswer};
use crate::serve::{serve, ServeOptions};
use crate::store::AdminLogRecord;
use clap::{Args, Parser, Subcommand};
use client::{segment, AdminClient};
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Default admin token file (also the server's default).
pub const DEFAULT_ADMIN_TOKEN_FILE: &str = ".latet/admin.token";

#[derive(Debug, Parser)]
#[command(
    name = "latet",
    version,
    about = "Latet control service and admin CLI",
    subcommand_required = true,
    after_help = "Environment: LATET_SERVER, LATET_ADMIN_TOKEN_FILE and LATET_CA_CERT stand in \
                  for --server, --admin-token-file and --ca-cert when those are not given; \
                  a flag always wins. LATET_MASTER_KEY: see `latet serve --help`."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the control service.
    Serve(ServeArgs),
    /// Administer a running control service.
    Server(ServerArgs),
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// SQLite database file (created when missing), or postgres://USER@HOST/DATABASE
    /// for a database shared by several replicas.
    #[arg(long, default_value = ".latet/latet.db")]
    db: OsString,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    /// Admin token file (created with mode 0600 when missing). Default:
    /// LATET_ADMIN_TOKEN_FILE when set, else .latet/admin.token.
    #[arg(long, env = "LATET_ADMIN_TOKEN_FILE", default_value = DEFAULT_ADMIN_TOKEN_FILE)]
    admin_token_file: PathBuf,
    /// Master key file (64 hex digits); else LATET_MASTER_KEY, else generated beside the database.
    #[arg(long)]
    master_key_file: Option<PathBuf>,
    /// Events kept per key; a gateway further behind takes a new snapshot.
    #[arg(long, default_value_t = crate::store::sqlite::DEFAULT_FEED_KEEP)]
    feed_keep: u64,
    /// Detectors of the apps mask API, as JSON: the filter configuration's
    /// `detectors` object (`person`, `neverMask`, `rules`, ...). Default: all on.
    #[arg(long)]
    detectors: Option<PathBuf>,
    /// Serve HTTPS with this certificate chain (PEM, the server's
    /// certificate first); needs --tls-key. Without both: plain HTTP.
    #[arg(long, requires = "tls_key", value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, requires = "tls_cert", value_name = "FILE")]
    tls_key: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "A flag wins over its environment variable: --server over LATET_SERVER, \
                        --admin-token-file over LATET_ADMIN_TOKEN_FILE, --ca-cert over LATET_CA_CERT."
)]
struct ServerArgs {
    /// The control service, e.g. https://latet-control:8787 or
    /// http://127.0.0.1:8787. Default: LATET_SERVER.
    #[arg(long, env = "LATET_SERVER", value_name = "URL")]
    server: String,
    /// The admin token file. Default: LATET_ADMIN_TOKEN_FILE when set, else
    /// .latet/admin.token.
    #[arg(long, env = "LATET_ADMIN_TOKEN_FILE", default_value = DEFAULT_ADMIN_TOKEN_FILE)]
    admin_token_file: PathBuf,
    /// Trust only the CAs of this PEM file for an https:// server (a
    /// private CA), instead of the built-in Mozilla roots. Default:
    /// LATET_CA_CERT.
    #[arg(long, env = "LATET_CA_CERT", value_name = "FILE")]
    ca_cert: Option<PathBuf>,
    #[command(subcommand)]
    command: ServerCommand,
}

#[derive(Debug, Subcommand)]
enum ServerCommand {
    /// Keys, their tokens, and forget.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Print the admin log (counts only, never a value).
    Log {
        /// Only this action (key.forgotten, apps.forgotten, key.created, …).
        #[arg(long)]
        action: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Create a key; its first token (gateway, analyze, mask, restore) goes to --out.
    Create {
        name: String,
        /// File for the first token (written with mode 0600; never over an existing file).
        #[arg(long)]
        out: PathBuf,
        /// Overwrite --out when it exists.
        #[arg(long)]
        force: bool,
        /// Most values the vault may hold.
        #[arg(long)]
        value_limit: Option<u64>,
    },
    /// List keys with their counts.
    List,
    /// Enable a key.
    Enable { name: String },
    /// Disable a key (forget still works).
    Disable { name: String },
    /// Add a token with the permissions named by the flags.
    AddToken {
        name: String,
        token_name: String,
        #[arg(long)]
        forget: bool,
        #[arg(long)]
        gateway: bool,
        #[arg(long)]
        analyze: bool,
        #[arg(long)]
        mask: bool,
        #[arg(long)]
        restore: bool,
        /// File for the token (written with mode 0600; never over an existing file).
        #[arg(long)]
        out: PathBuf,
        /// Overwrite --out when it exists.
        #[arg(long)]
        force: bool,
    },
    /// List a key's tokens: names and permissions (never a token).
    Tokens { name: String },
    /// Revoke a token of a key: refused on every endpoint from the next request.
    RevokeToken { name: String, token_name: String },
    /// Delete a key and every value of its vault (asks for the name; --yes in scripts).
    Delete {
        name: String,
        /// Do not ask (needed without a terminal).
        #[arg(long)]
        yes: bool,
    },
    /// Forget values: from --file (one per line, UTF-8) or typed at the terminal.
    Forget {
        name: String,
        /// File of values, one per line.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Do not ask before sending (needed without a terminal).
        #[arg(long)]
        yes: bool,
        /// Send values that have leading or trailing whitespace without it.
        #[arg(long, conflicts_with = "exact")]
        trim: bool,
        /// Send values that have leading or trailing whitespace as written.
        #[arg(long)]
        exact: bool,
        /// Values are never taken from here; anything given is refused unread.
        #[arg(hide = true, num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
        stray: Vec<OsString>,
    },
}

/// Runs the command line; returns the process exit status.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    if args.len() <= 1 {
        // clap would print the whole help; a short usage names the mistake.
        eprintln!(
            "error: latet requires a subcommand: `serve` or `server`\n\n\
             Usage: latet serve --db FILE|postgres://… --listen ADDR --admin-token-file FILE [--tls-cert FILE --tls-key FILE]\n       \
             latet server --server URL [--admin-token-file FILE] [--ca-cert FILE] <keys|log> ...\n\n\
             For more information, try '--help'."
        );
        return 2;
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            if !err.use_stderr() {
                return 0; // --help, --version
            }
            if !err.render().to_string().contains("Usage:") {
                use clap::CommandFactory;
                eprintln!("{}", Cli::command().render_usage());
            }
            return 2;
        }
    };
    let result = match cli.command {
        Command::Serve(args) => run_serve(args),
        Command::Server(args) => run_server(args),
    };
    match result {
        Ok(status) => status,
        Err(ControlError::Refused(reason)) => {
            eprintln!("latet: {reason}");
            2
        }
        Err(err) => {
            eprintln!("latet: {err}");
            1
        }
    }
}

fn run_serve(args: ServeArgs) -> Result<i32> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|err| ControlError::Io(format!("runtime: {err}")))?;
    runtime.block_on(serve(ServeOptions {
        db: crate::store::database::Database::parse(&args.db)?,
        listen: args.listen,
        admin_token_file: args.admin_token_file,
        master_key_file: args.master_key_file,
        feed_keep: args.feed_keep,
        detectors: crate::serve::detectors_from(args.detectors.as_deref())?,
        tls: match (args.tls_cert, args.tls_key) {
            (Some(cert), Some(key)) => Some(crate::serve::TlsFiles { cert, key }),
            _ => None,
        },
    }))?;
    Ok(0)
}

fn run_server(args: ServerArgs) -> Result<i32> {
    let token = read_token(&args.admin_token_file)?;
    let client = AdminClient::new(&args.server, token, args.ca_cert.as_deref())?;
    match args.command {
        ServerCommand::Keys(command) => run_keys(&client, command),
        ServerCommand::Log { action } => {
            let path = match &action {
                Some(action) => format!("/log?action={}", segment(action)),
                None => "/log".into(),
            };
            let answer: LogAnswer = client.get(&path)?;
            for record in &answer.log {
                println!("{}", log_line(record));
            }
            if answer.log.is_empty() {
                println!("(no entries)");
            }
            Ok(0)
        }
    }
}

#[derive(serde::Deserialize)]
struct LogAnswer {
    log: Vec<AdminLogRecord>,
}

#[derive(serde::Deserialize)]
struct KeysAnswer {
    keys: Vec<KeyListing>,
}

fn write_token(out: &OutFile, answer: &TokenAnswer) -> Result<()> {
    out.write(format!("{}\n", answer.token).as_bytes())?;
    println!(
        "Token \"{}\" of key \"{}\" ({}) written to {} (mode 0600). It is shown nowhere else.",
        answer.token_name,
        answer.key,
        answer.permissions.join(", "),
        out.path().display()
    );
    Ok(())
}

fn run_keys(client: &AdminClient, command: KeysCommand) -> Result<i32> {
    match command {
        KeysCommand::Create {
            name,
            out,
            force,
            value_limit,
        } => {
            // Before the key is created: a token that cannot be written is lost.
            let out = OutFile::check(out, force)?;
            let answer: TokenAnswer =
                client.post("/keys", &CreateKeyRequest { name, value_limit })?;
            write_token(&out, &answer)?;
        }
        KeysCommand::List => {
            let answer: KeysAnswer = client.get("/keys")?;
            println!(
                "{:<24} {:<8} {:>10} {:>10} {:>10} {:>6} {:>6}",
                "KEY", "STATE", "VALUES", "RETIRED", "LIMIT", "GEN", "TOKENS"
            );
            for k in answer.keys {
                println!(
                    "{:<24} {:<8} {:>10} {:>10} {:>10} {:>6} {:>6}",
                    k.name,
                    if k.enabled { "enabled" } else { "disabled" },
                    k.values,
                    k.retired,
                    k.value_limit,
                    k.generation,
                    k.tokens
                );
            }
        }
        KeysCommand::Enable { name } => {
            let _: serde_json::Value = client.post(
                &format!("/keys/{}/enable", segment(&name)),
                &serde_json::json!({}),
            )?;
            println!("Key \"{name}\" enabled.");
        }
        KeysCommand::Disable { name } => {
            let _: serde_json::Value = client.post(
                &format!("/keys/{}/disable", segment(&name)),
                &serde_json::json!({}),
            )?;
            println!("Key \"{name}\" disabled (forget still works).");
        }
        KeysCommand::AddToken {
            name,
            token_name,
            forget,
            gateway,
            analyze,
            mask,
            restore,
            out,
            force,
        } => {
            let permissions: Vec<String> = [
                (gateway, "gateway"),
                (analyze, "analyze"),
                (mask, "mask"),
                (restore, "restore"),
                (forget, "forget"),
            ]
            .into_iter()
            .filter(|(on, _)| *on)
            .map(|(_, p)| p.to_string())
            .collect();
            if permissions.is_empty() {
                eprintln!("latet: keys add-token: name at least one permission (--forget, --gateway, --analyze, --mask, --restore)");
                return Ok(2);
            }
            let out = OutFile::check(out, force)?;
            let answer: TokenAnswer = client.post(
                &format!("/keys/{}/tokens", segment(&name)),
                &AddTokenRequest {
                    name: token_name,
                    permissions,
                },
            )?;
            write_token(&out, &answer)?;
        }
        KeysCommand::Tokens { name } => return lifecycle::list_tokens(client, &name),
        KeysCommand::RevokeToken { name, token_name } => {
            return lifecycle::revoke_token(client, &name, &token_name)
        }
        KeysCommand::Delete { name, yes } => return lifecycle::delete_key(client, &name, yes),
        KeysCommand::Forget {
            name,
            file,
            yes,
            trim,
            exact,
            stray,
        } => {
            let padding = match (trim, exact) {
                (true, _) => forget::Padding::Trim,
                (_, true) => forget::Padding::Exact,
                _ => forget::Padding::Ask,
            };
            return forget::run(
                client,
                &forget::ForgetCommand {
                    key: name,
                    file,
                    yes,
                    padding,
                    stray_arguments: stray.len(),
                },
            );
        }
    }
    Ok(0)
}

/// One admin-log line: time, action, names and counts.
pub fn log_line(record: &AdminLogRecord) -> String {
    let mut line = format!("{} {}", utc_time(record.at), record.action);
    if let Some(key) = &record.key {
        line.push_str(&format!(" key={key:?}"));
    }
    if let Some(token) = &record.token {
        line.push_str(&format!(" token={token:?}"));
    }
    for (name, count) in [
        ("requested", record.requested),
        ("forgotten", record.forgotten),
        ("unknown", record.unknown),
        ("retired", record.retired),
        ("tokens", record.tokens),
    ] {
        if let Some(count) = count {
            line.push_str(&format!(" {name}={count}"));
        }
    }
    line
}

/// `YYYY-MM-DDTHH:MM:SSZ` of unix seconds (civil-from-days, proleptic Gregorian).
pub fn utc_time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn utc_times() {
        assert_eq!(utc_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_time(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_time(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn log_lines_hold_names_and_counts() {
        let record = AdminLogRecord {
            at: 0,
            action: "apps.forgotten".into(),
            key: Some("Shop".into()),
            token: Some("erasure".into()),
            requested: Some(3),
            forgotten: Some(1),
            unknown: Some(1),
            ..Default::default()
        };
        assert_eq!(
            log_line(&record),
            "1970-01-01T00:00:00Z apps.forgotten key=\"Shop\" token=\"erasure\" requested=3 forgotten=1 unknown=1"
        );
    }
}
