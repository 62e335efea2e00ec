//! Protocol versions, negotiation and the per-request `_meta` fields.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use toolshape_protocol::meta::keys;
use toolshape_protocol::version::{
    check_request_version, highest_common_version, negotiate_initialize_version,
};
use toolshape_protocol::{
    Incoming, LoggingLevel, Meta, MetaError, ProtocolVersion, RequestId, RequestMeta, classify,
    error_code,
};

use ProtocolVersion::{V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28};

#[test]
fn versions_parse_print_and_order() {
    for version in ProtocolVersion::ALL {
        assert_eq!(ProtocolVersion::parse(version.as_str()), Some(version));
        assert_eq!(
            version.to_string().parse::<ProtocolVersion>().unwrap(),
            version
        );
        assert_eq!(
            serde_json::to_value(version).unwrap(),
            json!(version.as_str())
        );
        assert_eq!(
            serde_json::from_value::<ProtocolVersion>(json!(version.as_str())).unwrap(),
            version
        );
    }
    assert!(
        ProtocolVersion::ALL
            .windows(2)
            .all(|pair| pair[0] < pair[1])
    );
    assert!(
        ProtocolVersion::ALL
            .windows(2)
            .all(|pair| pair[0].as_str() < pair[1].as_str())
    );
    assert_eq!(ProtocolVersion::latest(), V2026_07_28);
    assert_eq!(
        ProtocolVersion::ALL.iter().max(),
        Some(&ProtocolVersion::latest())
    );
    assert_eq!(ProtocolVersion::parse("2025-06-19"), None);
    let error = "1900-01-01".parse::<ProtocolVersion>().unwrap_err();
    assert!(error.to_string().contains("1900-01-01"));
    assert!(serde_json::from_value::<ProtocolVersion>(json!("draft")).is_err());
}

#[test]
fn feature_predicates_follow_the_changelogs() {
    let with = |predicate: fn(ProtocolVersion) -> bool| -> Vec<ProtocolVersion> {
        ProtocolVersion::ALL
            .into_iter()
            .filter(|v| predicate(*v))
            .collect()
    };
    assert_eq!(
        with(ProtocolVersion::supports_structured_output),
        [V2025_06_18, V2025_11_25, V2026_07_28]
    );
    assert_eq!(with(ProtocolVersion::is_stateless), [V2026_07_28]);
    assert_eq!(
        with(ProtocolVersion::uses_initialize_handshake),
        [V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25]
    );
    assert_eq!(
        with(ProtocolVersion::allows_any_structured_content),
        [V2026_07_28]
    );
    assert_eq!(
        with(ProtocolVersion::has_tool_execution_field),
        [V2025_11_25]
    );
    assert_eq!(
        with(ProtocolVersion::has_tool_annotations),
        [V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28]
    );
    assert_eq!(with(ProtocolVersion::has_icons), [V2025_11_25, V2026_07_28]);
    assert_eq!(
        with(ProtocolVersion::has_audio_content),
        [V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28]
    );
    assert_eq!(
        with(ProtocolVersion::has_resource_links),
        [V2025_06_18, V2025_11_25, V2026_07_28]
    );
    for (method, versions) in [
        (
            "ping",
            vec![V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25],
        ),
        (
            "logging/setLevel",
            vec![V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25],
        ),
        ("subscriptions/listen", vec![V2026_07_28]),
        ("server/discover", ProtocolVersion::ALL.to_vec()),
        ("tools/call", ProtocolVersion::ALL.to_vec()),
    ] {
        let having: Vec<ProtocolVersion> = ProtocolVersion::ALL
            .into_iter()
            .filter(|version| version.has_request(method))
            .collect();
        assert_eq!(having, versions, "{method}");
    }
    assert_eq!(with(ProtocolVersion::allows_batches), [V2025_03_26]);
    assert_eq!(with(ProtocolVersion::has_result_type), [V2026_07_28]);
    assert_eq!(with(ProtocolVersion::has_server_discover), [V2026_07_28]);
    assert_eq!(
        with(ProtocolVersion::has_ping),
        [V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25]
    );
}

#[test]
fn initialize_answers_with_the_requested_version_when_supported() {
    let server = [V2025_03_26, V2025_06_18, V2025_11_25, V2026_07_28];
    assert_eq!(
        negotiate_initialize_version("2025-06-18", &server),
        Ok(V2025_06_18)
    );
    assert_eq!(
        negotiate_initialize_version("2025-03-26", &server),
        Ok(V2025_03_26)
    );
    assert_eq!(
        negotiate_initialize_version("2025-11-25", &server),
        Ok(V2025_11_25)
    );
}

#[test]
fn initialize_otherwise_answers_with_the_latest_handshake_version() {
    let server = [V2025_06_18, V2025_11_25, V2026_07_28];
    // Unknown, unsupported-older and newer-than-known requests.
    assert_eq!(
        negotiate_initialize_version("2099-01-01", &server),
        Ok(V2025_11_25)
    );
    assert_eq!(
        negotiate_initialize_version("2024-11-05", &server),
        Ok(V2025_11_25)
    );
    assert_eq!(negotiate_initialize_version("", &server), Ok(V2025_11_25));
    // 2026-07-28 has no initialize handshake, so it is never the answer.
    assert_eq!(
        negotiate_initialize_version("2026-07-28", &server),
        Ok(V2025_11_25)
    );
    // Order of the server's list does not matter.
    assert_eq!(
        negotiate_initialize_version("x", &[V2025_11_25, V2025_06_18]),
        Ok(V2025_11_25)
    );
    assert_eq!(
        negotiate_initialize_version("2025-11-25", &[V2025_06_18]),
        Ok(V2025_06_18)
    );
}

