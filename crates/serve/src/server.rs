//! Serving the router on a socket, with graceful shutdown.

use std::{future::Future, io};

use axum::serve::ListenerExt as _;
use tokio::net::TcpListener;

use crate::{ServeState, app};

/// Serves [`app`] on `listener` until `shutdown` resolves, then stops accepting, lets every
/// in-flight request finish (reviews end by their budget) and returns once all connections
/// are closed. Idle keep-alive connections are closed at once.
///
/// Connections get `TCP_NODELAY`, so small responses are not held back by Nagle's algorithm.
pub async fn serve<F>(listener: TcpListener, state: ServeState, shutdown: F) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let listener = listener.tap_io(|stream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
    });
    axum::serve(listener, app(state))
        .with_graceful_shutdown(shutdown)
        .await
}
