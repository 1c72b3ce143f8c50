//! The repeat index of the review being run, for backends whose answer depends on it.
//!
//! `eval --repeat N` reviews every case N times. A replay of a recording that holds several
//! records of one request serves the k-th record to the k-th repeat, so the backend must know
//! which repeat a request belongs to — but a [`Backend`](crate::Backend) sees only the request.
//! Rather than widen that trait (and every backend and wrapper), the runner runs each review
//! inside [`scope`], and a backend reads [`current`] while it is called. The value is
//! task-local, set during every poll of the scoped future only, so it is deterministic under any
//! concurrency: reviews interleaved on one task each see their own index, whatever order they
//! finish in.
//!
//! Outside any scope (a single run, `judge`, the review service) [`current`] is `None`, and
//! backends behave as without repeats. A backend must read the index synchronously in
//! [`Backend::answer`](crate::Backend::answer) (or in a future it returns, not in a task it
//! spawns): task-locals do not cross `tokio::spawn`.
//!
//! ```
//! use jevjudge_judge::repeat;
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! assert_eq!(repeat::current(), None);
//! let seen = repeat::scope(2, async { repeat::current() }).await;
//! assert_eq!(seen, Some(2));
//! # });
//! ```

use std::future::Future;

tokio::task_local! {
    static REPEAT: u32;
}

/// Runs `future` as repeat `repeat` (0-based) of its review.
pub fn scope<F: Future>(repeat: u32, future: F) -> impl Future<Output = F::Output> {
    REPEAT.scope(repeat, future)
}

/// The repeat index (0-based) of the review being run, if the caller set one with [`scope`].
pub fn current() -> Option<u32> {
    REPEAT.try_with(|repeat| *repeat).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_like::join_all_in_one_task;

    mod futures_like {
        use std::future::Future;

        /// Polls every future on the current task until all are done (no spawning), like
        /// the runner's `buffer_unordered`.
        pub async fn join_all_in_one_task<F: Future + Unpin>(futures: Vec<F>) -> Vec<F::Output>
        where
            F::Output: Clone,
        {
            let mut futures: Vec<Option<F>> = futures.into_iter().map(Some).collect();
            let mut outputs: Vec<Option<F::Output>> = vec![None; futures.len()];
            std::future::poll_fn(|cx| {
                let mut pending = false;
                for (slot, output) in futures.iter_mut().zip(outputs.iter_mut()) {
                    if let Some(future) = slot {
                        match std::pin::Pin::new(future).poll(cx) {
                            std::task::Poll::Ready(value) => {
                                *output = Some(value);
                                *slot = None;
                            }
                            std::task::Poll::Pending => pending = true,
                        }
                    }
                }
                if pending {
                    std::task::Poll::Pending
                } else {
                    std::task::Poll::Ready(())
                }
            })
            .await;
            outputs.into_iter().flatten().collect()
        }
    }

    // Interleaved reviews on one task each see their own index across their await points.
    #[tokio::test(start_paused = true)]
    async fn interleaved_scopes_each_see_their_own_index() {
        let futures: Vec<_> = (0..4u32)
            .map(|k| {
                Box::pin(scope(k, async move {
                    let before = current();
                    // Finish in reverse order.
                    tokio::time::sleep(std::time::Duration::from_millis(u64::from(10 - k))).await;
                    (before, current())
                }))
            })
            .collect();
        let seen = join_all_in_one_task(futures).await;
        assert_eq!(seen, (0..4).map(|k| (Some(k), Some(k))).collect::<Vec<_>>());
        assert_eq!(current(), None);
    }
}
