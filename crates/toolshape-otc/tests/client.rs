//! `OtcClient` over real HTTP: listing, resolution, typed calls, output
//! validation (against a server that breaks its own schema), retries, and
//! each refusal as its own error kind.

mod common;

use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::{get, post};
use common::{TestResult, start, tools};
use serde_json::{Map, json};
use toolshape_otc::{OtcCallOptions, OtcClient, OtcErrorKind, OtcOptions, RetryPolicy};

#[tokio::test]
async fn lists_resolves_and_calls() -> TestResult {
    let (registry, _) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    let client = OtcClient::builder(running.base.clone()).build()?;
    assert!(client.health().await?);
    let tools = client.list_tools().await?;
    assert!(tools.iter().any(|t| t.id == "Calculator.Add@1.0.0"));
    // By id, id without version, name, tool part.
    for name in [
        "Calculator.Add@1.0.0",
        "Calculator.Add",
        "Calculator_Add",
        "Add",
    ] {
        let sum: i64 = client.call(name, json!({"a": 2, "b": 3})).await?;
        assert_eq!(sum, 5, "{name}");
    }
    // Versions: latest by default, or the one asked for.
    let latest: String = client.call("Test.Versioned", json!({})).await?;
    let first: String = client.call("Test.Versioned@1", json!({})).await?;
    assert_eq!((latest.as_str(), first.as_str()), ("two", "one"));
    // A tool that returns nothing.
    let response = client.call_tool("Doorbell.Chime", Map::new()).await?;
    assert!(response.success() && response.value().is_none());
    // A tool error: Ok with success false from call_tool, an error from call.
    let failed = client
        .call_tool(
            "Doorbell.Find",
            Map::from_iter([("doorbell_id".into(), json!("x"))]),
        )
        .await?;
    let error = failed.error().ok_or("no error")?;
    assert_eq!((error.can_retry, error.retry_after_ms), (true, Some(500)));
    let typed = client.call::<String>("Web.Fetch", json!({})).await;
    assert!(matches!(
        typed.as_ref().map_err(|e| e.kind()),
        Err(OtcErrorKind::Tool { .. })
    ));
    // 422, 400 and local resolution failures.
    let invalid = client
        .call::<i64>("Calculator.Add", json!({"a": "x"}))
        .await;
    match invalid.as_ref().map_err(|e| e.kind()) {
        Err(OtcErrorKind::InvalidInput {
            parameter_errors, ..
        }) => {
            assert!(parameter_errors.contains_key("a") && parameter_errors.contains_key("b"));
        }
        other => return Err(format!("expected InvalidInput, got {other:?}").into()),
    }
    // A 400 naming what the call lacks is its own kind.
    let missing = client.call::<String>("Test.Secretive", json!({})).await;
    match missing.as_ref().map_err(|e| e.kind()) {
        Err(OtcErrorKind::MissingRequirements {
            secrets,
            user_id,
            authorization,
            ..
        }) => assert_eq!(
            (secrets.as_slice(), *user_id, authorization.len()),
            (&["API_KEY".to_owned()][..], true, 0)
        ),
        other => return Err(format!("expected MissingRequirements, got {other:?}").into()),
    }
    let unknown = client.call::<i64>("Nope", json!({})).await;
    assert!(matches!(
        unknown.as_ref().map_err(|e| e.kind()),
        Err(OtcErrorKind::UnknownTool(_))
    ));
    let decoded = client
        .call::<String>("Calculator.Add", json!({"a": 1, "b": 1}))
        .await;
    assert!(decoded.is_err_and(|e| e.is_validation_error()));
    Ok(())
}

