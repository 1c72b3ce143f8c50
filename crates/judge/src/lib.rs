//! The jevjudge Judge: decide, before an agent's draft reaches a customer, whether the draft is
//! supported by the business evidence.
//!
//! # Brief overview
//!
//! - A [`Definition`] (versioned, immutable) holds required [`Criterion`]s: a noul question,
//!   whether a yes is expected, and fail/pass thresholds leaving an uncertain band. Load one
//!   from TOML or JSON with [`Definition::from_path`].
//! - A [`Judge`] reviews a JSON state against a definition with any [`Backend`] within a
//!   budget that covers retries and waits. One review is one System One request.
//! - A [`Verdict`] is PASS, FAIL, INCONCLUSIVE or ERROR, with [`Finding`]s in definition order.
//!   An error is never a probability and never a FAIL; its [`Detail`](jevjudge_wire::Detail) is
//!   a safe code.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use jevjudge_judge::{backend_fn, Criterion, Definition, Judge, Status};
//! use jevjudge_wire::{NoulQuestion, Response};
//! use serde_json::json;
//!
//! let definition = Definition::new("refund-answer-v1", vec![Criterion::new(
//!     "supported",
//!     NoulQuestion::new("Is assistant_answer supported by supporting_context?"),
//!     true, 0.2, 0.8,
//! ).unwrap()]).unwrap();
//! // A backend that answers p = 0.05 (a real one is the HTTP client or a replay of records).
//! let backend = backend_fn(|_request| async {
//!     Ok(Response::from_slice(br#"{"answers":{"supported":{"type":"noul","noul":0.05}}}"#).unwrap())
//! });
//! let judge = Judge::new(backend, Duration::from_secs(2)).unwrap();
//! let state = json!({"user_question": "Has my refund gone through?",
//!                    "supporting_context": ["Business record: no refund has been executed"],
//!                    "assistant_answer": "The refund is complete."});
//! let verdict = tokio::runtime::Runtime::new().unwrap()
//!     .block_on(judge.review(state, &definition));
//! assert_eq!(verdict.status, Status::Fail);
//! ```

mod backend;
pub mod backend_settings;
pub mod choice;
mod definition;
mod definition_file;
#[cfg(feature = "fake")]
mod fake;
pub mod input;
mod judge;
pub mod live;
mod recorder;
pub mod repeat;
mod replay;
mod rescore;
mod systemone;
mod verdict;

pub use backend::{Backend, BackendError, BackendFuture, BackendKind, FnBackend, backend_fn};
pub use definition::{Criterion, Definition, DefinitionError, thresholds_valid};
pub use definition_file::{
    DEFAULT_MAX_DEFINITION_BYTES, DefinitionFormat, LoadError, LoadErrorKind, MAX_CRITERIA,
};
#[cfg(feature = "fake")]
pub use fake::FakeBackend;
pub use judge::{BudgetNotPositive, Judge, aggregate, score};
pub use recorder::{RecordWriter, Recording};
pub use replay::{ReplayBackend, ReplayError, response_of};
pub use systemone::{SystemOneBackend, backend_error};
pub use verdict::{ErrorCode, Finding, Findings, Status, Verdict};
