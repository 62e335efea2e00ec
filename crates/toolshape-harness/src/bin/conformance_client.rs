//! The client side of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, driven by `conformance/run.sh`): a
//! [`toolshape::client::Client`] that does what each client scenario expects.
//!
//! The suite runs `conformance_client <server-url>` (the URL is the last
//! argument) with the scenario in `MCP_CONFORMANCE_SCENARIO`, the protocol
//! revision to speak in `MCP_CONFORMANCE_PROTOCOL_VERSION` (0.2 suites; absent,
//! the client negotiates by itself) and scenario data in
//! `MCP_CONFORMANCE_CONTEXT` (JSON). Exits 0 when the scenario's steps
//! succeeded, 1 (with the error on stderr) otherwise.
//!
//! The `auth/*` scenarios put their MCP server behind OAuth: the client then
//! authorizes with [`toolshape_auth::client::OAuthClient`], consenting
//! headlessly (the suite's authorization servers approve at once), with the
//! credentials the scenario's context hands over.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolshape::client::{Client, ClientError, Negotiation};
use toolshape::protocol::asks::{ElicitParams, ElicitResult};
use toolshape::protocol::{ErrorObject, ProtocolVersion};
use toolshape_auth::Secret;
use toolshape_auth::client::{
    ClientIdentity, Grant, HeadlessConsent, IdentityAssertion, OAuthClient, SigningKey,
    StaticAssertion,
};

/// The Client ID Metadata Document URL the suite expects (it never fetches it).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// The redirect URI claimed; nothing listens there (the consent is headless).
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The OAuth client an `auth/*` scenario needs (none for the others).
fn oauth(scenario: &str, context: &Value, url: &str) -> Result<Option<OAuthClient>, String> {
    if !scenario.starts_with("auth/") {
        return Ok(None);
    }
    let text = |key: &str| context.get(key).and_then(Value::as_str);
    let required = |key: &str| text(key).ok_or_else(|| format!("the context has no {key}"));
    let error = |e: toolshape_auth::client::AuthError| e.to_string();
    let consent = HeadlessConsent::new(REDIRECT_URI).map_err(error)?;
    let mut builder = OAuthClient::builder(url)
        .map_err(error)?
        .client_name("toolshape-conformance-client")
        .consent(Arc::new(consent))
        .client_metadata_url(CLIENT_METADATA_URL)
        .map_err(error)?;
    let identity = || -> Result<ClientIdentity, String> {
        let mut identity = ClientIdentity::new(required("client_id")?);
        if let Some(secret) = text("client_secret") {
            identity = identity.secret(secret);
        }
        Ok(identity)
    };
    builder = match scenario {
        "auth/client-credentials-basic" => builder
            .identity(identity()?)
            .grant(Grant::ClientCredentials),
        "auth/client-credentials-jwt" => {
            let algorithm = text("signing_algorithm").unwrap_or("ES256");
            let key = SigningKey::from_pem(required("private_key_pem")?.as_bytes(), algorithm)
                .map_err(|e| e.to_string())?;
            builder
                .identity(identity()?.private_key(key))
                .grant(Grant::ClientCredentials)
        }
        "auth/wif-jwt-bearer" => {
            let assertion = StaticAssertion(Secret::new(required("valid_jwt")?));
            builder
                .identity(identity()?)
                .grant(Grant::JwtBearer(Arc::new(assertion)))
        }
        "auth/enterprise-managed-authorization" | "auth/cross-app-access-complete-flow" => {
            let idp = IdentityAssertion {
                idp_token_endpoint: required("idp_token_endpoint")?.to_owned(),
                idp_client_id: text("idp_client_id").map(str::to_owned),
                idp_client_secret: None,
                id_token: Arc::new(StaticAssertion(Secret::new(required("idp_id_token")?))),
            };
            builder
                .identity(identity()?)
                .grant(Grant::IdentityAssertion(idp))
        }
        // Pre-registration hands a client id (and secret) over; the rest register.
        _ if text("client_id").is_some() => builder.identity(identity()?),
        _ => builder,
    };
    builder.build().map(Some).map_err(error)
}

/// The suite's user: accepts every form, with the schema's defaults
/// (SEP-1034) and a plausible value for each other property (the first
/// option of an enum, `true`, zero, a short string).
async fn accept_with_defaults(params: ElicitParams) -> Result<ElicitResult, ErrorObject> {
    let mut content = params.defaults();
    let properties = params
        .requested_schema
        .as_ref()
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        if content.contains_key(name) {
            continue;
        }
        let first_option = property
            .get("enum")
            .or_else(|| property.get("items").and_then(|items| items.get("enum")))
            .and_then(Value::as_array)
            .and_then(|options| options.first().cloned());
        let value = match property.get("type").and_then(Value::as_str) {
            _ if first_option.is_some() && property.get("type") != Some(&json!("array")) => {
                first_option.unwrap_or(Value::Null)
            }
            Some("array") => Value::Array(first_option.into_iter().collect()),
            Some("boolean") => Value::Bool(true),
            Some("integer" | "number") => json!(0),
            _ => json!("toolshape"),
        };
        content.insert(name.clone(), value);
    }
    Ok(ElicitResult::accept(content))
}

