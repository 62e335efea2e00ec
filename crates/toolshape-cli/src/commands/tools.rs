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

/// The longest name the table shows whole (`--json` has every name whole):
/// a server's one long name must not pad every row.
const NAME_COLUMN: usize = 64;

fn table(tools: &[ToolDefinition]) -> String {
    let names: Vec<String> = tools
        .iter()
        .map(|tool| one_line(&tool.name, NAME_COLUMN))
        .collect();
    // In characters, as the padding counts them.
    let name_width = names
        .iter()
        .map(|name| name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "{:name_width$}  {:8}  {:8}  DESCRIPTION\n",
        "NAME", "INPUT", "OUTPUT"
    );
    for (tool, name) in tools.iter().zip(&names) {
        out.push_str(&format!(
            "{:name_width$}  {:8}  {:8}  {}\n",
            name,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_long_name_does_not_pad_every_row() {
        let tool = |name: &str| {
            serde_json::from_value::<ToolDefinition>(serde_json::json!({
                "name": name, "inputSchema": {"type": "object"}
            }))
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let tools = [tool(&"é".repeat(100_000)), tool("short")];
        let table = table(&tools);
        for line in table.lines() {
            assert!(line.chars().count() < 120, "{}", line.chars().count());
        }
        // Padded by characters: the columns line up whatever the bytes.
        let starts: Vec<usize> = table
            .lines()
            .map(|line| line.chars().take_while(|c| *c != ' ').count())
            .collect();
        assert_eq!(starts[1], NAME_COLUMN + 1, "{table}");
        let input_at = |line: &str| {
            let at = line.find("object").unwrap_or_else(|| panic!("{line}"));
            line[..at].chars().count()
        };
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(input_at(lines[1]), input_at(lines[2]), "{table}");
    }
}
