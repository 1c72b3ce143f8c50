//! Routes: stable names callers review under. `POST /v1/reviews/{route}` reviews with the
//! route's live version; `GET /v1/routes` and `GET /v1/routes/{route}` read them. Routes live
//! in the store, so every replica agrees; each replica reads a route again once its copy is
//! [`ROUTE_CACHE`] old (polling: a change made elsewhere is in force here within that time).
//!
//! A routes file (`routes.toml`) seeds the store at start: [`parse_routes`] reads it, and
//! [`crate::ServiceBuilder::routes`] creates only the routes the store does not hold.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use axum::{
    Json,
    extract::{Path, State, rejection::PathRejection},
    response::{IntoResponse, Response},
};
use jevjudge_store::{NewRoute, Route, Store, StoreError};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{ServeError, ServeState};

/// How long a replica uses a route it read before reading it again.
pub const ROUTE_CACHE: Duration = Duration::from_secs(2);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoutesFile {
    #[serde(default)]
    route: Vec<RouteEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RouteEntry {
    name: String,
    live: String,
    #[serde(default)]
    shadows: Vec<String>,
    #[serde(default = "full_sample")]
    shadow_sample: f64,
}

fn full_sample() -> f64 {
    1.0
}

/// Reads a routes file: `[[route]]` tables with `name`, `live`, optional `shadows` (a list of
/// versions) and optional `shadow_sample` (0 to 1, default 1). A name given twice, an empty
/// name or a sample outside 0 to 1 is refused; the message names the route.
pub fn parse_routes(text: &str) -> Result<Vec<NewRoute>, String> {
    let file: RoutesFile = toml::from_str(text).map_err(|error| error.to_string())?;
    let mut seen = std::collections::BTreeSet::new();
    let mut routes = Vec::with_capacity(file.route.len());
    for entry in file.route {
        if entry.name.is_empty() || entry.name.contains('/') {
            return Err(format!(
                "route name {:?} must be non-empty and without '/'",
                entry.name
            ));
        }
        if !seen.insert(entry.name.clone()) {
            return Err(format!("route {} is given twice", entry.name));
        }
        if !(0.0..=1.0).contains(&entry.shadow_sample) {
            return Err(format!(
                "route {}: shadow_sample {} is outside 0 to 1",
                entry.name, entry.shadow_sample
            ));
        }
        routes.push(NewRoute {
            name: entry.name,
            live: entry.live,
            shadows: entry.shadows,
            shadow_sample: entry.shadow_sample,
        });
    }
    Ok(routes)
}

/// The routes as this replica sees them: read from the store, each kept at most
/// [`ROUTE_CACHE`].
pub(crate) struct RouteTable {
    store: Store,
    cached: Mutex<HashMap<String, (Instant, Option<Route>)>>,
}

impl RouteTable {
    pub(crate) fn new(store: Store) -> RouteTable {
        RouteTable {
            store,
            cached: Mutex::new(HashMap::new()),
        }
    }

    /// The route named `name`, read from the store unless read within [`ROUTE_CACHE`].
    pub(crate) async fn route(&self, name: &str) -> Result<Option<Route>, StoreError> {
        if let Some((read, route)) = self.cached.lock().expect("not poisoned").get(name) {
            if read.elapsed() < ROUTE_CACHE {
                return Ok(route.clone());
            }
        }
        let route = self.store.route(name).await?;
        let mut cached = self.cached.lock().expect("not poisoned");
        // Names nobody holds are not kept: a caller's typos must not grow the map.
        match &route {
            Some(_) => {
                cached.insert(name.to_owned(), (Instant::now(), route.clone()));
            }
            None => {
                cached.remove(name);
            }
        }
        Ok(route)
    }
}

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
            "404": error("No route has this name (`not_found`), or the service keeps no store \
                          (`no_store`)."),
            "503": store_unavailable
        }
    }});
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_routes_file_reads_with_the_optional_fields_defaulted() {
        let text = "[[route]]\nname = \"a\"\nlive = \"v1\"\n\
                    [[route]]\nname = \"b\"\nlive = \"v2\"\nshadows = [\"v3\"]\n\
                    shadow_sample = 0.25\n";
        let routes = parse_routes(text).unwrap();
        assert_eq!(
            routes,
            [
                NewRoute {
                    name: "a".to_owned(),
                    live: "v1".to_owned(),
                    shadows: vec![],
                    shadow_sample: 1.0,
                },
                NewRoute {
                    name: "b".to_owned(),
                    live: "v2".to_owned(),
                    shadows: vec!["v3".to_owned()],
                    shadow_sample: 0.25,
                },
            ]
        );
        assert_eq!(parse_routes("").unwrap(), []);
    }

    #[test]
    fn a_routes_file_with_a_name_twice_a_bad_name_a_sample_over_one_or_an_unknown_field_is_refused()
    {
        let twice =
            "[[route]]\nname = \"r\"\nlive = \"v1\"\n[[route]]\nname = \"r\"\nlive = \"v2\"\n";
        assert_eq!(parse_routes(twice).unwrap_err(), "route r is given twice");
        let over = "[[route]]\nname = \"r\"\nlive = \"v1\"\nshadow_sample = 1.5\n";
        assert_eq!(
            parse_routes(over).unwrap_err(),
            "route r: shadow_sample 1.5 is outside 0 to 1"
        );
        let slash = "[[route]]\nname = \"a/b\"\nlive = \"v1\"\n";
        assert!(parse_routes(slash).unwrap_err().contains("without '/'"));
        let unknown = "[[route]]\nname = \"r\"\nlive = \"v1\"\ncolour = 1\n";
        assert!(parse_routes(unknown).unwrap_err().contains("colour"));
    }
}
