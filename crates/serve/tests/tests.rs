//! Integration tests of the review service over real sockets on 127.0.0.1: the router bound
//! with `jevjudge_serve::serve`, backed by `SystemOneBackend` (the real client) pointing at
//! `jevjudge_fake::FakeServer`, called with a plain reqwest client.

mod auth;
mod backend_body;
mod budget;
mod connections;
mod definitions;
mod embed;
mod endpoints;
mod errors;
mod hardening;
mod hardening_auth;
mod limits;
mod queue;
mod queue_metrics;
mod queue_team;
mod rate_limits;
mod record;
mod route_changes;
mod routes;
mod shutdown;
mod store;
mod ui;
mod util;
