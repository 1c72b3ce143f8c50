//! The reviewers' web pages at `/ui/`: sign in with a reviewer token, the
//! queue by definition version and age, claim an item, decide it blind, see Jev's findings
//! after saving. Server-rendered with maud (every value escaped), one stylesheet and one
//! small script for the keyboard shortcuts, both embedded and served from `/ui/static/`.
//!
//! Protection (`docs/how-to/review-queue-team.md`):
//! - the session is an HMAC-signed cookie ([`session`]), `HttpOnly; SameSite=Strict;
//!   Path=/ui`, `Secure` unless a plain-HTTP page was asked for on a loopback host by a
//!   loopback peer (an `https` `--public-url` or `X-Forwarded-Proto: https` always makes it
//!   `Secure`);
//! - every form carries a CSRF token derived from the session by HMAC, checked on every POST,
//!   and a POST whose `Origin` or `Sec-Fetch-Site` says it came from elsewhere is refused;
//! - every response carries a strict `Content-Security-Policy` ([`CSP`]), `nosniff`,
//!   `Referrer-Policy: no-referrer` and `X-Frame-Options: DENY`; pages are `no-store`;
//! - blind by default: the item page holds no verdict and no probability; they are on the
//!   result page, shown only to the reviewer who decided the item, after the decision is saved.

// A refusal here is the page to answer with: handlers return it as is, on a path taken once per
// request, so boxing it would only add an allocation.
#![allow(clippy::result_large_err)]

mod adjudication;
mod item;
mod pages;

