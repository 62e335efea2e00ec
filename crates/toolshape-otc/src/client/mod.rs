//! [`OtcClient`]: lists and calls an OTC server's tools; every `value` is
//! validated against the tool's `output_schema` (compiled once, untrusted:
//! nothing fetched, bounded, budgeted) before it is handed on.
//!
//! ```no_run
//! # async fn run() -> Result<(), toolshape_otc::OtcError> {
//! use toolshape_otc::OtcClient;
//! let client = OtcClient::builder("http://127.0.0.1:8080").build()?;
//! let sum: i64 = client.call("Calculator.Add", serde_json::json!({"a": 1, "b": 2})).await?;
//! # Ok(()) }
//! ```

mod cache;
mod error;
mod retry;
mod tools;

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::{StatusCode, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolshape::schema::SchemaEngine;

pub use error::{AuthorizationChallenge, OtcError, OtcErrorKind};
pub use retry::RetryPolicy;
pub use tools::ListedTool;
use tools::Listing;

use crate::auth::mint_hs256;
use crate::wire::{
    CallContext, CallOutput, CallToolRequest, CallToolResponse, MAX_LISTING_BYTES, ToolDefinition,
};

/// How the client authenticates.
#[derive(Clone, Default)]
enum ClientAuth {
    #[default]
    None,
    ApiKey(String),
    Bearer(String),
    Jwt {
        secret: Vec<u8>,
        audience: Option<String>,
    },
}

/// Configures an [`OtcClient`].
#[derive(Clone)]
pub struct OtcClientBuilder {
    base: String,
    auth: ClientAuth,
    timeout: Duration,
    retry: RetryPolicy,
    engine: Option<SchemaEngine>,
    max_response_bytes: usize,
}

impl std::fmt::Debug for OtcClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtcClientBuilder")
            .field("base", &self.base)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl OtcClientBuilder {
    /// Sends this API key in `OXP-API-Key`.
    #[must_use]
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.auth = ClientAuth::ApiKey(key.into());
        self
    }

    /// Sends this bearer token.
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.auth = ClientAuth::Bearer(token.into());
        self
    }

    /// Signs a short-lived HS256 JWT (5 minutes) with the shared `secret` for
    /// each request, with `aud` when given.
    #[must_use]
    pub fn jwt_secret(mut self, secret: impl Into<Vec<u8>>, audience: Option<String>) -> Self {
        self.auth = ClientAuth::Jwt {
            secret: secret.into(),
            audience,
        };
        self
    }

    /// How long a request waits for its answer (60 s by default).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Retries calls the server says may be retried (off by default).
    #[must_use]
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The schema engine output schemas compile with (by default untrusted).
    #[must_use]
    pub fn engine(mut self, engine: SchemaEngine) -> Self {
        self.engine = Some(engine);
        self
    }

    /// The largest response body read (64 MiB by default).
    #[must_use]
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Builds the client (nothing is sent yet).
    pub fn build(self) -> Result<OtcClient, OtcError> {
        let trimmed = self.base.trim_end_matches('/');
        let base = Url::parse(&format!("{trimmed}/"))
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .ok_or_else(|| OtcErrorKind::Url(toolshape_protocol::text::excerpt(&self.base, 200)))?;
        let http = reqwest::Client::builder()
            .timeout(self.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(OtcClient {
            inner: Arc::new(Inner {
                base,
                http,
                auth: self.auth,
                timeout: self.timeout,
                retry: self.retry,
                engine: self.engine.unwrap_or_default(),
                max_response_bytes: self.max_response_bytes,
                cached: std::sync::RwLock::new(None),
                listing: tokio::sync::Mutex::new(()),
            }),
        })
    }
}

/// A client of one OTC server. Cheap to clone; clones share connections
/// and the cached listing.
#[derive(Clone)]
pub struct OtcClient {
    inner: Arc<Inner>,
}

struct Inner {
    base: Url,
    http: reqwest::Client,
    auth: ClientAuth,
    timeout: Duration,
    retry: RetryPolicy,
    engine: SchemaEngine,
    max_response_bytes: usize,
    /// The cached listing and when it was fetched, read without waiting.
    cached: std::sync::RwLock<Option<(Arc<Listing>, Instant)>>,
    /// Held while a listing is fetched, so that only one fetch runs.
    listing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for OtcClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtcClient")
            .field("base", &self.inner.base.as_str())
            .finish_non_exhaustive()
    }
}

