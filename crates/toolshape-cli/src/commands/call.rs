//! `toolshape call`: call one tool, validate the result, print it.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::{Map, Value};
use toolshape::client::ClientErrorKind;

use super::connect::{ServerArgs, exit, exit_code, fail};

/// Arguments of `toolshape call`.
#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool to call (over --otc: its id `Toolkit.Tool[@version]`, its
    /// name, or its tool part when only one toolkit has it).
    tool: String,
    /// The arguments, as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    /// Print the whole result (content, structuredContent, isError) as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    server: ServerArgs,
}

pub(crate) fn parse_arguments(text: &str) -> Result<Map<String, Value>, (u8, String)> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err((exit::USAGE, "--args must be a JSON object".into())),
        Err(error) => Err((exit::USAGE, format!("--args is not valid JSON: {error}"))),
    }
}

pub(crate) async fn run(args: CallArgs) -> ExitCode {
    let arguments = match parse_arguments(&args.args) {
        Ok(arguments) => arguments,
        Err(failure) => return fail("call", failure),
    };
    if let Some(url) = &args.server.otc {
        return super::otc::call(
            url,
            &args.tool,
            arguments,
            args.json,
            args.server.mcp.timeout,
        )
        .await;
    }
    // A tool that asks the user is answered at the terminal, when there is one.
    let client = match args.server.connect_with(super::ask::at_terminal).await {
        Ok(client) => client,
        Err(failure) => return fail("call", failure),
    };
    // A server that needs the user on a page first is waited for, then
    // called once more.
    let wait = Duration::from_secs(args.server.mcp.timeout.max(1));
    let outcome = super::visits::call_tool(&client, &args.tool, arguments, wait).await;
    let unlisted = match &outcome {
        Err(error) if matches!(error.kind(), ClientErrorKind::Protocol(_)) => {
            unlisted(&client, &args.tool).await
        }
        _ => None,
    };
    client.close(Duration::from_secs(2)).await;
    let result = match outcome {
        Ok(result) => result,
        Err(error) => {
            let mut message = crate::output::described(&error);
            if let Some(hint) = unlisted {
                message.push_str(&hint);
            }
            return fail("call", (exit_code(&error), message));
        }
    };
    if args.json {
        let whole = serde_json::json!({
            "content": result.content,
            "structuredContent": result.structured,
            "isError": result.is_error,
        });
        outln!("{}", crate::output::json(&whole));
    } else if let (Some(structured), false) = (&result.structured, result.is_error) {
        outln!("{}", crate::output::json(structured));
    } else if std::io::stdout().is_terminal() {
        // The tool's words, shown safely at a terminal (piped, as they are).
        outln!("{}", crate::output::shown(&result.text()));
    } else {
        outln!("{}", result.text());
    }
    if result.is_error {
        errln!("toolshape call: the tool reported an error");
        return ExitCode::from(exit::TOOL_ERROR);
    }
    ExitCode::SUCCESS
}

/// Tools named in an "unlisted" hint, at most.
const TOOLS_NAMED: usize = 10;

/// When the server lists no tool named `tool` (a typo, most likely): a
/// hint naming the tools it has.
async fn unlisted(client: &toolshape::client::Client, tool: &str) -> Option<String> {
    let tools = client.list_tools().await.ok()?;
    if tools.iter().any(|listed| listed.name == tool) {
        return None;
    }
    let mut names: Vec<&str> = tools.iter().map(|listed| listed.name.as_str()).collect();
    let more = names.len().saturating_sub(TOOLS_NAMED);
    names.truncate(TOOLS_NAMED);
    let mut hint = format!(
        "; the server lists no tool named \"{}\" (its tools: {}",
        crate::output::quoted(tool),
        names.join(", ")
    );
    if more > 0 {
        hint.push_str(&format!(" and {more} more"));
    }
    hint.push(')');
    Some(hint)
}
