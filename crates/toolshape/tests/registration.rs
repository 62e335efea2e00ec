#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Registration checks every schema a tool will put on the wire, in the
//! form each revision gets: a non-object output schema's wrapped form (what
//! 2025-06-18 and 2025-11-25 peers see) is held to the same bounds as the
//! schema itself, so no peer is ever sent a schema the engine refuses.

use serde_json::{Value, json};
use toolshape::tool::ToolContext;
use toolshape::{RegistrationError, Tool, ToolError, ToolOutput, ToolRegistry};

/// A tool whose output schema is a `const` array nested `levels` deep.
fn nested_output(name: &str, levels: usize) -> Tool {
    let mut nested = json!(1);
    for _ in 0..levels {
        nested = Value::Array(vec![nested]);
    }
    Tool::dynamic(
        name,
        json!({"type": "object"}),
        Some(json!({"const": nested})),
        |_: ToolContext, _: Value| async { Err::<ToolOutput, _>(ToolError::new("unused")) },
    )
}

#[test]
fn a_non_object_output_whose_wrapped_form_is_over_the_bounds_is_refused() {
    let registry = ToolRegistry::new();
    // 62 arrays under `const`: within the default depth of 64 as it is,
    // over it once wrapped.
    let refused = registry.register(nested_output("deep", 62));
    let Err(RegistrationError::Schema { which, source, .. }) = &refused else {
        panic!("registered: {refused:?}");
    };
    assert!(which.contains("wrapped"), "{which}");
    assert!(source.to_string().contains("deeper than 64"), "{source}");
    // Two levels less leaves the wrapper its room.
    assert!(registry.register(nested_output("shallower", 60)).is_ok());
}

/// The builder's `options` keeps the instructions set before it (it
/// replaced them with `None`), and a peer's `initialize` gets them.
#[tokio::test]
async fn instructions_set_before_the_options_are_kept() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let server = toolshape::Server::builder("s", "1")
        .instructions("Use the tools")
        .options(toolshape::ServerOptions::default())
        .build()
        .unwrap();
    let (mut to_server, read) = tokio::io::duplex(1 << 16);
    let (write, from_server) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move { server.serve(read, write).await });
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}
    }});
    to_server
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    let mut line = String::new();
    BufReader::new(from_server)
        .read_line(&mut line)
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        answer["result"]["instructions"], "Use the tools",
        "{answer}"
    );
}
