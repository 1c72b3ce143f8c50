//! Changing routes over HTTP, with an administrator's token ([`crate::auth`]):
//! `PUT /v1/routes/{route}` creates a route or changes its shadows,
//! `POST /v1/routes/{route}/promote` makes a shadowed version live behind the promote gate,
//! `POST /v1/routes/{route}/rollback` returns to the version before the last promote, and
//! `GET /v1/routes/{route}/history` lists every change. Each change is one audited store
//! transaction ([`jevjudge_store::Store::put_route`], [`jevjudge_store::Store::promote_route`],
//! [`jevjudge_store::Store::rollback_route`]); this replica forgets its cached copy of the
//! route at once, the others read it again within [`crate::ROUTE_CACHE`].

use axum::{
    Json,
    body::Body,
    extract::{Path, State, rejection::PathRejection},
    http::StatusCode,
    response::{IntoResponse, Response},
};
use jevjudge_store::{Actor, PromoteGate, PromoteRequest, PutRoute, RouteError};
use serde::Deserialize;
use serde_json::json;

use crate::{
    ServeError, ServeState,
    body::{self, Shape},
    queue_api::{json_body, unknown},
    routes_api::route_json,
};

/// Who the audit table names for a change made with an administrator's token.
const ADMIN_ACTOR: &str = "admin";

/// The body of `PUT /v1/routes/{route}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PutBody {
    #[serde(default)]
    live: Option<String>,
    #[serde(default)]
    shadows: Vec<String>,
    #[serde(default = "full_sample")]
    shadow_sample: f64,
}

fn full_sample() -> f64 {
    1.0
}

const PUT_BODY: Shape = Shape {
    fields: &["live", "shadows", "shadow_sample"],
    unknown: |name| unknown(name, PUT_BODY.fields),
    like: Some("{\"live\": \"…\", \"shadows\": [\"…\"], \"shadow_sample\": 1}"),
};

/// The body of `POST /v1/routes/{route}/promote`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PromoteBody {
    version: String,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    force: bool,
}

const PROMOTE_BODY: Shape = Shape {
    fields: &["version", "reason", "force"],
    unknown: |name| unknown(name, PROMOTE_BODY.fields),
    like: Some("{\"version\": \"…\", \"reason\": \"…\"}"),
};

/// The body of `POST /v1/routes/{route}/rollback`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RollbackBody {
    #[serde(default)]
    reason: Option<String>,
}

const ROLLBACK_BODY: Shape = Shape {
    fields: &["reason"],
    unknown: |name| unknown(name, ROLLBACK_BODY.fields),
    like: Some("{\"reason\": \"…\"}"),
};

fn admin(reason: Option<String>) -> Actor {
    Actor {
        name: ADMIN_ACTOR.to_owned(),
        reason,
    }
}

/// The service error of a route change that failed.
fn route_error(state: &ServeState, error: RouteError) -> ServeError {
    match error {
        RouteError::NotFound(_) => ServeError::NotFound,
        RouteError::LiveRequired(_) | RouteError::Invalid(_) => body::invalid(error.to_string()),
        RouteError::Refused { refusal, figures } => ServeError::PromoteRefused {
            message: refusal.to_string(),
            figures,
        },
        RouteError::Store(error) => {
            tracing::warn!(%error, "a route change could not be written");
            ServeError::StoreUnavailable {
                retry_after_secs: state.config().retry_after_secs(),
            }
        }
        other => ServeError::RouteConflict {
            message: other.to_string(),
        },
    }
}

fn route_name(path: Result<Path<String>, PathRejection>) -> Result<String, ServeError> {
    path.map(|Path(name)| name)
        .map_err(|_| ServeError::NotFound)
}

/// Forgets this replica's cached copy of `route`, so its own reviews follow the change at once.
fn forget(state: &ServeState, route: &str) {
    if let Some(table) = state.route_table() {
        table.forget(route);
    }
}

