//! The OTC side of the commands: `serve --otc` authentication, and the
//! client commands with `--otc URL`. Keys and secrets come from the
//! environment or from files, never from the command line.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::{Map, Value};
use toolshape::HttpOptions;
use toolshape_otc::auth::secret;
use toolshape_otc::{OtcAuth, OtcClient, OtcError, OtcErrorKind, OtcOptions};

use super::connect::{exit, fail};

/// Server: API keys, whitespace- or comma-separated.
const SERVER_API_KEYS_ENV: &str = "TOOLSHAPE_OTC_API_KEYS";
/// Server: the HS256 secret.
const SERVER_JWT_SECRET_ENV: &str = "TOOLSHAPE_OTC_JWT_SECRET";
/// Client: the API key to send.
const CLIENT_API_KEY_ENV: &str = "TOOLSHAPE_OTC_API_KEY";
/// Client: a bearer token to send.
const CLIENT_TOKEN_ENV: &str = "TOOLSHAPE_OTC_TOKEN";
/// Client: the audience of the tokens it signs with TOOLSHAPE_OTC_JWT_SECRET.
const CLIENT_AUDIENCE_ENV: &str = "TOOLSHAPE_OTC_JWT_AUDIENCE";

/// How `serve --otc` authenticates callers. Without any of these (and
/// without TOOLSHAPE_OTC_API_KEYS / TOOLSHAPE_OTC_JWT_SECRET in the
/// environment) it needs no credentials.
#[derive(Debug, Args)]
pub(crate) struct OtcServeAuth {
    /// With --otc: accept the API keys in this file (one per line, `#`
    /// comments), sent in OXP-API-Key or OTC-API-Key. Also
    /// TOOLSHAPE_OTC_API_KEYS in the environment (whitespace or commas between keys).
    #[arg(long, value_name = "FILE", requires = "otc")]
    otc_api_key_file: Option<PathBuf>,
    /// With --otc: accept HS256 JWTs (Authorization: Bearer) signed with the
    /// secret in this file (read whole, trimmed). Also TOOLSHAPE_OTC_JWT_SECRET
    /// in the environment.
    #[arg(long, value_name = "FILE", requires = "otc")]
    otc_jwt_secret_file: Option<PathBuf>,
    /// With --otc: the `aud` a JWT must name.
    #[arg(long, value_name = "AUDIENCE", requires = "otc")]
    otc_jwt_audience: Option<String>,
}

impl OtcServeAuth {
    /// The OTC endpoint's options; `drain`: how long `/health` answers 503
    /// after the stop signal before the listener closes.
    pub(crate) fn options(
        &self,
        http: HttpOptions,
        call_timeout: u64,
        drain: Duration,
    ) -> Result<OtcOptions, String> {
        let mut keys: Vec<String> = match secret::from_env(SERVER_API_KEYS_ENV) {
            Ok(text) => text
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|key| !key.is_empty())
                .map(str::to_owned)
                .collect(),
            Err(_) => Vec::new(),
        };
        if let Some(path) = &self.otc_api_key_file {
            keys.extend(secret::lines_from_file(path).map_err(|e| e.to_string())?);
        }
        let jwt_secret = match &self.otc_jwt_secret_file {
            Some(path) => Some(secret::from_file(path).map_err(|e| e.to_string())?),
            None => secret::from_env(SERVER_JWT_SECRET_ENV).ok(),
        };
        let mut auth = OtcAuth::none();
        for key in keys {
            auth = auth.api_key(key).map_err(|e| e.to_string())?;
        }
        if let Some(jwt_secret) = jwt_secret {
            auth = auth
                .jwt_hs256(jwt_secret, self.otc_jwt_audience.clone())
                .map_err(|e| e.to_string())?;
        } else if self.otc_jwt_audience.is_some() {
            return Err("--otc-jwt-audience needs a JWT secret (--otc-jwt-secret-file or TOOLSHAPE_OTC_JWT_SECRET)".into());
        }
        let mut options = OtcOptions::default();
        options.http = http;
        options.auth = auth;
        options.call_timeout = Some(Duration::from_secs(call_timeout.max(1)));
        options.drain = drain;
        Ok(options)
    }
}

