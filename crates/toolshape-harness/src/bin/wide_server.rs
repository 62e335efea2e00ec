//! A toolshape stdio server with many read-only tools (20 unless
//! `--tools N`), for timing `toolshape check --call read-only` on a server
//! of that size (`scripts/check-bench.sh`). The tools take a few kinds of
//! arguments (integers with bounds, an enum, an optional string, a list) and
//! return objects, arrays and numbers, so the check generates and validates
//! something real on every call.

use std::process::ExitCode;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolshape::{Server, Tool, ToolError};

#[derive(Deserialize, JsonSchema)]
struct Numbers {
    /// The first number.
    #[schemars(range(min = -1000, max = 1000))]
    a: i32,
    /// The second number.
    #[schemars(range(min = -1000, max = 1000))]
    b: i32,
    /// An optional label, echoed back.
    #[schemars(length(max = 40))]
    label: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct Computed {
    value: i64,
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Order {
    Ascending,
    Descending,
}

#[derive(Deserialize, JsonSchema)]
struct Sort {
    /// The numbers to sort (at most 100).
    #[schemars(length(max = 100))]
    values: Vec<i64>,
    /// Which way.
    order: Order,
}

fn tool(index: usize) -> Tool {
    let name = format!("tool_{index:02}");
    let tool = match index % 3 {
        0 => Tool::typed(name, move |args: Numbers| async move {
            Ok::<_, ToolError>(Computed {
                value: i64::from(args.a) * i64::from(args.b) + index as i64,
                label: args.label,
            })
        }),
        1 => Tool::typed(name, |args: Sort| async move {
            let mut values = args.values;
            values.sort_unstable();
            if matches!(args.order, Order::Descending) {
                values.reverse();
            }
            Ok::<_, ToolError>(values)
        }),
        _ => Tool::typed(name, |args: Numbers| async move {
            Ok::<_, ToolError>(i64::from(args.a) - i64::from(args.b))
        }),
    };
    tool.description(format!("wide server tool {index}"))
        .read_only()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let count = args
        .iter()
        .position(|a| a == "--tools")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(20);
    let server = match Server::builder("wide", "1.0.0")
        .tools((0..count).map(tool))
        .build()
    {
        Ok(server) => server,
        Err(error) => {
            eprintln!("wide_server: {error}");
            return ExitCode::FAILURE;
        }
    };
    match server.serve_stdio().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("wide_server: {error}");
            ExitCode::FAILURE
        }
    }
}
