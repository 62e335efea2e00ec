#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `toolshape check` (the library) against the hostile server: every planted
//! defect is found, with the right rule, on the revisions it shows on, and
//! nothing else is. The base tools' defects are the client tests'; the
//! `--check-defects` tools plant one rule each (see `src/bin/hostile/defects.rs`).
//!
//! The JSON report is validated against its published JSON Schema, and the
//! JUnit rendering is read back with an XML parser.

mod check_common;
mod client_common;

use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpListener;
use std::time::Duration;

use quick_xml::Reader;
use quick_xml::events::Event;
use toolshape::schema::SchemaEngine;
use toolshape_check::{CallPolicy, ProtocolChoice, REPORT_SCHEMA, Report, Rule, Severity, Target};

use check_common::{options, target};

/// The (error or warning) rules found, by tool (`(server)` for none).
fn found(report: &Report) -> BTreeMap<String, BTreeSet<&'static str>> {
    let mut found: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
    for finding in &report.findings {
        if finding.severity == Severity::Info {
            continue;
        }
        let tool = finding.tool.clone().unwrap_or_else(|| "(server)".into());
        found.entry(tool).or_default().insert(finding.rule.id());
    }
    found
}

fn expected(table: &[(&str, &[&'static str])]) -> BTreeMap<String, BTreeSet<&'static str>> {
    table
        .iter()
        .filter(|(_, rules)| !rules.is_empty())
        .map(|(tool, rules)| ((*tool).to_owned(), rules.iter().copied().collect()))
        .collect()
}

/// Every planted defect, on every revision `--protocol all` tries, every tool called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_planted_defect_is_found_with_its_rule_and_nothing_else() {
    // remote_ref's $ref points here: nothing may ever connect.
    let canary = TcpListener::bind("127.0.0.1:0").unwrap();
    canary.set_nonblocking(true).unwrap();
    let port = canary.local_addr().unwrap().port().to_string();
    let report = toolshape_check::check(
        &target(&["--check-defects", "--canary-port", &port]),
        &options(ProtocolChoice::All, CallPolicy::All),
    )
    .await;
    assert!(canary.accept().is_err(), "the check fetched a remote $ref");

    let expected = expected(&[
        // The base tools (the client tests' defects).
        ("ok", &[]),
        ("pair", &["request-timeout"]), // its first call is held until a second arrives
        ("mismatch", &["output-invalid"]),
        ("no_structured", &["output-missing-structured"]),
        ("tuple", &[]),
        ("tuple_bad", &["output-invalid"]),
        ("unevaluated", &["output-invalid"]),
        ("draft07", &[]),
        // Its root is a bare $ref, not `type: object`, which 2025-06-18 and 2025-11-25 require.
        (
            "remote_ref",
            &["schema-remote-ref", "output-schema-not-object"],
        ),
        ("exponential", &["schema-over-bounds"]),
        ("deep", &["response-over-bounds"]),
        ("huge", &["response-over-bounds"]),
        // 100 MB with the id last: the client cannot tell which request it answers.
        ("huge_id_last", &["request-timeout"]),
        ("malformed_error", &["message-invalid"]),
        ("bad_result", &["message-invalid"]),
        ("tool_error", &[]),
        ("hang", &["request-timeout"]),
        ("received", &[]),
        ("echo", &[]),
        // The planted ones.
        ("input_not_object", &["input-schema-not-object"]),
        (
            "output_not_object",
            &["output-schema-not-object", "output-not-object"],
        ),
        ("format_int64", &["schema-format-nonstandard"]),
        ("items_false", &["schema-items-false"]),
        ("tuple_2020", &["schema-tuple-items"]),
        // The static finding, and every wrapped output it then rejects.
        ("wrap_closed", &["schema-wrap-closed", "output-invalid"]),
        ("text_mismatch", &["output-text-mismatch"]),
        ("no_text", &["output-text-missing"]),
        ("accepts_anything", &["invalid-args-accepted"]),
        ("invalid_code", &["invalid-args-error-code"]),
        ("error_empty", &["error-result-empty"]),
        ("bad name!", &["tool-name-invalid"]),
        ("notify_change", &[]),
        ("rejects_valid", &["call-rejected-valid"]),
        ("output_format", &["output-format"]),
        ("drift", &["schema-drift"]),
        ("legacy_only", &["tool-set-drift"]),
        ("unknown_dialect", &["schema-dialect-unknown"]),
        ("invalid_schema", &["schema-invalid"]),
        ("crash", &["server-exited"]),
        ("result_and_error", &["response-malformed"]),
        // The client-fault tools of the reliability tests: a server that
        // stops reading, dies mid-call, or floods the pipe with non-JSON.
        // deaf's own call times out, and the server, which no longer
        // answers a ping, is started again for the next tool; die's exit is
        // its own finding, not a message of the restarted server's.
        ("deaf", &["request-timeout"]),
        ("die", &["server-exited"]),
        // Its answers to ids the client never sent.
        ("unknown_id", &["response-unknown-id"]),
        ("flood", &["message-not-json"]),
        // notify_change's notification, without listChanged declared, and
        // the stray answer of `twice` (to an id sent before).
        ("(server)", &["list-changed-undeclared", "message-invalid"]),
    ]);
    assert_eq!(found(&report), expected, "{}", report.to_json());

    // Each rule shows where it should: the revisions and the places.
    let at = |tool: &str, rule: Rule| -> BTreeSet<(String, String)> {
        report
            .findings
            .iter()
            .filter(|f| f.tool.as_deref() == Some(tool) && f.rule == rule)
            .map(|f| {
                (
                    f.revision.map(|v| v.to_string()).unwrap_or_default(),
                    f.location.pointer.clone(),
                )
            })
            .collect()
    };
    let legacy = |pointer: &str| -> BTreeSet<(String, String)> {
        ["2025-06-18", "2025-11-25"]
            .into_iter()
            .map(|v| (v.to_owned(), pointer.to_owned()))
            .collect()
    };
    let everywhere = |pointer: &str| -> BTreeSet<(String, String)> {
        ["2025-06-18", "2025-11-25", "2026-07-28"]
            .into_iter()
            .map(|v| (v.to_owned(), pointer.to_owned()))
            .collect()
    };
    assert_eq!(
        at("output_not_object", Rule::OutputSchemaNotObject),
        legacy("/outputSchema")
    );
    assert_eq!(
        at("output_not_object", Rule::OutputNotObject),
        legacy("/structuredContent")
    );
    assert_eq!(
        at("format_int64", Rule::SchemaFormatNonstandard),
        everywhere("/inputSchema/properties/n")
    );
    assert_eq!(
        at("tuple_2020", Rule::SchemaTupleItems),
        everywhere("/inputSchema/properties/pair")
    );
    assert_eq!(
        at("mismatch", Rule::OutputInvalid),
        everywhere("/structuredContent/count")
            .union(&everywhere("/structuredContent"))
            .cloned()
            .collect()
    );
    assert_eq!(
        at("bad name!", Rule::ToolNameInvalid),
        [("2025-11-25", "/name"), ("2026-07-28", "/name")]
            .into_iter()
            .map(|(v, p)| (v.to_owned(), p.to_owned()))
            .collect()
    );
    assert_eq!(
        at("drift", Rule::SchemaDrift),
        [(
            "2026-07-28".to_owned(),
            "/inputSchema/properties/b".to_owned()
        )]
        .into()
    );
    assert!(report.exit_code(false) == 3);

    // A message beside the answers that breaks the schema is named by its
    // method.
    let beside: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| f.tool.is_none() && f.rule == Rule::MessageInvalid)
        .map(|f| f.message.as_str())
        .collect();
    assert!(
        !beside.is_empty()
            && beside.iter().all(|m| {
                m.starts_with("a notification (") || m.starts_with("a request from the server (")
            }),
        "{beside:?}"
    );

    // The text report shows each call's finding, its arguments beside it
    // (the revisions of one call are one line): accepts_anything took two
    // sets of invalid arguments.
    let text = toolshape_check::to_text(&report, false);
    let accepted = text
        .split("\naccepts_anything\n")
        .nth(1)
        .unwrap_or_default()
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .matches("invalid-args-accepted")
        .count();
    assert_eq!(accepted, 2, "{text}");

    // The JSON report matches its schema; the JUnit rendering parses.
    let schema: serde_json::Value = serde_json::from_str(REPORT_SCHEMA).unwrap();
    let compiled = SchemaEngine::default().compile(&schema).unwrap();
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    compiled.validate(&json).unwrap();
    let junit = junit_cases(&toolshape_check::to_junit(&report, false));
    assert_eq!(junit.len(), report.tools.len() + 1);
    for (name, failed) in &junit {
        let should_fail = expected.get(name).is_some_and(|rules| {
            rules
                .iter()
                .any(|r| Rule::from_id(r).unwrap().severity() == Severity::Error)
        });
        assert_eq!(*failed, should_fail, "{name}");
    }
}

/// The test cases of a JUnit document: name, and whether it has a failure.
fn junit_cases(xml: &str) -> Vec<(String, bool)> {
    let mut reader = Reader::from_str(xml);
    let mut cases = Vec::new();
    let mut suites = 0;
    loop {
        match reader.read_event().unwrap() {
            Event::Start(element) | Event::Empty(element) => match element.name().as_ref() {
                b"testsuite" => suites += 1,
                b"testcase" => {
                    let name = element
                        .try_get_attribute("name")
                        .unwrap()
                        .unwrap()
                        .unescape_value()
                        .unwrap()
                        .into_owned();
                    cases.push((name, false));
                }
                b"failure" => cases.last_mut().unwrap().1 = true,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(suites, 1);
    cases
}

/// What the base tools' schemas break on 2026-07-28, without calls.
const BASE_STATIC: [(&str, &[&str]); 2] = [
    ("remote_ref", &["schema-remote-ref"]),
    ("exponential", &["schema-over-bounds"]),
];

/// A check whose compile budget is spent checks no further schema, and
/// says so once for the listing, in a report its schema accepts.
#[tokio::test]
async fn a_spent_compile_budget_leaves_the_schemas_unchecked_and_says_so() {
    let mut spent = options(ProtocolChoice::Auto, CallPolicy::None);
    spent.compile_budget = Duration::ZERO;
    let report = toolshape_check::check(&target(&[]), &spent).await;
    let over: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == Rule::ListCompileOverBudget)
        .collect();
    assert_eq!(over.len(), 1, "{}", report.to_json());
    let skipped: usize = over[0]
        .message
        .split_once(" schemas not checked")
        .and_then(|(count, _)| count.parse().ok())
        .unwrap_or_else(|| panic!("{}", over[0].message));
    // Every tool's inputSchema at least.
    assert!(skipped >= report.tools.len(), "{}", over[0].message);
    // What takes a compiled schema was not found: `exponential` is over
    // the bounds only to the compiler; the lint's findings remain.
    let found = found(&report);
    assert!(!found.contains_key("exponential"), "{found:?}");
    assert_eq!(
        found.get("remote_ref"),
        Some(&["schema-remote-ref"].into()),
        "{found:?}"
    );
    let schema: serde_json::Value = serde_json::from_str(REPORT_SCHEMA).unwrap();
    let compiled = SchemaEngine::default().compile(&schema).unwrap();
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    compiled.validate(&json).unwrap();

    // With calls: none is made, each skip says why.
    let mut calling = spent.clone();
    calling.calls = CallPolicy::All;
    let report = toolshape_check::check(&target(&[]), &calling).await;
    let skipped: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == Rule::CallSkipped)
        .collect();
    assert_eq!(skipped.len(), report.tools.len(), "{}", report.to_json());
    for finding in skipped {
        assert!(
            finding
                .message
                .contains("the check's compile budget was spent"),
            "{}",
            finding.message
        );
    }

    // With the default budget, nothing is left unchecked.
    let report = toolshape_check::check(
        &target(&[]),
        &options(ProtocolChoice::Auto, CallPolicy::None),
    )
    .await;
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.rule != Rule::ListCompileOverBudget),
        "{}",
        report.to_json()
    );
}

/// The listing's own defects, one server flag each, no calls.
#[tokio::test]
async fn listing_defects_are_found() {
    let none = || options(ProtocolChoice::Auto, CallPolicy::None);
    let with_base = |extra: &[(&'static str, &'static [&'static str])]| {
        let mut table = BASE_STATIC.to_vec();
        table.extend_from_slice(extra);
        expected(&table)
    };
    let report = toolshape_check::check(
        &target(&["--duplicate", "--no-tools-capability", "--unnamed"]),
        &none(),
    )
    .await;
    assert_eq!(
        found(&report),
        with_base(&[
            (
                "(server)",
                &["tools-capability-missing", "result-server-unnamed"]
            ),
            ("ok", &["tool-duplicate-name"]),
        ]),
        "{}",
        report.to_json()
    );

    // A tool too deep to read is its own finding, the listing's other tools
    // checked; names outside the guidance are warnings, and the one with an
    // escape sequence reaches the text report without it.
    let report = toolshape_check::check(&target(&["--foreign-names"]), &none()).await;
    let escaping = "esc\u{1b}[31mred";
    assert_eq!(
        found(&report),
        with_base(&[
            ("too_deep", &["response-over-bounds"]),
            ("github/create_issue", &["tool-name-invalid"]),
            ("ns:tool", &["tool-name-invalid"]),
            ("get weather", &["tool-name-invalid"]),
            ("café", &["tool-name-invalid"]),
            (escaping, &["tool-name-invalid"]),
        ]),
        "{}",
        report.to_json()
    );
    for colour in [false, true] {
        let text = toolshape_check::to_text(&report, colour);
        assert!(!text.contains(escaping), "{text}");
        assert!(text.contains("esc\u{FFFD}[31mred"), "{text}");
    }

    let report = toolshape_check::check(&target(&["--cursor-loop"]), &none()).await;
    assert_eq!(
        found(&report),
        // Only the first page's tools are known: none of the base hazards.
        expected(&[("(server)", &["list-cursor-repeated"])]),
        "{}",
        report.to_json()
    );

    // Pages of new tools without end: stopped at the client's bound of
    // 10,000 tools, and reported as a listing that does not end.
    let report = toolshape_check::check(
        &target(&["--endless", "10", "--page-size", "1000"]),
        &none(),
    )
    .await;
    let endless: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule.id() == "list-endless")
        .map(|f| f.message.as_str())
        .collect();
    assert!(
        !endless.is_empty()
            && endless
                .iter()
                .all(|m| m.ends_with("it went past 10000 items")),
        "{}",
        report.to_json()
    );

    // The same, slowly: the whole check's time limit cuts the listing.
    let mut limited = none();
    limited.max_time = Duration::from_secs(2);
    let limited = &limited;
    let within_limit = move |target: Target| async move {
        let started = std::time::Instant::now();
        let report = toolshape_check::check(&target, limited).await;
        let took = started.elapsed();
        assert!(took < Duration::from_secs(20), "--max-time 2 took {took:?}");
        report
    };
    let report = within_limit(target(&[
        "--endless",
        "10",
        "--page-size",
        "1",
        "--slow-pages",
        "200",
    ]))
    .await;
    let has = |report: &Report, rule: &str, words: &str| {
        report
            .findings
            .iter()
            .any(|f| f.rule.id() == rule && f.message.contains(words))
    };
    assert!(
        has(&report, "check-incomplete", "--max-time"),
        "{}",
        report.to_json()
    );
    // A server that never finishes its handshake is unreachable, not checked.
    let silent = Target::stdio(&["sleep".to_owned(), "100".to_owned()]).unwrap();
    let report = within_limit(silent).await;
    assert!(
        has(&report, "server-unreachable", ""),
        "{}",
        report.to_json()
    );

    // A server that dies in a call and, started again, lists slowly: the
    // restart's listing is cut by the time limit too (it ran about 40 s).
    let starts = tempfile::NamedTempFile::new().unwrap();
    let starts = starts.path().display().to_string();
    let mut restarting = options(ProtocolChoice::Auto, CallPolicy::All);
    restarting.max_time = Duration::from_secs(8);
    restarting.max_valid_calls = 1;
    let started = std::time::Instant::now();
    let report = toolshape_check::check(
        &target(&[
            "--check-defects",
            "--page-size",
            "1",
            "--slow-restarts",
            &starts,
        ]),
        &restarting,
    )
    .await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(25), "--max-time 8 took {took:?}");
    assert!(has(&report, "check-incomplete", ""), "{}", report.to_json());

    let counter = tempfile::NamedTempFile::new().unwrap();
    let path = counter.path().display().to_string();
    let report = toolshape_check::check(&target(&["--unstable", &path]), &none()).await;
    assert_eq!(
        found(&report),
        with_base(&[("(server)", &["list-unstable"])]),
        "{}",
        report.to_json()
    );
}

/// Arguments given for a tool the server does not list are said to be
/// unused, not silently ignored.
#[tokio::test]
async fn arguments_for_an_unlisted_tool_are_a_note() {
    let mut given = options(ProtocolChoice::Auto, CallPolicy::None);
    given
        .arguments
        .insert("no_such_tool".to_owned(), serde_json::Map::new());
    given
        .arguments
        .insert("ok".to_owned(), serde_json::Map::new());
    let report = toolshape_check::check(&target(&[]), &given).await;
    let unused: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| f.rule == Rule::CallSkipped && f.message.contains("(--args)"))
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(unused.len(), 1, "{unused:?}");
    assert!(unused[0].contains("\"no_such_tool\""), "{unused:?}");
}
