//! The PostgreSQL store itself, several replicas over one database: a
//! forget that fails at any step changes nothing, and `seq` stays gap-free
//! under concurrent forgets and additions through separate connection
//! pools (as separate replicas have). Needs `LATET_TEST_PG_URL`; skipped
//! without it unless PostgreSQL runs are required (common::pg_cluster_url).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use latet::secrets::MasterKey;
use latet::store::database::Database;
use latet::store::postgresql::PostgresStore;
use latet::store::Store;
use latet::vault::{ForgetActor, Vaults};
use latet_core::wire::NewValue;
use latet_core::Kind;
use std::ffi::OsStr;
use std::sync::Arc;

/// A fresh database named `name`; None when no cluster is given.
fn fresh_database(name: &str) -> Option<String> {
    let cluster = pg_cluster_url()?;
    Some(fresh_pg_database(&cluster, name))
}

/// A store over `url` with its own pool, as one replica has.
fn replica(url: &str) -> Arc<PostgresStore> {
    let Database::Postgres(url) = Database::parse(OsStr::new(url)).unwrap() else {
        panic!("not a PostgreSQL URL");
    };
    Arc::new(PostgresStore::open(&url, 10_000).unwrap())
}

fn vaults(store: &Arc<PostgresStore>) -> Vaults {
    Vaults::new(store.clone(), MasterKey::from_bytes([7; 32]))
}

fn names(values: &[String]) -> Vec<NewValue> {
    values
        .iter()
        .map(|value| NewValue {
            kind: Kind::Name,
            value: value.clone(),
        })
        .collect()
}

fn exec(url: &str, sql: &str) {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client.batch_execute(sql).unwrap();
}

#[test]
fn a_forget_that_fails_at_any_step_forgets_nothing() {
    let Some(url) = fresh_database("latet_store_forget_faults") else {
        return;
    };
    let store = replica(&url);
    let vaults = vaults(&store);
    let key = vaults.create_key("Shop", None).unwrap().key;
    let values: Vec<String> = (0..3).map(|i| format!("Nome Cognome{i}")).collect();
    vaults.entries(&key, &names(&values)).unwrap();
    let before = vaults.snapshot(&key).unwrap();
    let head = store.events_after(key.id, 0, 100).unwrap().head;

    // Each table the forget writes, in the order it writes them: the
    // failure comes after the entries are deleted (retired), after the
    // generation moved (events), and last of all (admin_log).
    for table in ["retired", "events", "admin_log"] {
        exec(
            &url,
            &format!(
                "CREATE FUNCTION refuse_{table}() RETURNS trigger LANGUAGE plpgsql AS
                 $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$;
                 CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table}
                 FOR EACH ROW EXECUTE FUNCTION refuse_{table}();"
            ),
        );
        let err = vaults
            .forget(&key, &values[..2], &ForgetActor::Admin)
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("injected fault"), "{table}: {text}");
        assert!(!text.contains("Nome"), "{table}: {text}");
        assert_eq!(
            vaults.snapshot(&key).unwrap(),
            before,
            "{table}: same entries, retired, generation and seq"
        );
        let feed = store.events_after(key.id, 0, 100).unwrap();
        assert_eq!(feed.head, head, "{table}");
        assert_eq!(feed.events.len() as u64, head, "{table}: no event appended");
        assert!(
            vaults.admin_log(Some("key.forgotten")).unwrap().is_empty(),
            "{table}"
        );
        exec(
            &url,
            &format!("DROP TRIGGER refuse_{table} ON {table}; DROP FUNCTION refuse_{table}();"),
        );
    }

    // The faults gone, the same forget does everything at once.
    let counts = vaults
        .forget(&key, &values[..2], &ForgetActor::Admin)
        .unwrap();
    assert_eq!((counts.forgotten, counts.unknown), (2, 0));
    let after = vaults.snapshot(&key).unwrap();
    assert_eq!(after.entries.len(), 1);
    assert_eq!(after.retired.len(), 2);
    assert_eq!(after.generation, before.generation + 1);
    assert_eq!(after.seq, before.seq + 1);
    let log = vaults.admin_log(Some("key.forgotten")).unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].forgotten, Some(2));
}