#[tokio::test]
async fn retries_only_when_asked_and_as_told() -> TestResult {
    let (registry, counters) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    let plain = OtcClient::builder(running.base.clone()).build()?;
    let once = plain.call_tool("Test.Flaky", Map::new()).await?;
    assert!(!once.success());
    assert_eq!(
        counters.flaky.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "no retry by default"
    );
    let retrying = OtcClient::builder(running.base.clone())
        .retry(RetryPolicy::attempts(3))
        .build()?;
    let started = Instant::now();
    let value: i64 = retrying.call("Test.Flaky", json!({})).await?;
    assert_eq!(value, 2, "the third run succeeds");
    assert!(
        started.elapsed() >= Duration::from_millis(20),
        "waited retry_after_ms"
    );
    // Bounded: two attempts are not enough for a fresh run of failures.
    let bounded = OtcClient::builder(running.base.clone())
        .retry(RetryPolicy::attempts(2))
        .build()?;
    assert!(bounded.call::<i64>("Test.Flaky", json!({})).await.is_err());
    Ok(())
}

/// A server that lists an integer output and answers a string: a real HTTP
/// server that breaks its own promise.
fn lying_server() -> Router {
    let listing = json!({"items": [
        {"id": "Liar.Number@1.0.0", "name": "Liar_Number", "description": "", "version": "1.0.0",
         "input_schema": {"type": "object"}, "output_schema": {"type": "integer"}},
        {"id": "Liar.Silent@1.0.0", "name": "Liar_Silent", "description": "", "version": "1.0.0",
         "input_schema": {"type": "object"}, "output_schema": null},
        {"id": "Liar.Pattern@1.0.0", "name": "Liar_Pattern", "description": "", "version": "1.0.0",
         "input_schema": {"type": "object"}, "output_schema": {"type": "string", "pattern": "(a+)+$"}}
    ]});
    Router::new()
        .route(
            "/tools",
            get(move || {
                let body = listing.to_string();
                async move { ([("content-type", "application/json")], body) }
            }),
        )
        .route(
            "/tools/call",
            post(|| async {
                let body =
                    json!({"result": {"call_id": "c", "success": true, "value": "not a number"}});
                ([("content-type", "application/json")], body.to_string())
            }),
        )
}

#[tokio::test]
async fn values_that_break_the_output_schema_are_validation_errors() -> TestResult {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    let server = tokio::spawn(async move { axum::serve(listener, lying_server()).await });
    let client = OtcClient::builder(format!("http://{address}")).build()?;
    let number = client.call::<i64>("Liar.Number", json!({})).await;
    assert!(
        matches!(
            number.as_ref().map_err(|e| e.kind()),
            Err(OtcErrorKind::Validation { .. })
        ),
        "{number:?}"
    );
    let silent = client.call_tool("Liar.Silent", Map::new()).await;
    assert!(
        matches!(
            silent.as_ref().map_err(|e| e.kind()),
            Err(OtcErrorKind::UnexpectedValue(_))
        ),
        "{silent:?}"
    );
    // An answer for another call than the one sent is not taken.
    let mut options = OtcCallOptions::default();
    options.call_id = Some("mine".into());
    let crossed = client
        .call_tool_with("Liar.Number", Map::new(), options)
        .await;
    assert!(
        matches!(
            crossed.as_ref().map_err(|e| e.kind()),
            Err(OtcErrorKind::InvalidResponse(message)) if message.contains("\"mine\"")
        ),
        "{crossed:?}"
    );
    // A backtracking pattern is not compiled by the untrusted engine.
    let pattern = client.call_tool("Liar.Pattern", Map::new()).await;
    assert!(pattern.is_err_and(|e| e.is_validation_error()));
    server.abort();
    Ok(())
}

