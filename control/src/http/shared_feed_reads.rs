//! Single-flight feed reads for woken long-polls: the polls of one key that
//! wake for the same signal and ask with the same token for the same
//! `after` share one `authenticate + require + feed` read and its answer
//! (an error included), instead of each running it against the store.

use crate::error::{ControlError, Result};
use axum::body::Bytes;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use latet_core::wire::FeedAnswer;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::OnceCell;

/// A feed answer as sent: its JSON, encoded once for every poll that
/// shares it, and whether it carries nothing new (the poll waits on).
#[derive(Clone, Debug)]
pub struct FeedBody {
    json: Bytes,
    empty: bool,
}

impl FeedBody {
    /// Encodes an answer.
    pub fn of(answer: &FeedAnswer) -> Result<Self> {
        let json = serde_json::to_vec(answer)
            .map_err(|_| ControlError::Store("feed: JSON encoding".into()))?;
        Ok(Self {
            json: Bytes::from(json),
            empty: matches!(answer, FeedAnswer::Events { events, .. } if events.is_empty()),
        })
    }

    /// No event (and no `snapshot_required`): the poll may wait for one.
    pub fn is_empty(&self) -> bool {
        self.empty
    }
}

impl IntoResponse for FeedBody {
    fn into_response(self) -> Response {
        (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            self.json,
        )
            .into_response()
    }
}

/// What makes two reads the same: the key, the token (its SHA-256, never
/// the token itself), `after`, and the epoch of the signal the poll woke
/// for ([`crate::feed_signal::FeedHead::epoch`]). A new epoch, as every
/// send brings (a revocation's wake-up included), means a new read.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct FeedReadKey {
    pub key_id: i64,
    pub token_hash: [u8; 32],
    pub after: u64,
    pub epoch: u64,
}

type SharedRead = OnceCell<Result<FeedBody>>;

/// The reads in flight or just done, each held by the polls that share it;
/// an entry goes when its last poll lets it go (so once the epoch moves on,
/// the old entries go as their polls answer or park again).
#[derive(Default)]
pub struct SharedFeedReads {
    reads: Mutex<HashMap<FeedReadKey, Weak<SharedRead>>>,
}

impl SharedFeedReads {
    /// The answer of `read` for `key`: run by the first caller, awaited by
    /// the others. If the caller running it goes away (its client hung
    /// up), the next one waiting runs it.
    pub async fn read<F, Fut>(&self, key: FeedReadKey, read: F) -> Result<FeedBody>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<FeedBody>>,
    {
        let Some(share) = self.join(key) else {
            // A poisoned map: read alone rather than fail.
            return read().await;
        };
        match &share.read {
            Some(cell) => cell.get_or_init(read).await.clone(),
            None => read().await,
        }
    }

    fn join(&self, key: FeedReadKey) -> Option<Share<'_>> {
        let mut reads = self.reads.lock().ok()?;
        let cell = match reads.get(&key).and_then(Weak::upgrade) {
            Some(cell) => cell,
            None => {
                let cell = Arc::new(SharedRead::new());
                reads.insert(key.clone(), Arc::downgrade(&cell));
                cell
            }
        };
        Some(Share {
            reads: self,
            key,
            read: Some(cell),
        })
    }

    /// Reads held by some poll (tests).
    #[cfg(test)]
    pub(crate) fn len_for_tests(&self) -> usize {
        self.reads.lock().map(|r| r.len()).unwrap_or(0)
    }
}

/// A poll's hold on a shared read; the last one to let go removes it.
struct Share<'a> {
    reads: &'a SharedFeedReads,
    key: FeedReadKey,
    read: Option<Arc<SharedRead>>,
}

impl Drop for Share<'_> {
    fn drop(&mut self) {
        self.read.take();
        if let Ok(mut reads) = self.reads.reads.lock() {
            // Another poll may have put a new read under the key since.
            if reads
                .get(&self.key)
                .is_some_and(|read| read.strong_count() == 0)
            {
                reads.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use latet_core::wire::WIRE_VERSION;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    fn key(key_id: i64, token: u8, after: u64, epoch: u64) -> FeedReadKey {
        FeedReadKey {
            key_id,
            token_hash: [token; 32],
            after,
            epoch,
        }
    }

    fn body(head: u64) -> FeedBody {
        FeedBody::of(&FeedAnswer::Events {
            version: WIRE_VERSION,
            head,
            events: vec![],
        })
        .unwrap()
    }

    /// Runs one concurrent read per key, each slow enough for the others to
    /// join it; how many reads ran.
    async fn reads_for(keys: &[FeedReadKey]) -> usize {
        let shared = Arc::new(SharedFeedReads::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = keys
            .iter()
            .cloned()
            .map(|k| {
                let (shared, runs) = (shared.clone(), runs.clone());
                tokio::spawn(async move {
                    shared
                        .read(k, || async {
                            runs.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            Ok(body(1))
                        })
                        .await
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        assert_eq!(
            shared.len_for_tests(),
            0,
            "every entry goes with its last poll"
        );
        runs.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn only_the_same_key_token_after_and_epoch_share() {
        // (keys, reads)
        let cases: Vec<(Vec<FeedReadKey>, usize)> = vec![
            (vec![key(1, 1, 5, 9); 50], 1),
            (vec![key(1, 1, 5, 9), key(2, 1, 5, 9)], 2), // another key
            (vec![key(1, 1, 5, 9), key(1, 2, 5, 9)], 2), // another token
            (vec![key(1, 1, 5, 9), key(1, 1, 6, 9)], 2), // another after
            (vec![key(1, 1, 5, 9), key(1, 1, 5, 10)], 2), // another epoch
            (
                [vec![key(1, 1, 5, 9); 10], vec![key(1, 2, 5, 9); 10]].concat(),
                2,
            ),
        ];
        for (i, (keys, reads)) in cases.iter().enumerate() {
            assert_eq!(reads_for(keys).await, *reads, "case {i}");
        }
    }

    #[tokio::test]
    async fn an_error_is_the_answer_of_every_poll_that_shared_it() {
        let shared = Arc::new(SharedFeedReads::default());
        let runs = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let (shared, runs) = (shared.clone(), runs.clone());
                tokio::spawn(async move {
                    shared
                        .read(key(1, 1, 0, 1), || async {
                            runs.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            Err(ControlError::Unauthorized)
                        })
                        .await
                })
            })
            .collect();
        for task in tasks {
            assert!(matches!(
                task.await.unwrap(),
                Err(ControlError::Unauthorized)
            ));
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_read_left_by_its_poll_is_run_by_the_next_one_waiting() {
        let shared = Arc::new(SharedFeedReads::default());
        let first = {
            let shared = shared.clone();
            tokio::spawn(async move {
                shared
                    .read(key(1, 1, 0, 1), || async {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        Ok(body(1))
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let second = {
            let shared = shared.clone();
            tokio::spawn(
                async move { shared.read(key(1, 1, 0, 1), || async { Ok(body(2)) }).await },
            )
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        first.abort();
        let answer = tokio::time::timeout(Duration::from_secs(5), second)
            .await
            .expect("the waiting poll ran the read")
            .unwrap()
            .unwrap();
        assert_eq!(answer.json, body(2).json);
        assert_eq!(shared.len_for_tests(), 0);
    }
}
