//! Running a [`Service`](crate::Service): listening, OS signals (SIGHUP reloads the definitions and the reviewer list file; SIGTERM and
//! SIGINT stop), the retention sweep, and a drain bounded in time.

use std::{io, net::SocketAddr, path::PathBuf, time::Duration};

use tokio::{net::TcpListener, sync::oneshot, task::JoinHandle};

use crate::{ServeState, reload::reload_definitions};

/// How long a drain may take beyond twice the maximum budget, by default. A review ends
/// within its budget from its arrival (slot wait included); the second budget is slack for a
/// body still arriving (it may take up to the maximum budget) and for writing responses.
pub const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// How a [`Service`](crate::Service) runs: which OS signals it handles and how long its drain may take.
#[derive(Debug, Default)]
#[must_use]
pub struct RunOptions {
    signals: Signals,
    drain_limit: Option<Duration>,
}

#[derive(Debug, Default)]
enum Signals {
    #[default]
    None,
    Install,
    Installed(OsSignals),
}

impl RunOptions {
    /// No OS signals handled (the caller's shutdown future alone stops the service); the
    /// default drain limit.
    pub fn new() -> RunOptions {
        RunOptions::default()
    }

    /// Handle SIGHUP (reload the definitions directory, when one was given), SIGTERM and
    /// SIGINT (stop and drain); the handlers are installed by
    /// [`Service::bind`](crate::Service::bind) or [`Service::listen`](crate::Service::listen)
    /// before the socket is bound or taken.
    pub fn handle_os_signals(mut self) -> RunOptions {
        self.signals = Signals::Install;
        self
    }

    /// Handle the OS signals with handlers installed earlier by [`OsSignals::install`] (at the
    /// very start of a program, so that a signal during start-up is not lost).
    pub fn os_signals(mut self, signals: OsSignals) -> RunOptions {
        self.signals = Signals::Installed(signals);
        self
    }

    /// How long the drain may take before connections still busy are closed (default: twice
    /// [`crate::Config::max_budget`] plus [`DRAIN_GRACE`]).
    pub fn drain_limit(mut self, limit: Duration) -> RunOptions {
        self.drain_limit = Some(limit);
        self
    }

    /// The options with their signal handlers installed.
    pub(crate) fn installed(mut self) -> Result<RunOptions, RunError> {
        if matches!(self.signals, Signals::Install) {
            self.signals = Signals::Installed(OsSignals::install().map_err(RunError::Signals)?);
        }
        Ok(self)
    }
}

/// The OS signal handlers of a service: SIGHUP, SIGTERM and SIGINT (Ctrl-C elsewhere).
///
/// From [`OsSignals::install`] on, these signals no longer take their default action (ending
/// the process): each is kept until the running service takes it.
#[derive(Debug)]
pub struct OsSignals {
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

/// What a signal asks for.
enum Asked {
    Reload,
    Stop,
}

impl OsSignals {
    /// Installs the handlers now (inside a tokio runtime).
    pub fn install() -> io::Result<OsSignals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(OsSignals {
                hangup: signal(SignalKind::hangup())?,
                terminate: signal(SignalKind::terminate())?,
                interrupt: signal(SignalKind::interrupt())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(OsSignals {})
        }
    }

    /// The next signal.
    async fn next(&mut self) -> Asked {
        #[cfg(unix)]
        {
            tokio::select! {
                Some(()) = self.hangup.recv() => Asked::Reload,
                Some(()) = self.terminate.recv() => Asked::Stop,
                Some(()) = self.interrupt.recv() => Asked::Stop,
                else => std::future::pending().await,
            }
        }
        #[cfg(not(unix))]
        {
            match tokio::signal::ctrl_c().await {
                Ok(()) => Asked::Stop,
                Err(_) => std::future::pending().await,
            }
        }
    }
}

/// A service bound to its socket, not yet serving: read its address, announce it, then
/// [`Listening::run`].
#[derive(Debug)]
pub struct Listening {
    state: ServeState,
    retain_state: Option<Duration>,
    definitions_dir: Option<PathBuf>,
    listener: TcpListener,
    local_addr: SocketAddr,
    signals: Option<OsSignals>,
    drain_limit: Duration,
}

impl Listening {
    pub(crate) fn new(
        (state, retain_state, definitions_dir): (ServeState, Option<Duration>, Option<PathBuf>),
        listener: TcpListener,
        options: RunOptions,
    ) -> Result<Listening, RunError> {
        let local_addr = listener.local_addr().map_err(RunError::Address)?;
        let drain_limit = options.drain_limit.unwrap_or_else(|| {
            state
                .config()
                .max_budget
                .saturating_mul(2)
                .saturating_add(DRAIN_GRACE)
        });
        let signals = match options.signals {
            Signals::Installed(signals) => Some(signals),
            Signals::None | Signals::Install => None,
        };
        Ok(Listening {
            state,
            retain_state,
            definitions_dir,
            listener,
            local_addr,
            signals,
            drain_limit,
        })
    }

