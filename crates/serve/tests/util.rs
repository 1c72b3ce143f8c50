//! Shared helpers: a fake System One server, the service bound on 127.0.0.1:0 in front of it,
//! and a plain reqwest caller.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use jevjudge_client::{ApiKey, Client};
use jevjudge_fake::{FakeServer, Fault, FaultPlan};
use jevjudge_judge::{Backend, SystemOneBackend};
use jevjudge_serve::{Config, Definitions, Metrics, RunError, RunOptions, ServeState, Stopped};
pub use jevjudge_test_support::{Reply, read};
use serde_json::{Value, json};
use tokio::{net::TcpListener, sync::oneshot, task::JoinHandle};

/// The service's builder, under a name that does not clash with the [`Service`] below.
pub use jevjudge_serve::Service as Built;

/// The test data directory.
pub fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

/// The definitions of `tests/data/definitions`: `refund-answer-v1`, `support-draft-v1`.
pub fn definitions() -> Definitions {
    Definitions::load_dir(data("definitions")).expect("the test definitions load")
}

/// A fake System One server on a free local port.
pub async fn fake(config: jevjudge_fake::Config) -> FakeServer {
    let addr: SocketAddr = "127.0.0.1:0".parse().expect("an address");
    FakeServer::start(config, addr)
        .await
        .expect("the fake starts")
}

/// A fake that answers after `latency`.
pub async fn fake_with_latency(latency: Duration) -> FakeServer {
    fake(jevjudge_fake::Config {
        latency,
        ..Default::default()
    })
    .await
}

/// A fake answering every request with these noul values.
pub async fn fake_answering(values: &[(&str, f64)]) -> FakeServer {
    let server = fake(jevjudge_fake::Config::default()).await;
    server.script(FaultPlan::always(Fault::NoulValues(
        values
            .iter()
            .map(|(id, p)| ((*id).to_owned(), *p))
            .collect(),
    )));
    server
}

/// The default service in front of a fake with its default answers.
pub async fn default_service() -> (FakeServer, Service) {
    let fake = fake(Default::default()).await;
    let service = Service::in_front_of(&fake, Config::default()).await;
    (fake, service)
}

/// The default service in front of a fake whose `supported` answer is 0.95 (a PASS of
/// refund-answer-v1).
pub async fn supported_service() -> (FakeServer, Service) {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let service = Service::in_front_of(&fake, Config::default()).await;
    (fake, service)
}

/// The System One client for a fake, reporting attempts to `metrics`.
pub fn client(fake: &FakeServer, metrics: &Metrics, key: &str, retries: u32) -> Client {
    Client::builder()
        .base_url(fake.url())
        .api_key(ApiKey::new(key).expect("a valid key"))
        .retries(retries)
        .attempt_timeout(Duration::from_secs(5))
        .on_attempt(metrics.attempt_hook())
        .build()
        .expect("a client")
}

/// The service running on a local socket.
pub struct Service {
    pub url: String,
    pub state: ServeState,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<Stopped, RunError>>>,
}

impl Service {
    /// Waits (up to 10 s) until `/readyz` answers 200, else fails with `what`.
    #[allow(dead_code)]
    pub async fn wait_ready(&self, what: &str) {
        for _ in 0..50 {
            if self.get("/readyz").await.status == 200 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("{what}: /readyz never answered 200");
    }

    /// Starts the service with any backend.
    pub async fn start<B: Backend + 'static>(
        backend: B,
        config: Config,
        metrics: Metrics,
    ) -> Service {
        let built = Built::builder(backend, definitions())
            .config(config)
            .metrics(metrics)
            .build()
            .await
            .expect("a valid configuration");
        Service::start_built(built).await
    }

    /// Starts the service in front of a fake, through the real client (no retries).
    pub async fn in_front_of(fake: &FakeServer, config: Config) -> Service {
        let metrics = Metrics::new();
        let backend = SystemOneBackend::new(client(fake, &metrics, "test-key", 0));
        Service::start(backend, config, metrics).await
    }