#[test]
fn a_modern_only_server_rejects_initialize_naming_its_versions() {
    let error = negotiate_initialize_version("2025-06-18", &[V2026_07_28]).unwrap_err();
    assert_eq!(error.requested, "2025-06-18");
    let object = error.to_error_object();
    assert_eq!(object.code, error_code::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(
        object.data,
        Some(json!({"supported": ["2026-07-28"], "requested": "2025-06-18"}))
    );
    assert!(negotiate_initialize_version("2025-06-18", &[]).is_err());
}

#[test]
fn per_request_versions_must_match_exactly() {
    let server = [V2025_11_25, V2026_07_28];
    assert_eq!(
        check_request_version("2026-07-28", &server),
        Ok(V2026_07_28)
    );
    let error = check_request_version("1900-01-01", &server).unwrap_err();
    assert!(error.to_string().contains("1900-01-01"));
    // Same shape as the specification's UnsupportedProtocolVersionError example.
    let expected = json!({
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}
    });
    assert_eq!(
        serde_json::to_value(error.to_error_object()).unwrap(),
        expected
    );
}

#[test]
fn clients_pick_the_highest_common_version() {
    let server = ["2026-07-28", "2025-11-25", "2030-01-01"];
    assert_eq!(
        highest_common_version(&server, &ProtocolVersion::ALL),
        Some(V2026_07_28)
    );
    assert_eq!(
        highest_common_version(&server, &[V2025_06_18, V2025_11_25]),
        Some(V2025_11_25)
    );
    assert_eq!(highest_common_version(&server, &[V2025_06_18]), None);
    let empty: [&str; 0] = [];
    assert_eq!(highest_common_version(&empty, &ProtocolVersion::ALL), None);
}

fn modern_request(meta: &Value) -> toolshape_protocol::Request {
    let line = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "c", "_meta": meta}});
    match classify(line.to_string().as_bytes()) {
        Incoming::Request(request) => request,
        other => panic!("{other:?}"),
    }
}

#[test]
fn request_meta_reads_the_protocol_fields() {
    let request = modern_request(&json!({
        keys::PROTOCOL_VERSION: "2026-07-28",
        keys::CLIENT_CAPABILITIES: {"elicitation": {}},
        keys::CLIENT_INFO: {"name": "c", "version": "1"},
        keys::LOG_LEVEL: "warning",
        keys::PROGRESS_TOKEN: 17,
        "com.example/other": true,
    }));
    let meta = request.request_meta().unwrap();
    assert_eq!(meta.known_protocol_version(), Some(V2026_07_28));
    assert_eq!(meta.log_level, Some(LoggingLevel::Warning));
    assert_eq!(meta.progress_token, Some(RequestId::Number(17)));
    assert_eq!(meta.client_info.as_ref().unwrap().name, "c");
    let modern = meta.require_modern().unwrap();
    assert_eq!(modern.protocol_version, "2026-07-28");
    assert!(modern.client_capabilities.supports_elicitation());
}

#[test]
fn missing_or_malformed_meta_is_invalid_params() {
    let no_caps = modern_request(&json!({keys::PROTOCOL_VERSION: "2026-07-28"}))
        .request_meta()
        .unwrap();
    let error = no_caps.require_modern().unwrap_err();
    assert!(matches!(error, MetaError::MissingClientCapabilities));
    assert_eq!(error.to_error_object().code, error_code::INVALID_PARAMS);

    let no_version = modern_request(&json!({keys::CLIENT_CAPABILITIES: {}}))
        .request_meta()
        .unwrap();
    assert!(matches!(
        no_version.require_modern(),
        Err(MetaError::MissingProtocolVersion)
    ));

    let malformed = modern_request(&json!({keys::PROTOCOL_VERSION: 20260728}))
        .request_meta()
        .unwrap_err();
    assert!(matches!(malformed, MetaError::Malformed(_)));
    assert_eq!(malformed.to_error_object().code, error_code::INVALID_PARAMS);

    // Legacy requests simply have no protocol fields.
    let legacy = RequestMeta::from_params(None).unwrap();
    assert_eq!(legacy, RequestMeta::default());
    assert!(legacy.require_modern().is_err());
}

#[test]
fn request_meta_reads_from_a_parsed_map_too() {
    let meta: Meta = serde_json::from_value(json!({
        keys::PROTOCOL_VERSION: "2025-11-25",
        keys::CLIENT_CAPABILITIES: {"roots": {}},
    }))
    .unwrap();
    let read = RequestMeta::from_meta(&meta).unwrap();
    assert_eq!(read.known_protocol_version(), Some(V2025_11_25));
    assert!(read.client_capabilities.unwrap().roots.is_some());
}

#[test]
fn capabilities_are_what_the_revision_has() {
    use toolshape_protocol::ClientCapabilities;
    let declared: ClientCapabilities = serde_json::from_value(serde_json::json!({
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
    }))
    .unwrap();
    let old = declared.clone().for_revision(ProtocolVersion::V2025_03_26);
    assert!(!old.supports_elicitation() && old.supports_sampling());
    let forms = declared.clone().for_revision(ProtocolVersion::V2025_06_18);
    assert!(forms.supports_elicitation() && !forms.supports_url_elicitation());
    let all = declared.for_revision(ProtocolVersion::V2025_11_25);
    assert!(all.supports_url_elicitation());
}
