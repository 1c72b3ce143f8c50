//! Runs the client against jevcompat's reference mock, once per fault, and checks each outcome
//! against systemone-wire.md §14's table of expected client outcomes.
//!
//! ```text
//! cargo run -q -p jevjudge-client --example peer_mock -- --jevcompat .venv-jevcompat/bin/jevcompat [--only FAULT]
//! ```
//!
//! For each case it starts `jevcompat mock --host 127.0.0.1 --port <free port> --fault NAME…`,
//! waits until the mock answers HTTP, sends one request through the client, prints
//! `PASS <case> → <outcome>` (or `FAIL …` with what was expected), and kills the mock. It exits
//! 1 when any case fails or panics, 2 on bad usage. `scripts/peer-mock.sh` installs jevcompat
//! and runs it.

use std::{
    net::TcpListener,
    process::{Child, Command, ExitCode, Stdio},
    time::Duration,
};

use jevjudge_client::{ApiKey, Backoff, CallOptions, Client, Error, ErrorKind};
use jevjudge_wire::{
    ChoiceOption, ChoiceQuestion, Content, NoulQuestion, Question, Questions, Request,
    ScoreQuestion,
};
use serde_json::json;

/// The key the mock requires in the `--key` cases.
const MOCK_KEY: &str = "peer-mock-key";
/// The key the client sends when the mock has no key (any value is accepted then).
const ANY_KEY: &str = "peer-mock-any";

/// What the client sends.
#[derive(Clone, Copy)]
enum Call {
    /// The mixed four-question request (two nouls, a choice, a score).
    Mixed,
    /// The mixed request with an array state.
    ArrayState,
    /// `GET /v1/models`.
    Models,
}

/// Which key the client sends.
#[derive(Clone, Copy)]
enum ClientKey {
    /// [`ANY_KEY`] (wrong when the mock requires [`MOCK_KEY`]).
    Any,
    /// [`MOCK_KEY`].
    Right,
    /// No `Authorization` header.
    None,
}

/// What the table says must happen.
#[derive(Clone, Copy)]
enum Expect {
    /// Success; whether usage is known.
    Success { usage_known: bool },
    /// Success listing these model names.
    Models(&'static [&'static str]),
    /// An error with this judge code and detail after this many attempts, and this message
    /// (`None`: no message kept; `Some("*")`: any message).
    Error {
        code: &'static str,
        detail: &'static str,
        attempts: u32,
        message: Option<&'static str>,
    },
}

struct Case {
    name: &'static str,
    faults: &'static [&'static str],
    mock_key: bool,
    client_key: ClientKey,
    model: Option<&'static str>,
    call: Call,
    expect: Expect,
}

