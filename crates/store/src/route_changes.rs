//! Changing routes, audited: [`Store::put_route`] creates a route or changes its shadows,
//! [`Store::promote_route`] makes a shadowed version live behind the promote gate
//! ([`crate::promote_figures`]), [`Store::rollback_route`] returns to the live version before
//! the last promote, and [`Store::route_history`] lists every change (`route_changes`, in
//! `seq` order).
//!
//! Each change is one transaction: the route's row is updated only if it still holds what the
//! change was computed from (its live version, shadows, share and `updated_at`, which every
//! change moves forward by at least a millisecond), and the audit row is written beside it.
//! Two replicas promoting at once: one wins, the other gets [`RouteError::Changed`].

use std::time::SystemTime;

use serde::Serialize;
use sqlx::{Row as _, any::AnyRow};

use crate::{
    NewRoute, Route, Store, StoreError,
    promote_figures::{PromoteFigures, PromoteGate, PromoteRefusal},
    review::{rfc3339_millis, unix_millis},
    store::corrupt,
};

/// The longest reason a change may carry, in characters.
pub const MAX_REASON_CHARS: usize = 1000;

/// Why a route could not be changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RouteError {
    /// The store holds no route of this name.
    #[error("no route is named {0}")]
    NotFound(String),
    /// A change would move the live version outside promote and rollback.
    #[error("route {route} is live on {live}; a route's live version changes only through promote")]
    UsePromote {
        /// The route.
        route: String,
        /// Its live version now.
        live: String,
    },
    /// Creating a route needs its live version.
    #[error("route {0} does not exist yet: creating it needs its live version")]
    LiveRequired(String),
    /// The version asked to be promoted is live already.
    #[error("{version} is live on route {route} already")]
    AlreadyLive {
        /// The route.
        route: String,
        /// The version.
        version: String,
    },
    /// No promote is left to roll back.
    #[error("route {0} has no promote to roll back")]
    NothingToRollBack(String),
    /// The promote gate refused; `force` overrides it.
    #[error("{refusal}")]
    Refused {
        /// Which figure refused.
        refusal: PromoteRefusal,
        /// The gate's figures.
        figures: PromoteFigures,
    },
    /// Another change to the route landed between reading it and writing it.
    #[error("route {0} was changed at the same time by someone else; read it again and retry")]
    Changed(String),
    /// A field of the change is not acceptable; the message names it.
    #[error("{0}")]
    Invalid(String),
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A route as `PUT` gives it: the shadows and share to hold, and the live version (required
/// to create; on an existing route absent or equal to its live version).
#[derive(Debug, Clone, PartialEq)]
pub struct PutRoute {
    /// The route's name.
    pub name: String,
    /// The live version.
    pub live: Option<String>,
    /// The shadow versions.
    pub shadows: Vec<String>,
    /// The share of live reviews shadowed, in [0, 1].
    pub shadow_sample: f64,
}

/// What [`Store::put_route`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct PutOutcome {
    /// The route as held after the change.
    pub route: Route,
    /// Whether the route was created.
    pub created: bool,
    /// Whether anything changed (a `PUT` of what the route holds changes nothing).
    pub changed: bool,
}

/// Who changes a route, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// A token's name, `routes-file`, or `cli` with the operator's name.
    pub name: String,
    /// Why, when given.
    pub reason: Option<String>,
}

/// A promote as asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromoteRequest {
    /// The route.
    pub route: String,
    /// The version to make live.
    pub version: String,
    /// Promote although the gate refuses (recorded as forced).
    pub force: bool,
}

/// A promote done: the route after it, the gate's figures, and whether it overrode a refusal.
#[derive(Debug, Clone, PartialEq)]
pub struct Promoted {
    /// The route as held after the promote.
    pub route: Route,
    /// The gate's figures for the version.
    pub figures: PromoteFigures,
    /// The refusal `force` overrode, if any.
    pub forced: Option<PromoteRefusal>,
}