/// `PUT /v1/routes/{route}`: creates the route (201; `live` required) or changes its shadows
/// and share (200); `live` on an existing route must be absent or its live version (else 409
/// `route_conflict`). The name may not be a loaded definition version; `live` and the shadows
/// must be loaded.
pub(crate) async fn put_route(
    State(state): State<ServeState>,
    path: Result<Path<String>, PathRejection>,
    body: Body,
) -> Result<Response, ServeError> {
    let store = state.store().ok_or(ServeError::NoStore)?.clone();
    let name = route_name(path)?;
    let PutBody {
        live,
        shadows,
        shadow_sample,
    } = json_body(body, &PUT_BODY).await?;
    let definitions = state.definitions();
    if definitions.get(&name).is_some() {
        return Err(ServeError::RouteConflict {
            message: format!(
                "route {name}: the name is a definition version; a route needs a name of its own"
            ),
        });
    }
    if let Some(version) = live
        .iter()
        .chain(&shadows)
        .find(|version| definitions.get(version).is_none())
    {
        return Err(body::invalid(format!(
            "version {version} is not loaded; GET /v1/definitions lists them"
        )));
    }
    let put = PutRoute {
        name,
        live,
        shadows,
        shadow_sample,
    };
    let outcome = store
        .put_route(&put, &admin(None))
        .await
        .map_err(|error| route_error(&state, error))?;
    forget(&state, &put.name);
    let route = &outcome.route;
    tracing::info!(
        route = %route.name, live = %route.live, shadows = ?route.shadows,
        created = outcome.created, changed = outcome.changed, "route put"
    );
    let status = if outcome.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(route_json(route))).into_response())
}

/// `POST /v1/routes/{route}/promote`: makes `version` live (the old live version becomes the
/// first shadow), or 409 `promote_refused` naming the figure unless `force`.
pub(crate) async fn promote(
    State(state): State<ServeState>,
    path: Result<Path<String>, PathRejection>,
    body: Body,
) -> Result<Response, ServeError> {
    let store = state.store().ok_or(ServeError::NoStore)?.clone();
    let route = route_name(path)?;
    let PromoteBody {
        version,
        reason,
        force,
    } = json_body(body, &PROMOTE_BODY).await?;
    let loaded = state.definitions().get(&version).is_some();
    let gate = PromoteGate {
        min_shadow_reviews: state.config().min_shadow_reviews,
    };
    let request = PromoteRequest {
        route,
        version,
        force,
    };
    let promoted = store
        .promote_route(&request, &gate, loaded, &admin(reason))
        .await
        .map_err(|error| route_error(&state, error))?;
    forget(&state, &request.route);
    let refusal = promoted.forced.as_ref().map(ToString::to_string);
    tracing::info!(
        route = %request.route, live = %promoted.route.live, forced = refusal.is_some(),
        "route promoted"
    );
    Ok(Json(json!({
        "route": route_json(&promoted.route),
        "figures": promoted.figures,
        "forced": refusal.is_some(),
        "refusal": refusal,
    }))
    .into_response())
}

/// `POST /v1/routes/{route}/rollback`: back to the live version before the last promote not
/// rolled back (the version rolled back becomes the first shadow); 409 `route_conflict` when
/// there is none.
pub(crate) async fn rollback(
    State(state): State<ServeState>,
    path: Result<Path<String>, PathRejection>,
    body: Body,
) -> Result<Response, ServeError> {
    let store = state.store().ok_or(ServeError::NoStore)?.clone();
    let route = route_name(path)?;
    let RollbackBody { reason } = json_body(body, &ROLLBACK_BODY).await?;
    let held = store
        .rollback_route(&route, &admin(reason))
        .await
        .map_err(|error| route_error(&state, error))?;
    forget(&state, &route);
    tracing::info!(route = %route, live = %held.live, "route rolled back");
    Ok(Json(route_json(&held)).into_response())
}

/// `GET /v1/routes/{route}/history`: every change of the route, oldest first; 404 when the
/// store holds neither the route nor any change of it.
pub(crate) async fn history(
    State(state): State<ServeState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ServeError> {
    let store = state.store().ok_or(ServeError::NoStore)?.clone();
    let route = route_name(path)?;
    let unavailable = |error| route_error(&state, RouteError::Store(error));
    let changes = store.route_history(&route).await.map_err(unavailable)?;
    if changes.is_empty() && store.route(&route).await.map_err(unavailable)?.is_none() {
        return Err(ServeError::NotFound);
    }
    Ok(Json(json!({"route": route, "changes": changes})).into_response())
}
