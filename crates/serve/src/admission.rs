//! Admission control: a bound on concurrent backend requests and a bounded queue in front.
//!
//! Why admit before reading the body? A queue bounds memory only if everything that holds a
//! body is counted. A request takes a [`Ticket`] first (O(1), no waiting); with `max_concurrent
//! + queue` tickets out, the next request gets a fast 503 and its body is never read. A ticket
//! holder then reads its body and waits (FIFO) for one of `max_concurrent` slots.

use std::sync::{
    Arc,
    atomic::{AtomicUsize, Ordering},
};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The bound on reviews: `max_concurrent` running, `queue` more waiting.
#[derive(Debug)]
pub(crate) struct Admission {
    slots: Arc<Semaphore>,
    max_concurrent: usize,
    capacity: usize,
    admitted: AtomicUsize,
}

/// A place among the admitted requests (running or waiting); dropping it leaves.
#[derive(Debug)]
pub(crate) struct Ticket {
    admission: Arc<Admission>,
}

impl Admission {
    /// `max_concurrent` slots (at least 1) and room for `queue` waiting requests.
    pub(crate) fn new(max_concurrent: usize, queue: usize) -> Arc<Admission> {
        Arc::new(Admission {
            slots: Arc::new(Semaphore::new(max_concurrent)),
            max_concurrent,
            capacity: max_concurrent.saturating_add(queue),
            admitted: AtomicUsize::new(0),
        })
    }

    /// A ticket, or `None` when `max_concurrent + queue` requests are already admitted.
    pub(crate) fn enter(self: &Arc<Self>) -> Option<Ticket> {
        self.admitted
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |admitted| {
                (admitted < self.capacity).then_some(admitted + 1)
            })
            .ok()
            .map(|_| Ticket {
                admission: Arc::clone(self),
            })
    }

    /// Reviews holding a backend slot.
    pub(crate) fn running(&self) -> usize {
        self.max_concurrent
            .saturating_sub(self.slots.available_permits())
    }

    /// Admitted requests not holding a slot (reading their body or waiting).
    pub(crate) fn waiting(&self) -> usize {
        self.admitted
            .load(Ordering::Acquire)
            .saturating_sub(self.running())
    }
}

impl Ticket {
    /// Waits (first come, first served) for a backend slot; the slot is freed when the permit
    /// is dropped.
    pub(crate) async fn slot(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.admission.slots).acquire_owned().await.ok()
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.admission.admitted.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn admits_slots_plus_queue_then_refuses() {
        let admission = Admission::new(2, 1);
        let tickets: Vec<Ticket> = (0..3).map(|_| admission.enter().unwrap()).collect();
        assert!(admission.enter().is_none());
        let first = tickets[0].slot().await.unwrap();
        let _second = tickets[1].slot().await.unwrap();
        assert_eq!(admission.running(), 2);
        assert_eq!(admission.waiting(), 1);
        // The third waits until a slot frees.
        let third = tokio::time::timeout(std::time::Duration::from_millis(20), tickets[2].slot());
        assert!(third.await.is_err());
        drop(first);
        assert!(tickets[2].slot().await.is_some());
        drop(tickets);
        assert!(admission.enter().is_some());
    }

    #[test]
    fn a_zero_queue_admits_only_the_slots() {
        let admission = Admission::new(1, 0);
        let ticket = admission.enter().unwrap();
        assert!(admission.enter().is_none());
        drop(ticket);
        assert!(admission.enter().is_some());
    }
}