use std::{
    net::SocketAddr,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use axum::{
    Extension, Form, Router,
    extract::{ConnectInfo, FromRequestParts, Query, Request, State},
    http::{
        HeaderMap, HeaderValue, Method, StatusCode,
        header::{
            CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, COOKIE, HOST, LOCATION, ORIGIN,
            REFERRER_POLICY, RETRY_AFTER, SET_COOKIE, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
        },
        request::Parts,
    },
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::{any, get, post},
};
use jevjudge_store::{Claim, ItemKind, MAX_PAGE, QueueCursor, QueueItemId, Store};
use maud::Markup;
use serde::Deserialize;

use crate::client_address::client_address;
use crate::session::{
    self, PRE_COOKIE, PRE_TTL, SESSION_COOKIE, SESSION_TTL, Session, SessionKey, SessionKeys,
};
use crate::{PublicUrl, ServeState};
use item::{decide, item_page, release};
use pages::{HeldRow, HistoryRow, QueueRow, QueueView, Who};

/// The Content-Security-Policy of every `/ui` response: nothing but this site's own
/// stylesheet, script and forms; no inline script or style, no frames, no base URL.
pub const CSP: &str = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
                       form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Items on one queue page.
const PAGE_ITEMS: u32 = 50;

/// The reviewer's own latest decisions on the queue page.
const HISTORY_ITEMS: u32 = 20;

/// The page of an item: its review page, or a lead's adjudication page.
fn item_href(item: QueueItemId, adjudication: bool) -> String {
    if adjudication {
        format!("/ui/adjudications/{item}")
    } else {
        format!("/ui/items/{item}")
    }
}

const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("keys.js");
const ICON: &str = include_str!("icon.svg");

/// The `/ui` routes (merged into the service's router: `nest("/ui", …)` would serve the queue
/// at `/ui` but not at `/ui/`). Log lines and metrics label `/ui` requests with these
/// templates (never the raw path); they are not in [`crate::ROUTES`]: pages are not part of
/// the JSON API's OpenAPI.
pub(crate) fn router(state: ServeState) -> Router<ServeState> {
    Router::new()
        .route("/ui", get(|| async { see_other("/ui/") }))
        .route("/ui/", get(queue_page))
        .route("/ui/sign-in", get(sign_in_page).post(sign_in))
        .route("/ui/sign-out", post(sign_out))
        .route("/ui/claim", post(claim))
        .route("/ui/items/{item}", get(item_page))
        .route("/ui/items/{item}/decision", post(decide))
        .route("/ui/items/{item}/release", post(release))
        .route("/ui/adjudications/claim", post(adjudication::claim))
        .route(
            "/ui/adjudications/{item}",
            get(adjudication::adjudication_page),
        )
        .route(
            "/ui/adjudications/{item}/decision",
            post(adjudication::decide),
        )
        .route(
            "/ui/adjudications/{item}/release",
            post(adjudication::release),
        )
        .route("/ui/static/style.css", get(style))
        .route("/ui/static/keys.js", get(script))
        .route("/ui/static/icon.svg", get(icon))
        .route("/ui/{*rest}", any(not_found))
        .layer(middleware::from_fn_with_state(state, same_origin_posts))
        .layer(middleware::from_fn(security_headers))
}

/// The headers every `/ui` response carries.
async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !headers.contains_key(CACHE_CONTROL) {
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// Refuses a POST that says it came from another site: `Sec-Fetch-Site` other than
/// `same-origin` (or `none`, typed by the user); without that header, an `Origin` whose host
/// is neither this one nor that of `--public-url`. (`Origin: null` proves nothing either way: browsers send it for every
/// form of a page under `Referrer-Policy: no-referrer`.) Browsers that send neither are
/// covered by the CSRF token and the SameSite cookie.
async fn same_origin_posts(
    State(state): State<ServeState>,
    request: Request,
    next: Next,
) -> Response {
    let public = state.config().public_url.as_ref().map(PublicUrl::origin);
    if request.method() == Method::POST && !same_origin(request.headers(), public) {
        return refused(
            StatusCode::FORBIDDEN,
            "This form did not come from this site.",
        );
    }
    next.run(request).await
}

fn same_origin(headers: &HeaderMap, public_origin: Option<&str>) -> bool {
    if let Some(site) = headers.get("sec-fetch-site") {
        return matches!(site.as_bytes(), b"same-origin" | b"none");
    }
    match headers.get(ORIGIN).map(HeaderValue::as_bytes) {
        None | Some(b"null") => true,
        Some(origin)
            if public_origin
                .is_some_and(|public| origin.eq_ignore_ascii_case(public.as_bytes())) =>
        {
            true
        }
        Some(origin) => {
            let host = headers.get(HOST).map(HeaderValue::as_bytes);
            let origin_host = origin
                .strip_prefix(b"http://")
                .or_else(|| origin.strip_prefix(b"https://"));
            matches!((origin_host, host), (Some(a), Some(b)) if a.eq_ignore_ascii_case(b))
        }
    }
}

/// What every page handler needs: the service, the session key, the signed-in reviewer.
struct Ui {
    state: ServeState,
    /// The keys of the reviewer list now.
    keys: std::sync::Arc<SessionKeys>,
    /// The signed-in reviewer's key (their forms' CSRF tokens), else the sign-in form's.
    key: SessionKey,
    /// The sign-in form's key.
    pre: SessionKey,
    store: Store,
    session: Option<Session>,
    secure: bool,
}

impl FromRequestParts<ServeState> for Ui {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &ServeState) -> Result<Ui, Response> {
        let (Some(keys), Some(store)) = (state.session_keys(), state.store().cloned()) else {
            return Err(refused(
                StatusCode::NOT_FOUND,
                "The review queue is not enabled on this service (it needs --store, \
                 --store-state and --reviewer-tokens-env).",
            ));
        };
        let now = SystemTime::now();
        let verified = cookie_header(&parts.headers)
            .and_then(|header| session::cookie(header, SESSION_COOKIE))
            .and_then(|value| {
                keys.verify(&value, now)
                    .map(|(session, key)| (session, key.clone()))
            });
        let pre = keys.pre().clone();
        let (session, key) = match verified {
            Some((session, key)) => (Some(session), key),
            None => (None, pre.clone()),
        };
        Ok(Ui {
            state: state.clone(),
            keys,
            key,
            pre,
            store,
            session,
            secure: secure_cookies(state, parts),
        })
    }
}

impl Ui {
    /// The signed-in reviewer, or a redirect to the sign-in page.
    fn reviewer(&self) -> Result<&Session, Response> {
        self.session
            .as_ref()
            .ok_or_else(|| see_other("/ui/sign-in"))
    }

    /// The signed-in reviewer whose form carried the right CSRF token.
    fn checked(&self, form: &[(String, String)]) -> Result<&Session, Response> {
        let session = self.reviewer()?;
        let given = field(form, "csrf").unwrap_or("");
        if !self.key.check_csrf(session, given) {
            return Err(refused(
                StatusCode::FORBIDDEN,
                "This form has expired or did not come from this site: reload the page and try again.",
            ));
        }
        Ok(session)
    }

    fn who<'a>(&self, session: &'a Session, csrf: &'a str) -> Who<'a> {
        Who {
            name: &session.name,
            csrf,
        }
    }
}

fn cookie_header(headers: &HeaderMap) -> Option<&str> {
    headers.get(COOKIE).and_then(|value| value.to_str().ok())
}

/// Whether the cookies set on this answer are `Secure`: always, but on a plain-HTTP service
/// asked for on a loopback host by a loopback peer, with no `https` `--public-url` and no
/// `X-Forwarded-Proto: https`. A header can only turn `Secure` on (a proxy terminating TLS
/// says so; a client claiming it only makes its own cookie stricter), never off.
fn secure_cookies(state: &ServeState, parts: &Parts) -> bool {
    if state
        .config()
        .public_url
        .as_ref()
        .is_some_and(PublicUrl::is_https)
    {
        return true;
    }
    let forwarded_https = parts
        .headers
        .get_all("x-forwarded-proto")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|proto| proto.trim().eq_ignore_ascii_case("https"));
    let loopback_peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .is_none_or(|ConnectInfo(peer)| peer.ip().to_canonical().is_loopback());
    forwarded_https || !loopback_host(&parts.headers) || !loopback_peer
}

