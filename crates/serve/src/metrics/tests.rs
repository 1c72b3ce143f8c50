use jevjudge_judge::{ErrorCode, Verdict};
use jevjudge_wire::Detail;

use super::*;

fn gauges() -> Gauges {
    Gauges {
        in_flight: 1,
        waiting: 2,
        max_concurrent: 32,
        queue: 256,
    }
}

#[test]
fn reviews_are_counted_by_definition_status_and_error() {
    let metrics = Metrics::new();
    let verdict = Verdict::error(
        "refund \"v1\"",
        ErrorCode::Timeout,
        Detail::BudgetElapsed,
        Duration::from_millis(30),
    );
    metrics.record_review(&verdict);
    metrics.record_review(&verdict);
    metrics.record_rejection(Rejection::Full);
    let text = metrics.render(gauges());
    assert!(
        text.contains(
            "jevjudge_reviews_total{definition=\"refund \\\"v1\\\"\",status=\"ERROR\",error=\"TIMEOUT\"} 2"
        ),
        "{text}"
    );
    assert!(text.contains(
        "jevjudge_review_duration_seconds_bucket{le=\"0.025\",definition=\"refund \\\"v1\\\"\"} 0"
    ));
    assert!(text.contains(
        "jevjudge_review_duration_seconds_bucket{le=\"0.05\",definition=\"refund \\\"v1\\\"\"} 2"
    ));
    assert!(
        text.contains("jevjudge_review_duration_seconds_count{definition=\"refund \\\"v1\\\"\"} 2")
    );
    assert!(text.contains("jevjudge_reviews_in_flight 1\n"));
    assert!(text.contains("jevjudge_reviews_waiting 2\n"));
    assert!(text.contains("jevjudge_queue_rejections_total{reason=\"full\"} 1\n"));
}

#[test]
fn every_sample_line_belongs_to_a_declared_family() {
    let metrics = Metrics::new();
    metrics.record_http("/v1/reviews/{version}", "POST", 200);
    let text = metrics.render(gauges());
    let mut declared = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            declared.push(rest.split(' ').next().unwrap_or_default().to_owned());
        } else if !line.starts_with('#') {
            let name = line.split(['{', ' ']).next().unwrap_or_default();
            assert!(
                declared.iter().any(|family| name == family
                    || name.strip_prefix(family.as_str()).is_some_and(|suffix| {
                        ["_total", "_bucket", "_sum", "_count"].contains(&suffix)
                    })),
                "{line}"
            );
            let value = line.rsplit(' ').next().unwrap_or_default();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }
    assert!(text.ends_with("# EOF\n"), "{text}");
}

#[test]
fn the_limiter_figures_come_last_only_with_a_limiter_and_as_before() {
    use jevjudge_client::limit::LimitConfig;
    let metrics = Metrics::new();
    let without = metrics.render(gauges());
    assert!(!without.contains("jevjudge_ready"), "{without}");
    let limiter = Limiter::new(LimitConfig::new(8));
    metrics.watch_limiter(limiter.clone());
    let snapshot = limiter.snapshot();
    // The block the hand-written exposition wrote before the registry did, byte for byte.
    let mut expected = String::new();
    for (name, kind, help, value) in [
        (
            "jevjudge_backend_concurrency_limit",
            "gauge",
            "Reviews the adaptive limiter lets run against the backend now.",
            snapshot.limit as u64,
        ),
        (
            "jevjudge_backend_concurrency_ceiling",
            "gauge",
            "The most the adaptive limit may reach.",
            8,
        ),
        (
            "jevjudge_backend_overloaded_total",
            "counter",
            "Backend attempts answered 429 or 529.",
            0,
        ),
        (
            "jevjudge_backend_limit_cuts_total",
            "counter",
            "Times the adaptive limit was cut.",
            0,
        ),
        (
            "jevjudge_ready",
            "gauge",
            "1 while the service can review; 0 once the backend refused the key (401/403).",
            1,
        ),
    ] {
        let family = name.strip_suffix("_total").unwrap_or(name);
        expected.push_str(&format!(
            "# HELP {family} {help}\n# TYPE {family} {kind}\n{name} {value}\n"
        ));
    }
    expected.push_str("# EOF\n");
    let with = metrics.render(gauges());
    assert!(with.ends_with(&expected), "{with}");
    assert_eq!(with.len(), without.len() + expected.len() - "# EOF\n".len());
}

#[test]
fn the_store_and_queue_figures_are_shown_only_with_a_store_and_a_queue() {
    let metrics = Metrics::new();
    assert!(!metrics.render(gauges()).contains("jevjudge_store_ready"));
    metrics.set_store_figures(StoreScrape {
        ready: false,
        queue: None,
    });
    let text = metrics.render(gauges());
    assert!(text.contains("\njevjudge_store_ready 0\n"), "{text}");
    assert!(!text.contains("jevjudge_queue_pending"), "{text}");
    let mut figures = QueueGauges {
        decisions_answered: 7,
        decisions_cant_tell: 2,
        leases_expired: 3,
        ..QueueGauges::default()
    };
    figures.pending.insert(
        "refund \"v1\"".to_owned(),
        PendingVersion {
            items: 4,
            oldest_queued_at_millis: 1_000,
        },
    );
    metrics.set_store_figures(StoreScrape {
        ready: true,
        queue: Some(QueueScrape {
            gauges: figures,
            now_millis: 91_500,
            adjudications_pending: 0,
        }),
    });
    let text = metrics.render(gauges());
    for sample in [
        "jevjudge_store_ready 1",
        "jevjudge_queue_pending{version=\"refund \\\"v1\\\"\"} 4",
        "jevjudge_queue_oldest_pending_seconds{version=\"refund \\\"v1\\\"\"} 90.5",
        "jevjudge_queue_adjudications_pending 0",
        "jevjudge_queue_decisions_total{outcome=\"answered\"} 7",
        "jevjudge_queue_decisions_total{outcome=\"cant_tell\"} 2",
        "jevjudge_queue_leases_expired_total 3",
    ] {
        assert!(text.lines().any(|line| line == sample), "{sample}\n{text}");
    }
    assert!(
        text.contains("# TYPE jevjudge_queue_decisions counter\n"),
        "{text}"
    );
}

#[test]
fn zero_valued_label_sets_are_shown() {
    let text = Metrics::new().render(gauges());
    for sample in [
        "jevjudge_queue_rejections_total{reason=\"full\"} 0",
        "jevjudge_queue_rejections_total{reason=\"timeout\"} 0",
        "jevjudge_backend_attempt_failures_total{reason=\"deadline\"} 0",
        "jevjudge_connections_closed_total{reason=\"refused\"} 0",
        "jevjudge_backend_attempts_total 0",
        "jevjudge_backend_attempt_duration_seconds_count 0",
    ] {
        assert!(text.lines().any(|line| line == sample), "{sample}\n{text}");
    }
}
