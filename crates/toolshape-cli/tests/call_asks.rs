#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape call` answers a tool's elicitation at the terminal when stdin
//! is one (a pseudo-terminal here), on a handshake session (a server request)
//! and on 2026-07-28 (an input_required round); with stdin a pipe it offers
//! no answers, and the tool's question fails cleanly. A tool that needs the
//! user on a page first (`toolshape_harness::url_elicitation`): on
//! 2025-11-25 the `-32042` error's page goes to stderr, the call waits for
//! the server to announce the visit complete and calls again; without a
//! terminal the tool error names the page.

#[path = "../../toolshape-harness/tests/client_common/mod.rs"]
mod client_common;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use toolshape::tool::Elicitation;
use toolshape::{Server, Tool, ToolContext};

const TOOLSHAPE: &str = env!("CARGO_BIN_EXE_toolshape");

/// No input.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

/// What the tool asks for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Contact {
    /// Your age in years.
    age: u32,
    /// Your name.
    name: String,
}

async fn serve() -> String {
    let ask = Tool::typed_with_context("ask_user", |context: ToolContext, _: Empty| async move {
        Ok::<_, toolshape::ToolError>(match context.elicit::<Contact>("Who are you?").await? {
            Elicitation::Accepted(contact) => json!({"name": contact.name, "age": contact.age}),
            Elicitation::Declined => json!("declined"),
            _ => json!("cancelled"),
        })
    });
    let server = Server::builder("asks", "1").tool(ask).build().unwrap();
    client_common::serve_over_http(server).await
}

/// The terminal side of a new pseudo-terminal, and its controller.
fn open_terminal() -> (File, File) {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let controller = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&controller).unwrap();
    unlockpt(&controller).unwrap();
    let name = ptsname(&controller, Vec::new()).unwrap();
    let terminal = OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_string_lossy().as_ref())
        .unwrap();
    (terminal, File::from(controller))
}

/// Runs `toolshape call ask_user` with `stdin`, typing `typed` (after its
/// pause).
async fn call(
    url: &str,
    protocol: &str,
    stdin: Stdio,
    typed: Option<(File, &str, std::time::Duration)>,
) -> (i32, String, String) {
    call_tool(url, "ask_user", "{}", protocol, stdin, typed).await
}

/// Runs `toolshape call TOOL --args ARGUMENTS` with `stdin`, typing `typed`
/// (after its pause).
async fn call_tool(
    url: &str,
    tool: &str,
    arguments: &str,
    protocol: &str,
    stdin: Stdio,
    typed: Option<(File, &str, std::time::Duration)>,
) -> (i32, String, String) {
    let mut child = tokio::process::Command::from({
        let mut command = Command::new(TOOLSHAPE);
        command
            .args(["call", tool, "--args", arguments, "--url", url])
            .args(["--protocol", protocol])
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    })
    .spawn()
    .unwrap();
    if let Some((mut controller, text, after)) = typed {
        // Typed once `after` has passed (a user answering later).
        tokio::time::sleep(after).await;
        controller.write_all(text.as_bytes()).unwrap();
        // Kept open until the call ends (closing it hangs up the terminal).
        let output = tokio::time::timeout(std::time::Duration::from_secs(30), async {
            let status = child.wait().await.unwrap();
            let mut out = String::new();
            let mut err = String::new();
            use tokio::io::AsyncReadExt;
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .await
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .await
                .unwrap();
            (status.code().unwrap_or(-1), out, err)
        })
        .await
        .expect("toolshape call did not finish");
        drop(controller);
        return output;
    }
    let output = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("toolshape call did not finish")
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_terminal_answers_on_every_revision() {
    let url = serve().await;
    for protocol in ["2025-11-25", "2026-07-28"] {
        let (terminal, controller) = open_terminal();
        // Yes, then the fields in name order: age (first a bad answer), name.
        let typed = "y\nold\n36\nAda\n";
        let (code, out, err) = call(
            &url,
            protocol,
            Stdio::from(terminal),
            Some((controller, typed, std::time::Duration::ZERO)),
        )
        .await;
        assert_eq!(code, 0, "{protocol}: {out}\n{err}");
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value, json!({"name": "Ada", "age": 36}), "{protocol}");
        assert!(err.contains("The server asks: Who are you?"), "{err}");
        assert!(err.contains("a whole number, please"), "{err}");

        // No, in capitals after an answer that is neither (asked again);
        // and a field with no fitting answer in three tries: both decline.
        for typed in ["maybe\nNO\n", "y\nold\nolder\noldest\n"] {
            let (terminal, controller) = open_terminal();
            let (code, out, err) = call(
                &url,
                protocol,
                Stdio::from(terminal),
                Some((controller, typed, std::time::Duration::ZERO)),
            )
            .await;
            assert_eq!(code, 0, "{protocol} {typed:?}: {err}");
            assert_eq!(
                serde_json::from_str::<Value>(&out).unwrap(),
                json!("declined"),
                "{protocol} {typed:?}"
            );
        }
    }
}