    /// Starts a built service on a free local port.
    pub async fn start_built(built: Built) -> Service {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let listening = built
            .listen(listener, RunOptions::new())
            .expect("the service listens");
        let url = format!("http://{}", listening.local_addr());
        let state = listening.state().clone();
        let (shutdown, stop) = oneshot::channel::<()>();
        let task = tokio::spawn(listening.run(async move {
            let _ = stop.await;
        }));
        Service {
            url,
            state,
            shutdown: Some(shutdown),
            task: Some(task),
        }
    }

    /// Asks for a graceful shutdown and waits for the server to stop.
    pub async fn stop(mut self) -> Result<Stopped, RunError> {
        self.begin_stop();
        self.stopped().await
    }

    /// Sends the shutdown signal without waiting.
    pub fn begin_stop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }

    /// Waits (at most 10 s) for the server task to end after [`Service::begin_stop`].
    pub async fn stopped(mut self) -> Result<Stopped, RunError> {
        let task = self
            .task
            .take()
            .expect("the service runs until stopped once");
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("the server stops within 10 s")
            .expect("the server task does not panic")
    }

    /// `POST /v1/reviews/{version}` with this JSON body.
    pub async fn review(&self, version: &str, body: &Value) -> Reply {
        self.post(version, serde_json::to_vec(body).expect("JSON"), &[])
            .await
    }

    /// `POST /v1/reviews/refund-answer-v1` with the refund example's state.
    pub async fn review_refund(&self) -> Reply {
        self.review("refund-answer-v1", &json!({"state": refund_state()}))
            .await
    }

    /// [`Service::review_refund`] asking for a budget of `budget_millis`.
    pub async fn review_refund_within(&self, budget_millis: u64) -> Reply {
        let body = json!({"state": refund_state(), "budget_millis": budget_millis});
        self.review("refund-answer-v1", &body).await
    }

    /// `POST /v1/reviews/{version}` with raw bytes and extra headers.
    pub async fn post(&self, version: &str, body: Vec<u8>, headers: &[(&str, &str)]) -> Reply {
        let mut request = caller()
            .post(format!("{}/v1/reviews/{version}", self.url))
            .header("content-type", "application/json")
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        read(request.send().await.expect("a response")).await
    }

    /// Any method on any path, with extra headers.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut request = caller().request(method, format!("{}{path}", self.url));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        read(request.send().await.expect("a response")).await
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Reply {
        self.call(reqwest::Method::GET, path, &[]).await
    }

    /// The metrics text (without a token).
    pub fn metrics_text(&self) -> String {
        self.state.render_metrics()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
    }
}

/// A plain caller: no proxy, a generous timeout.
pub fn caller() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("a client")
}

/// The refund state of judge-contract F1.
pub fn refund_state() -> Value {
    json!({"user_question": "Has my refund gone through?",
           "supporting_context": ["Business record: no refund has been executed"],
           "assistant_answer": "The refund is complete."})
}

/// Polls until `check` holds (at most 5 s).
pub async fn eventually(mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the condition did not hold within 5 s"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Whether the metrics text has this exact sample line.
pub fn has_sample(metrics: &str, sample: &str) -> bool {
    metrics.lines().any(|line| line == sample)
}

/// A browser-like client that follows no redirect and keeps no cookie by itself.
pub fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
}

/// The `name=value` of every `Set-Cookie` header named `name`.
pub fn set_cookies<'a>(reply: &'a Reply, name: &str) -> Vec<&'a str> {
    reply
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .filter(|value| value.starts_with(&format!("{name}=")))
        .collect()
}

/// The value of the first hidden `csrf` field of a page.
pub fn csrf(page: &str) -> String {
    let marker = r#"name="csrf" value=""#;
    let start = page.find(marker).expect("a csrf field") + marker.len();
    page[start..][..page[start..].find('"').expect("a closing quote")].to_owned()
}

/// `text` percent-encoded for a form body (unreserved characters kept).
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