/// Per-call settings.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct OtcCallOptions {
    /// The `call_id` (idempotency key); generated by the server when absent.
    pub call_id: Option<String>,
    /// A trace id.
    pub trace_id: Option<String>,
    /// Tokens, secrets and user id for the tool.
    pub context: CallContext,
}

impl OtcClient {
    /// Starts configuring a client of the server at `base` (e.g. `http://127.0.0.1:8080`).
    pub fn builder(base: impl Into<String>) -> OtcClientBuilder {
        OtcClientBuilder {
            base: base.into(),
            auth: ClientAuth::None,
            timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            engine: None,
            max_response_bytes: 64 * 1024 * 1024,
        }
    }

    /// The server's base URL.
    pub fn base_url(&self) -> &str {
        self.inner.base.as_str()
    }

    fn url(&self, path: &str) -> Result<Url, OtcError> {
        self.inner
            .base
            .join(path)
            .map_err(|_| OtcErrorKind::Url(path.to_owned()).into())
    }

    fn authorize(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, OtcError> {
        Ok(match &self.inner.auth {
            ClientAuth::None => request,
            // Both names: an OTC-era server reads the older one.
            ClientAuth::ApiKey(key) => request
                .header("OXP-API-Key", key)
                .header("OTC-API-Key", key),
            ClientAuth::Bearer(token) => request.bearer_auth(token),
            ClientAuth::Jwt { secret, audience } => {
                let token = mint_hs256(
                    secret,
                    audience.as_deref(),
                    "toolshape",
                    Duration::from_secs(300),
                )
                .map_err(OtcErrorKind::Token)?;
                request.bearer_auth(token)
            }
        })
    }

    /// Sends a request and reads its body (bounded) as JSON: a 200's must
    /// be; a refusal's is read for its `message` when it is.
    async fn exchange(
        &self,
        request: reqwest::RequestBuilder,
        limit: usize,
    ) -> Result<(StatusCode, Value), OtcError> {
        let (status, body) = self.exchange_bytes(request, limit).await?;
        let value = if body.is_empty() {
            Value::Null
        } else if status == StatusCode::OK {
            serde_json::from_slice(&body).map_err(|e| {
                OtcErrorKind::InvalidResponse(format!("HTTP {status}: the body is not JSON: {e}"))
            })?
        } else {
            // A proxy's HTML 503 or a plain-text 404 is the status alone.
            serde_json::from_slice(&body).unwrap_or(Value::Null)
        };
        Ok((status, value))
    }

    /// Sends a request and reads its body, bounded.
    async fn exchange_bytes(
        &self,
        request: reqwest::RequestBuilder,
        limit: usize,
    ) -> Result<(StatusCode, Vec<u8>), OtcError> {
        let timeout = self.inner.timeout;
        let mut response = self.authorize(request)?.send().await.map_err(|e| {
            if e.is_timeout() {
                OtcErrorKind::Timeout(timeout).into()
            } else {
                OtcError::from(e)
            }
        })?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| {
            if e.is_timeout() {
                OtcErrorKind::Timeout(timeout).into()
            } else {
                OtcError::from(e)
            }
        })? {
            if body.len() + chunk.len() > limit {
                return Err(OtcErrorKind::InvalidResponse(format!(
                    "the response is larger than {limit} bytes"
                ))
                .into());
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, body))
    }

    /// Whether the server takes calls (`GET /health`: 200 yes, 503 no,
    /// whatever the body).
    pub async fn health(&self) -> Result<bool, OtcError> {
        let (status, _) = self
            .exchange_bytes(self.inner.http.get(self.url("health")?), 64 * 1024)
            .await?;
        match status {
            StatusCode::OK => Ok(true),
            StatusCode::SERVICE_UNAVAILABLE => Ok(false),
            other => Err(refusal(other, &Value::Null)),
        }
    }

    /// Every tool the server lists (cached; see [`OtcClient::refresh_tools`]:
    /// a tool the listing lacks, or a call the server refuses with 400 when
    /// the listing is over a second old, also fetches it again).
    pub async fn list_tools(&self) -> Result<Vec<ToolDefinition>, OtcError> {
        let (listing, _) = self.listing().await?;
        Ok(listing.tools.iter().map(|t| t.definition.clone()).collect())
    }

    /// Forgets the cached listing; the next call lists again.
    pub async fn refresh_tools(&self) {
        let _fetching = self.inner.listing.lock().await;
        *self.cache_write() = None;
    }