#[tokio::test]
async fn without_a_terminal_the_question_fails_cleanly() {
    let url = serve().await;
    for protocol in ["2025-11-25", "2026-07-28"] {
        let (code, out, err) = call(&url, protocol, Stdio::null(), None).await;
        assert_ne!(code, 0, "{protocol}: {out}");
        // The tool's error names what the client could not do.
        let said = format!("{out}{err}").to_lowercase();
        assert!(said.contains("elicitation"), "{protocol}: {out}\n{err}");
    }
}

/// The sign-in pages of `toolshape_harness::url_elicitation`, over HTTP.
async fn serve_pages() -> String {
    let server =
        toolshape_harness::url_elicitation::serve_url_elicitation(Server::builder("pages", "1"))
            .build()
            .unwrap();
    client_common::serve_over_http(server).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waits_for_the_page_visited_then_calls_again() {
    let url = serve_pages().await;
    let (terminal, controller) = open_terminal();
    // Nothing typed: the server announces the visit complete.
    let (code, out, err) = call_tool(
        &url,
        "sign_in",
        r#"{"account":"cli"}"#,
        "2025-11-25",
        Stdio::from(terminal),
        Some((controller, "", std::time::Duration::ZERO)),
    )
    .await;
    assert_eq!(code, 0, "stdout {out}\nstderr {err}");
    assert!(
        err.contains("The server needs you to visit first (Sign cli in first)"),
        "{err}"
    );
    assert!(
        err.contains("Sign in: https://example.com/sign-in?account=cli"),
        "{err}"
    );
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["signed_in"], "cli", "{out}");
}

#[tokio::test]
async fn without_a_terminal_the_page_is_named_in_the_tool_error() {
    let url = serve_pages().await;
    for protocol in ["2025-06-18", "2025-11-25"] {
        // An account each: a sign-in completes a moment after it starts.
        let arguments = format!(r#"{{"account":"pipe-{protocol}"}}"#);
        let (code, out, err) =
            call_tool(&url, "sign_in", &arguments, protocol, Stdio::null(), None).await;
        assert_eq!(code, 1, "{protocol}: stdout {out}\nstderr {err}");
        assert!(
            out.contains(&format!(
                "https://example.com/sign-in?account=pipe-{protocol}"
            )),
            "{protocol}: {out}"
        );
    }
}

/// The retried call asks at the terminal: the line typed answers it (the
/// wait for the visit, ended by its completion, took none).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_after_the_visit_gets_the_next_line_typed() {
    let url = serve_pages().await;
    let (terminal, controller) = open_terminal();
    let typed = "y\nAda\n";
    let after = std::time::Duration::from_millis(800);
    let (code, out, err) = call_tool(
        &url,
        "sign_in_then_ask",
        r#"{"account":"tty"}"#,
        "2025-11-25",
        Stdio::from(terminal),
        Some((controller, typed, after)),
    )
    .await;
    assert_eq!(code, 0, "stdout {out}\nstderr {err}");
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value, json!({"signed_in": "tty", "name": "Ada"}), "{err}");
    assert!(err.contains("The server asks: Your name?"), "{err}");
}
