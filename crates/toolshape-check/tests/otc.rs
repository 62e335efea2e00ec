#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The OTC checks against a small OTC server written here (axum, real HTTP on
//! loopback), in two modes: one that follows the spec (no error or warning),
//! and one with a planted defect per OTC rule, each found with its rule on
//! its tool and nothing else.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use toolshape_check::{CallPolicy, Options, Report, Rule, Severity, Target};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Good,
    Bad,
    /// As `Good`, its first tool (`Calc.Add`) answering after 1.5 s.
    Slow,
}

fn x_input() -> Value {
    json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})
}

fn tool(id: &str, input: Value, output: Value) -> Value {
    let (kit_tool, version) = id.split_once('@').unwrap_or((id, "1.0.0"));
    json!({
        "id": id,
        "name": kit_tool.replace('.', "_"),
        "description": format!("{id} for the check's tests"),
        "version": version,
        "input_schema": input,
        "output_schema": output
    })
}

/// The bad mode's tools, each breaking one rule (named after it).
const BAD_TOOLS: [&str; 9] = [
    "Bad.Value@1.0.0",
    "Bad.NoCallId@1.0.0",
    "Bad.WrongCallId@1.0.0",
    "Bad.Lenient@1.0.0",
    "Bad.BothFields@1.0.0",
    "Bad.Status@1.0.0",
    "Bad.NoMessage@1.0.0",
    "Bad.Refs@1.0.0",
    "Bad.OldRefs@1.0.0",
];