#[tokio::test]
async fn a_listing_is_fetched_again_for_what_it_lacks() -> TestResult {
    let (registry, _) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    let client = OtcClient::builder(running.base.clone()).build()?;
    let first: String = client.call("Test.Versioned", json!({})).await?;
    assert_eq!(first, "two");
    // The server drops the version the client resolved, adds a newer one and
    // a new tool.
    registry.remove_version("Test_Versioned", "2.1.0".parse()?);
    registry.register(
        toolshape::Tool::typed("Test_Versioned", |_: tools::Nothing| async move {
            Ok::<_, toolshape::ToolError>("three".to_owned())
        })
        .toolkit("Test")
        .version("3.0.0"),
    )?;
    registry.register(
        toolshape::Tool::typed("Late_Echo", |input: tools::AddInput| async move {
            Ok::<_, toolshape::ToolError>(input.a)
        })
        .toolkit("Late"),
    )?;
    // Within a second of the listing, nothing is fetched again: the old
    // version is refused, the new tool unknown.
    let stale = client.call::<String>("Test.Versioned", json!({})).await;
    assert!(
        matches!(
            stale.as_ref().map_err(|e| e.kind()),
            Err(OtcErrorKind::Refused { status: 400, .. })
        ),
        "{stale:?}"
    );
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // Later, the refusal lists again and the call goes to the new version...
    let latest: String = client.call("Test.Versioned", json!({})).await?;
    assert_eq!(latest, "three");
    // ... and a name the listing lacks lists again (a second after the last).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let echoed: i64 = client.call("Late.Echo", json!({"a": 7, "b": 0})).await?;
    assert_eq!(echoed, 7);
    // A version asked for by number that is gone is unknown (listed again
    // within the second: not fetched again).
    let gone = client
        .call::<String>("Test.Versioned@2.1.0", json!({}))
        .await;
    assert!(
        matches!(
            gone.as_ref().map_err(|e| e.kind()),
            Err(OtcErrorKind::UnknownTool(_))
        ),
        "{gone:?}"
    );
    Ok(())
}

/// A tool `Shape.Get@1.0.0` returning `value`, declared with `output`.
fn shape_tool(output: serde_json::Value, value: serde_json::Value) -> toolshape::Tool {
    toolshape::Tool::dynamic(
        "Shape_Get",
        json!({"type": "object"}),
        Some(output),
        move |_context: toolshape::ToolContext, _arguments: serde_json::Value| {
            let value = value.clone();
            async move {
                Ok::<_, toolshape::ToolError>(toolshape::tool::ToolOutput::structured(value))
            }
        },
    )
    .toolkit("Shape")
}

