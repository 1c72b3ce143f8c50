//! Integration tests of jevjudge-client: scripted transports on tokio's paused clock, and real
//! sockets against the in-process fake server.

mod calls;
mod cancel;
mod limit;
mod privacy;
mod retry;
mod socket;
mod support;