/// One change of a route, as the audit table keeps it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteChange {
    /// The route.
    pub route: String,
    /// 1, 2, … per route.
    pub seq: u64,
    /// RFC 3339 UTC with milliseconds.
    pub changed_at: String,
    /// `create`, `shadows`, `promote` or `rollback`.
    pub action: String,
    /// Who made it.
    pub actor: String,
    /// The live version before (`None` on creation).
    pub from_live: Option<String>,
    /// The live version after.
    pub to_live: String,
    /// The shadow versions after.
    pub shadows: Vec<String>,
    /// Why, when given.
    pub reason: Option<String>,
    /// Whether a promote overrode the gate's refusal.
    pub forced: bool,
}

impl std::fmt::Display for RouteChange {
    /// `3  2026-12-07T01:02:03.000Z  promote  v1 → v2  by admin  forced  "calibrated"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}  {}  {}  ", self.seq, self.changed_at, self.action)?;
        match &self.from_live {
            Some(from) if *from != self.to_live => write!(f, "{from} → {}", self.to_live)?,
            _ => write!(f, "{}", self.to_live)?,
        }
        if !self.shadows.is_empty() {
            write!(f, "  shadows {}", self.shadows.join(", "))?;
        }
        write!(f, "  by {}", self.actor)?;
        if self.forced {
            write!(f, "  forced")?;
        }
        if let Some(reason) = &self.reason {
            write!(f, "  {reason:?}")?;
        }
        Ok(())
    }
}

/// A route's row as read for a change: what the change compares and sets.
struct Held {
    route: Route,
    updated_at: i64,
}

/// A route's row after a change, and the audit row to write beside it.
struct Change<'a> {
    action: &'a str,
    live: &'a str,
    shadows: &'a [String],
    shadow_sample: f64,
    forced: bool,
}

impl Store {
    /// Creates `route` unless the store holds a route of that name, with a `create` row in
    /// the audit table by `routes-file`; `true` when it created it. A route already held is
    /// left exactly as it is.
    pub async fn create_route_if_absent(&self, route: &NewRoute) -> Result<bool, StoreError> {
        let actor = Actor {
            name: "routes-file".to_owned(),
            reason: None,
        };
        match self.create_route_by(route, &actor).await {
            Ok(created) => Ok(created),
            Err(RouteError::Store(error)) => Err(error),
            Err(other) => Err(StoreError::Invalid(other.to_string())),
        }
    }

    /// Creates the route or changes its shadows and share, with a `create` or `shadows` row in
    /// the audit table. The live version of an existing route is never changed here.
    pub async fn put_route(&self, put: &PutRoute, actor: &Actor) -> Result<PutOutcome, RouteError> {
        check_actor(actor)?;
        check_name(&put.name)?;
        let Some(held) = self.held(&put.name).await? else {
            let live = put
                .live
                .clone()
                .ok_or_else(|| RouteError::LiveRequired(put.name.clone()))?;
            let route = NewRoute {
                name: put.name.clone(),
                live,
                shadows: put.shadows.clone(),
                shadow_sample: put.shadow_sample,
            };
            if !self.create_route_by(&route, actor).await? {
                return Err(RouteError::Changed(put.name.clone()));
            }
            let route = self.route(&put.name).await?.ok_or(StoreError::Unavailable(
                "the route created was not read back".to_owned(),
            ))?;
            return Ok(PutOutcome {
                route,
                created: true,
                changed: true,
            });
        };
        let live = held.route.live.clone();
        if put.live.as_ref().is_some_and(|asked| *asked != live) {
            return Err(RouteError::UsePromote {
                route: put.name.clone(),
                live,
            });
        }
        check_shadows(&put.name, &live, &put.shadows, put.shadow_sample)?;
        if held.route.shadows == put.shadows && held.route.shadow_sample == put.shadow_sample {
            return Ok(PutOutcome {
                route: held.route,
                created: false,
                changed: false,
            });
        }
        let change = Change {
            action: "shadows",
            live: &live,
            shadows: &put.shadows,
            shadow_sample: put.shadow_sample,
            forced: false,
        };
        let route = self.apply(&held, &change, actor).await?;
        Ok(PutOutcome {
            route,
            created: false,
            changed: true,
        })
    }