#[test]
fn seq_is_gap_free_under_concurrent_forgets_and_additions_from_several_replicas() {
    let Some(url) = fresh_database("latet_store_concurrent_seq") else {
        return;
    };
    let replicas: Vec<Arc<PostgresStore>> = (0..3).map(|_| replica(&url)).collect();
    let key = vaults(&replicas[0]).create_key("Shop", None).unwrap().key;
    const ROUNDS: usize = 12;
    let workers: Vec<_> = (0..6)
        .map(|worker| {
            let vaults = vaults(&replicas[worker % replicas.len()]);
            let key = key.clone();
            std::thread::spawn(move || {
                let mut events = 0u64;
                for round in 0..ROUNDS {
                    let value = format!("Worker{worker} Round{round}");
                    let answer = vaults
                        .entries(&key, &names(std::slice::from_ref(&value)))
                        .unwrap();
                    assert_eq!(answer.entries.len(), 1);
                    events += 1;
                    if round % 2 == 0 {
                        let counts = vaults.forget(&key, &[value], &ForgetActor::Admin).unwrap();
                        assert_eq!(counts.forgotten, 1);
                        events += 1;
                    }
                }
                events
            })
        })
        .collect();
    let expected: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();

    let feed = replicas[1].events_after(key.id, 0, 10_000).unwrap();
    let seqs: Vec<u64> = feed
        .events
        .iter()
        .map(|event| match event {
            latet::store::StoredEvent::Added { seq, .. }
            | latet::store::StoredEvent::Forgotten { seq, .. } => *seq,
        })
        .collect();
    assert_eq!(feed.head, expected);
    assert_eq!(
        seqs,
        (1..=expected).collect::<Vec<_>>(),
        "gap-free, in order"
    );
    // Every forget moved the generation once; the vault holds the rest.
    let snapshot = vaults(&replicas[2]).snapshot(&key).unwrap();
    let forgets = 6 * ROUNDS.div_ceil(2);
    assert_eq!(snapshot.generation, 1 + forgets as u64);
    assert_eq!(snapshot.entries.len(), 6 * ROUNDS - forgets);
    assert_eq!(snapshot.retired.len(), forgets);
}

/// Ends every session of the store's database but the caller's.
fn end_other_sessions(url: &str) {
    exec(
        url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
}

#[test]
fn a_connection_idle_past_the_check_window_is_checked_and_one_used_just_now_fails_once() {
    let Some(url) = fresh_database("latet_store_pool_check") else {
        return;
    };
    let store = replica(&url);
    let idle = latet::store::postgresql::pool::CHECK_AFTER_IDLE;
    // Idle past the window: the broken connections are found on checkout
    // and replaced, the call does not see them.
    store.key_by_id(1).unwrap();
    end_other_sessions(&url);
    std::thread::sleep(idle + std::time::Duration::from_millis(300));
    assert!(store.key_by_id(1).unwrap().is_none());
    // Used just now (no check on checkout): the query finds the break and
    // the call fails as a store failure (503), with no row or setting in
    // its message; the pool drops the connection and the next call works.
    store.key_by_id(1).unwrap();
    end_other_sessions(&url);
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut failed = 0;
    let start = std::time::Instant::now();
    loop {
        match store.key_by_id(1) {
            Ok(found) => {
                assert!(found.is_none());
                break;
            }
            Err(latet::error::ControlError::Store(message)) => {
                assert!(!message.contains(&url), "{message}");
                failed += 1;
            }
            Err(other) => panic!("{other}"),
        }
        assert!(
            start.elapsed() < idle,
            "broken connections kept in the pool"
        );
    }
    assert!(failed >= 1, "a connection used just now was checked");
}
