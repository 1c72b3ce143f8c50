//! Which fault hits which request.

use std::collections::BTreeMap;

use crate::fault::Fault;

/// A script of faults for the `POST /v1/systemone` requests a server receives.
///
/// Requests are numbered from 1, counting from when the plan was installed
/// ([`crate::FakeServer::script`]). A request gets, in order of precedence: the fault pinned to
/// its number with [`FaultPlan::at`] / [`FaultPlan::and_at`]; else the n-th fault of the
/// [`FaultPlan::then`] sequence; else the [`FaultPlan::otherwise`] fault (set by
/// [`FaultPlan::always`]); else a normal answer.
///
/// ```
/// use jevjudge_fake::{Fault, FaultPlan};
///
/// // 429, then 529, then normal answers.
/// let plan = FaultPlan::new().then(Fault::RateLimited).then(Fault::Overloaded);
/// assert_eq!(plan.fault_for(2), Some(&Fault::Overloaded));
/// assert_eq!(plan.fault_for(3), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultPlan {
    sequence: Vec<Fault>,
    pinned: BTreeMap<usize, Fault>,
    otherwise: Option<Fault>,
}

impl FaultPlan {
    /// An empty plan: every request is answered normally.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `fault` to the sequence: the k-th call of `then` applies to request k.
    pub fn then(mut self, fault: Fault) -> Self {
        self.sequence.push(fault);
        self
    }

    /// A plan that applies `fault` to every request.
    pub fn always(fault: Fault) -> Self {
        Self::new().otherwise(fault)
    }

    /// A plan that applies `fault` to request `n` (1-based) only.
    pub fn at(n: usize, fault: Fault) -> Self {
        Self::new().and_at(n, fault)
    }

    /// Also applies `fault` to request `n` (1-based), ahead of the sequence.
    pub fn and_at(mut self, n: usize, fault: Fault) -> Self {
        self.pinned.insert(n, fault);
        self
    }

    /// Applies `fault` to every request after the sequence ends (and not pinned).
    pub fn otherwise(mut self, fault: Fault) -> Self {
        self.otherwise = Some(fault);
        self
    }

    /// The fault for request `n` (1-based), or `None` for a normal answer.
    pub fn fault_for(&self, n: usize) -> Option<&Fault> {
        let fault = self
            .pinned
            .get(&n)
            .or_else(|| n.checked_sub(1).and_then(|index| self.sequence.get(index)))
            .or(self.otherwise.as_ref());
        fault.filter(|fault| **fault != Fault::Pass)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sequence_then_normal_answers() {
        let plan = FaultPlan::new()
            .then(Fault::RateLimited)
            .then(Fault::Pass)
            .then(Fault::Overloaded);
        assert_eq!(plan.fault_for(1), Some(&Fault::RateLimited));
        assert_eq!(plan.fault_for(2), None);
        assert_eq!(plan.fault_for(3), Some(&Fault::Overloaded));
        assert_eq!(plan.fault_for(4), None);
        assert_eq!(plan.fault_for(0), None);
    }

    #[test]
    fn always_repeats_forever() {
        let plan = FaultPlan::always(Fault::Overloaded);
        assert!((1..100).all(|n| plan.fault_for(n) == Some(&Fault::Overloaded)));
    }

    #[test]
    fn pinned_requests_win() {
        let plan = FaultPlan::at(3, Fault::Stall)
            .and_at(1, Fault::Close)
            .then(Fault::RateLimited);
        assert_eq!(plan.fault_for(1), Some(&Fault::Close));
        assert_eq!(plan.fault_for(2), None);
        assert_eq!(plan.fault_for(3), Some(&Fault::Stall));
    }

    #[test]
    fn the_empty_plan_answers_normally() {
        assert_eq!(FaultPlan::new().fault_for(1), None);
    }
}