/// Whether the page was asked for on a loopback host (`localhost`, `127.x.x.x`, `[::1]`),
/// where the session cookie may go without `Secure` (plain HTTP on the machine itself).
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

fn page(status: StatusCode, markup: Markup) -> Response {
    (
        status,
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        markup.into_string(),
    )
        .into_response()
}

fn refused(status: StatusCode, text: &str) -> Response {
    let title = match status {
        StatusCode::FORBIDDEN => "Refused",
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::CONFLICT => "Not yours",
        _ => "Something went wrong",
    };
    page(status, pages::message(None, title, text))
}

fn see_other(location: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(
            LOCATION,
            HeaderValue::from_str(location).unwrap_or(HeaderValue::from_static("/ui/")),
        )],
    )
        .into_response()
}

/// A page's sentence for a field the store refuses (`` `version` must not … ``).
fn control_message(message: &str) -> String {
    format!("The {}.", message.replace('`', ""))
}

fn store_failed(error: impl std::fmt::Display) -> Response {
    tracing::warn!(target: "jevjudge_serve::ui", %error, "review page: the store failed");
    refused(
        StatusCode::SERVICE_UNAVAILABLE,
        "The store did not answer: try again in a moment.",
    )
}

fn unix_millis(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
        i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
    })
}

async fn style() -> Response {
    static_file(STYLE, "text/css; charset=utf-8")
}

async fn script() -> Response {
    static_file(SCRIPT, "text/javascript; charset=utf-8")
}

async fn icon() -> Response {
    static_file(ICON, "image/svg+xml")
}

fn static_file(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=3600"),
            ),
        ],
        body,
    )
        .into_response()
}

async fn not_found() -> Response {
    refused(StatusCode::NOT_FOUND, "There is no such page.")
}

async fn sign_in_page(ui: Ui) -> Response {
    if ui.session.is_some() {
        return see_other("/ui/");
    }
    fresh_sign_in(&ui, StatusCode::OK, None)
}

