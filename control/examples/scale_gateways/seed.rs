//! `seed`: a key, a token with `forget`, and a vault of synthetic e-mail
//! addresses through the gateway entries API (1,000 values a call, one
//! stream per replica: the fastest way in; the apps mask API runs the
//! detectors and opens the whole vault per call).

use crate::http::{post_json, CallError, Connection, Replica};
use crate::read_token;
use latet_core::kind::Kind;
use latet_core::wire::{EntriesRequest, NewValue, WIRE_VERSION};
use std::path::Path;
use std::time::Duration;
use tokio::time::Instant;

fn write_token(path: &Path, token: &str) -> Result<(), CallError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut file| file.write_all(token.as_bytes()))
        .map_err(|err| CallError(format!("{}: {err}", path.display())))
}

fn token_of(answer: &serde_json::Value) -> Result<String, CallError> {
    answer["token"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| CallError("no token in the answer".into()))
}

/// The synthetic value number `i` (not a person's).
fn synthetic_value(i: usize) -> String {
    format!("scale.{i:06}@example.org")
}

pub async fn seed(
    replica_urls: &[String],
    admin_token_file: &Path,
    key: &str,
    values: usize,
    out_dir: &Path,
) -> Result<(), CallError> {
    let replicas = replica_urls
        .iter()
        .map(|url| Replica::parse(url))
        .collect::<Result<Vec<_>, _>>()?;
    let admin = read_token(admin_token_file)?;
    let timeout = Duration::from_secs(10);
    let mut connection = Connection::open(&replicas[0], timeout).await?;
    let created = post_json(
        &mut connection,
        "/_latet/admin/v1/keys",
        &admin,
        &serde_json::json!({"name": key}),
    )
    .await?;
    let gateway_token = token_of(&created)?;
    let erasure = post_json(
        &mut connection,
        &format!("/_latet/admin/v1/keys/{key}/tokens"),
        &admin,
        &serde_json::json!({"name": "erasure", "permissions": ["forget"]}),
    )
    .await?;
    write_token(&out_dir.join("gateway.token"), &gateway_token)?;
    write_token(&out_dir.join("forget.token"), &token_of(&erasure)?)?;

    // Batches of 1,000 (the most a call takes), one stream per replica.
    let started = Instant::now();
    let batches: Vec<Vec<usize>> = (0..values)
        .collect::<Vec<_>>()
        .chunks(latet_core::wire::MAX_VALUES_PER_CALL)
        .map(<[usize]>::to_vec)
        .collect();
    let mut streams = Vec::new();
    for (r, replica) in replicas.iter().enumerate() {
        let mine: Vec<Vec<usize>> = batches
            .iter()
            .skip(r)
            .step_by(replicas.len())
            .cloned()
            .collect();
        let (replica, token) = (replica.clone(), gateway_token.clone());
        streams.push(tokio::spawn(async move {
            let mut connection = Connection::open(&replica, timeout).await?;
            for batch in mine {
                let request = EntriesRequest {
                    version: WIRE_VERSION,
                    values: batch
                        .into_iter()
                        .map(|i| NewValue {
                            kind: Kind::Email,
                            value: synthetic_value(i),
                        })
                        .collect(),
                };
                post_json(
                    &mut connection,
                    "/_latet/gateway/v1/entries",
                    &token,
                    &request,
                )
                .await?;
            }
            Ok::<(), CallError>(())
        }));
    }
    for stream in streams {
        stream
            .await
            .map_err(|err| CallError(format!("seed task: {err}")))??;
    }
    let took = started.elapsed().as_secs_f64();
    println!(
        "seeded {values} values in {took:.1} s ({:.0} values/s, entries API, {} streams)",
        values as f64 / took,
        replicas.len()
    );
    Ok(())
}