    /// The listed tool `tool` names: its id (`Toolkit.Tool@x.y.z`), the id
    /// without version or with `@x` (the latest such), its `name`, or its
    /// tool part when only one toolkit has it. A name the cached listing
    /// lacks lists again first (when it is over a second old).
    pub async fn resolve(&self, tool: &str) -> Result<Arc<ListedTool>, OtcError> {
        self.resolve_listed(tool).await
    }

    /// Calls a tool; a failed call (`success: false`) is `Ok` (see
    /// [`OtcClient::call`] for one that makes it an error). The value is
    /// validated against the tool's `output_schema`.
    pub async fn call_tool(
        &self,
        tool: &str,
        input: Map<String, Value>,
    ) -> Result<CallToolResponse, OtcError> {
        self.call_tool_with(tool, input, OtcCallOptions::default())
            .await
    }

    /// As [`OtcClient::call_tool`], with a `call_id`, a trace id or a context.
    /// With a retry policy, a failure the server says may be retried is
    /// retried after the delay it asks for, each attempt with a new
    /// `call_id` (the same id would only replay the failure). A call the
    /// server refuses with 400 (a version it no longer has, say; not one
    /// naming missing requirements) lists again, and is sent once more if
    /// `tool` now names another tool id.
    pub async fn call_tool_with(
        &self,
        tool: &str,
        input: Map<String, Value>,
        options: OtcCallOptions,
    ) -> Result<CallToolResponse, OtcError> {
        let mut listed = self.resolve_listed(tool).await?;
        let mut request = CallToolRequest::new(listed.definition.id.clone(), input);
        request.call_id = options.call_id;
        request.trace_id = options.trace_id;
        request.context = options.context;
        let mut attempt = 1;
        let mut relisted = false;
        loop {
            let sent = Instant::now();
            let response = match self.send_call(&listed, &request).await {
                Ok(response) => response,
                Err(refused)
                    if !relisted
                        && matches!(refused.kind(), OtcErrorKind::Refused { status: 400, .. }) =>
                {
                    relisted = true;
                    let newer = self.relisted(sent, tool).await;
                    match newer.filter(|newer| newer.definition.id != listed.definition.id) {
                        Some(newer) => {
                            tracing::debug!(tool, from = %listed.definition.id, to = %newer.definition.id, "listed again");
                            request.tool_id.clone_from(&newer.definition.id);
                            listed = newer;
                            continue;
                        }
                        None => return Err(refused),
                    }
                }
                Err(other) => return Err(other),
            };
            let retry = match response.error() {
                Some(error) if error.can_retry && attempt < self.inner.retry.max_attempts => {
                    self.inner.retry.delay(error.retry_after_ms)
                }
                _ => return Ok(response),
            };
            tracing::debug!(tool = %listed.definition.id, attempt, delay_ms = retry.as_millis(), "retrying");
            tokio::time::sleep(retry).await;
            attempt += 1;
            request.call_id = Some(crate::new_call_id());
        }
    }

    async fn send_call(
        &self,
        listed: &ListedTool,
        request: &CallToolRequest,
    ) -> Result<CallToolResponse, OtcError> {
        let sent = Instant::now();
        let post = self
            .inner
            .http
            .post(self.url("tools/call")?)
            .header("content-type", "application/json")
            .body(serde_json::to_vec(&request.to_envelope()).unwrap_or_default());
        let (status, body) = self.exchange(post, self.inner.max_response_bytes).await?;
        if status != StatusCode::OK {
            return Err(refusal(status, &body));
        }
        let response = CallToolResponse::from_json(&body)
            .map_err(|e| OtcErrorKind::InvalidResponse(e.to_string()))?;
        if let Some(call_id) = &request.call_id
            && response.call_id != *call_id
        {
            return Err(OtcErrorKind::InvalidResponse(format!(
                "the response is for call_id {:?}, not the call's {:?}",
                toolshape_protocol::text::excerpt(&response.call_id, 80),
                toolshape_protocol::text::excerpt(call_id, 80)
            ))
            .into());
        }
        match self.check_output(listed, &response).await {
            // The tool may have been defined anew under the same id since
            // the listing: checked against a listing asked for after the
            // call, when there is one (at most one listing a second).
            Err(invalid) if invalid.is_validation_error() => {
                let current = self.relisted(sent, &listed.definition.id).await;
                match current.filter(|current| current.definition != listed.definition) {
                    Some(current) => self.check_output(&current, &response).await?,
                    None => return Err(invalid),
                }
            }
            checked => checked?,
        }
        Ok(response)
    }