/// The sign-in form with a new pre-session cookie (its CSRF nonce).
fn fresh_sign_in(ui: &Ui, status: StatusCode, error: Option<&str>) -> Response {
    let now = SystemTime::now();
    let pre = ui.pre.pre_session(now);
    let csrf = ui.pre.pre_csrf(&pre, now).unwrap_or_default();
    let mut response = page(status, pages::sign_in(&csrf, error));
    if let Ok(cookie) =
        HeaderValue::from_str(&session::set_cookie(PRE_COOKIE, &pre, PRE_TTL, ui.secure))
    {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
    response
}

async fn sign_in(
    ui: Ui,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    // Only a form that passes the pre-session CSRF check and carries a token spends one of the
    // address's attempts: junk posted by anyone sharing the address (every reviewer behind one
    // proxy) costs nothing, so it cannot lock the reviewers out.
    let now = SystemTime::now();
    let pre = cookie_header(&headers)
        .and_then(|header| session::cookie(header, PRE_COOKIE))
        .unwrap_or_default();
    if !ui
        .pre
        .check_pre_csrf(&pre, field(&form, "csrf").unwrap_or(""), now)
    {
        return fresh_sign_in(
            &ui,
            StatusCode::FORBIDDEN,
            Some("The sign-in form expired or did not come from this site: try again."),
        );
    }
    let token = field(&form, "token").unwrap_or("").trim();
    if token.is_empty() {
        return fresh_sign_in(
            &ui,
            StatusCode::UNAUTHORIZED,
            Some("Type your reviewer token."),
        );
    }
    // Before the token is checked: a refused attempt tells nothing about the token.
    let peer = peer.map(|Extension(ConnectInfo(peer))| peer.ip());
    let address = client_address(peer, &headers, &ui.state.config().trusted_proxies);
    if let Err(wait) = ui.state.sign_ins().attempt(address) {
        return too_many_attempts(&ui, wait);
    }
    let Some(reviewer) = ui.state.reviewer_for_token(token) else {
        return fresh_sign_in(
            &ui,
            StatusCode::UNAUTHORIZED,
            Some("That token is not a reviewer's."),
        );
    };
    let Some(key) = ui.keys.for_name(&reviewer.name) else {
        return fresh_sign_in(
            &ui,
            StatusCode::UNAUTHORIZED,
            Some("That token is not a reviewer's."),
        );
    };
    let session = key.sign_in(&reviewer.name, now);
    tracing::info!(target: "jevjudge_serve::ui", reviewer = %reviewer.name, "review page: signed in");
    let mut response = see_other("/ui/");
    let cookies = [
        session::set_cookie(
            SESSION_COOKIE,
            &key.encode(&session),
            SESSION_TTL,
            ui.secure,
        ),
        session::set_cookie(PRE_COOKIE, "", Duration::ZERO, ui.secure),
    ];
    for cookie in cookies {
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(SET_COOKIE, value);
        }
    }
    response
}

/// 429 with `Retry-After` (whole seconds, rounded up) and the sign-in form.
fn too_many_attempts(ui: &Ui, wait: Duration) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    tracing::warn!(target: "jevjudge_serve::ui", retry_after = seconds, "review page: sign-in attempts over the limit");
    let message = format!("Too many sign-in attempts from this address: try again in {seconds} s.");
    let mut response = fresh_sign_in(ui, StatusCode::TOO_MANY_REQUESTS, Some(&message));
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(seconds));
    response
}

async fn sign_out(ui: Ui, Form(form): Form<Vec<(String, String)>>) -> Response {
    if let Err(response) = ui.checked(&form) {
        return response;
    }
    let mut response = see_other("/ui/sign-in");
    if let Ok(value) = HeaderValue::from_str(&session::set_cookie(
        SESSION_COOKIE,
        "",
        Duration::ZERO,
        ui.secure,
    )) {
        response.headers_mut().append(SET_COOKIE, value);
    }
    response
}

/// The queue page's query: a version to list, a page cursor, a message to show.
#[derive(Deserialize)]
struct QueueQuery {
    version: Option<String>,
    cursor: Option<String>,
    message: Option<String>,
}