    /// The address the socket is bound to (the port chosen for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The state every handler shares.
    pub fn state(&self) -> &ServeState {
        &self.state
    }

    /// Serves until `shutdown` resolves or, with OS signals handled, SIGTERM or SIGINT
    /// arrives; SIGHUP meanwhile reloads the definitions directory and the reviewer list file. Then stops accepting,
    /// closes idle and half-open connections, and lets in-flight requests finish within the
    /// drain limit (those still running after it are closed). Runs the retention sweep of
    /// kept state text while serving.
    pub async fn run<F>(self, shutdown: F) -> Result<Stopped, RunError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let Listening {
            state,
            retain_state,
            definitions_dir,
            listener,
            signals,
            drain_limit,
            local_addr,
        } = self;
        let config = state.config();
        let versions: Vec<String> = state
            .definitions()
            .iter()
            .map(|d| d.version().to_owned())
            .collect();
        tracing::info!(
            addr = %local_addr,
            definitions = ?versions,
            backend = %state.backend_kind(),
            max_concurrent = config.max_concurrent,
            queue = config.queue,
            max_connections = config.max_connections,
            auth = config.auth_tokens.is_enabled(),
            "serving"
        );
        let retention: Option<JoinHandle<()>> = match (retain_state, state.decision_log()) {
            (Some(retain), Some(log)) => Some(tokio::spawn(log.clone().run_retention(retain))),
            _ => None,
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let mut server = tokio::spawn(crate::serve(listener, state.clone(), async move {
            let _ = stopped.await;
        }));
        let mut signals = signals;
        tokio::pin!(shutdown);
        let cause = loop {
            let next_signal = async {
                match signals.as_mut() {
                    Some(signals) => signals.next().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = &mut shutdown => break StopCause::Shutdown,
                asked = next_signal => match asked {
                    Asked::Stop => break StopCause::Signal,
                    Asked::Reload => {
                        match &definitions_dir {
                            Some(dir) => {
                                tracing::info!(dir = %dir.display(), "SIGHUP: reloading the definitions");
                                let _ = reload_definitions(&state, dir).await;
                            }
                            None => tracing::info!("SIGHUP: no definitions directory to reload"),
                        }
                        let file = state
                            .queue_policy()
                            .and_then(|policy| policy.reviewers_file.clone());
                        if let Some(file) = file {
                            tracing::info!(file = %file.display(), "SIGHUP: reloading the reviewers");
                            let _ = crate::reload::reload_reviewers(&state, &file);
                        }
                    }
                },
                outcome = &mut server => {
                    // The accept loop ends by itself only on a failure.
                    if let Some(retention) = retention {
                        retention.abort();
                    }
                    return Err(match outcome {
                        Ok(Err(error)) => RunError::Server(error),
                        Ok(Ok(())) => RunError::Server(io::Error::other("the accept loop ended")),
                        Err(error) => RunError::Server(io::Error::other(error.to_string())),
                    });
                }
            }
        };
        tracing::info!("stopping: no new connections; finishing in-flight reviews");
        let stopping = tokio::time::Instant::now();
        let _ = stop.send(());
        let drained = match tokio::time::timeout(drain_limit, &mut server).await {
            Ok(Ok(outcome)) => {
                outcome.map_err(RunError::Server)?;
                true
            }
            Ok(Err(error)) => return Err(RunError::Server(io::Error::other(error.to_string()))),
            Err(_) => {
                tracing::warn!(
                    limit_secs = drain_limit.as_secs(),
                    "in-flight requests did not finish in time; closing them"
                );
                server.abort();
                false
            }
        };
        // Shadow reviews get what is left of the drain time.
        state
            .drain_shadows(drain_limit.saturating_sub(stopping.elapsed()))
            .await;
        if let Some(retention) = retention {
            retention.abort();
        }
        Ok(Stopped { cause, drained })
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stopped {
    /// What stopped it.
    pub cause: StopCause,
    /// Whether every in-flight request finished within the drain limit.
    pub drained: bool,
}

/// What stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopCause {
    /// The shutdown future resolved.
    Shutdown,
    /// SIGTERM or SIGINT.
    Signal,
}

/// Why a service could not listen or stopped on a failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// The bound address could not be read.
    #[error("cannot read the bound address: {0}")]
    Address(io::Error),
    /// The OS signal handlers could not be installed.
    #[error("cannot handle OS signals: {0}")]
    Signals(io::Error),
    /// The server failed.
    #[error("the server failed: {0}")]
    Server(io::Error),
}
