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

use jevjudge_store::{NewRoute, Route, Store, StoreError};
use serde::Deserialize;

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

    /// Drops this replica's copy of the route `name` (after a change made here).
    pub(crate) fn forget(&self, name: &str) {
        self.cached.lock().expect("not poisoned").remove(name);
    }
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
