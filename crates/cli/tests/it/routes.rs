//! The real binary with routes: `serve --store sqlite:… --routes FILE` reviews under a route's
//! name with its live version; a route named like a version is exit 2 naming the file and the
//! route; `--routes` without `--store` is exit 2.

use jevjudge_fake::Config;
use jevjudge_test_support::{expect::contains, post, root, temp_dir};
use serde_json::Value;

use crate::{
    fake_server,
    serve::{refund_definitions, serve_definitions, start_serve, start_up_refused, stop_cleanly},
};

#[tokio::test(flavor = "multi_thread")]
async fn serve_with_routes_reviews_under_a_route_and_refuses_a_route_named_like_a_version() {
    let fake = fake_server(Config::default()).await;
    let dir = refund_definitions("serve-routes");
    let store = format!("sqlite:{}", dir.join("reviews.db").display());
    // Beside the definitions' directory, not in it (every .toml there is a definition).
    let files = temp_dir("serve-routes-files");
    let routes = files.join("routes.toml");
    std::fs::write(
        &routes,
        "[[route]]\nname = \"refund\"\nlive = \"refund-answer-v1\"\n",
    )
    .unwrap();
    let routes_arg = routes.to_str().unwrap().to_owned();

    let (mut child, addr) =
        start_serve(&dir, &fake, &["--store", &store, "--routes", &routes_arg]).await;
    let state = std::fs::read_to_string(root().join("examples/refund/state.json")).unwrap();
    let (status, served) = post(
        &addr,
        "/v1/reviews/refund",
        &format!(r#"{{"state": {state}}}"#),
    )
    .await;
    stop_cleanly(&mut child, 20).await;
    assert_eq!(status, 200, "{served}");
    let served: Value = serde_json::from_str(&served).unwrap();
    assert_eq!(served["definition_version"], "refund-answer-v1");

    let bad = files.join("bad-routes.toml");
    std::fs::write(
        &bad,
        "[[route]]\nname = \"refund-answer-v1\"\nlive = \"refund-answer-v1\"\n",
    )
    .unwrap();
    let stderr = start_up_refused(
        "a route named like a version",
        serve_definitions(&dir)
            .args(["--store", &store, "--routes"])
            .arg(&bad),
    )
    .await;
    contains(&stderr, "bad-routes.toml");
    contains(&stderr, "route refund-answer-v1");

    let stderr = start_up_refused(
        "--routes without --store",
        serve_definitions(&dir).args(["--routes", &routes_arg]),
    )
    .await;
    contains(&stderr, "--store");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&files);
}