async fn queue_page(ui: Ui, Query(query): Query<QueueQuery>) -> Response {
    let session = match ui.reviewer() {
        Ok(session) => session,
        Err(response) => return response,
    };
    let csrf = ui.key.csrf(session);
    let version = query.version.as_deref().filter(|v| !v.is_empty());
    if let Some(Err(message)) = version.map(|v| jevjudge_store::check_no_controls("version", v)) {
        return refused(StatusCode::BAD_REQUEST, &control_message(&message));
    }
    let cursor = match query.cursor.as_deref().filter(|c| !c.is_empty()) {
        None => None,
        Some(text) => match text.parse::<QueueCursor>() {
            Ok(cursor) => Some(cursor),
            Err(_) => return refused(StatusCode::BAD_REQUEST, "That page link is not valid."),
        },
    };
    // Counts only (the page shows no agreement, which reads every pair of decisions), each
    // stopping at COUNT_CAP: an exact count reads every open item on every page load.
    let stats = match ui.store.queue_counts_capped(pages::COUNT_CAP).await {
        Ok(stats) => stats,
        Err(error) => return store_failed(error),
    };
    let list = match ui
        .store
        .queue_page(version, PAGE_ITEMS.min(MAX_PAGE), cursor.as_ref())
        .await
    {
        Ok(list) => list,
        Err(error) => return store_failed(error),
    };
    let now = unix_millis(SystemTime::now());
    let rows = list
        .items
        .iter()
        .map(|item| QueueRow {
            item: item.item.to_string(),
            version: item.definition_version.clone(),
            slot: item.slot,
            age: pages::age(now - item.queued_at_millis),
            claimed_by: item.claimed_by.clone(),
        })
        .collect();
    let next = list.next_cursor.as_ref().map(|cursor| {
        let mut query = format!("cursor={}", pages::urlencode(cursor));
        if let Some(version) = version {
            query.push_str(&format!("&version={}", pages::urlencode(version)));
        }
        query
    });
    let message = match query.message.as_deref() {
        Some("empty") => Some("Nothing is pending: the queue is empty."),
        Some("no-adjudication") => Some("No adjudication is waiting for you."),
        Some("released") => Some("Released: the item is back in the queue."),
        _ => None,
    };
    let held = match ui.store.held_at(&session.name, SystemTime::now()).await {
        Ok(held) => held,
        Err(error) => return store_failed(error),
    };
    let held = held
        .into_iter()
        .map(|held| {
            let adjudication = held.kind == ItemKind::Adjudication;
            HeldRow {
                href: item_href(held.item, adjudication),
                item: held.item.to_string(),
                adjudication,
                version: held.definition_version,
                lease_expires: held.lease_expires,
            }
        })
        .collect();
    let history = match ui
        .store
        .reviewer_history(&session.name, HISTORY_ITEMS)
        .await
    {
        Ok(history) => history,
        Err(error) => return store_failed(error),
    };
    let history = history
        .into_iter()
        .map(|entry| {
            let adjudication = entry.kind == ItemKind::Adjudication;
            HistoryRow {
                href: item_href(entry.item, adjudication),
                item: entry.item.to_string(),
                adjudication,
                version: entry.definition_version,
                decided_at: entry.decided_at,
            }
        })
        .collect();
    let adjudications_pending = if ui.state.is_lead(&session.name) {
        match ui.store.adjudication_stats().await {
            Ok(stats) => Some(stats.pending),
            Err(error) => return store_failed(error),
        }
    } else {
        None
    };
    let view = QueueView {
        who: ui.who(session, &csrf),
        held,
        history,
        adjudications_pending,
        pending_by_version: stats.pending_by_version.into_iter().collect(),
        claimed: stats.claimed,
        decided: stats.decided,
        version,
        rows,
        next,
        message,
    };
    page(StatusCode::OK, pages::queue(&view))
}

async fn claim(ui: Ui, Form(form): Form<Vec<(String, String)>>) -> Response {
    let session = match ui.checked(&form) {
        Ok(session) => session,
        Err(response) => return response,
    };
    let version = field(&form, "version").filter(|v| !v.is_empty());
    if let Some(Err(message)) = version.map(|v| jevjudge_store::check_no_controls("version", v)) {
        return refused(StatusCode::UNPROCESSABLE_ENTITY, &control_message(&message));
    }
    // A held item comes back first; "Claim another" (`new`) asks for a new one.
    let new = field(&form, "new").is_some_and(|value| !value.is_empty());
    match ui
        .store
        .claim_or_resume_at(
            &session.name,
            version,
            ui.state.lease(),
            ui.state.max_leases_per_reviewer(),
            new,
            SystemTime::now(),
        )
        .await
        .map(|(claim, _resumed)| claim)
    {
        Ok(Claim::Leased(claimed)) => see_other(&format!("/ui/items/{}", claimed.item)),
        Ok(Claim::Empty) => see_other("/ui/?message=empty"),
        Ok(Claim::AtCap { held }) => refused(
            StatusCode::CONFLICT,
            &format!(
                "You hold {} items, the most one reviewer may hold at once: decide or release \
                 one of them before claiming another ({}).",
                held.len(),
                held.iter()
                    .map(|item| format!("/ui/items/{item}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Err(error) => store_failed(error),
    }
}

#[cfg(test)]
mod tests;
