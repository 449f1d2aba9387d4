//! A response body that hands hyper one chunk at a time and yields between
//! chunks, so that each chunk leaves in its own write (hyper flushes what it
//! buffered whenever the body is not ready), optionally after a pause.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::Sleep;

/// Chunks to send, one write each.
pub struct PacedBody {
    chunks: VecDeque<Bytes>,
    delay: Duration,
    pause: Option<Pin<Box<Sleep>>>,
    owes_pause: bool,
    /// Set for a whole body: hyper then sends `content-length` instead of
    /// `transfer-encoding: chunked`.
    exact_length: Option<u64>,
}

impl PacedBody {
    /// A body sent in `chunks`, with `delay` between two chunks (zero: only
    /// yield to the connection so it flushes).
    pub fn new(chunks: Vec<Bytes>, delay: Duration) -> Self {
        Self {
            chunks: chunks.into_iter().filter(|c| !c.is_empty()).collect(),
            delay,
            pause: None,
            owes_pause: false,
            exact_length: None,
        }
    }

    /// A body sent whole, in one write, with a `content-length`.
    pub fn whole(body: impl Into<Bytes>) -> Self {
        let body: Bytes = body.into();
        let exact_length = Some(body.len() as u64);
        Self {
            exact_length,
            ..Self::new(vec![body], Duration::ZERO)
        }
    }
}

impl Body for PacedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if this.owes_pause && !this.chunks.is_empty() {
            if this.delay.is_zero() {
                // Not ready this once: hyper flushes the previous chunk, and
                // the wake brings it straight back here.
                this.owes_pause = false;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let delay = this.delay;
            let pause = this
                .pause
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(delay)));
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.pause = None;
            this.owes_pause = false;
        }
        match this.chunks.pop_front() {
            Some(chunk) => {
                this.owes_pause = true;
                Poll::Ready(Some(Ok(Frame::data(chunk))))
            }
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        match self.exact_length {
            Some(length) => SizeHint::with_exact(length),
            None => SizeHint::default(),
        }
    }
}