    /// The one promote both the API and the command line run: reads the gate's figures for
    /// the version, refuses as [`PromoteGate::check`] says unless `force`, then makes the
    /// version live; the old live version becomes the first shadow and the version leaves the
    /// shadows. `loaded`: whether the version can judge reviews where the promote is asked
    /// (the service: it is loaded; the command line: the store knows it).
    pub async fn promote_route(
        &self,
        request: &PromoteRequest,
        gate: &PromoteGate,
        loaded: bool,
        actor: &Actor,
    ) -> Result<Promoted, RouteError> {
        check_actor(actor)?;
        crate::check_no_controls("version", &request.version).map_err(RouteError::Invalid)?;
        let held = self
            .held(&request.route)
            .await?
            .ok_or_else(|| RouteError::NotFound(request.route.clone()))?;
        if held.route.live == request.version {
            return Err(RouteError::AlreadyLive {
                route: request.route.clone(),
                version: request.version.clone(),
            });
        }
        let figures = self
            .promote_figures(&request.route, &request.version)
            .await?;
        let refusal = gate.check(&request.version, loaded, &figures).err();
        if let Some(refusal) = &refusal {
            if !request.force {
                return Err(RouteError::Refused {
                    refusal: refusal.clone(),
                    figures,
                });
            }
        }
        let old = &held.route;
        let shadows = shadows_after(&old.live, &old.shadows, &request.version);
        let change = Change {
            action: "promote",
            live: &request.version,
            shadows: &shadows,
            shadow_sample: old.shadow_sample,
            forced: refusal.is_some(),
        };
        let route = self.apply(&held, &change, actor).await?;
        Ok(Promoted {
            route,
            figures,
            forced: refusal,
        })
    }

    /// Returns the route to the live version before its last promote not rolled back yet;
    /// the version rolled back becomes the first shadow.
    pub async fn rollback_route(&self, route: &str, actor: &Actor) -> Result<Route, RouteError> {
        check_actor(actor)?;
        let held = self
            .held(route)
            .await?
            .ok_or_else(|| RouteError::NotFound(route.to_owned()))?;
        let history = self.route_history(route).await?;
        // Each promote pushes the version it replaced; each rollback pops one.
        let mut before: Vec<&str> = Vec::new();
        for change in &history {
            match change.action.as_str() {
                "promote" => before.push(change.from_live.as_deref().unwrap_or_default()),
                "rollback" => {
                    before.pop();
                }
                _ => {}
            }
        }
        let target = match before.last() {
            Some(target) if !target.is_empty() && *target != held.route.live => *target,
            _ => return Err(RouteError::NothingToRollBack(route.to_owned())),
        };
        let old = &held.route;
        let shadows = shadows_after(&old.live, &old.shadows, target);
        let change = Change {
            action: "rollback",
            live: target,
            shadows: &shadows,
            shadow_sample: old.shadow_sample,
            forced: false,
        };
        self.apply(&held, &change, actor).await
    }

    /// Every change of the route, oldest first (empty for a route never changed through
    /// this store, or none of that name).
    pub async fn route_history(&self, route: &str) -> Result<Vec<RouteChange>, StoreError> {
        let rows = sqlx::query(
            "SELECT route, seq, changed_at, action, actor, from_live, to_live, shadows, reason, \
             forced FROM route_changes WHERE route = $1 ORDER BY seq",
        )
        .bind(route)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(change_of).collect()
    }

