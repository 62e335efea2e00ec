//! `toolshape tools`: list a server's tools with their schemas.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::Value;
use toolshape::protocol::ToolDefinition;

use super::connect::{ServerArgs, exit_code, fail};

/// Arguments of `toolshape tools`.
#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Print the full definitions as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// What a schema's root admits, for the table.
fn root_kind(schema: Option<&Value>) -> String {
    let Some(schema) = schema else {
        return "-".into();
    };
    match schema.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ if schema.get("oneOf").is_some() => "oneOf".into(),
        _ if schema.get("anyOf").is_some() => "anyOf".into(),
        _ if schema.get("$ref").is_some() => "$ref".into(),
        _ => "any".into(),
    }
}

fn one_line(text: &str, max: usize) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

fn table(tools: &[ToolDefinition]) -> String {
    let name_width = tools.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "{:name_width$}  {:8}  {:8}  DESCRIPTION\n",
        "NAME", "INPUT", "OUTPUT"
    );
    for tool in tools {
        out.push_str(&format!(
            "{:name_width$}  {:8}  {:8}  {}\n",
            tool.name,
            root_kind(Some(&tool.input_schema)),
            root_kind(tool.output_schema.as_ref()),
            one_line(tool.description.as_deref().unwrap_or(""), 80)
        ));
    }
    out
}

pub(crate) async fn run(args: ToolsArgs) -> ExitCode {
    if let Some(url) = &args.server.otc {
        return super::otc::tools(url, args.json, args.server.mcp.timeout).await;
    }
    let client = match args.server.connect().await {
        Ok(client) => client,
        Err(failure) => return fail("tools", failure),
    };
    let listed = client.list_tools().await;
    client.close(Duration::from_secs(2)).await;
    let tools = match listed {
        Ok(tools) => tools,
        Err(error) => {
            return fail(
                "tools",
                (exit_code(&error), crate::output::described(&error)),
            );
        }
    };
    if args.json {
        outln!("{}", crate::output::json(&tools));
    } else {
        let version = client.protocol_version();
        let server = client
            .server_info()
            .map(|i| format!("{} {}", i.name, i.version))
            .unwrap_or_default();
        // The server's words, shown safely (a name or description may hold
        // an escape sequence).
        let server = crate::output::shown(&server);
        outln!("{server} (protocol {version}): {} tools\n", tools.len());
        out!("{}", crate::output::shown(&table(&tools)));
    }
    ExitCode::SUCCESS
}
