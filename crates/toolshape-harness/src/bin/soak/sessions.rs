//! The abandoned-sessions soak: rounds of 2025-11-25 sessions opened over
//! raw HTTP (initialize, initialized, one call) and never closed; once they
//! have expired, the server's memory is measured again, and at the end
//! every one of them must be gone.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;

use super::{HttpServer, Options, Outcome, file_for, mib, rss_kib};

/// One HTTP/1.1 exchange on a fresh connection: status, headers (names in
/// lower case), body.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

async fn post(
    authority: &str,
    path: &str,
    session: Option<&str>,
    body: &Value,
) -> Result<Reply, String> {
    let body = body.to_string();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    head.push_str("\r\n");
    let exchange = async {
        let mut stream = TcpStream::connect(authority).await?;
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await?;
        Ok::<_, std::io::Error>(raw)
    };
    let raw = tokio::time::timeout(Duration::from_secs(30), exchange)
        .await
        .map_err(|_| "no answer within 30 s".to_owned())?
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or("a reply without a head")?;
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or("a reply without a status")?;
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    Ok(Reply {
        status,
        headers,
        body: body.to_owned(),
    })
}

/// Opens a session, finishes its handshake and makes one checked call;
/// returns its id.
async fn open_and_abandon(authority: &str, path: &str, n: u64) -> Result<String, String> {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "soak", "version": "0"}}});
    let reply = post(authority, path, None, &initialize).await?;
    let session = reply
        .headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .ok_or_else(|| format!("initialize gave no session (HTTP {})", reply.status))?;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let reply = post(authority, path, Some(&session), &initialized).await?;
    if reply.status != 202 {
        return Err(format!("initialized: HTTP {}", reply.status));
    }
    let (file, expected) = file_for(n);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "count_lines", "arguments": {"path": file}}});
    let reply = post(authority, path, Some(&session), &call).await?;
    let answer: Value = serde_json::from_str(&reply.body)
        .map_err(|e| format!("the call's answer is not JSON ({e}): {}", reply.body))?;
    if answer["result"]["structuredContent"] != json!({"result": expected}) {
        return Err(format!("a wrong answer: {answer}"));
    }
    Ok(session)
}

pub(crate) async fn soak(server: &Path, root: &Path, options: &Options) -> Result<Outcome, String> {
    let count = options.number("count", 1000)?.max(1);
    let rounds = options.number("rounds", 3)?.max(1);
    let idle = options.number("idle-timeout", 5)?.max(1);
    let max_growth = options.number("max-growth-mib", 32)?;
    let idle_text = idle.to_string();
    let serving = HttpServer::start(server, root, &["--session-idle-timeout", &idle_text]).await?;
    let url = serving.url.clone();
    let rest = url.strip_prefix("http://").ok_or("not an http:// URL")?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (authority, path) = (authority.to_owned(), path.to_owned());
    // Expiry, then the sweep that runs every quarter of it (1 s at least).
    let expiry = Duration::from_secs(idle)
        + Duration::from_secs((idle / 4).max(1))
        + Duration::from_millis(1500);

    let started = Instant::now();
    let mut all_sessions = Vec::new();
    let mut failures = 0u64;
    // Warm-up: a tenth of a round, opened and expired, before the baseline.
    for i in 0..(count / 10).max(1) {
        match open_and_abandon(&authority, &path, i).await {
            Ok(session) => all_sessions.push(session),
            Err(error) => return Err(format!("warm-up: {error}")),
        }
    }
    tokio::time::sleep(expiry).await;
    let baseline = rss_kib(serving.pid).unwrap_or(0);
    let mut report = Vec::new();
    let limit = Arc::new(Semaphore::new(32));
    let mut rss_expired = baseline;
    for round in 0..rounds {
        let mut tasks = Vec::new();
        for i in 0..count {
            let (authority, path) = (authority.clone(), path.clone());
            let limit = Arc::clone(&limit);
            tasks.push(tokio::spawn(async move {
                let _permit = limit.acquire_owned().await;
                open_and_abandon(&authority, &path, round * count + i).await
            }));
        }
        for task in tasks {
            match task.await.map_err(|e| e.to_string())? {
                Ok(session) => all_sessions.push(session),
                Err(error) => {
                    if failures < 3 {
                        eprintln!("soak sessions: {error}");
                    }
                    failures += 1;
                }
            }
        }
        let rss_open = rss_kib(serving.pid).unwrap_or(0);
        tokio::time::sleep(expiry).await;
        rss_expired = rss_kib(serving.pid).unwrap_or(0);
        report.push(format!(
            "round {}: open {:.1} MiB -> expired {:.1} MiB",
            round + 1,
            mib(rss_open),
            mib(rss_expired)
        ));
    }
    // Every abandoned session is gone: its id gets 404.
    let mut alive = 0u64;
    for session in &all_sessions {
        let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
        match post(&authority, &path, Some(session), &ping).await {
            Ok(reply) if reply.status == 404 => {}
            _ => alive += 1,
        }
    }
    let exit = serving.stop().await;
    let growth = rss_expired.saturating_sub(baseline);
    let passed = failures == 0 && alive == 0 && growth <= max_growth * 1024;
    Ok(Outcome {
        passed,
        line: format!(
            "sessions: {rounds} rounds x {count} sessions opened (each with one call) and abandoned, \
             idle timeout {idle} s, in {:.1} s: failed {failures}; RSS after warm-up {:.1} MiB; {}; \
             after the last expiry +{:.1} MiB over warm-up; still alive at the end: {alive} of {}; \
             server exit: {exit}",
            started.elapsed().as_secs_f64(),
            mib(baseline),
            report.join("; "),
            mib(growth),
            all_sessions.len(),
        ),
    })
}
