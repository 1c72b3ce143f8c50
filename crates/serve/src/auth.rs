//! The bearer-token check on `/v1/*` and `/metrics` (the tokens and their constant-time
//! comparison are [`crate::AuthTokens`]).

use axum::{
    extract::{Request, State},
    http::header::AUTHORIZATION,
    middleware::Next,
    response::Response,
};

use crate::{ServeError, ServeState};

/// Middleware: 401 unless the request carries an accepted token.
pub(crate) async fn require_token(
    State(state): State<ServeState>,
    request: Request,
    next: Next,
) -> Result<Response, ServeError> {
    let header = request
        .headers()
        .get(AUTHORIZATION)
        .map(|value| value.as_bytes());
    if !state.config().auth_tokens.verify(header) {
        return Err(ServeError::Unauthorized);
    }
    Ok(next.run(request).await)
}
