//! Every status code and field of the endpoint over real HTTP, both
//! envelopes and both spellings; every body checked against the corrected
//! OpenAPI document (see `common::check_against_openapi`).

mod common;

use std::time::Duration;

use common::{TestResult, call, call_request, send, start, tools};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolshape_otc::OtcOptions;

#[tokio::test]
async fn health_tools_and_the_openapi_document() -> TestResult {
    let (registry, _) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    let health = send(&running, "get", "/health", &[], None).await?;
    assert_eq!(
        (health.status, health.body.clone()),
        (200, json!({"status": "ok"}))
    );

    let listed = send(&running, "get", "/tools", &[], None).await?;
    assert_eq!(listed.status, 200);
    assert_eq!(listed.body["items"], listed.body["tools"]);
    let items = listed.body["items"].as_array().ok_or("no items")?;
    let find = |id: &str| {
        items
            .iter()
            .find(|t| t["id"] == id)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let add = find("Calculator.Add@1.0.0");
    assert_eq!(add["name"], "Calculator_Add");
    assert_eq!(add["version"], "1.0.0");
    assert_eq!(add["description"], "Add two integers");
    assert_eq!(add["input_schema"]["required"], json!(["a", "b"]));
    assert_eq!(add["output_schema"]["type"], "integer");
    // Returns nothing: `null`; text: a string; a tool's requirements.
    assert_eq!(find("Doorbell.Chime@1.0.0")["output_schema"], Value::Null);
    assert!(
        find("Doorbell.Chime@1.0.0")
            .as_object()
            .is_some_and(|t| t.contains_key("output_schema"))
    );
    assert_eq!(
        find("Test.Shout@1.0.0")["output_schema"],
        json!({"type": "string"})
    );
    assert_eq!(
        find("Test.Secretive@1.0.0")["requirements"],
        json!({"secrets": [{"id": "API_KEY"}], "user_id": true})
    );
    // Local references are inlined (the spec's schemas have no `$ref` or
    // definitions): schemars put `Email` under `$defs`.
    let emails = &find("Gmail.GetEmails@1.0.0")["output_schema"];
    assert!(emails.get("$defs").is_none(), "{emails}");
    assert_eq!(
        emails["properties"]["emails"]["items"]["required"],
        json!(["id", "subject", "snippet"]),
        "{emails}"
    );
    assert!(!listed.body.to_string().contains("$ref"));
    // Every version is listed.
    assert!(find("Test.Versioned@1.0.0").is_object() && find("Test.Versioned@2.1.0").is_object());

    let document = send(&running, "get", "/openapi.json", &[], None).await?;
    assert_eq!(document.status, 200);
    assert_eq!(document.body["openapi"], "3.1.0");
    let variants = document
        .body
        .pointer("/components/schemas/CallToolRequest/oneOf")
        .and_then(Value::as_array);
    let ids: Vec<&Value> = variants
        .ok_or("no per-tool variants")?
        .iter()
        .flat_map(|v| {
            v["properties"]["tool_id"]["enum"]
                .as_array()
                .into_iter()
                .flatten()
        })
        .collect();
    assert!(
        ids.contains(&&json!("Calculator.Add")) && ids.contains(&&json!("Test.Versioned@2.1.0"))
    );
    assert_eq!(
        document.body["paths"]["/tools/call"]["post"]["security"],
        json!([{}])
    );

    // Both are rendered once per change of the tools: a tool added since
    // is in the next of each.
    let added = toolshape::Tool::typed("Late_Echo", |input: tools::AddInput| async move {
        Ok::<_, toolshape::ToolError>(input.a)
    })
    .toolkit("Late");
    registry.register(added)?;
    let listed = send(&running, "get", "/tools", &[], None).await?;
    let ids: Vec<&Value> = listed.body["items"]
        .as_array()
        .ok_or("no items")?
        .iter()
        .map(|tool| &tool["id"])
        .collect();
    assert!(ids.contains(&&json!("Late.Echo@1.0.0")), "{ids:?}");
    let document = send(&running, "get", "/openapi.json", &[], None).await?;
    assert!(document.body.to_string().contains("Late.Echo"));

    // A name whose OTC name would pass 64 characters (MCP allows 128) is
    // served over MCP only: in neither document here, the others still are.
    let tail = "x".repeat(70);
    let long = toolshape::Tool::typed(
        format!("Late_{tail}"),
        |input: tools::AddInput| async move { Ok::<_, toolshape::ToolError>(input.a) },
    )
    .toolkit("Late");
    registry.register(long)?;
    assert!(
        registry
            .definitions()
            .iter()
            .any(|d| d.name.ends_with(&tail))
    );
    for path in ["/tools", "/openapi.json"] {
        let served = send(&running, "get", path, &[], None).await?;
        assert_eq!(served.status, 200, "{path}");
        let text = served.body.to_string();
        assert!(
            text.contains("Late.Echo") && !text.contains(&tail),
            "{path}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn both_envelopes_both_spellings_and_schema_versions() -> TestResult {
    let (registry, _) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    let bodies = [
        json!({"$schema": "urn:oxp:1.0", "request": {"tool_id": "Calculator.Add", "input": {"a": 1, "b": 2}}}),
        json!({"$schema": "otc://1.0", "request": {"tool_id": "Calculator.Add", "inputs": {"a": 1, "b": 2}}}),
        json!({"request": {"tool_id": "Calculator.Add@1", "input": {"a": 1, "b": 2}}}),
    ];
    for body in &bodies {
        let reply = call(&running, &[], body).await?;
        assert_eq!(reply.status, 200, "{body}");
        assert_eq!(reply.body["result"]["value"], 3);
        assert_eq!(reply.body["result"]["success"], true);
        assert_eq!(reply.body.get("$schema"), body.get("$schema"));
    }
    // Bare requests get bare responses.
    for body in [
        json!({"tool_id": "Calculator.Add@1.0.0", "input": {"a": 2, "b": 2}}),
        json!({"$schema": "otc://1.0", "tool_id": "Calculator.Add", "inputs": {"a": 2, "b": 2}}),
    ] {
        let reply = call(&running, &[], &body).await?;
        assert_eq!(
            (reply.status, reply.body["value"].clone()),
            (200, json!(4)),
            "{body}"
        );
        assert!(reply.body.get("result").is_none());
        let call_id = reply.body["call_id"].as_str().ok_or("no call_id")?;
        assert_eq!(call_id.len(), 36, "a generated UUID: {call_id}");
    }
    // Unknown `$schema`: 400.
    let reply = call(
        &running,
        &[],
        &json!({"$schema": "urn:oxp:2.0", "request": {"tool_id": "Calculator.Add"}}),
    )
    .await?;
    assert_eq!(reply.status, 400);
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("$schema")
    );
    Ok(())
}

#[tokio::test]
async fn success_nothing_text_and_tool_failures() -> TestResult {
    let (registry, _) = tools::registry();
    let running = start(&registry, OtcOptions::default()).await?;
    // Returns nothing: no `value` at all.
    let chime = call_request(
        &running,
        json!({"tool_id": "Doorbell.Chime", "call_id": "c-1"}),
    )
    .await?;
    assert_eq!(chime.status, 200);
    let result = chime.body["result"].as_object().ok_or("no result")?;
    assert_eq!(result.get("success"), Some(&json!(true)));
    assert!(!result.contains_key("value") && !result.contains_key("error"));
    assert_eq!(result.get("call_id"), Some(&json!("c-1")));
    // Text.
    let shout = call_request(
        &running,
        json!({"tool_id": "Test.Shout", "input": {"to": "x", "body": "hey"}}),
    )
    .await?;
    assert_eq!(shout.body["result"]["value"], "HEY");
    // An output that breaks its schema is never sent.
    let liar = call_request(&running, json!({"tool_id": "Test.Liar", "input": {}})).await?;
    assert_eq!(liar.status, 200);
    assert_eq!(liar.body["result"]["success"], false);
    assert!(liar.body["result"].get("value").is_none());
    assert!(
        !liar.raw.windows(12).any(|w| w == b"not a number"),
        "the invalid value leaked: {}",
        liar.body
    );
    // An output stripped of its value (a gateway's `--on-invalid strip`) has
    // nothing that conforms to send: a failure, never `success` with `null`.
    let stripped = call_request(&running, json!({"tool_id": "Test.Stripped", "input": {}})).await?;
    assert_eq!(stripped.status, 200);
    assert_eq!(
        stripped.body["result"]["success"], false,
        "{}",
        stripped.body
    );
    assert!(stripped.body["result"].get("value").is_none());
    let message = stripped.body["result"]["error"]["message"]
        .as_str()
        .unwrap_or("");
    assert!(message.contains("no value"), "{message}");
    // A delay is sent only with a call that may be retried.
    let gone = call_request(&running, json!({"tool_id": "Test.Gone", "input": {}})).await?;
    let error = &gone.body["result"]["error"];
    assert_eq!(error["message"], "gone for good", "{}", gone.body);
    assert!(error.get("retry_after_ms").is_none(), "{}", gone.body);
    assert_ne!(error["can_retry"], true, "{}", gone.body);
    // A time limit: 200 with success false; an idempotent tool may be retried.
    let mut options = OtcOptions::default();
    options.call_timeout = Some(Duration::from_millis(100));
    let limited = start(&registry, options).await?;
    let slow = call_request(
        &limited,
        json!({"tool_id": "Test.Slow", "input": {"a": 2000, "b": 1}}),
    )
    .await?;
    assert_eq!(slow.status, 200);
    assert_eq!(slow.body["result"]["success"], false);
    assert_eq!(slow.body["result"]["error"]["can_retry"], true);
    assert!(
        slow.body["result"]["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("timed out")
    );
    Ok(())
}

#[tokio::test]
async fn bad_requests_are_400_and_bad_input_is_422() -> TestResult {
    let (registry, counters) = tools::registry();
    let mut options = OtcOptions::default();
    options
        .authorization_urls
        .insert("google".into(), "https://accounts.example/google".into());
    let running = start(&registry, options).await?;
    let raw = |body: &'static [u8]| send(&running, "post", "/tools/call", &[], Some(body.to_vec()));
    for (body, says) in [
        (&b"{not json"[..], "not JSON"),
        (b"[1]", "not a JSON object"),
        (br#"{"request":{"tool_id":"Nope.Nothing"}}"#, "Unknown tool"),
        (
            br#"{"request":{"tool_id":"Test.Versioned@3.0.0"}}"#,
            "Unknown version",
        ),
        (br#"{"request":{"tool_id":"not-an-id"}}"#, "invalid tool_id"),
        (
            br#"{"request":{"tool_id":"Calculator.Add","bogus":1}}"#,
            "unknown field",
        ),
        (
            br#"{"request":{"tool_id":"Calculator.Add","input":{},"inputs":{}}}"#,
            "not both",
        ),
        (br#"{"request":{"input":{}}}"#, "tool_id is required"),
    ] {
        let reply = raw(body).await?;
        assert_eq!(reply.status, 400, "{}", String::from_utf8_lossy(body));
        let message = reply.body["message"].as_str().unwrap_or("");
        assert!(message.contains(says), "{message} / {says}");
    }
    // Missing requirements: 400 with `missing_requirements`, before the tool runs.
    let secretive =
        call_request(&running, json!({"tool_id": "Test.Secretive", "input": {}})).await?;
    assert_eq!(secretive.status, 400);
    assert_eq!(
        secretive.body["missing_requirements"],
        json!({"secrets": [{"id": "API_KEY"}], "user_id": true})
    );
    let given = call_request(
        &running,
        json!({"tool_id": "Test.Secretive", "input": {},
               "context": {"secrets": [{"id": "API_KEY", "value": "12345"}], "user_id": "ada"}}),
    )
    .await?;
    assert_eq!(given.body["result"]["value"], "ada:5");
    // A missing token is a challenge where the server knows the URL, and
    // named in the message either way.
    let mail = call_request(&running, json!({"tool_id": "Test.Mail", "input": {}})).await?;
    assert_eq!(mail.status, 400);
    assert_eq!(
        mail.body["missing_requirements"],
        json!({"authorization": [{"id": "google", "url": "https://accounts.example/google"}]})
    );
    let message = mail.body["message"].as_str().unwrap_or("");
    assert!(
        message.contains("google") && message.contains("github"),
        "{message}"
    );
    // Input that fails the schema: 422 with each parameter, and the tool did not run.
    let before = counters.counted();
    let invalid = call_request(
        &running,
        json!({"tool_id": "Test.Counted", "input": {"a": "one"}}),
    )
    .await?;
    assert_eq!(invalid.status, 422);
    assert_eq!(
        invalid.body["message"],
        "Invalid input for tool Test.Counted@1.0.0"
    );
    let errors = invalid.body["parameter_errors"]
        .as_object()
        .ok_or("no parameter_errors")?;
    assert!(
        errors.contains_key("a") && errors.contains_key("b"),
        "{errors:?}"
    );
    assert_eq!(counters.counted(), before);
    Ok(())
}

#[tokio::test]
async fn limits_origins_and_methods() -> TestResult {
    let (registry, _) = tools::registry();
    let mut options = OtcOptions::default();
    options.http.max_body_bytes = 1024;
    options.http.allowed_origins = vec!["http://localhost:6274".into()];
    options.http.body_read_timeout = std::time::Duration::from_millis(500);
    let running = start(&registry, options).await?;
    // A body that never arrives whole: 408 once its time is up.
    let mut slow = tokio::net::TcpStream::connect(running.address).await?;
    slow.write_all(
        b"POST /tools/call HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Content-Length: 1000\r\n\r\n{\"request\":",
    )
    .await?;
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        slow.read_to_end(&mut answer),
    )
    .await??;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    // Declared, with its body as the document says.
    let (_, body) = answer.split_once("\r\n\r\n").ok_or("no body")?;
    common::check_against_openapi(
        "/tools/call",
        "post",
        &common::Reply {
            status: 408,
            headers: reqwest::header::HeaderMap::new(),
            body: serde_json::from_str(body)?,
            raw: body.as_bytes().to_vec(),
        },
    );
    let big = format!(
        r#"{{"request":{{"tool_id":"Test.Shout","input":{{"to":"x","body":"{}"}}}}}}"#,
        "a".repeat(4096)
    );
    let reply = send(&running, "post", "/tools/call", &[], Some(big.into_bytes())).await?;
    assert_eq!(reply.status, 413);
    assert!(
        reply.body["message"]
            .as_str()
            .unwrap_or("")
            .contains("1024")
    );
    let foreign = send(
        &running,
        "get",
        "/tools",
        &[("origin", "http://evil.example")],
        None,
    )
    .await?;
    assert_eq!(foreign.status, 403);
    let rebinding = send(
        &running,
        "get",
        "/tools",
        &[("host", "evil.example:80")],
        None,
    )
    .await?;
    assert_eq!(rebinding.status, 403);
    let local = send(
        &running,
        "get",
        "/tools",
        &[("origin", "http://localhost:3000")],
        None,
    )
    .await?;
    assert_eq!(local.status, 200);
    // CORS for the origins listed only: a page of one may read the listing
    // and have its call's preflight answered; an unlisted loopback page gets
    // no CORS, a foreign page's preflight 403.
    let app = "http://localhost:6274";
    let listed = send(&running, "get", "/tools", &[("origin", app)], None).await?;
    assert_eq!(listed.headers["access-control-allow-origin"], app);
    assert!(local.headers.get("access-control-allow-origin").is_none());
    for (origin, status, granted) in [
        (app, 200, true),
        ("http://localhost:3000", 200, false),
        ("http://evil.example", 403, false),
    ] {
        let preflight = common::http()
            .request(reqwest::Method::OPTIONS, running.url("/tools/call"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type, authorization",
            )
            .send()
            .await?;
        assert_eq!(preflight.status().as_u16(), status, "{preflight:?}");
        let allowed = preflight.headers().get("access-control-allow-origin");
        assert_eq!(
            allowed.is_some_and(|v| v == origin),
            granted,
            "{preflight:?}"
        );
    }
    // An OPTIONS request that is no preflight is the endpoint's: 405.
    let options = common::http()
        .request(reqwest::Method::OPTIONS, running.url("/tools"))
        .send()
        .await?;
    assert_eq!(options.status().as_u16(), 405);
    // A method the endpoint does not have.
    let deleted = common::http().delete(running.url("/tools")).send().await?;
    assert_eq!(deleted.status().as_u16(), 405);
    // Said in the endpoint's error body, as every refusal is, with the
    // methods the path takes.
    assert_eq!(deleted.headers()["allow"], "GET,HEAD");
    let body: serde_json::Value = serde_json::from_slice(&deleted.bytes().await?)?;
    assert_eq!(
        body["message"], "DELETE is not allowed on /tools (the Allow header says what is)",
        "{body}"
    );
    let got = common::http()
        .get(running.url("/tools/call"))
        .send()
        .await?;
    assert_eq!(got.status().as_u16(), 405);
    assert_eq!(got.headers()["allow"], "POST");
    let body: serde_json::Value = serde_json::from_slice(&got.bytes().await?)?;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("GET is not allowed on /tools/call")),
        "{body}"
    );
    Ok(())
}

#[tokio::test]
async fn health_says_503_while_draining_and_calls_in_flight_finish() -> TestResult {
    let (registry, _) = tools::registry();
    let mut options = OtcOptions::default();
    options.drain = Duration::from_millis(800);
    let mut running = start(&registry, options).await?;
    let url = running.url("/tools/call");
    let in_flight = tokio::spawn(async move {
        common::http()
            .post(url)
            .body(r#"{"request":{"tool_id":"Test.Slow","input":{"a":400,"b":9}}}"#)
            .send()
            .await?
            .bytes()
            .await
            .map(|bytes| serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null))
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    running.stop();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let health = send(&running, "get", "/health", &[], None).await?;
    assert_eq!(
        (health.status, health.body.clone()),
        (503, json!({"status": "unavailable"}))
    );
    let answered = in_flight.await??;
    assert_eq!(answered["result"]["value"], 9);
    // After the drain the listener closes and serving ends.
    tokio::time::timeout(Duration::from_secs(5), &mut running.task).await???;
    Ok(())
}