    /// Checks a response's output against what the tool declares.
    async fn check_output(
        &self,
        listed: &ListedTool,
        response: &CallToolResponse,
    ) -> Result<(), OtcError> {
        let tool = || listed.definition.id.clone();
        let value = match &response.output {
            CallOutput::Error(_) => return Ok(()),
            CallOutput::Value(value) => value,
            CallOutput::Nothing => &Value::Null,
        };
        if matches!(
            listed.definition.output(),
            crate::wire::DeclaredOutput::Nothing
        ) {
            return match response.output {
                CallOutput::Value(Value::Null) | CallOutput::Nothing => Ok(()),
                _ => Err(OtcErrorKind::UnexpectedValue(tool()).into()),
            };
        }
        match listed.output_schema(&self.inner.engine).await {
            None => Ok(()),
            Some(Err(source)) => Err(OtcErrorKind::UnusableSchema {
                tool: tool(),
                source,
            }
            .into()),
            Some(Ok(schema)) => schema.validate(value).map_err(|source| {
                OtcErrorKind::Validation {
                    tool: tool(),
                    source,
                }
                .into()
            }),
        }
    }

    /// Calls a tool and decodes its value into `T`; a failed call is an
    /// [`OtcErrorKind::Tool`] error.
    pub async fn call<T: DeserializeOwned>(
        &self,
        tool: &str,
        input: impl Serialize,
    ) -> Result<T, OtcError> {
        let input = match serde_json::to_value(input) {
            Ok(Value::Object(map)) => map,
            Ok(Value::Null) => Map::new(),
            _ => return Err(OtcErrorKind::Input.into()),
        };
        let response = self.call_tool(tool, input).await?;
        let tool_id = || toolshape_protocol::text::excerpt(tool, 200);
        match response.output {
            CallOutput::Error(error) => Err(OtcErrorKind::Tool {
                tool: tool_id(),
                error,
            }
            .into()),
            CallOutput::Value(value) => serde_json::from_value(value).map_err(|source| {
                OtcErrorKind::Decode {
                    tool: tool_id(),
                    source,
                }
                .into()
            }),
            CallOutput::Nothing => serde_json::from_value(Value::Null).map_err(|source| {
                OtcErrorKind::Decode {
                    tool: tool_id(),
                    source,
                }
                .into()
            }),
        }
    }
}

/// The error for a non-200 answer.
fn refusal(status: StatusCode, body: &Value) -> OtcError {
    let message = body.get("message").and_then(Value::as_str).map_or_else(
        || status.canonical_reason().unwrap_or("").to_owned(),
        |m| toolshape_protocol::text::excerpt(m, 2000),
    );
    match status {
        StatusCode::UNAUTHORIZED => OtcErrorKind::Unauthorized(message).into(),
        StatusCode::UNPROCESSABLE_ENTITY => {
            let parameter_errors = body
                .get("parameter_errors")
                .and_then(Value::as_object)
                .map(|errors| {
                    errors
                        .iter()
                        .take(100)
                        .map(|(name, text)| {
                            let text = text
                                .as_str()
                                .map_or_else(|| text.to_string(), str::to_owned);
                            (name.clone(), toolshape_protocol::text::excerpt(&text, 500))
                        })
                        .collect()
                })
                .unwrap_or_default();
            OtcErrorKind::InvalidInput {
                message,
                parameter_errors,
            }
            .into()
        }
        // An object (`null` is how some servers write "none").
        StatusCode::BAD_REQUEST
            if body
                .get("missing_requirements")
                .is_some_and(Value::is_object) =>
        {
            let requirements = &body["missing_requirements"];
            let items = |key: &str| {
                requirements
                    .get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .take(64)
            };
            let text = |item: &Value, key: &str| {
                item.get(key)
                    .and_then(Value::as_str)
                    .map(|text| toolshape_protocol::text::excerpt(text, 2000))
            };
            OtcErrorKind::MissingRequirements {
                message,
                authorization: items("authorization")
                    .filter_map(|item| {
                        Some(AuthorizationChallenge {
                            id: text(item, "id")?,
                            url: text(item, "url"),
                        })
                    })
                    .collect(),
                secrets: items("secrets")
                    .filter_map(|item| text(item, "id"))
                    .collect(),
                user_id: requirements.get("user_id") == Some(&Value::Bool(true)),
            }
            .into()
        }
        other => OtcErrorKind::Refused {
            status: other.as_u16(),
            message,
        }
        .into(),
    }
}
