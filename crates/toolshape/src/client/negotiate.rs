//! Agreeing on a revision: 2026-07-28 `server/discover` first, falling back to
//! the `initialize` handshake; or one pinned revision.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolshape_protocol::lifecycle::InitializeParams;
use toolshape_protocol::meta::keys;
use toolshape_protocol::{
    ClientCapabilities, DiscoverResult, Implementation, InitializeResult, Meta, ProtocolVersion,
    ServerCapabilities, methods,
};

use super::error::{ClientError, ClientErrorKind};
use super::outgoing::Route;
use super::peer::Peer;

/// How the client picks the revision it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Negotiation {
    /// Probe with 2026-07-28 `server/discover`; fall back to `initialize` when
    /// the server answers with anything but a modern result or error.
    #[default]
    Auto,
    /// Ask for this revision only (no probe). 2026-07-28 is spoken as is; a
    /// handshake revision is asked for in `initialize`, and a server that
    /// answers with another handshake revision it prefers (as the
    /// handshake allows) is spoken to in that one when this client speaks
    /// it: [`Negotiated::version`] says which. Compare it to refuse.
    Pinned(ProtocolVersion),
}

/// What was agreed with the server.
#[derive(Debug, Clone)]
pub struct Negotiated {
    /// The revision in use.
    pub version: ProtocolVersion,
    /// Who the server says it is.
    pub server_info: Option<Implementation>,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Guidance the server gives the model.
    pub instructions: Option<String>,
}

/// The `_meta` every 2026-07-28 request carries.
pub(crate) fn modern_meta(client: &Implementation, capabilities: &ClientCapabilities) -> Meta {
    let mut meta = Meta::new();
    meta.insert(
        keys::PROTOCOL_VERSION.into(),
        json!(ProtocolVersion::V2026_07_28.as_str()),
    );
    meta.insert(
        keys::CLIENT_CAPABILITIES.into(),
        serde_json::to_value(capabilities).unwrap_or_else(|_| json!({})),
    );
    if let Ok(info) = serde_json::to_value(client) {
        meta.insert(keys::CLIENT_INFO.into(), info);
    }
    meta
}

pub(crate) async fn negotiate(
    peer: &Arc<Peer>,
    negotiation: Negotiation,
    client: &Implementation,
    timeout: Duration,
    probe_timeout: Duration,
) -> Result<Negotiated, ClientError> {
    match negotiation {
        Negotiation::Pinned(version) if version.is_stateless() => {
            match discover(peer, client, timeout).await {
                Err(error) if offers_modern(&error) => discover(peer, client, timeout).await,
                outcome => outcome,
            }
        }
        Negotiation::Pinned(version) => initialize(peer, client, version, timeout).await,
        Negotiation::Auto => match discover(peer, client, probe_timeout).await {
            Ok(negotiated) => Ok(negotiated),
            Err(error) => {
                let legacy = match error.kind() {
                    ClientErrorKind::Protocol(object) if object.is_modern_mcp_error() => {
                        // A modern server without 2026-07-28: use its best handshake revision.
                        let supported = object
                            .unsupported_protocol_version_data()
                            .map(|d| d.supported);
                        let best = supported.as_deref().and_then(|s| {
                            toolshape_protocol::version::highest_common_version(
                                s,
                                &ProtocolVersion::ALL,
                            )
                        });
                        match best {
                            Some(version) if version.uses_initialize_handshake() => version,
                            // It does list 2026-07-28: try once more.
                            Some(_) => return discover(peer, client, timeout).await,
                            None => return Err(error),
                        }
                    }
                    // A `4xx` with no modern error in its body (empty, a web
                    // server's page, another JSON): an older server, the
                    // spec's fallback over HTTP.
                    ClientErrorKind::Transport(refusal) if refusal.is_era_refusal() => {
                        ProtocolVersion::V2025_11_25
                    }
                    ClientErrorKind::Transport(_) => return Err(error),
                    _ => ProtocolVersion::V2025_11_25,
                };
                tracing::debug!(%error, fallback = %legacy, "server/discover failed; falling back to initialize");
                initialize(peer, client, legacy, timeout).await
            }
        },
    }
}

/// Whether `error` is an `UnsupportedProtocolVersionError` whose supported
/// list includes 2026-07-28 (worth one retry: the spec has the client retry
/// with a version from that list).
fn offers_modern(error: &ClientError) -> bool {
    match error.kind() {
        ClientErrorKind::Protocol(object) => object
            .unsupported_protocol_version_data()
            .is_some_and(|data| {
                data.supported
                    .iter()
                    .any(|v| v == ProtocolVersion::V2026_07_28.as_str())
            }),
        _ => false,
    }
}

async fn discover(
    peer: &Arc<Peer>,
    client: &Implementation,
    timeout: Duration,
) -> Result<Negotiated, ClientError> {
    let params = json!({ "_meta": modern_meta(client, &peer.handlers.capabilities()) });
    let raw = peer
        .request(
            peer.next_id(),
            methods::SERVER_DISCOVER,
            &params,
            Route::under(Some(ProtocolVersion::V2026_07_28)),
            timeout,
            true,
        )
        .await?;
    let result: DiscoverResult = raw.parse(methods::SERVER_DISCOVER)?;
    let version = result
        .select_version(&[ProtocolVersion::V2026_07_28])
        .ok_or_else(|| {
            ClientError::invalid("the server's supportedVersions do not include 2026-07-28")
        })?;
    let server_info = result
        .meta
        .as_ref()
        .and_then(|meta| meta.get(keys::SERVER_INFO))
        .and_then(|info| serde_json::from_value(info.clone()).ok());
    Ok(Negotiated {
        version,
        server_info,
        capabilities: result.capabilities,
        instructions: result.instructions,
    })
}

async fn initialize(
    peer: &Arc<Peer>,
    client: &Implementation,
    version: ProtocolVersion,
    timeout: Duration,
) -> Result<Negotiated, ClientError> {
    let params = InitializeParams::new(
        version.as_str(),
        peer.handlers.handshake_capabilities(),
        client.clone(),
    );
    let raw = peer
        .request(
            peer.next_id(),
            methods::INITIALIZE,
            &params,
            Route::default(),
            timeout,
            false,
        )
        .await?;
    let result: InitializeResult = raw.parse(methods::INITIALIZE)?;
    let agreed = ProtocolVersion::parse(&result.protocol_version)
        .filter(|v| v.uses_initialize_handshake())
        .ok_or_else(|| {
            ClientError::invalid(format!(
                "the server chose protocol version {:?}, which this client does not speak",
                toolshape_protocol::text::excerpt(&result.protocol_version, 40)
            ))
        })?;
    peer.notify(
        methods::INITIALIZED,
        &Value::Object(Default::default()),
        Route::under(Some(agreed)),
    )?;
    Ok(Negotiated {
        version: agreed,
        server_info: Some(result.server_info),
        capabilities: result.capabilities,
        instructions: result.instructions,
    })
}
