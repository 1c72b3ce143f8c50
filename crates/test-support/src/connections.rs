//! Raw connections held open against a server under test, for the tests of what it does with
//! connections it did not close yet (idle timeouts, shutdown).

use std::time::Duration;

use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpStream,
};

/// A kept-alive connection to `addr` (`host:port`) that has had one request answered
/// (`GET /healthz`, which must answer 200) and now idles; panics when no answer arrives
/// within 20 s. Only the status line is read: the rest of the answer stays unread.
pub async fn idle_connection(addr: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("sends");
    let mut status_line = [0u8; 15];
    tokio::time::timeout(Duration::from_secs(20), stream.read_exact(&mut status_line))
        .await
        .expect("an answer within 20 s")
        .expect("reads");
    assert_eq!(&status_line, b"HTTP/1.1 200 OK", "GET /healthz on {addr}");
    stream
}