#[tokio::test]
async fn a_tool_defined_anew_under_its_id_is_checked_against_its_new_schema() -> TestResult {
    let registry = toolshape::ToolRegistry::new();
    registry.register(shape_tool(
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        json!({"n": 1}),
    ))?;
    let running = start(&registry, OtcOptions::default()).await?;
    let client = OtcClient::builder(running.base.clone()).build()?;
    let first: serde_json::Value = client.call("Shape.Get", json!({})).await?;
    assert_eq!(first, json!({"n": 1}));
    // The same id and version, another output schema.
    registry.remove("Shape_Get");
    registry.register(shape_tool(
        json!({"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}),
        json!({"s": "x"}),
    ))?;
    // Within the second of the listing: checked against the old schema.
    let stale = client
        .call::<serde_json::Value>("Shape.Get", json!({}))
        .await;
    assert!(stale.is_err_and(|e| e.is_validation_error()));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // Later, a listing asked for after the call has the new one.
    let second: serde_json::Value = client.call("Shape.Get", json!({})).await?;
    assert_eq!(second, json!({"s": "x"}));
    Ok(())
}

#[tokio::test]
async fn missing_tokens_come_with_where_to_grant_them() -> TestResult {
    let (registry, _) = tools::registry();
    let mut options = OtcOptions::default();
    options
        .authorization_urls
        .insert("google".into(), "https://accounts.example/google".into());
    let running = start(&registry, options).await?;
    let client = OtcClient::builder(running.base.clone()).build()?;
    let lacking = client.call::<i64>("Test.Mail", json!({})).await;
    match lacking.as_ref().map_err(|e| e.kind()) {
        Err(OtcErrorKind::MissingRequirements {
            authorization,
            message,
            ..
        }) => {
            let listed: Vec<(&str, Option<&str>)> = authorization
                .iter()
                .map(|challenge| (challenge.id.as_str(), challenge.url.as_deref()))
                .collect();
            assert_eq!(
                listed,
                [("google", Some("https://accounts.example/google"))]
            );
            // The provider without a URL is named in the message.
            assert!(message.contains("github"), "{message}");
        }
        other => return Err(format!("expected MissingRequirements, got {other:?}").into()),
    }
    Ok(())
}

#[tokio::test]
async fn refusals_are_told_apart() -> TestResult {
    let (registry, _) = tools::registry();
    let mut options = OtcOptions::default();
    options.auth = toolshape_otc::OtcAuth::none().api_key("the-right-key-000000")?;
    let running = start(&registry, options).await?;
    let wrong = OtcClient::builder(running.base.clone())
        .api_key("the-wrong-key-000000")
        .build()?;
    let refused = wrong.list_tools().await;
    assert!(matches!(
        refused.as_ref().map_err(|e| e.kind()),
        Err(OtcErrorKind::Unauthorized(_))
    ));
    let nowhere = OtcClient::builder("http://127.0.0.1:9")
        .timeout(Duration::from_secs(2))
        .build()?;
    assert!(matches!(
        nowhere.health().await.as_ref().map_err(|e| e.kind()),
        Err(OtcErrorKind::Transport(_))
    ));
    assert!(OtcClient::builder("ftp://example").build().is_err());
    Ok(())
}

/// A schema of a few hundred bytes whose references, inlined, make it about
/// 7 KB: each level holds the one below it twice.
fn diamond() -> serde_json::Value {
    let mut defs = serde_json::Map::new();
    defs.insert(
        "d0".into(),
        json!({"type": "string", "description": "one leaf of the diamond"}),
    );
    for level in 1..=6 {
        let below = format!("#/$defs/d{}", level - 1);
        defs.insert(
            format!("d{level}"),
            json!({"type": "object", "properties": {"l": {"$ref": below}, "r": {"$ref": below}}}),
        );
    }
    json!({"type": "object", "properties": {"top": {"$ref": "#/$defs/d6"}}, "$defs": defs})
}

#[tokio::test]
async fn inlining_never_grows_a_listing_past_what_the_client_reads() -> TestResult {
    let schema = diamond();
    let written = serde_json::to_vec(&schema)?.len();
    let inlined = toolshape::schema::inline::inline_local_refs(&schema).ok_or("not inlined")?;
    let grown = serde_json::to_vec(&inlined)?.len();
    // Alone, each schema is inlined (within its own bound of 8 KiB).
    assert!(
        written < 1000 && grown > 6000 && grown < 8192,
        "{written} -> {grown}"
    );
    // 1,600 of them inlined would make a 22 MB listing (each tool twice,
    // under `items` and `tools`), past the client's 16 MiB.
    let registry = toolshape::ToolRegistry::new();
    let tools = (0..1600).map(|i| {
        toolshape::Tool::dynamic(format!("Wide_T{i}"), schema.clone(), None, |_, _| async {
            Ok::<_, toolshape::ToolError>(toolshape::tool::ToolOutput::text("ok"))
        })
        .toolkit("Wide")
    });
    if let Err(errors) = registry.register_all(tools) {
        return Err(format!("{errors:?}").into());
    }
    let running = start(&registry, OtcOptions::default()).await?;
    let body = reqwest::get(running.url("/tools")).await?.bytes().await?;
    assert!(body.len() <= 16 * 1024 * 1024, "{} bytes", body.len());
    let listed: serde_json::Value = serde_json::from_slice(&body)?;
    let items = listed["items"].as_array().ok_or("no items")?;
    let with_refs = items
        .iter()
        .filter(|item| item["input_schema"].get("$defs").is_some())
        .count();
    // Inlined while there was room (most of them), the rest as written.
    assert_eq!(items.len(), 1600);
    assert!(with_refs > 0 && with_refs < 800, "{with_refs} written");
    let client = OtcClient::builder(running.base.clone()).build()?;
    assert_eq!(client.list_tools().await?.len(), 1600);
    Ok(())
}

/// What sits in front of a server (a load balancer's HTML 503, a plain-text
/// health check, a 404 page) is told by its status, not refused as a body
/// that is not JSON.
#[tokio::test]
async fn answers_that_are_not_json_are_told_by_their_status() -> TestResult {
    let html = (
        [("content-type", "text/html")],
        "<html>502 Bad Gateway</html>",
    );
    let app = Router::new()
        .route("/health", get(|| async { "OK" }))
        .route(
            "/tools",
            get(move || async move { (axum::http::StatusCode::BAD_GATEWAY, html) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = OtcClient::builder(base.clone()).build()?;
    assert!(client.health().await?, "a 200 in plain text is healthy");
    let listed = client.list_tools().await;
    assert!(
        matches!(
            listed.as_ref().map_err(|e| e.kind()),
            Err(OtcErrorKind::Refused { status: 502, .. })
        ),
        "{listed:?}"
    );
    let unavailable = Router::new().route(
        "/health",
        get(|| async {
            (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                [("content-type", "text/html")],
                "<html>draining</html>",
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, unavailable).await });
    assert!(!OtcClient::builder(base).build()?.health().await?);
    Ok(())
}

/// An API key goes in both header names: an OTC-era server that reads only
/// `OTC-API-Key` gets it too.
#[tokio::test]
async fn an_api_key_reaches_a_server_reading_the_older_header() -> TestResult {
    let app = Router::new().route(
        "/health",
        get(|headers: axum::http::HeaderMap| async move {
            if headers.get("otc-api-key").and_then(|v| v.to_str().ok())
                == Some("an-api-key-of-some-length")
            {
                axum::http::StatusCode::OK
            } else {
                axum::http::StatusCode::UNAUTHORIZED
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = OtcClient::builder(base)
        .api_key("an-api-key-of-some-length")
        .build()?;
    assert!(client.health().await?);
    Ok(())
}

/// The `GET /tools` body, as JSON.
async fn listing_body(
    running: &common::Running,
) -> Result<serde_json::Value, Box<dyn std::error::Error + Send + Sync>> {
    let bytes = common::http()
        .get(running.url("/tools"))
        .send()
        .await?
        .bytes()
        .await?;
    Ok(serde_json::from_slice(&bytes)?)
}

/// A listing whose two copies (`items`, and `tools` for older clients)
/// would pass the 16 MiB a client reads is sent once: a server of large
/// tools stays listable.
#[tokio::test]
async fn a_large_listing_is_sent_once_and_stays_readable() -> TestResult {
    let registry = toolshape::ToolRegistry::new();
    let description = "d".repeat(1536 * 1024);
    for n in 0..6 {
        registry.register(
            toolshape::Tool::typed(format!("Big_Tool{n}"), |i: tools::AddInput| async move {
                Ok::<_, toolshape::ToolError>(i.a + i.b)
            })
            .toolkit("Big")
            .description(description.clone()),
        )?;
    }
    let running = start(&registry, OtcOptions::default()).await?;
    let body = listing_body(&running).await?;
    assert_eq!(body["items"].as_array().map(Vec::len), Some(6));
    assert!(body.get("tools").is_none(), "sent twice");
    let client = OtcClient::builder(running.base.clone()).build()?;
    assert_eq!(client.list_tools().await?.len(), 6);
    // A small listing keeps both names.
    let (small, _) = tools::registry();
    let running = start(&small, OtcOptions::default()).await?;
    let body = listing_body(&running).await?;
    assert_eq!(body["items"], body["tools"]);
    Ok(())
}