const fn case(name: &'static str, faults: &'static [&'static str], expect: Expect) -> Case {
    Case {
        name,
        faults,
        mock_key: false,
        client_key: ClientKey::Any,
        model: None,
        call: Call::Mixed,
        expect,
    }
}

const fn invalid(detail: &'static str) -> Expect {
    Expect::Error {
        code: "INVALID_RESPONSE",
        detail,
        attempts: 1,
        message: None,
    }
}

const fn backend(detail: &'static str, message: Option<&'static str>) -> Expect {
    Expect::Error {
        code: "BACKEND",
        detail,
        attempts: 1,
        message,
    }
}

const SUCCESS: Expect = Expect::Success { usage_known: true };
const NO_USAGE: Expect = Expect::Success { usage_known: false };

/// A case whose one fault is named like the case, answered `INVALID_RESPONSE` with `detail`.
macro_rules! invalid_case {
    ($name:literal, $detail:literal) => {
        case($name, &[$name], invalid($detail))
    };
}

fn cases() -> Vec<Case> {
    vec![
        case("clean", &[], SUCCESS),
        invalid_case!("first-question-only", "answer_missing"),
        invalid_case!("extra-answer", "answer_extra"),
        invalid_case!("boolean-type", "answer_wrong_type"),
        invalid_case!("noul-range", "probability_out_of_range"),
        invalid_case!("nan", "body_unreadable"),
        invalid_case!("xssi-200", "body_unreadable"),
        invalid_case!("nfd-keys", "choice_unknown"),
        invalid_case!("choice-key-case", "choice_unknown"),
        invalid_case!("legend-1-based", "probabilities_keys"),
        invalid_case!("score-keys-1-based", "probabilities_keys"),
        invalid_case!("score-no-legend", "probabilities_keys"),
        invalid_case!("choice-sum", "probabilities_sum"),
        invalid_case!("score-sum", "probabilities_sum"),
        invalid_case!("confidence-over", "confidence_invalid"),
        case(
            "wrong-route",
            &["wrong-route"],
            backend("http_status_404", Some("*")),
        ),
        case(
            "reject-jev-latest",
            &["reject-jev-latest"],
            backend("http_status_404", Some("Model not served: jev-latest")),
        ),
        case(
            "auth-rejects-header",
            &["auth-rejects-header"],
            backend("http_status_401", Some("This server takes no key.")),
        ),
        Case {
            mock_key: true,
            client_key: ClientKey::Right,
            ..case(
                "auth-x-api-key",
                &["auth-x-api-key"],
                backend("http_status_403", Some("Must supply an API key!")),
            )
        },
        case("no-usage", &["no-usage"], NO_USAGE),
        case("float-usage", &["float-usage"], NO_USAGE),
        case("plain-content-type", &["plain-content-type"], SUCCESS),
        case("unprefixed-extra", &["unprefixed-extra"], SUCCESS),
        case("choice-no-confidence", &["choice-no-confidence"], SUCCESS),
        case("choice-second", &["choice-second"], SUCCESS),
        case("score-argmax", &["score-argmax"], SUCCESS),
        case("confidence-margin", &["confidence-margin"], SUCCESS),
        case("text-errors", &["text-errors"], SUCCESS),
        case("error-flat", &["error-flat"], SUCCESS),
        case("validation-400", &["validation-400"], SUCCESS),
        case("id-leaks", &["id-leaks"], SUCCESS),
        case("batch-leaks", &["batch-leaks"], SUCCESS),
        case("order-leaks", &["order-leaks"], SUCCESS),
        // Error bodies: what the client keeps of each shape.
        case(
            "text-errors+wrong-route",
            &["text-errors", "wrong-route"],
            backend("http_status_404", None),
        ),
        Case {
            model: Some("jev-typo"),
            ..case(
                "error-flat+unknown-model",
                &["error-flat"],
                backend("http_status_400", Some("Unknown model: jev-typo")),
            )
        },
        Case {
            model: Some("jev-typo"),
            ..case(
                "unknown-model",
                &[],
                backend("http_status_400", Some("Unknown model: jev-typo")),
            )
        },
        Case {
            call: Call::ArrayState,
            ..case(
                "reject-array-state",
                &["reject-array-state"],
                backend(
                    "http_status_422",
                    Some("state: Input should be a valid string"),
                ),
            )
        },
        case(
            "no-null-description",
            &["no-null-description"],
            backend(
                "http_status_422",
                Some("questions.queue.choice.criteria.Crème: Input should be a valid string"),
            ),
        ),
        Case {
            mock_key: true,
            client_key: ClientKey::Right,
            ..case("auth-key", &[], SUCCESS)
        },
        Case {
            mock_key: true,
            client_key: ClientKey::Any,
            ..case(
                "auth-wrong-key",
                &[],
                backend(
                    "http_status_401",
                    Some("Cannot authenticate with the server."),
                ),
            )
        },
        Case {
            mock_key: true,
            client_key: ClientKey::Any,
            ..case(
                "auth-invalid-403-text",
                &["auth-invalid-403-text"],
                backend("http_status_401", Some("bad key")),
            )
        },
        Case {
            mock_key: true,
            client_key: ClientKey::None,
            ..case(
                "auth-plain",
                &["auth-plain"],
                backend("http_status_401", None),
            )
        },
        Case {
            call: Call::Models,
            ..case("models", &[], Expect::Models(&["jev-latest", "mock"]))
        },
        Case {
            call: Call::Models,
            ..case(
                "models-404",
                &["models-404"],
                backend("http_status_404", Some("*")),
            )
        },
    ]
}

/// Two nouls, then a choice whose labels change under both NFD and lowercasing, then a score.
fn mixed_request(array_state: bool) -> Request {
    let choice = ChoiceQuestion {
        instructions: Content::text("Which queue should handle this `ticket`?"),
        options: vec![
            ChoiceOption::new("Café").described("Food and drink orders"),
            ChoiceOption::new("Crème"),
        ],
    };
    let score = ScoreQuestion::new(
        "How frustrated is the customer?",
        ["Calm", "Frustrated", "Very angry"],
    );
    let questions: Questions = [
        (
            "urgent",
            Question::from(
                NoulQuestion::new("Does the `ticket` convey urgency?")
                    .with_criteria("Explicitly time-sensitive", "No urgency expressed"),
            ),
        ),
        (
            "refund",
            NoulQuestion::new("Is the customer asking for a refund?").into(),
        ),
        ("queue", choice.into()),
        ("mood", score.into()),
    ]
    .into_iter()
    .collect();
    let ticket = json!({"subject": "Duplicate charge",
                        "text": "I was charged twice for order A-104. Please refund the duplicate."});
    let state = if array_state {
        json!([ticket])
    } else {
        json!({ "ticket": ticket })
    };
    Request::new(state, questions)
}

/// Kills and reaps the mock when dropped, also while unwinding from a panic.
struct Mock(Child);

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// Starts the mock and waits (up to 15 s) until it answers any HTTP request.
async fn start_mock(jevcompat: &str, case: &Case) -> Result<(Mock, String), String> {
    let port = free_port().map_err(|e| format!("no free port: {e}"))?;
    let mut command = Command::new(jevcompat);
    command.args(["mock", "--host", "127.0.0.1", "--port", &port.to_string()]);
    if case.mock_key {
        command.args(["--key", MOCK_KEY]);
    }
    for fault in case.faults {
        command.args(["--fault", fault]);
    }
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {jevcompat}: {e}"))?;
    let mut mock = Mock(child);
    let url = format!("http://127.0.0.1:{port}");
    let probe = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(1))
        .build()
        .map_err(|e| e.to_string())?;
    for _ in 0..150 {
        if let Ok(Some(status)) = mock.0.try_wait() {
            return Err(format!("the mock exited early ({status})"));
        }
        if probe.get(format!("{url}/health")).send().await.is_ok() {
            return Ok((mock, url));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err("the mock did not answer within 15 s".into())
}

/// The judge-level code of an error (judge-contract D2).
fn code(error: &Error) -> &'static str {
    match error.kind() {
        ErrorKind::InvalidAnswers(_) | ErrorKind::UnreadableBody => "INVALID_RESPONSE",
        ErrorKind::Deadline => "TIMEOUT",
        _ => "BACKEND",
    }
}

fn describe_error(error: &Error) -> String {
    let retried = if error.attempts() == 1 {
        "not retried".to_owned()
    } else {
        format!("{} attempts", error.attempts())
    };
    let message = match error.message() {
        Some(message) => format!(", message {message:?}"),
        None => String::new(),
    };
    format!("{} {}, {retried}{message}", code(error), error.detail())
}

fn describe_expected(expect: Expect) -> String {
    match expect {
        Expect::Success { usage_known: true } => "success".into(),
        Expect::Success { usage_known: false } => "success, usage unknown".into(),
        Expect::Models(names) => format!("models {names:?}"),
        Expect::Error {
            code,
            detail,
            attempts,
            message,
        } => {
            let retried = if attempts == 1 {
                "not retried".to_owned()
            } else {
                format!("{attempts} attempts")
            };
            let message = match message {
                Some("*") => ", any message".to_owned(),
                Some(message) => format!(", message {message:?}"),
                None => String::new(),
            };
            format!("{code} {detail}, {retried}{message}")
        }
    }
}

fn matches_error(error: &Error, expect: Expect) -> bool {
    let Expect::Error {
        code: want_code,
        detail,
        attempts,
        message,
    } = expect
    else {
        return false;
    };
    let message_ok = match message {
        Some("*") => error.message().is_some(),
        other => error.message() == other,
    };
    code(error) == want_code
        && error.detail().to_string() == detail
        && error.attempts() == attempts
        && message_ok
}

/// Runs one case: `Ok(outcome)` when it matches the table, `Err(explanation)` otherwise.
async fn run(jevcompat: &str, case: &Case) -> Result<String, String> {
    let (_mock, url) = start_mock(jevcompat, case).await?;
    let mut builder = Client::builder()
        .env_lookup(|_| None)
        .base_url(url)
        .attempt_timeout(Duration::from_secs(5))
        .call_timeout(Duration::from_secs(20))
        .backoff(Backoff::fixed(Duration::from_millis(50)));
    builder = match case.client_key {
        ClientKey::Any => builder.api_key(ApiKey::new(ANY_KEY).map_err(|e| e.to_string())?),
        ClientKey::Right => builder.api_key(ApiKey::new(MOCK_KEY).map_err(|e| e.to_string())?),
        ClientKey::None => builder.allow_no_key(true),
    };
    if let Some(model) = case.model {
        builder = builder.model(model);
    }
    let client = builder.build().map_err(|e| format!("client: {e}"))?;
    let expected = describe_expected(case.expect);
    match case.call {
        Call::Models => match (client.list_models().await, case.expect) {
            (Ok(list), Expect::Models(names)) => {
                let got: Vec<&str> = list.models.iter().map(|m| m.name.as_str()).collect();
                if got == names {
                    Ok(format!("models {got:?}"))
                } else {
                    Err(format!("got models {got:?}, expected {expected}"))
                }
            }
            (Ok(list), _) => Err(format!(
                "got {} models, expected {expected}",
                list.models.len()
            )),
            (Err(error), expect) if matches_error(&error, expect) => Ok(describe_error(&error)),
            (Err(error), _) => Err(format!(
                "got {}, expected {expected}",
                describe_error(&error)
            )),
        },
        Call::Mixed | Call::ArrayState => {
            let request = mixed_request(matches!(case.call, Call::ArrayState));
            match (
                client.system_one(&request, CallOptions::default()).await,
                case.expect,
            ) {
                (Ok(exchange), Expect::Success { usage_known }) => {
                    let outcome = if exchange.response.usage.is_some() {
                        "success"
                    } else {
                        "success, usage unknown"
                    };
                    if exchange.response.usage.is_some() == usage_known && exchange.attempts == 1 {
                        Ok(outcome.to_owned())
                    } else {
                        Err(format!(
                            "got {outcome} after {} attempts, expected {expected}",
                            exchange.attempts
                        ))
                    }
                }
                (Ok(exchange), _) => Err(format!(
                    "got success ({} answers), expected {expected}",
                    exchange.response.answers.len()
                )),
                (Err(error), expect) if matches_error(&error, expect) => Ok(describe_error(&error)),
                (Err(error), _) => Err(format!(
                    "got {}, expected {expected}",
                    describe_error(&error)
                )),
            }
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: peer_mock --jevcompat PATH [--only CASE]");
    ExitCode::from(2)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut jevcompat = None;
    let mut only = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--jevcompat" => jevcompat = rest.next().cloned(),
            "--only" => only = rest.next().cloned(),
            _ => return usage(),
        }
    }
    let Some(jevcompat) = jevcompat else {
        return usage();
    };
    let mut failures = 0;
    let mut ran = 0;
    for case in cases() {
        if only.as_deref().is_some_and(|only| only != case.name) {
            continue;
        }
        ran += 1;
        // Each case runs in its own task so a panic is caught, reported and counted; the
        // mock is killed by its guard while the task unwinds.
        let name = case.name;
        let path = jevcompat.clone();
        let outcome = tokio::spawn(async move { run(&path, &case).await }).await;
        match outcome {
            Ok(Ok(outcome)) => println!("PASS {name} → {outcome}"),
            Ok(Err(why)) => {
                failures += 1;
                println!("FAIL {name} → {why}");
            }
            Err(panic) => {
                failures += 1;
                println!("FAIL {name} → panicked: {panic}");
            }
        }
    }
    if ran == 0 {
        eprintln!("no case named {:?}", only.unwrap_or_default());
        return ExitCode::from(2);
    }
    println!(
        "peer-mock: {} of {ran} cases passed{}",
        ran - failures,
        if failures == 0 { "" } else { " — FAILED" }
    );
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
