//! The stdio soak: N calls pipelined through one `toolshape serve`
//! connection, each id accounted for.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::Command;
use tokio::sync::Semaphore;

use super::{Options, Outcome, PeakRss, file_for, mib, rss_kib};

/// What the reader tallied.
#[derive(Debug, Default)]
struct Tally {
    /// Answers per id, index = id - 1.
    answers: Vec<u8>,
    /// Answers whose value was not the file's line count, or an error.
    mismatched: u64,
    /// Answers to ids never sent.
    unknown: u64,
    /// The server's RSS once the warm-up calls were answered.
    rss_after_warmup: Option<u64>,
}

#[derive(Deserialize)]
struct Answer {
    id: Option<Value>,
    result: Option<CallResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallResult {
    structured_content: Option<Value>,
    #[serde(default)]
    is_error: bool,
}

fn request(id: u64) -> String {
    let (file, _) = file_for(id);
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"count_lines\",\"arguments\":{{\"path\":\"{file}\"}}}}}}\n"
    )
}

pub(crate) async fn soak(server: &Path, root: &Path, options: &Options) -> Result<Outcome, String> {
    let calls = options.number("calls", 1_000_000)?;
    let window = options.number("window", 256)?.max(1);
    let warmup = options.number("warmup", (calls / 20).max(1))?.min(calls);
    let max_growth = options.number("max-growth-mib", 32)?;
    let mut child = Command::new(server)
        .arg("serve")
        .arg("--root")
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
    let pid = child.id().ok_or("the server exited at once")?;
    let stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let stdout = child.stdout.take().ok_or("no stdout pipe")?;
    let mut writer = BufWriter::with_capacity(64 * 1024, stdin);
    let mut lines = BufReader::with_capacity(64 * 1024, stdout).lines();

    let initialize = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"soak\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    writer
        .write_all(initialize.as_bytes())
        .await
        .and(writer.flush().await)
        .map_err(|e| format!("writing initialize: {e}"))?;
    let first = lines
        .next_line()
        .await
        .map_err(|e| e.to_string())?
        .ok_or("the server closed its output")?;
    if !first.contains("\"protocolVersion\"") {
        return Err(format!("initialize failed: {first}"));
    }

    let permits = Arc::new(Semaphore::new(usize::try_from(window).unwrap_or(256)));
    let peak = PeakRss::watch(pid);
    let started = Instant::now();
    let writer_permits = Arc::clone(&permits);
    let writing = tokio::spawn(async move {
        for id in 1..=calls {
            let Ok(permit) = writer_permits.acquire().await else {
                return Err("the reader stopped".to_owned());
            };
            permit.forget();
            writer
                .write_all(request(id).as_bytes())
                .await
                .map_err(|e| format!("writing call {id}: {e}"))?;
            // Flush when nothing more may be sent yet, so the server sees it.
            if writer_permits.available_permits() == 0 || id == calls {
                writer.flush().await.map_err(|e| e.to_string())?;
            }
        }
        Ok(writer)
    });

    let mut tally = Tally {
        answers: vec![0; usize::try_from(calls).map_err(|e| e.to_string())?],
        ..Tally::default()
    };
    let mut received = 0u64;
    while received < calls {
        let Some(line) = lines.next_line().await.map_err(|e| e.to_string())? else {
            break;
        };
        received += 1;
        permits.add_permits(1);
        if received == warmup {
            tally.rss_after_warmup = rss_kib(pid);
        }
        let answer: Answer = match serde_json::from_str(&line) {
            Ok(answer) => answer,
            Err(_) => {
                tally.unknown += 1;
                continue;
            }
        };
        let id = answer
            .id
            .as_ref()
            .and_then(Value::as_u64)
            .filter(|id| (1..=calls).contains(id));
        let Some(id) = id else {
            tally.unknown += 1;
            continue;
        };
        let slot = &mut tally.answers[(id - 1) as usize];
        *slot = slot.saturating_add(1);
        let (_, expected) = file_for(id);
        let right = answer.result.is_some_and(|result| {
            !result.is_error
                && result.structured_content == Some(serde_json::json!({"result": expected}))
        });
        if !right {
            tally.mismatched += 1;
        }
    }
    let elapsed = started.elapsed();
    let rss_end = rss_kib(pid);
    let peak_rss = peak.peak();
    let mut writer = writing
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("the writer failed: {e}"))?;
    let _ = writer.shutdown().await;
    drop(writer);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .map_err(|_| "the server did not exit after its input closed")?
        .map_err(|e| e.to_string())?;

    let lost = tally.answers.iter().filter(|n| **n == 0).count();
    let duplicated = tally.answers.iter().filter(|n| **n > 1).count();
    let start = tally.rss_after_warmup.unwrap_or(0);
    let end = rss_end.unwrap_or(0);
    let growth = end.saturating_sub(start);
    let passed = lost == 0
        && duplicated == 0
        && tally.unknown == 0
        && tally.mismatched == 0
        && status.success()
        && growth <= max_growth * 1024;
    let rate = calls as f64 / elapsed.as_secs_f64();
    Ok(Outcome {
        passed,
        line: format!(
            "stdio: {calls} calls (window {window}) in {:.1} s ({rate:.0}/s): answered {} \
             lost {lost} duplicated {duplicated} unknown {} mismatched {}; \
             RSS after warm-up ({warmup} calls) {:.1} MiB, at the end {:.1} MiB (+{:.1}), peak {:.1} MiB; \
             server exit: {status}",
            elapsed.as_secs_f64(),
            calls as usize - lost,
            tally.unknown,
            tally.mismatched,
            mib(start),
            mib(end),
            mib(growth),
            mib(peak_rss),
        ),
    })
}