/// Calls `name` and fails on a transport, protocol or tool error.
async fn call(client: &Client, name: &str, arguments: Value) -> Result<(), String> {
    let arguments = match arguments {
        Value::Object(map) => Some(map),
        Value::Null => None,
        other => return Err(format!("arguments for {name} are not an object: {other}")),
    };
    let result = client
        .call_tool(name, arguments)
        .await
        .map_err(|e| format!("{name}: {e}"))?;
    if result.is_error {
        return Err(format!("{name} reported an error: {}", result.text()));
    }
    eprintln!("{name}: {}", result.text());
    Ok(())
}

/// The steps of one scenario, after connecting.
async fn run(client: &Client, scenario: &str, context: &Value) -> Result<(), String> {
    let error = |e: ClientError| e.to_string();
    let tools = client.list_tools().await.map_err(error)?;
    eprintln!(
        "tools: {:?}",
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>()
    );
    match scenario {
        "tools_call" => call(client, "add_numbers", json!({"a": 5, "b": 3})).await,
        "sse-retry" => call(client, "test_reconnection", json!({})).await,
        "elicitation-sep1034-client-defaults" => {
            call(client, "test_client_elicitation_defaults", json!({})).await
        }
        "json-schema-2020-12-preservation" => {
            let focal = tools
                .iter()
                .find(|tool| tool.name == "json_schema_2020_12_tool")
                .ok_or("the server lists no json_schema_2020_12_tool")?;
            let schema = serde_json::to_value(&focal.input_schema).map_err(|e| e.to_string())?;
            call(client, "json_schema_echo", json!({ "schema": schema })).await
        }
        // Every tool the client kept after listing: the standard headers go
        // on each call, and a tool with a malformed `x-mcp-header` annotation
        // should not have been kept at all.
        "http-standard-headers" | "http-invalid-tool-headers" => {
            let mut outcome = Ok(());
            for tool in &tools {
                if let Err(e) = call(client, &tool.name, json!({})).await {
                    outcome = Err(e);
                }
            }
            outcome
        }
        "sep-2322-client-request-state" => {
            let mut outcome = Ok(());
            for name in [
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ] {
                if let Err(e) = call(client, name, json!({})).await {
                    outcome = Err(e);
                }
            }
            outcome
        }
        // Behind OAuth: list, then call the scenario server's one tool.
        auth if auth.starts_with("auth/") => {
            if tools.iter().any(|tool| tool.name == "test-tool") {
                call(client, "test-tool", json!({})).await?;
            }
            Ok(())
        }
        _ => {
            // Scenarios that hand the calls to make in the context.
            let calls = context
                .get("toolCalls")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for planned in calls {
                let name = planned
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("a toolCalls entry has no name")?;
                let arguments = planned
                    .get("arguments")
                    .cloned()
                    .unwrap_or(Value::Object(Map::new()));
                call(client, name, arguments).await?;
            }
            Ok(())
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance_client <server-url>");
        return ExitCode::FAILURE;
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    let negotiation = match std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        Ok(version) => match ProtocolVersion::parse(&version) {
            Some(version) => Negotiation::Pinned(version),
            None => {
                eprintln!("conformance_client: unknown protocol version {version:?}");
                return ExitCode::FAILURE;
            }
        },
        Err(_) => Negotiation::Auto,
    };
    eprintln!("scenario {scenario:?} against {url} ({negotiation:?})");
    let mut builder = Client::builder()
        .client_info("toolshape-conformance-client", env!("CARGO_PKG_VERSION"))
        .negotiation(negotiation)
        .request_timeout(Duration::from_secs(10));
    // A client that answers server requests opens the session's standalone
    // event stream; sse-retry's mock server expects the only GET to be the
    // resumption of the call's stream (it sends the answer on whatever GET
    // comes first), so that scenario runs without handlers.
    if scenario != "sse-retry" {
        builder = builder.on_elicit(false, accept_with_defaults);
    }
    match oauth(&scenario, &context, &url) {
        Ok(Some(oauth)) => builder = builder.http_auth(Arc::new(oauth)),
        Ok(None) => {}
        Err(error) => {
            eprintln!("conformance_client: {error}");
            return ExitCode::FAILURE;
        }
    }
    let connected = builder.connect_http(&url).await;
    let client = match connected {
        Ok(client) => client,
        Err(error) => {
            eprintln!("conformance_client: cannot connect: {error}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = run(&client, &scenario, &context).await;
    client.close(Duration::from_secs(1)).await;
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("conformance_client: {error}");
            ExitCode::FAILURE
        }
    }
}