    /// Creates the route unless one of its name is held, with a `create` row by `actor`;
    /// `true` when it created it.
    pub(crate) async fn create_route_by(
        &self,
        route: &NewRoute,
        actor: &Actor,
    ) -> Result<bool, RouteError> {
        check_name(&route.name)?;
        crate::check_no_controls("live", &route.live).map_err(RouteError::Invalid)?;
        check_shadows(
            &route.name,
            &route.live,
            &route.shadows,
            route.shadow_sample,
        )?;
        let now = unix_millis(SystemTime::now());
        let shadows = serde_json::to_string(&route.shadows).map_err(|_| corrupt("shadows"))?;
        let mut transaction = self.begin_write().await?;
        let done = sqlx::query(
            "INSERT INTO routes (name, live, shadows, shadow_sample, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING",
        )
        .bind(&route.name)
        .bind(&route.live)
        .bind(&shadows)
        .bind(route.shadow_sample.to_string())
        .bind(now)
        .bind(now)
        .execute(&mut *transaction)
        .await
        .map_err(StoreError::from)?;
        if done.rows_affected() != 1 {
            transaction.rollback().await.map_err(StoreError::from)?;
            return Ok(false);
        }
        let change = Change {
            action: "create",
            live: &route.live,
            shadows: &route.shadows,
            shadow_sample: route.shadow_sample,
            forced: false,
        };
        audit(&mut transaction, &route.name, None, &change, actor, now).await?;
        transaction.commit().await.map_err(StoreError::from)?;
        Ok(true)
    }

    async fn held(&self, name: &str) -> Result<Option<Held>, StoreError> {
        let row = sqlx::query(
            "SELECT name, live, shadows, shadow_sample, created_at, updated_at FROM routes \
             WHERE name = $1",
        )
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        Ok(Some(Held {
            route: crate::routes::route_of(&row)?,
            updated_at: row.try_get("updated_at")?,
        }))
    }

    /// Writes `change` over `held` if the row still holds what `held` read, with its audit
    /// row, in one transaction.
    async fn apply(
        &self,
        held: &Held,
        change: &Change<'_>,
        actor: &Actor,
    ) -> Result<Route, RouteError> {
        let name = &held.route.name;
        let now = unix_millis(SystemTime::now()).max(held.updated_at + 1);
        let shadows = serde_json::to_string(change.shadows).map_err(|_| corrupt("shadows"))?;
        let old_shadows =
            serde_json::to_string(&held.route.shadows).map_err(|_| corrupt("shadows"))?;
        let mut transaction = self.begin_write().await?;
        let done = sqlx::query(
            "UPDATE routes SET live = $1, shadows = $2, shadow_sample = $3, updated_at = $4 \
             WHERE name = $5 AND live = $6 AND shadows = $7 AND updated_at = $8",
        )
        .bind(change.live)
        .bind(&shadows)
        .bind(change.shadow_sample.to_string())
        .bind(now)
        .bind(name)
        .bind(&held.route.live)
        .bind(&old_shadows)
        .bind(held.updated_at)
        .execute(&mut *transaction)
        .await
        .map_err(StoreError::from)?;
        if done.rows_affected() != 1 {
            transaction.rollback().await.map_err(StoreError::from)?;
            return Err(RouteError::Changed(name.clone()));
        }
        audit(
            &mut transaction,
            name,
            Some(&held.route.live),
            change,
            actor,
            now,
        )
        .await?;
        transaction.commit().await.map_err(StoreError::from)?;
        Ok(Route {
            name: name.clone(),
            live: change.live.to_owned(),
            shadows: change.shadows.to_vec(),
            shadow_sample: change.shadow_sample,
            created_at: held.route.created_at.clone(),
            updated_at: rfc3339_millis(now),
        })
    }
}