async fn tools(State(mode): State<Arc<Mode>>) -> Json<Value> {
    let mut items = vec![
        tool(
            "Calc.Add@1.0.0",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
            json!({"type": "integer"}),
        ),
        tool("Calc.Nothing@1.0.0", json!({"type": "object"}), Value::Null),
        tool("Calc.Fail@1.0.0", json!({"type": "object"}), json!({})),
    ];
    if *mode == Mode::Bad {
        // Not Toolkit.Tool, a name with a space, no version.
        items.push(json!({
            "id": "NoToolkit", "name": "has space", "description": "bad listing",
            "input_schema": {"type": "object"}, "output_schema": null
        }));
        for id in BAD_TOOLS {
            let output = if id == "Bad.Refs@1.0.0" {
                // What OTC's schemas exclude: definitions and a reference.
                json!({"$defs": {"Y": {"type": "integer"}}, "type": "object", "properties": {"y": {"$ref": "#/$defs/Y"}}, "required": ["y"]})
            } else {
                json!({"type": "object", "properties": {"y": {"type": "integer"}}, "required": ["y"]})
            };
            let input = if id == "Bad.OldRefs@1.0.0" {
                // The OTC-era wrapping, with a reference inside it.
                json!({"parameters": {"$defs": {"X": {"type": "integer"}}, "type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}, "required": ["x"]}})
            } else {
                x_input()
            };
            items.push(tool(id, input, output));
        }
    }
    Json(json!({"items": items}))
}

async fn health(State(mode): State<Arc<Mode>>) -> StatusCode {
    match *mode {
        Mode::Good | Mode::Slow => StatusCode::OK,
        Mode::Bad => StatusCode::SERVICE_UNAVAILABLE,
    }
}

fn answer(status: StatusCode, body: Value) -> Response {
    (status, Json(body)).into_response()
}

fn respond(call_id: &str, response: Value) -> Response {
    let mut response = response;
    if response.get("call_id").is_none() {
        response["call_id"] = json!(call_id);
    }
    answer(
        StatusCode::OK,
        json!({"$schema": "urn:oxp:1.0", "result": response}),
    )
}

async fn call(State(mode): State<Arc<Mode>>, Json(body): Json<Value>) -> Response {
    let bad = *mode == Mode::Bad;
    let known = ["urn:oxp:1.0", "otc://1.0"];
    if let Some(version) = body.get("$schema").and_then(Value::as_str)
        && !known.contains(&version)
        && !bad
    {
        return answer(
            StatusCode::BAD_REQUEST,
            json!({"message": "unsupported $schema"}),
        );
    }
    let request = body.get("request").unwrap_or(&body);
    let id = request["tool_id"].as_str().unwrap_or_default();
    let call_id = request["call_id"]
        .as_str()
        .unwrap_or("generated")
        .to_owned();
    let input = request.get("input").cloned().unwrap_or(json!({}));
    let int = |key: &str| input.get(key).and_then(Value::as_i64);
    let invalid = |errors: Value| {
        answer(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"message": "invalid input", "parameter_errors": errors}),
        )
    };
    if *mode == Mode::Slow && id == "Calc.Add@1.0.0" {
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }
    match id {
        "Calc.Add@1.0.0" => match (int("a"), int("b")) {
            (Some(a), Some(b)) => respond(
                &call_id,
                json!({"success": true, "duration": 1.5, "value": a.saturating_add(b)}),
            ),
            _ => invalid(json!({"a": "an integer", "b": "an integer"})),
        },
        "Calc.Nothing@1.0.0" => respond(&call_id, json!({"success": true})),
        "Calc.Fail@1.0.0" => respond(
            &call_id,
            json!({"success": false, "error": {"message": "it failed", "can_retry": true, "retry_after_ms": 10}}),
        ),
        "NoToolkit" if bad => respond(&call_id, json!({"success": true})),
        id if bad && BAD_TOOLS.contains(&id) => {
            let x_ok = int("x").is_some();
            match (id, x_ok) {
                ("Bad.Lenient@1.0.0", _) => {
                    respond(&call_id, json!({"success": true, "value": {"y": 1}}))
                }
                ("Bad.NoMessage@1.0.0", false) => answer(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    json!({"parameter_errors": {}}),
                ),
                (_, false) => invalid(json!({"x": "an integer"})),
                ("Bad.Value@1.0.0", true) => {
                    respond(&call_id, json!({"success": true, "value": {"y": "one"}}))
                }
                ("Bad.NoCallId@1.0.0", true) => answer(
                    StatusCode::OK,
                    json!({"result": {"success": true, "value": {"y": 1}}}),
                ),
                ("Bad.WrongCallId@1.0.0", true) => respond(
                    &call_id,
                    json!({"call_id": "another", "success": true, "value": {"y": 1}}),
                ),
                ("Bad.BothFields@1.0.0", true) => respond(
                    &call_id,
                    json!({"success": true, "value": {"y": 1}, "error": {"message": "both"}}),
                ),
                ("Bad.Status@1.0.0", true) => answer(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    json!({"message": "boom"}),
                ),
                _ => respond(&call_id, json!({"success": true, "value": {"y": 1}})),
            }
        }
        // An unknown tool: 400, or (bad) 404 without a body the spec knows.
        _ if bad => (StatusCode::NOT_FOUND, "no such tool").into_response(),
        _ => answer(
            StatusCode::BAD_REQUEST,
            json!({"message": format!("unknown tool {id}")}),
        ),
    }
}

async fn serve(mode: Mode) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .route("/health", get(health))
        .route("/tools", get(tools))
        .route("/tools/call", post(call))
        .with_state(Arc::new(mode));
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

fn options(calls: CallPolicy) -> Options {
    let mut options = Options::default();
    options.calls = calls;
    options.call_timeout = Duration::from_secs(5);
    options
}

fn found(report: &Report) -> BTreeMap<String, BTreeSet<&'static str>> {
    let mut found: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for finding in report
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Info)
    {
        found
            .entry(finding.tool.clone().unwrap_or_else(|| "(server)".into()))
            .or_default()
            .insert(finding.rule.id());
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_follows_the_spec_is_clean() {
    let base = serve(Mode::Good).await;
    let report = toolshape_check::check(&Target::Otc(base), &options(CallPolicy::All)).await;
    assert_eq!(found(&report), BTreeMap::new(), "{}", report.to_json());
    assert_eq!(report.exit_code(true), 0);
    let add = report
        .tools
        .iter()
        .find(|t| t.name == "Calc.Add@1.0.0")
        .unwrap();
    assert!(
        add.calls.succeeded >= 1 && add.calls.invalid_rejected >= 1,
        "{add:?}"
    );
    let fail = report
        .tools
        .iter()
        .find(|t| t.name == "Calc.Fail@1.0.0")
        .unwrap();
    assert!(fail.calls.tool_errors >= 1, "{fail:?}");
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.rule == Rule::CallToolError)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_planted_defect_is_found_with_its_rule() {
    let base = serve(Mode::Bad).await;
    let report = toolshape_check::check(&Target::Otc(base), &options(CallPolicy::All)).await;
    let expected: BTreeMap<String, BTreeSet<&'static str>> = [
        ("(server)", &["otc-health", "otc-request-error-status"][..]),
        ("NoToolkit", &["otc-list-shape"]),
        ("Bad.Value@1.0.0", &["otc-value-invalid"]),
        ("Bad.NoCallId@1.0.0", &["otc-response-shape"]),
        ("Bad.WrongCallId@1.0.0", &["otc-call-id"]),
        ("Bad.Lenient@1.0.0", &["otc-invalid-input-status"]),
        ("Bad.BothFields@1.0.0", &["otc-response-shape"]),
        ("Bad.Status@1.0.0", &["otc-call-status"]),
        ("Bad.NoMessage@1.0.0", &["otc-error-body"]),
        ("Bad.Refs@1.0.0", &["otc-schema-ref"]),
        ("Bad.OldRefs@1.0.0", &["otc-schema-ref"]),
    ]
    .into_iter()
    .map(|(tool, rules)| (tool.to_owned(), rules.iter().copied().collect()))
    .collect();
    assert_eq!(found(&report), expected, "{}", report.to_json());
    // Both the unknown tool (404) and the unknown $schema (run anyway).
    let request_errors = report
        .findings
        .iter()
        .filter(|f| f.rule == Rule::OtcRequestErrorStatus)
        .count();
    assert_eq!(request_errors, 2);
    let value = report
        .findings
        .iter()
        .find(|f| f.rule == Rule::OtcValueInvalid)
        .unwrap();
    assert_eq!(value.location.pointer, "/result/value/y");
    // Inside the OTC-era wrapper, where the reference is.
    let old = report
        .findings
        .iter()
        .find(|f| f.rule == Rule::OtcSchemaRef && f.tool.as_deref() == Some("Bad.OldRefs@1.0.0"))
        .unwrap();
    assert!(
        old.location
            .pointer
            .ends_with("/input_schema/parameters/$defs"),
        "{}",
        old.location.pointer
    );
    assert_eq!(report.exit_code(false), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_calls_nothing_and_an_absent_server_is_unreachable() {
    let base = serve(Mode::Good).await;
    let report = toolshape_check::check(&Target::Otc(base), &options(CallPolicy::ReadOnly)).await;
    assert!(
        report
            .tools
            .iter()
            .all(|t| t.calls.valid == 0 && t.calls.skipped.is_some())
    );
    assert_eq!(report.exit_code(true), 0);

    let report = toolshape_check::check(
        &Target::Otc("http://127.0.0.1:1".into()),
        &options(CallPolicy::All),
    )
    .await;
    assert_eq!(report.exit_code(false), 4);
}

/// The check's time limit runs out during the first tool's call: the
/// tools it did not reach are reported as not called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_the_time_limit_left_uncalled_are_not_called() {
    let base = serve(Mode::Slow).await;
    let mut limited = options(CallPolicy::All);
    limited.max_time = Duration::from_secs(1);
    let report = toolshape_check::check(&Target::Otc(base), &limited).await;
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.rule == Rule::CheckIncomplete),
        "{}",
        report.to_json()
    );
    for tool in &report.tools {
        let expected =
            (tool.name != "Calc.Add@1.0.0").then_some("not called: the check stopped first");
        assert_eq!(
            tool.calls.skipped.as_deref(),
            expected,
            "{}",
            report.to_json()
        );
    }
}
