//! A fake on a real socket. Connections are served with hyper directly (not `axum::serve`) so
//! that a scripted fault can make hyper drop a connection without answering.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tower::ServiceExt as _;

use crate::config::Config;
use crate::journal::JournalEntry;
use crate::plan::FaultPlan;
use crate::reply::DropConnection;
use crate::router::app;
use crate::state::FakeState;

/// How long [`FakeServer::shutdown`] lets in-flight requests finish before closing them.
const GRACE: Duration = Duration::from_secs(3);

/// A running fake System One server on a local socket.
///
/// Dropping it stops accepting and closes connections in the background; [`FakeServer::shutdown`]
/// does the same and waits for it.
pub struct FakeServer {
    addr: SocketAddr,
    state: FakeState,
    task: Option<JoinHandle<()>>,
}

/// The error a service returns to make hyper close the connection without a response.
#[derive(Debug, thiserror::Error)]
#[error("connection dropped by a scripted fault")]
struct Dropped;

impl FakeServer {
    /// Binds `addr` (port 0 picks a free port) and starts serving in the background.
    pub async fn start(config: Config, addr: SocketAddr) -> io::Result<FakeServer> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let state = FakeState::new(config);
        let task = tokio::spawn(accept(listener, app(state.clone()), state.clone()));
        Ok(FakeServer {
            addr,
            state,
            task: Some(task),
        })
    }

    /// The bound address (with the real port when started on port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, for example `http://127.0.0.1:8787`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Replaces the fault plan; its request numbers count from this call.
    pub fn script(&self, plan: FaultPlan) {
        self.state.script(plan);
    }

    /// Every request received so far (the most recent 10 000, at most 64 MiB of bodies),
    /// credentials redacted.
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.state.journal()
    }

    /// How many `POST /v1/systemone` requests were received, faulted or not.
    pub fn request_count(&self) -> usize {
        self.state.request_count()
    }

    /// Stops accepting, lets in-flight requests finish (stalled ones are dropped, anything
    /// still running after 3 s is closed) and waits until every connection is gone.
    pub async fn shutdown(mut self) {
        self.state.begin_shutdown();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.state.begin_shutdown();
    }
}

impl fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeServer")
            .field("addr", &self.addr)
            .field("state", &self.state)
            .finish()
    }
}

async fn accept(listener: TcpListener, router: Router, state: FakeState) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(serve(stream, router.clone(), state.clone()));
                }
                Err(error) => {
                    tracing::warn!(%error, "fake server: accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            () = state.shutting_down() => break,
        }
    }
    drop(listener);
    let drained = tokio::time::timeout(GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        connections.shutdown().await;
    }
}

async fn serve(stream: TcpStream, router: Router, state: FakeState) {
    let _ = stream.set_nodelay(true);
    let resetter = Arc::new(Resetter::new(&stream));
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let router = router.clone();
        let resetter = Arc::clone(&resetter);
        async move {
            let response = match router.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            match response.extensions().get::<DropConnection>() {
                None => Ok(response),
                Some(drop) => {
                    if drop.reset {
                        resetter.arm();
                    }
                    Err(Dropped)
                }
            }
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "fake server: connection ended");
            }
        }
        () = state.shutting_down() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// Turns the connection's eventual close into a TCP reset: a second handle on the socket sets
/// `SO_LINGER` to zero, which makes the last close send RST instead of FIN.
struct Resetter {
    #[cfg(unix)]
    socket: Option<std::net::TcpStream>,
}

impl Resetter {
    #[cfg(unix)]
    fn new(stream: &TcpStream) -> Self {
        use std::os::fd::AsFd as _;
        let socket = stream
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(std::net::TcpStream::from);
        Self { socket }
    }

    #[cfg(not(unix))]
    fn new(_stream: &TcpStream) -> Self {
        Self {}
    }

    /// Sets zero linger; the reset happens when hyper drops the connection.
    fn arm(&self) {
        #[cfg(unix)]
        if let Some(handle) = self
            .socket
            .as_ref()
            .and_then(|socket| socket.try_clone().ok())
        {
            let _ = tokio::net::TcpSocket::from_std_stream(handle).set_zero_linger();
        }
    }
}
