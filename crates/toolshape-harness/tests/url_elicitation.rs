#![allow(clippy::unwrap_used, clippy::expect_used)]
//! URL-mode elicitation beyond the question: a tool that needs the user on
//! a page first (`UrlElicitationRequired`) and a server announcing a visit
//! complete (`notifications/elicitation/complete`), with the harness's
//! `test_server --url-elicitation` (a child process over stdio) and the same
//! tools over Streamable HTTP on loopback, directly and through the proxy:
//! 2025-11-25 clients get the `-32042` error and the completion (only the
//! session sent the elicitation), 2026-07-28 clients are asked the URL in a
//! round and retry, and a client that cannot take URL elicitation gets the
//! URLs as text.

mod client_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::sync::broadcast;
use toolshape::client::{Client, ClientBuilder, Negotiation, ServerCommand, StderrMode};
use toolshape::protocol::ProtocolVersion;
use toolshape::protocol::asks::{ElicitAction, ElicitParams, ElicitResult};
use toolshape_harness::url_elicitation::serve_url_elicitation;
use toolshape_proxy::{ProxyOptions, UpstreamSpec};

/// The URL elicitations a client was asked, as it saw them.
type Seen = Arc<Mutex<Vec<ElicitParams>>>;

fn command() -> ServerCommand {
    ServerCommand::new(env!("CARGO_BIN_EXE_test_server"))
        .arg("--url-elicitation")
        .stderr(StderrMode::Discard)
}

/// A client on `negotiation` that takes URL elicitation: it records each,
/// waits `visiting` (the user at the page), then accepts.
fn visiting(negotiation: Negotiation, seen: &Seen, visiting: Duration) -> ClientBuilder {
    let seen = Arc::clone(seen);
    Client::builder()
        .options(client_common::options())
        .negotiation(negotiation)
        .on_elicit(true, move |params| {
            seen.lock().unwrap().push(params);
            async move {
                tokio::time::sleep(visiting).await;
                Ok(ElicitResult::refuse(ElicitAction::Accept))
            }
        })
}

fn pinned(version: ProtocolVersion) -> Negotiation {
    Negotiation::Pinned(version)
}

/// The next completion `completions` gets, within 5 s.
async fn next_completion(completions: &mut broadcast::Receiver<String>, case: &str) -> String {
    tokio::time::timeout(Duration::from_secs(5), completions.recv())
        .await
        .unwrap_or_else(|_| panic!("{case}: no completion within 5 s"))
        .unwrap()
}

/// A server with the URL-elicitation tools, over HTTP on loopback.
async fn over_http() -> String {
    let server = serve_url_elicitation(toolshape::Server::builder("pages", "1"))
        .build()
        .unwrap();
    client_common::serve_over_http(server).await
}

/// On 2025-11-25: `visit_page` asks with an id whose completion follows;
/// `sign_in` fails with `-32042` naming its page, the completion follows,
/// and the retry succeeds.
async fn exercise_2025_11_25(client: &Client, seen: &Seen, account: &str, case: &str) {
    let mut completions = client.elicitation_completions();
    let visited = client.call_tool("visit_page", None).await.unwrap();
    let visited = visited.structured.unwrap();
    assert_eq!(visited["action"], "accept", "{case}");
    let asked = seen.lock().unwrap().last().cloned().unwrap();
    assert!(asked.is_url(), "{case}: {asked:?}");
    // Through a proxy the id is the upstream's, as the client saw it.
    let id = asked.elicitation_id.clone().unwrap();
    assert_eq!(visited["elicitationId"], json!(id), "{case}");
    assert_eq!(next_completion(&mut completions, case).await, id, "{case}");

    let arguments = json!({ "account": account });
    let refused = client
        .call_tool("sign_in", arguments.as_object().cloned())
        .await
        .unwrap_err();
    let required = refused
        .url_elicitation_required()
        .unwrap_or_else(|| panic!("{case}: not -32042: {refused}"));
    assert_eq!(required.elicitations.len(), 1, "{case}");
    let page = &required.elicitations[0];
    let sign_in_id = format!("sign-in-{account}");
    assert_eq!(
        page.elicitation_id.as_deref(),
        Some(sign_in_id.as_str()),
        "{case}"
    );
    assert_eq!(
        page.url.as_deref(),
        Some(format!("https://example.com/sign-in?account={account}").as_str()),
        "{case}"
    );
    assert_eq!(
        next_completion(&mut completions, case).await,
        sign_in_id,
        "{case}"
    );
    let signed = client
        .call_tool("sign_in", arguments.as_object().cloned())
        .await
        .unwrap();
    assert_eq!(signed.structured.unwrap()["signed_in"], account, "{case}");

    // A prompt that needs the same: the error, the completion, the retry.
    let other = format!("{account}-prompt");
    let arguments = json!({ "account": other }).as_object().cloned();
    let refused = client
        .get_prompt("greeting", arguments.clone())
        .await
        .unwrap_err();
    let required = refused
        .url_elicitation_required()
        .unwrap_or_else(|| panic!("{case}: the prompt's error is not -32042: {refused}"));
    let sign_in_id = format!("sign-in-{other}");
    assert_eq!(
        required.elicitations[0].elicitation_id.as_deref(),
        Some(sign_in_id.as_str()),
        "{case}"
    );
    assert_eq!(
        next_completion(&mut completions, case).await,
        sign_in_id,
        "{case}"
    );
    let greeting = client.get_prompt("greeting", arguments).await.unwrap();
    assert_eq!(
        greeting_text(&greeting),
        format!("Hello, {other}"),
        "{case}"
    );
}

