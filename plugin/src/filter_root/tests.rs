use super::*;
use crate::fake_host::FakeHost;
use crate::shared::LEASE_KEY;
use crate::test_support::*;

fn started(host: &FakeHost, standing_by: bool) -> FilterRoot {
    FilterRoot::start(host, config(), "latet".to_string(), standing_by).unwrap()
}

fn ready(root: &FilterRoot) -> bool {
    root.worker().vault.borrow().is_ready()
}

#[test]
fn a_root_takes_what_is_published_at_start_and_on_ticks() {
    let host = FakeHost::alone();
    publish(&host, 5, 1, vec![mario()], &[]);
    let root = started(&host, false);
    assert!(ready(&root) && !root.is_standing_by());

    let host = FakeHost::alone();
    let mut root = started(&host, false);
    assert!(!ready(&root));
    publish(&host, 5, 1, vec![mario()], &[]);
    root.on_tick(&host);
    assert!(ready(&root));
}

#[test]
fn a_root_started_beside_the_sync_service_never_builds_a_vault() {
    let host = FakeHost::alone();
    publish(&host, 5, 1, vec![mario()], &[]);
    let mut root = started(&host, true);
    assert!(root.is_standing_by());
    assert!(!ready(&root));
    // Ticks, wake-ups and new publications leave it empty; it takes no
    // lease either (the sync service holds it).
    publish_events(&host, 5, &[added(6, vec![giulia()])]);
    for _ in 0..3 {
        root.on_tick(&host);
        if let Some(queue) = root.queue {
            root.on_queue_ready(&host, queue);
        }
        host.advance(1000);
    }
    assert!(!ready(&root));
    assert_eq!(root.worker().vault.borrow().index().len(), 0);
    assert!(host.shared_value(LEASE_KEY).is_none());
    assert!(host.last_callout().is_none());
}

#[test]
fn standing_by_drops_a_vault_already_built() {
    let host = FakeHost::alone();
    publish(&host, 5, 1, vec![mario(), giulia()], &[]);
    let mut root = started(&host, false);
    assert_eq!(root.worker().vault.borrow().index().len(), 2);
    root.stand_by(&host);
    root.stand_by(&host);
    assert!(root.is_standing_by());
    assert!(!ready(&root));
    assert_eq!(root.worker().vault.borrow().index().len(), 0);
    // Logged once, with no value.
    let logs = host.all_logs();
    assert_eq!(logs.matches("holds no vault").count(), 1, "{logs}");
    assert!(!logs.contains("Mario") && !logs.contains("Laura"), "{logs}");
    // Published changes are not taken again.
    publish(&host, 7, 1, vec![mario()], &[]);
    root.on_tick(&host);
    assert!(!ready(&root));
}
