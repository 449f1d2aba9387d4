//! A fake LLM provider for tests and the demo run: OpenAI Chat Completions,
//! Responses, legacy completions and embeddings (Azure's paths too),
//! Anthropic Messages, count_tokens and batches, Gemini generateContent and
//! Amazon Bedrock Converse, whole and streamed in each provider's framing,
//! answering with an echo of what it received (see the crate's README.md).

pub mod anthropic;
pub mod api;
pub mod bedrock;
pub mod exchange;
pub mod gemini;
pub mod openai_chat;
pub mod openai_completions;
pub mod openai_embeddings;
pub mod openai_responses;
pub mod ordered_json;
pub mod paced_body;
pub mod prompt;
pub mod request_log;
pub mod server;
pub mod sse;

use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

pub use request_log::RequestLog;
pub use server::FakeLlm;

/// Serves connections from `listener` until the process ends. Each
/// connection is served on its own task: HTTP/1.1 with keep-alive, or
/// HTTP/2 with prior knowledge (h2c, told apart by the connection preface).
pub async fn serve(listener: TcpListener, fake: Arc<FakeLlm>) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        // Small writes must leave at once: the streamed chunks are the point.
        stream.set_nodelay(true)?;
        let fake = Arc::clone(&fake);
        tokio::spawn(async move {
            let service = service_fn(move |request| server::handle(request, Arc::clone(&fake)));
            // A client that goes away mid-answer is not an error worth a line.
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
