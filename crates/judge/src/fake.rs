//! The in-process deterministic fake ([`BackendKind::Fake`], `jevjudge … --fake`): the fake
//! server's answerer ([`jevjudge_fake::answer`]) called directly, without a socket.
//!
//! Built with the crate feature `fake` (the `jevjudge` binary turns it on), so that embedding
//! the Judge does not pull in the fake server's crate.

use jevjudge_wire::{DEFAULT_MODEL, Detail, Request, Response};
use tokio::time::Instant;

use crate::{Backend, BackendError, BackendFuture, BackendKind};

/// Answers every review with the fake server's deterministic answers (same request, same
/// answers, as `jevjudge fake-server` would give over HTTP). Its kind is
/// [`BackendKind::Fake`], so every output made from its answers says `fake`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FakeBackend;

impl FakeBackend {
    /// The answer to one request: the request's body as a JSON value (no bytes written and
    /// read back), answered by the fake, read as a typed [`Response`]. A request that fails
    /// its own checks is `REQUEST_INVALID`; one the fake refuses is the HTTP status the fake
    /// server would answer.
    pub fn respond(request: &Request) -> Result<Response, BackendError> {
        let body = request
            .to_value(DEFAULT_MODEL)
            .map_err(|_| BackendError::new(Detail::RequestInvalid))?;
        match jevjudge_fake::answer(&body) {
            Ok(answer) => Response::from_json(&answer).map_err(|e| BackendError::new(e.detail())),
            Err(rejection) => Err(BackendError::new(Detail::HttpStatus(rejection.status))),
        }
    }
}

impl Backend for FakeBackend {
    fn answer<'a>(&'a self, request: &'a Request, _deadline: Instant) -> BackendFuture<'a> {
        Box::pin(std::future::ready(FakeBackend::respond(request)))
    }

    fn kind(&self) -> BackendKind {
        BackendKind::Fake
    }
}

#[cfg(test)]
mod tests {
    use jevjudge_wire::{NoulQuestion, Question, Questions};
    use serde_json::json;

    use super::*;

    fn request(state: serde_json::Value, questions: Questions) -> Request {
        Request::new(state, questions)
    }

    #[test]
    fn the_fake_backend_answers_as_the_fake_server_does() {
        let request = request(
            json!({"user_question": "Has my refund gone through?", "amount": 12.5,
                   "assistant_answer": "The refund is complete."}),
            [
                (
                    "supported",
                    Question::from(NoulQuestion::new("Is it supported?")),
                ),
                ("polite", Question::from(NoulQuestion::new("Is it polite?"))),
            ]
            .into_iter()
            .collect(),
        );
        // What the fake server answers for the request's body bytes.
        let body: serde_json::Value =
            serde_json::from_slice(&request.to_body(DEFAULT_MODEL).unwrap()).unwrap();
        let served = Response::from_json(&jevjudge_fake::answer(&body).unwrap()).unwrap();
        let answered = FakeBackend::respond(&request).unwrap();
        assert_eq!(answered, served);
        assert_eq!(answered.answers.len(), 2);
        assert_eq!(FakeBackend.kind(), BackendKind::Fake);
    }

    #[test]
    fn a_request_that_fails_its_checks_is_request_invalid() {
        let error =
            FakeBackend::respond(&request(json!({"a": 1}), Questions::default())).unwrap_err();
        assert_eq!(error.detail(), Detail::RequestInvalid);
    }

    #[test]
    fn a_request_the_fake_refuses_carries_the_servers_status() {
        let mut request = request(
            json!({"a": 1}),
            [("q", Question::from(NoulQuestion::new("Is it?")))]
                .into_iter()
                .collect(),
        );
        request.model = Some("not-a-model".into());
        let error = FakeBackend::respond(&request).unwrap_err();
        // The fake server answers an unknown model 400 (systemone-wire.md §5).
        assert_eq!(error.detail(), Detail::HttpStatus(400));
    }
}
