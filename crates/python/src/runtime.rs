//! The one tokio runtime every review of the process runs on, and the Ctrl-C watch of a
//! blocking call.

use std::{
    future::Future,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use pyo3::prelude::*;
use tokio::{runtime::Runtime, sync::Notify};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The shared runtime, built on first use.
pub fn get() -> PyResult<&'static Runtime> {
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("jevjudge")
        .build()
        .map_err(|e| {
            pyo3::exceptions::PyRuntimeError::new_err(format!(
                "cannot start the async runtime: {e}"
            ))
        })?;
    Ok(RUNTIME.get_or_init(|| runtime))
}

/// Builds the runtime and hands it to pyo3-async-runtimes, so that `review_async` futures run
/// on it too.
pub fn install() -> PyResult<()> {
    let runtime = get()?;
    // A second import of the module (a sub-interpreter) finds it installed already: not an
    // error.
    let _ = pyo3_async_runtimes::tokio::init_with_runtime(runtime);
    Ok(())
}

/// The first Python error met while a blocking call ran (Ctrl-C, a failing callback).
#[derive(Clone, Default)]
pub struct Interruption(Arc<Kept>);

#[derive(Default)]
pub struct Kept {
    error: Mutex<Option<PyErr>>,
    set: Notify,
}

impl Interruption {
    /// Keeps `error` unless one is kept already, and wakes [`Interruption::wait`].
    pub fn set(&self, error: PyErr) {
        if let Ok(mut slot) = self.0.error.lock() {
            slot.get_or_insert(error);
        }
        self.0.set.notify_one();
    }

    /// Whether an error is kept.
    pub fn is_set(&self) -> bool {
        self.0
            .error
            .lock()
            .map(|slot| slot.is_some())
            .unwrap_or(true)
    }

    /// The kept error, if any.
    pub fn take(&self) -> Option<PyErr> {
        self.0.error.lock().ok().and_then(|mut slot| slot.take())
    }

    /// Completes as soon as an error is kept, or when Python's signal handlers raise (Ctrl-C
    /// is `KeyboardInterrupt`), which it checks ten times a second.
    pub async fn wait(&self) {
        let signals = async {
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            loop {
                tick.tick().await;
                if let Err(error) = Python::attach(|py| py.check_signals()) {
                    self.set(error);
                    return;
                }
            }
        };
        tokio::select! {
            () = self.0.set.notified() => {}
            () = signals => {}
        }
    }
}

/// Runs `future` on the shared runtime with the GIL released; Ctrl-C drops it and raises
/// `KeyboardInterrupt`.
pub fn block_on<T: Send>(py: Python<'_>, future: impl Future<Output = T> + Send) -> PyResult<T> {
    let runtime = get()?;
    let interruption = Interruption::default();
    let outcome = py.detach(|| {
        runtime.block_on(async {
            tokio::select! {
                value = future => Some(value),
                () = interruption.wait() => None,
            }
        })
    });
    match (outcome, interruption.take()) {
        (Some(value), _) => Ok(value),
        (None, Some(error)) => Err(error),
        (None, None) => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(())),
    }
}
