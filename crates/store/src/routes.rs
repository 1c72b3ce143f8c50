//! Routes: a stable name callers review under (`POST /v1/reviews/{route}`), pointing at one
//! live definition version, with shadow versions and their sampling share kept for shadow
//! reviews. Every replica reads the same rows, so a change made through one is seen by all.

use std::time::SystemTime;

use sqlx::{Row as _, any::AnyRow};

use crate::{
    Store, StoreError,
    review::{rfc3339_millis, unix_millis},
    store::corrupt,
};

/// A route as written: its name, live version, shadow versions and shadow share.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRoute {
    /// The name callers review under.
    pub name: String,
    /// The definition version reviews under the route are judged with.
    pub live: String,
    /// Definition versions kept for shadow reviews.
    pub shadows: Vec<String>,
    /// The share of live reviews also judged by the shadows, in [0, 1].
    pub shadow_sample: f64,
}

/// A route as held by the store (serialized as the API shows it).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Route {
    /// The name callers review under.
    pub name: String,
    /// The definition version reviews under the route are judged with.
    pub live: String,
    /// Definition versions kept for shadow reviews.
    pub shadows: Vec<String>,
    /// The share of live reviews also judged by the shadows, in [0, 1].
    pub shadow_sample: f64,
    /// RFC 3339 UTC with milliseconds.
    pub created_at: String,
    /// RFC 3339 UTC with milliseconds.
    pub updated_at: String,
}

const COLUMNS: &str = "name, live, shadows, shadow_sample, created_at, updated_at";

impl Store {
    /// The route named `name`.
    pub async fn route(&self, name: &str) -> Result<Option<Route>, StoreError> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM routes WHERE name = $1"))
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| route_of(&row)).transpose()
    }

    /// Every route, by name.
    pub async fn routes(&self) -> Result<Vec<Route>, StoreError> {
        let rows = sqlx::query(&format!("SELECT {COLUMNS} FROM routes ORDER BY name"))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(route_of).collect()
    }

    /// Points the route `name` at `live`, unaudited; `true` when the route exists
    /// ([`Store::promote_route`] is the audited change).
    pub async fn set_route_live(&self, name: &str, live: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("UPDATE routes SET live = $1, updated_at = $2 WHERE name = $3")
            .bind(live)
            .bind(unix_millis(SystemTime::now()))
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}

impl std::fmt::Display for Route {
    /// `refund: live v2, shadows v1, v3 (share 1)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: live {}", self.name, self.live)?;
        if self.shadows.is_empty() {
            write!(f, ", no shadows")
        } else {
            write!(
                f,
                ", shadows {} (share {})",
                self.shadows.join(", "),
                self.shadow_sample
            )
        }
    }
}

pub(crate) fn route_of(row: &AnyRow) -> Result<Route, StoreError> {
    let shadows: String = row.try_get("shadows")?;
    let sample: String = row.try_get("shadow_sample")?;
    Ok(Route {
        name: row.try_get("name")?,
        live: row.try_get("live")?,
        shadows: serde_json::from_str(&shadows).map_err(|_| corrupt("shadows"))?,
        shadow_sample: sample.parse().map_err(|_| corrupt("shadow_sample"))?,
        created_at: rfc3339_millis(row.try_get("created_at")?),
        updated_at: rfc3339_millis(row.try_get("updated_at")?),
    })
}
