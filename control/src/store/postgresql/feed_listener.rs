//! Wakes this replica's long-polls when another replica changes a feed:
//! one thread with its own connection `LISTEN`s on [`FEED_CHANNEL`]; every
//! transaction that appends an event (or revokes a token, or deletes a key)
//! sends a `NOTIFY` at commit. A notification can be lost (the connection
//! drops): so the thread also re-reads the heads of the keys some poll
//! waits on every [`RECHECK`], and wakes every poll after a reconnection. A
//! lost notification only delays a wake-up, by a second at most.

use super::FEED_CHANNEL;
use crate::error::Result;
use crate::store::database::PostgresUrl;
use crate::vault::Vaults;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the heads are re-read, notifications or not.
pub const RECHECK: Duration = Duration::from_secs(1);
/// Wait before connecting again after a failure.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// Starts the listener thread; it runs until the process exits.
pub fn spawn(url: &PostgresUrl, vaults: Arc<Vaults>) -> Result<()> {
    let config = url.config().clone();
    let described = url.describe();
    std::thread::Builder::new()
        .name("latet-feed-listener".into())
        .spawn(move || {
            let mut reconnected = false;
            loop {
                match config.connect(NoTls) {
                    Ok(mut client) => {
                        if let Err(err) = listen(&mut client, &vaults, reconnected) {
                            crate::log::warn(&format!(
                                "feed listener on the {described}: {err}; reconnecting"
                            ));
                        }
                    }
                    Err(err) => crate::log::warn(&format!(
                        "feed listener: cannot connect to the {described}: {}",
                        crate::error::ControlError::from(err)
                    )),
                }
                reconnected = true;
                std::thread::sleep(RECONNECT_AFTER);
            }
        })
        .map_err(|err| crate::error::ControlError::Io(format!("feed listener thread: {err}")))?;
    Ok(())
}

/// Listens until the connection fails.
fn listen(client: &mut Client, vaults: &Vaults, reconnected: bool) -> Result<()> {
    client.batch_execute(&format!("LISTEN {FEED_CHANNEL}"))?;
    if reconnected {
        // Notifications sent while disconnected are lost: every poll reads again.
        vaults.signals().wake_all();
    }
    let mut last_recheck = Instant::now();
    loop {
        {
            let mut notifications = client.notifications();
            let mut arriving = notifications.timeout_iter(RECHECK);
            while let Some(note) = arriving.next()? {
                apply(vaults, note.payload());
                if last_recheck.elapsed() >= RECHECK {
                    break;
                }
            }
        }
        recheck(client, vaults)?;
        last_recheck = Instant::now();
    }
}

/// One notification: `KEY_ID SEQ` announces a head, `KEY_ID` wakes.
fn apply(vaults: &Vaults, payload: &str) {
    let mut parts = payload.split(' ');
    let Some(Ok(key_id)) = parts.next().map(str::parse::<i64>) else {
        return;
    };
    match parts.next().map(str::parse::<u64>) {
        Some(Ok(seq)) => vaults.signals().announce_newer(key_id, seq),
        _ => vaults.signals().wake(key_id),
    }
}

/// Reads the heads of the watched keys; wakes the polls of a key gone.
fn recheck(client: &mut Client, vaults: &Vaults) -> Result<()> {
    let watched = vaults.signals().watched_keys();
    if watched.is_empty() {
        return Ok(());
    }
    let rows = client.query("SELECT id, seq FROM keys WHERE id = ANY($1)", &[&watched])?;
    let mut present = HashSet::with_capacity(rows.len());
    for row in &rows {
        let key_id: i64 = row.try_get(0)?;
        let seq: i64 = row.try_get(1)?;
        present.insert(key_id);
        vaults
            .signals()
            .announce_newer(key_id, u64::try_from(seq).unwrap_or(0));
    }
    for key_id in watched.into_iter().filter(|id| !present.contains(id)) {
        vaults.signals().wake(key_id);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::secrets::MasterKey;
    use crate::store::sqlite::SqliteStore;

    #[test]
    fn notifications_announce_newer_heads_and_wake_on_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("x.db"), 10).unwrap();
        let vaults = Vaults::new(Arc::new(store), MasterKey::from_bytes([1; 32]));
        let mut head = vaults.signals().subscribe(7).unwrap();
        // (payload, woken, head after)
        let cases: &[(&str, bool, u64)] = &[
            ("7 5", true, 5),
            ("7 5", false, 5), // the same head again: no wake-up
            ("7 3", false, 5), // an older one
            ("8 9", false, 5), // another key
            ("7", true, 5),    // a wake without a head (a token revoked)
            ("x 1", false, 5), // not a key id
            ("", false, 5),
            ("7 6", true, 6),
        ];
        for (payload, woken, after) in cases {
            head.mark_unchanged();
            apply(&vaults, payload);
            assert_eq!(head.has_changed().unwrap(), *woken, "{payload:?}");
            assert_eq!(head.borrow().seq, *after, "{payload:?}");
        }
    }
}