/// The text of a rendered `greeting`.
fn greeting_text(result: &toolshape::protocol::prompts::GetPromptResult) -> String {
    let message = serde_json::to_value(&result.messages[0]).unwrap();
    message["content"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// On 2026-07-28: the page is asked in a round (no `elicitationId` there);
/// the client, back from it, retries and the sign-in succeeds.
async fn exercise_2026_07_28(client: &Client, seen: &Seen, account: &str, case: &str) {
    let arguments = json!({ "account": account });
    let signed = client
        .call_tool("sign_in", arguments.as_object().cloned())
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(signed.structured.unwrap()["signed_in"], account, "{case}");
    let visited = client.call_tool("visit_page", None).await.unwrap();
    assert_eq!(visited.structured.unwrap()["action"], "accept", "{case}");
    let other = format!("{account}-prompt");
    let arguments = json!({ "account": other }).as_object().cloned();
    let greeting = client
        .get_prompt("greeting", arguments)
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert_eq!(
        greeting_text(&greeting),
        format!("Hello, {other}"),
        "{case}"
    );
    let seen = seen.lock().unwrap();
    assert!(seen.len() >= 2, "{case}: {seen:?}");
    for asked in seen.iter() {
        assert!(asked.is_url(), "{case}: {asked:?}");
        assert_eq!(asked.elicitation_id, None, "{case}: {asked:?}");
    }
    assert!(
        seen.iter().any(|asked| asked
            .url
            .as_deref()
            .is_some_and(|url| url.ends_with(account))),
        "{case}: {seen:?}"
    );
}

/// `sign_in` of `account` fails as a tool error whose text names the page.
async fn sign_in_names_its_page(client: &Client, account: &str, case: &str) {
    let arguments = json!({ "account": account });
    let result = client
        .call_tool("sign_in", arguments.as_object().cloned())
        .await
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    assert!(result.is_error, "{case}: {result:?}");
    let page = format!("https://example.com/sign-in?account={account}");
    assert!(result.text().contains(&page), "{case}: {}", result.text());
}

#[tokio::test]
async fn a_2025_11_25_client_gets_the_error_and_the_completions() {
    let seen = Seen::default();
    let client = visiting(pinned(ProtocolVersion::V2025_11_25), &seen, Duration::ZERO)
        .connect_stdio(command())
        .await
        .unwrap();
    exercise_2025_11_25(&client, &seen, "ada", "stdio").await;
    client.close(Duration::from_secs(2)).await;

    let url = over_http().await;
    let seen = Seen::default();
    let client = visiting(pinned(ProtocolVersion::V2025_11_25), &seen, Duration::ZERO)
        .connect_http(&url)
        .await
        .unwrap();
    exercise_2025_11_25(&client, &seen, "ada", "http").await;
    client.close(Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_2026_07_28_client_is_asked_the_url_in_a_round() {
    // Back from the page after the server took the visit as complete.
    let back = Duration::from_millis(400);
    let seen = Seen::default();
    let client = visiting(Negotiation::Auto, &seen, back)
        .connect_stdio(command())
        .await
        .unwrap();
    assert!(client.protocol_version().is_stateless());
    exercise_2026_07_28(&client, &seen, "bo", "stdio").await;
    client.close(Duration::from_secs(2)).await;

    let url = over_http().await;
    let seen = Seen::default();
    let client = visiting(Negotiation::Auto, &seen, back)
        .connect_http(&url)
        .await
        .unwrap();
    exercise_2026_07_28(&client, &seen, "bo", "http").await;
}

/// Without URL elicitation (not declared, or a revision without it), the
/// failure is a tool error whose text names the page.
#[tokio::test]
async fn a_client_without_url_elicitation_gets_the_urls_as_text() {
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
        let client = Client::builder()
            .options(client_common::options())
            .negotiation(pinned(version))
            .connect_stdio(command())
            .await
            .unwrap();
        sign_in_names_its_page(&client, "cy", &version.to_string()).await;
        // A prompt's failure is a protocol error, its message the same text.
        let arguments = json!({ "account": "cy-prompt" }).as_object().cloned();
        let refused = client.get_prompt("greeting", arguments).await.unwrap_err();
        assert!(refused.url_elicitation_required().is_none(), "{version}");
        assert!(
            refused
                .to_string()
                .contains("https://example.com/sign-in?account=cy-prompt"),
            "{version}: {refused}"
        );
        client.close(Duration::from_secs(2)).await;
    }
}

/// A completion reaches only the session that was sent the elicitation.
#[tokio::test]
async fn only_the_session_sent_the_elicitation_hears_it_complete() {
    let url = over_http().await;
    let connect = || async {
        visiting(
            pinned(ProtocolVersion::V2025_11_25),
            &Seen::default(),
            Duration::ZERO,
        )
        .connect_http(&url)
        .await
        .unwrap()
    };
    let (asking, other) = (connect().await, connect().await);
    let mut asking_heard = asking.elicitation_completions();
    let mut other_heard = other.elicitation_completions();
    let arguments = json!({ "account": "dee" });
    let error = asking
        .call_tool("sign_in", arguments.as_object().cloned())
        .await
        .unwrap_err();
    assert!(error.url_elicitation_required().is_some(), "{error}");
    // The other session's stream is open: it hears its own sign-in.
    let arguments = json!({ "account": "eli" });
    let error = other
        .call_tool("sign_in", arguments.as_object().cloned())
        .await
        .unwrap_err();
    assert!(error.url_elicitation_required().is_some(), "{error}");
    assert_eq!(
        next_completion(&mut asking_heard, "asking").await,
        "sign-in-dee"
    );
    assert_eq!(
        next_completion(&mut other_heard, "other").await,
        "sign-in-eli"
    );
    // Neither hears the other's.
    let late = Duration::from_millis(300);
    let heard = tokio::time::timeout(late, other_heard.recv()).await;
    assert!(heard.is_err(), "the other session heard {heard:?}");
    let heard = tokio::time::timeout(late, asking_heard.recv()).await;
    assert!(heard.is_err(), "the asking session heard {heard:?}");
}

/// A 2026-07-28 client that declines the visit is not asked again: the
/// call fails, naming the page; one that cannot take URL elicitation gets
/// `-32021` naming the capability.
#[tokio::test]
async fn on_2026_07_28_a_declined_visit_ends_the_call_and_no_url_mode_is_32021() {
    let seen = Seen::default();
    let asked = Arc::clone(&seen);
    let declining = Client::builder()
        .options(client_common::options())
        .on_elicit(true, move |params| {
            asked.lock().unwrap().push(params);
            async { Ok(ElicitResult::refuse(ElicitAction::Decline)) }
        })
        .connect_stdio(command())
        .await
        .unwrap();
    assert!(declining.protocol_version().is_stateless());
    sign_in_names_its_page(&declining, "gus", "declined").await;
    assert_eq!(seen.lock().unwrap().len(), 1, "asked once");
    declining.close(Duration::from_secs(2)).await;

    // Form elicitation only.
    let form_only = Client::builder()
        .options(client_common::options())
        .on_elicit(false, |_| async {
            Ok(ElicitResult::refuse(ElicitAction::Cancel))
        })
        .connect_stdio(command())
        .await
        .unwrap();
    let arguments = json!({ "account": "hal" });
    let refused = form_only
        .call_tool("sign_in", arguments.as_object().cloned())
        .await
        .unwrap_err();
    let toolshape::client::ClientErrorKind::Protocol(error) = refused.kind() else {
        panic!("not a protocol error: {refused}");
    };
    let data = error.missing_required_client_capability_data().unwrap();
    assert!(
        data.required_capabilities.supports_url_elicitation(),
        "{error}"
    );
    form_only.close(Duration::from_secs(2)).await;
}

/// A 2025-06-18 client is never sent URL mode, even if it declares it
/// (its revision has none): the page is named in the tool's error.
#[tokio::test]
async fn a_2025_06_18_client_is_never_sent_url_mode() {
    let seen = Seen::default();
    let client = visiting(pinned(ProtocolVersion::V2025_06_18), &seen, Duration::ZERO)
        .connect_stdio(command())
        .await
        .unwrap();
    let visited = client.call_tool("visit_page", None).await.unwrap();
    assert!(visited.is_error, "{visited:?}");
    sign_in_names_its_page(&client, "ivy", "2025-06-18").await;
    assert!(seen.lock().unwrap().is_empty(), "{seen:?}");
    client.close(Duration::from_secs(2)).await;
}

/// The proxy in front of the test server, speaking `upstream` to it, served
/// over HTTP: the proxy (kept running while held) and its URL.
async fn proxied(upstream: Negotiation) -> (toolshape_proxy::Proxy, String) {
    proxied_to(UpstreamSpec::Command(command()), upstream).await
}

/// The proxy in front of `spec`, speaking `upstream` to it, served over
/// HTTP: the proxy (kept running while held) and its URL.
async fn proxied_to(spec: UpstreamSpec, upstream: Negotiation) -> (toolshape_proxy::Proxy, String) {
    let builder = Client::builder()
        .options(client_common::options())
        .negotiation(upstream);
    let proxy = toolshape_proxy::Proxy::start(spec, builder, ProxyOptions::default())
        .await
        .unwrap();
    let server = proxy
        .add_to(toolshape::Server::builder("proxy", "1"))
        .build()
        .unwrap();
    (proxy, client_common::serve_over_http(server).await)
}

/// Through the proxy (the library, served over HTTP on loopback) in front
/// of `test_server --url-elicitation` on 2025-11-25: a 2025-11-25 client
/// gets the upstream's `-32042` and its completions (the upstream's ids),
/// a 2026-07-28 client is asked in rounds; in front of a 2026-07-28
/// upstream, a 2025-11-25 client is sent the page with an id of the
/// proxy's making (2025-11-25 requires one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_proxy_each_client_gets_what_its_revision_takes() {
    let (_proxy, url) = proxied(pinned(ProtocolVersion::V2025_11_25)).await;

    let seen = Seen::default();
    let client = visiting(pinned(ProtocolVersion::V2025_11_25), &seen, Duration::ZERO)
        .connect_http(&url)
        .await
        .unwrap();
    exercise_2025_11_25(&client, &seen, "eve", "proxy, client 2025-11-25").await;

    let seen = Seen::default();
    let client = visiting(Negotiation::Auto, &seen, Duration::from_millis(400))
        .connect_http(&url)
        .await
        .unwrap();
    exercise_2026_07_28(&client, &seen, "fay", "proxy, client 2026-07-28").await;

    let (_modern, url) = proxied(Negotiation::Auto).await;
    let seen = Seen::default();
    let client = visiting(pinned(ProtocolVersion::V2025_11_25), &seen, Duration::ZERO)
        .connect_http(&url)
        .await
        .unwrap();
    let visited = client.call_tool("visit_page", None).await.unwrap();
    assert_eq!(visited.structured.unwrap()["action"], "accept");
    let asked = seen.lock().unwrap().last().cloned().unwrap();
    assert!(
        asked
            .elicitation_id
            .as_deref()
            .is_some_and(|id| id.starts_with("toolshape-elicitation-")),
        "{asked:?}"
    );
}

/// The same through the proxy in front of a Streamable HTTP upstream: the
/// upstream's error comes in an HTTP response and its completions on the
/// proxy's GET stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_proxy_to_an_http_upstream() {
    let upstream = over_http().await;
    let (_proxy, url) = proxied_to(
        UpstreamSpec::Url(upstream),
        pinned(ProtocolVersion::V2025_11_25),
    )
    .await;
    let seen = Seen::default();
    let client = visiting(pinned(ProtocolVersion::V2025_11_25), &seen, Duration::ZERO)
        .connect_http(&url)
        .await
        .unwrap();
    exercise_2025_11_25(&client, &seen, "jo", "proxy to HTTP, client 2025-11-25").await;
}
