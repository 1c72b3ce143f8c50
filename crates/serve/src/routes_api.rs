//! The routes' HTTP API: `GET /v1/routes` and `GET /v1/routes/{route}` ([`crate::routes`]
//! holds the routes file and the cache reviews read routes through).

use axum::{
    Json,
    extract::{Path, State, rejection::PathRejection},
    response::{IntoResponse, Response},
};
use jevjudge_store::{Route, StoreError};
use serde_json::{Value, json};

use crate::{ServeError, ServeState};

pub(crate) fn route_json(route: &Route) -> Value {
    json!({
        "name": route.name,
        "live": route.live,
        "shadows": route.shadows,
        "shadow_sample": route.shadow_sample,
        "created_at": route.created_at,
        "updated_at": route.updated_at,
    })
}

fn unavailable(state: &ServeState, error: &StoreError) -> ServeError {
    tracing::warn!(%error, "the routes could not be read");
    ServeError::StoreUnavailable {
        retry_after_secs: state.config().retry_after_secs(),
    }
}

/// `GET /v1/routes`: every route, by name (read from the store, uncached).
pub(crate) async fn list_routes(State(state): State<ServeState>) -> Result<Response, ServeError> {
    let store = state.store().ok_or(ServeError::NoStore)?;
    let routes = store
        .routes()
        .await
        .map_err(|error| unavailable(&state, &error))?;
    let routes: Vec<Value> = routes.iter().map(route_json).collect();
    Ok(Json(json!({"routes": routes})).into_response())
}

/// `GET /v1/routes/{route}`: one route (read from the store, uncached); 404 `not_found` when
/// the store holds no route of that name.
pub(crate) async fn get_route(
    State(state): State<ServeState>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ServeError> {
    let store = state.store().ok_or(ServeError::NoStore)?;
    let Ok(Path(name)) = path else {
        return Err(ServeError::NotFound);
    };
    let route = store
        .route(&name)
        .await
        .map_err(|error| unavailable(&state, &error))?
        .ok_or(ServeError::NotFound)?;
    Ok(Json(route_json(&route)).into_response())
}

/// Adds the routes' paths and the `Route` schema to the OpenAPI document, and says on
/// `POST /v1/reviews/{version}` that the segment may name a route.
pub(crate) fn describe(document: &mut Value, secured: &Value, unauthorized: &Value) {
    let error = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        })
    };
    let store_unavailable =
        error("The store cannot be read (`store_unavailable`). Retry after `Retry-After` seconds.");
    document["components"]["schemas"]["Route"] = json!({
        "type": "object",
        "required": ["name", "live", "shadows", "shadow_sample", "created_at", "updated_at"],
        "properties": {
            "name": {"description": "The name callers review under.", "type": "string"},
            "live": {"description": "The definition version reviews under the route are \
                                     judged with.", "type": "string"},
            "shadows": {"description": "Definition versions kept as the route's shadows.",
                        "type": "array", "items": {"type": "string"}},
            "shadow_sample": {"description": "The share of live reviews shadowed.",
                              "type": "number", "minimum": 0, "maximum": 1},
            "created_at": {"type": "string", "format": "date-time"},
            "updated_at": {"type": "string", "format": "date-time"}
        }
    });
    let paths = &mut document["paths"];
    let post = &mut paths["/v1/reviews/{version}"]["post"];
    post["summary"] = json!(
        "Review a state against the definition with this version, or with the live version of \
         the route of this name."
    );
    post["parameters"][0]["description"] = json!(
        "A definition version listed by GET /v1/definitions, or a route's name (GET /v1/routes): \
         the route's live version judges the review, and the Result names it."
    );
    post["responses"]["404"] = error(
        "No definition has this version and no route this name, or the route's live version is \
         not loaded (`unknown_version`).",
    );
    paths["/v1/routes"] = json!({"get": {
        "operationId": "listRoutes",
        "summary": "Every route, by name, as the store holds it now.",
        "security": secured,
        "responses": {
            "200": {"description": "The routes.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["routes"],
                "properties": {"routes": {"type": "array",
                                          "items": {"$ref": "#/components/schemas/Route"}}}
            }}}},
            "401": unauthorized,
            "403": error("A reviewer's token (`forbidden`)."),
            "404": error("The service keeps no store (`no_store`)."),
            "503": store_unavailable.clone()
        }
    }});
    paths["/v1/routes/{route}"] = json!({"get": {
        "operationId": "getRoute",
        "summary": "One route, as the store holds it now.",
        "security": secured,
        "parameters": [{
            "name": "route", "in": "path", "required": true,
            "description": "The route's name.", "schema": {"type": "string"}
        }],
        "responses": {
            "200": {"description": "The route.", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Route"}}}},
            "401": unauthorized,
            "403": error("A reviewer's token (`forbidden`)."),
            "404": error("No route has this name (`not_found`), or the service keeps no store \
                          (`no_store`)."),
            "503": store_unavailable
        }
    }});
}
