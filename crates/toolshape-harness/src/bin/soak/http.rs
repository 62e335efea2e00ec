//! The HTTP soak: C independent clients, N calls each, stateless 2026-07-28
//! or in 2025-11-25 sessions; every call accounted for.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, json};
use tokio::sync::Barrier;
use toolshape::client::{Client, ClientOptions, Negotiation};
use toolshape::protocol::ProtocolVersion;

use super::{HttpServer, Options, Outcome, PeakRss, file_for, mib, rss_kib};

/// One client's accounting.
#[derive(Debug, Default, Clone, Copy)]
struct Count {
    ok: u64,
    lost: u64,
    mismatched: u64,
}

async fn connect(url: &str, version: ProtocolVersion) -> Result<Client, String> {
    let mut options = ClientOptions::default();
    options.request_timeout = Duration::from_secs(60);
    Client::builder()
        .negotiation(Negotiation::Pinned(version))
        .options(options)
        .connect_http(url)
        .await
        .map_err(|e| format!("connecting to {url}: {e}"))
}

/// Calls `count_lines` for call numbers `range` and checks each answer.
async fn calls(client: &Client, client_index: u64, range: std::ops::Range<u64>, count: &mut Count) {
    for n in range {
        let (file, expected) = file_for(n * 7 + client_index);
        let mut arguments = Map::new();
        arguments.insert("path".into(), json!(file));
        match client.call_tool("count_lines", Some(arguments)).await {
            Ok(result) if !result.is_error && result.structured == Some(json!(expected)) => {
                count.ok += 1;
            }
            Ok(_) => count.mismatched += 1,
            Err(error) => {
                if count.lost < 3 {
                    eprintln!("soak http: client {client_index}, call {n}: {error}");
                }
                count.lost += 1;
            }
        }
    }
}

pub(crate) async fn soak(server: &Path, root: &Path, options: &Options) -> Result<Outcome, String> {
    let clients = options.number("clients", 64)?.max(1);
    let per_client = options.number("calls", 10_000)?;
    let warmup = options
        .number("warmup", (per_client / 20).max(1))?
        .min(per_client);
    let max_growth = options.number("max-growth-mib", 32)?;
    let stateless = match options.text("mode").unwrap_or("stateless") {
        "stateless" => true,
        "sessions" => false,
        other => return Err(format!("--mode {other:?}: stateless or sessions")),
    };
    let extra: &[&str] = if stateless { &["--stateless"] } else { &[] };
    let serving = HttpServer::start(server, root, extra).await?;
    let version = if stateless {
        ProtocolVersion::V2026_07_28
    } else {
        ProtocolVersion::V2025_11_25
    };
    let pid = serving.pid;
    let peak = PeakRss::watch(pid);
    let warmed = Arc::new(Barrier::new(usize::try_from(clients).unwrap_or(1) + 1));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for index in 0..clients {
        let url = serving.url.clone();
        let warmed = Arc::clone(&warmed);
        tasks.push(tokio::spawn(async move {
            let mut count = Count::default();
            let client = match connect(&url, version).await {
                Ok(client) => Some(client),
                Err(error) => {
                    eprintln!("soak http: client {index}: {error}");
                    None
                }
            };
            if let Some(client) = &client {
                calls(client, index, 0..warmup, &mut count).await;
            }
            warmed.wait().await;
            match &client {
                Some(client) => calls(client, index, warmup..per_client, &mut count).await,
                None => count.lost = per_client,
            }
            if let Some(client) = client {
                client.close(Duration::from_secs(5)).await;
            }
            count
        }));
    }
    warmed.wait().await;
    let rss_after_warmup = rss_kib(pid).unwrap_or(0);
    let mut total = Count::default();
    for task in tasks {
        let count = task.await.map_err(|e| e.to_string())?;
        total.ok += count.ok;
        total.lost += count.lost;
        total.mismatched += count.mismatched;
    }
    let elapsed = started.elapsed();
    let rss_end = rss_kib(pid).unwrap_or(0);
    let peak_rss = peak.peak();
    let exit = serving.stop().await;
    let expected = clients * per_client;
    let growth = rss_end.saturating_sub(rss_after_warmup);
    let passed = total.ok == expected
        && total.lost == 0
        && total.mismatched == 0
        && growth <= max_growth * 1024;
    let mode = if stateless {
        "stateless 2026-07-28"
    } else {
        "2025-11-25 sessions"
    };
    Ok(Outcome {
        passed,
        line: format!(
            "http ({mode}): {clients} clients x {per_client} calls = {expected} in {:.1} s ({:.0}/s): \
             ok {} lost {} mismatched {}; RSS after warm-up {:.1} MiB, at the end {:.1} MiB (+{:.1}), \
             peak {:.1} MiB; server exit: {exit}",
            elapsed.as_secs_f64(),
            expected as f64 / elapsed.as_secs_f64(),
            total.ok,
            total.lost,
            total.mismatched,
            mib(rss_after_warmup),
            mib(rss_end),
            mib(growth),
            mib(peak_rss),
        ),
    })
}