/// A client of the OTC server at `url`, with credentials from the environment.
pub(crate) fn client(url: &str, timeout: u64) -> Result<OtcClient, (u8, String)> {
    let mut builder = OtcClient::builder(url).timeout(Duration::from_secs(timeout.max(1)));
    if let Ok(key) = secret::from_env(CLIENT_API_KEY_ENV) {
        builder = builder.api_key(key);
    } else if let Ok(token) = secret::from_env(CLIENT_TOKEN_ENV) {
        builder = builder.bearer_token(token);
    } else if let Ok(jwt_secret) = secret::from_env(SERVER_JWT_SECRET_ENV) {
        builder = builder.jwt_secret(
            jwt_secret.into_bytes(),
            secret::from_env(CLIENT_AUDIENCE_ENV).ok(),
        );
    }
    builder.build().map_err(|e| (exit::USAGE, e.to_string()))
}

/// The exit code for an OTC client error, as for MCP: a tool error or
/// refused input is 1, a validation failure 3, anything else 4.
pub(crate) fn exit_code(error: &OtcError) -> u8 {
    match error.kind() {
        OtcErrorKind::Tool { .. } | OtcErrorKind::InvalidInput { .. } => exit::TOOL_ERROR,
        OtcErrorKind::UnknownTool(_) | OtcErrorKind::AmbiguousTool { .. } => exit::PROTOCOL,
        _ if error.is_validation_error() => exit::VALIDATION,
        _ => exit::PROTOCOL,
    }
}

fn root_kind(schema: Option<&Value>) -> String {
    match schema {
        None => "any".into(),
        Some(Value::Null) => "nothing".into(),
        Some(schema) => match schema.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(_) => "union".into(),
            None if schema.as_object().is_some_and(|o| o.is_empty()) => "any".into(),
            None => "schema".into(),
        },
    }
}

/// `toolshape tools --otc URL`.
pub(crate) async fn tools(url: &str, json: bool, timeout: u64) -> ExitCode {
    let client = match client(url, timeout) {
        Ok(client) => client,
        Err(failure) => return fail("tools", failure),
    };
    let tools = match client.list_tools().await {
        Ok(tools) => tools,
        Err(error) => {
            return fail(
                "tools",
                (exit_code(&error), crate::output::described(&error)),
            );
        }
    };
    if json {
        outln!("{}", crate::output::json(&tools));
        return ExitCode::SUCCESS;
    }
    outln!("{} (OTC): {} tools\n", client.base_url(), tools.len());
    let width = tools.iter().map(|t| t.id.len()).max().unwrap_or(2).max(2);
    outln!(
        "{:width$}  {:8}  {:8}  DESCRIPTION",
        "ID",
        "INPUT",
        "OUTPUT"
    );
    for tool in &tools {
        let description: String = tool
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let description: String = description.chars().take(80).collect();
        let line = format!(
            "{:width$}  {:8}  {:8}  {description}",
            tool.id,
            root_kind(Some(tool.input())),
            root_kind(tool.output_schema.as_ref()),
        );
        outln!("{}", crate::output::shown(&line));
    }
    ExitCode::SUCCESS
}

/// `toolshape call TOOL --otc URL`.
pub(crate) async fn call(
    url: &str,
    tool: &str,
    input: Map<String, Value>,
    json: bool,
    timeout: u64,
) -> ExitCode {
    let client = match client(url, timeout) {
        Ok(client) => client,
        Err(failure) => return fail("call", failure),
    };
    let response = match client.call_tool(tool, input).await {
        Ok(response) => response,
        Err(error) => {
            return fail(
                "call",
                (exit_code(&error), crate::output::described(&error)),
            );
        }
    };
    if json {
        outln!("{}", crate::output::json(&response.to_json()));
    } else if let Some(error) = response.error() {
        outln!("{}", crate::output::shown(&error.message));
        if let Some(extra) = &error.additional_prompt_content {
            outln!("\n{}", crate::output::shown(extra));
        }
    } else if let Some(value) = response.value() {
        outln!("{}", crate::output::json(value));
    }
    if let Some(error) = response.error() {
        if let Some(details) = &error.developer_message {
            tracing::info!(developer_message = %details, "the tool's developer message");
        }
        errln!("toolshape call: the tool reported an error");
        return ExitCode::from(exit::TOOL_ERROR);
    }
    ExitCode::SUCCESS
}
