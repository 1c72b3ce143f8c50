//! Serving the router on a socket: one task per connection, timeouts on request heads and
//! idle connections, a cap on open connections, and a graceful shutdown that waits only for
//! requests in flight.
//!
//! Why a hand-written accept loop rather than `axum::serve`? `axum::serve` sets no header-read
//! or idle timeout and no connection cap, and its graceful shutdown waits for every open
//! connection — one that sent half a request head held a shutdown until the client gave up.

use std::{future::Future, io, net::SocketAddr, sync::Arc, time::Duration};

use axum::{
    Router,
    body::Body,
    extract::{ConnectInfo, Request},
};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{
    net::{TcpListener, TcpStream},
    sync::watch,
    task::JoinSet,
};
use tower::ServiceExt as _;

use crate::{
    Metrics, ServeState, app,
    connection::{Activity, Guarded, Registry, ReviewClock, Watched},
};

/// The largest request head (and read buffer) a connection keeps, in bytes: a head beyond it
/// is refused by hyper with 431. hyper's own default is about 400 KiB per connection.
const MAX_BUF_BYTES: usize = 64 * 1024;

/// How long an idle connection gets to close by itself at shutdown before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_millis(100);

/// The answer to a connection over the cap when every open connection is busy.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
content-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: 86\r\n\r\n\
{\"error\":{\"code\":\"too_many_connections\",\"message\":\"too many open connections; retry\"}}";

/// The per-connection settings taken from [`crate::Config`].
#[derive(Debug, Clone, Copy)]
struct Limits {
    header_timeout: Duration,
    idle_timeout: Duration,
}

/// Serves [`app`] on `listener` until `shutdown` resolves, then stops accepting, closes every
/// connection with no request in flight (idle keep-alive and half-sent heads alike), lets every
/// in-flight request finish (reviews end by their budget) and returns once all connections
/// are closed.
///
/// Each connection is closed when a request head is not complete within
/// [`crate::Config::header_timeout`] of its first byte, or when no request is in flight and no
/// byte arrived for [`crate::Config::idle_timeout`]. At most [`crate::Config::max_connections`]
/// are open: a new one over the cap closes the oldest connection that has no request in
/// flight, or, when every one is busy, gets a `503 too_many_connections` and is closed.
///
/// Connections get `TCP_NODELAY`, so small responses are not held back by Nagle's algorithm.
pub async fn serve<F>(listener: TcpListener, state: ServeState, shutdown: F) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let config = state.config();
    let limits = Limits {
        header_timeout: config.header_timeout,
        idle_timeout: config.idle_timeout,
    };
    let registry = Registry::new(config.max_connections);
    let metrics = state.metrics().clone();
    let router = app(state);
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        accept_failed(error).await;
                        continue;
                    }
                };
                let Some(activity) = registry.admit() else {
                    metrics.record_connection_closed("refused");
                    refuse(stream);
                    continue;
                };
                connections.spawn(connection(
                    (stream, peer),
                    router.clone(),
                    limits,
                    metrics.clone(),
                    activity,
                    Arc::clone(&registry),
                    stopping.clone(),
                ));
            }
        }
    }
    drop(listener);
    let _ = stop.send(true);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// An accept error: per-connection ones are skipped; others (out of file descriptors) pause
/// accepting for a second rather than spinning.
async fn accept_failed(error: io::Error) {
    if matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::warn!(%error, "cannot accept a connection; pausing 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// Answers 503 without waiting (whatever fits in the socket buffer) and closes.
fn refuse(stream: TcpStream) {
    let _ = stream.try_write(REFUSED);
}

async fn connection(
    (stream, peer): (TcpStream, SocketAddr),
    router: Router,
    limits: Limits,
    metrics: Metrics,
    activity: Arc<Activity>,
    registry: Arc<Registry>,
    mut stopping: watch::Receiver<bool>,
) {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "cannot set TCP_NODELAY");
    }
    let io = TokioIo::new(Watched::new(stream, Arc::clone(&activity)));
    let service = hyper::service::service_fn({
        let activity = Arc::clone(&activity);
        let metrics = metrics.clone();
        move |request: Request<Incoming>| {
            let clock = ReviewClock::new();
            let guard = activity
                .begin_request()
                .timed(clock.clone(), metrics.clone());
            let router = router.clone();
            async move {
                let mut request = request.map(Body::new);
                // The review handler reports its queue wait and review time here.
                request.extensions_mut().insert(clock);
                // The client's address, for what is limited per address (sign-in attempts).
                request.extensions_mut().insert(ConnectInfo(peer));
                let response = match router.oneshot(request).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                };
                Ok::<_, std::convert::Infallible>(
                    response.map(|body| Body::new(Guarded::new(body, guard))),
                )
            }
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        // hyper's header timer runs from the moment it waits for a head (idle time included):
        // a backstop behind the two timeouts below.
        .header_read_timeout(limits.idle_timeout.saturating_add(limits.header_timeout))
        .max_buf_size(MAX_BUF_BYTES);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let mut stop_requested = *stopping.borrow();
    loop {
        if stop_requested {
            break;
        }
        let deadline = activity.deadline(limits.header_timeout, limits.idle_timeout);
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended");
                }
                registry.leave(&activity);
                return;
            }
            changed = stopping.changed() => {
                stop_requested = changed.is_err() || *stopping.borrow();
            }
            () = activity.evicted() => {
                tracing::debug!("connection closed to make room for a new one");
                metrics.record_connection_closed("evicted");
                stop_requested = true;
            }
            () = tokio::time::sleep_until(deadline) => {
                if let Some(reason) = activity.expired(limits.header_timeout, limits.idle_timeout) {
                    tracing::debug!(reason, "connection closed");
                    metrics.record_connection_closed(reason);
                    registry.leave(&activity);
                    return;
                }
            }
        }
    }
    // Shutting down (or evicted): no new request on this connection. One in flight finishes
    // and its response is written; an idle or half-sent one is closed after a short grace.
    connection.as_mut().graceful_shutdown();
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended at shutdown");
                }
                break;
            }
            () = tokio::time::sleep(CLOSE_GRACE) => {
                if !activity.is_busy() {
                    break;
                }
            }
        }
    }
    registry.leave(&activity);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_a_complete_response_with_a_json_error() {
        let text = std::str::from_utf8(REFUSED).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(length, body.len());
        let error: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(error["error"]["code"], "too_many_connections");
    }
}