/// The shadows after `to` replaces `from` as live: `from` first, then the others but `to`.
fn shadows_after(from: &str, shadows: &[String], to: &str) -> Vec<String> {
    let mut after = vec![from.to_owned()];
    after.extend(
        shadows
            .iter()
            .filter(|shadow| *shadow != to && *shadow != from)
            .cloned(),
    );
    after
}

async fn audit(
    transaction: &mut sqlx::Transaction<'static, sqlx::Any>,
    route: &str,
    from_live: Option<&str>,
    change: &Change<'_>,
    actor: &Actor,
    now: i64,
) -> Result<(), StoreError> {
    let last: Option<i64> =
        sqlx::query("SELECT MAX(seq) AS seq FROM route_changes WHERE route = $1")
            .bind(route)
            .fetch_one(&mut **transaction)
            .await?
            .try_get("seq")?;
    let shadows = serde_json::to_string(change.shadows).map_err(|_| corrupt("shadows"))?;
    sqlx::query(
        "INSERT INTO route_changes (route, seq, changed_at, action, actor, from_live, to_live, \
         shadows, reason, forced) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(route)
    .bind(last.unwrap_or(0) + 1)
    .bind(now)
    .bind(change.action)
    .bind(&actor.name)
    .bind(from_live)
    .bind(change.live)
    .bind(shadows)
    .bind(actor.reason.as_deref())
    .bind(i64::from(change.forced))
    .execute(&mut **transaction)
    .await?;
    Ok(())
}

fn change_of(row: &AnyRow) -> Result<RouteChange, StoreError> {
    let shadows: String = row.try_get("shadows")?;
    let seq: i64 = row.try_get("seq")?;
    let forced: i64 = row.try_get("forced")?;
    Ok(RouteChange {
        route: row.try_get("route")?,
        seq: u64::try_from(seq).map_err(|_| corrupt("seq"))?,
        changed_at: rfc3339_millis(row.try_get("changed_at")?),
        action: row.try_get("action")?,
        actor: row.try_get("actor")?,
        from_live: row.try_get("from_live")?,
        to_live: row.try_get("to_live")?,
        shadows: serde_json::from_str(&shadows).map_err(|_| corrupt("shadows"))?,
        reason: row.try_get("reason")?,
        forced: forced != 0,
    })
}

/// A route name: not empty, no `/`, no control character.
pub fn check_name(name: &str) -> Result<(), RouteError> {
    if name.is_empty() || name.contains('/') {
        return Err(RouteError::Invalid(format!(
            "route name {name:?} must be non-empty and without '/'"
        )));
    }
    crate::check_no_controls("route", name).map_err(RouteError::Invalid)
}

fn check_actor(actor: &Actor) -> Result<(), RouteError> {
    crate::check_no_controls("actor", &actor.name).map_err(RouteError::Invalid)?;
    if let Some(reason) = &actor.reason {
        if reason.chars().count() > MAX_REASON_CHARS {
            return Err(RouteError::Invalid(format!(
                "`reason` must be at most {MAX_REASON_CHARS} characters"
            )));
        }
        crate::check_no_controls("reason", reason).map_err(RouteError::Invalid)?;
    }
    Ok(())
}

/// Shadows: each once, none the live version, no control character; the share in [0, 1].
fn check_shadows(
    route: &str,
    live: &str,
    shadows: &[String],
    sample: f64,
) -> Result<(), RouteError> {
    if !(0.0..=1.0).contains(&sample) {
        return Err(RouteError::Invalid(format!(
            "route {route}: shadow_sample {sample} is outside 0 to 1"
        )));
    }
    for (at, shadow) in shadows.iter().enumerate() {
        crate::check_no_controls("shadows", shadow).map_err(RouteError::Invalid)?;
        if shadow == live {
            return Err(RouteError::Invalid(format!(
                "route {route}: shadow {shadow} is the live version"
            )));
        }
        if shadows[..at].contains(shadow) {
            return Err(RouteError::Invalid(format!(
                "route {route}: shadow {shadow} is given twice"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
