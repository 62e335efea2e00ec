//! Each revision's normative `schema.json`, embedded (see `data/mcp/SOURCE`),
//! and validation of a message or result against one of its definitions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::{Value, json};
use toolshape_protocol::ProtocolVersion;
use toolshape_schema::{CompiledSchema, SchemaEngine, Trust, Violation};

/// The definitions `check` validates against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Definition {
    /// A successful JSON-RPC response.
    ResultResponse,
    /// A JSON-RPC error response.
    ErrorResponse,
    /// A JSON-RPC notification.
    Notification,
    /// A JSON-RPC request.
    Request,
    /// Any notification a server may send.
    ServerNotification,
    /// Any request a server may send.
    ServerRequest,
    /// The `initialize` result.
    InitializeResult,
    /// The `server/discover` result (2026-07-28).
    DiscoverResult,
    /// The `tools/list` result.
    ListToolsResult,
    /// The `tools/call` result.
    CallToolResult,
    /// An `input_required` result (2026-07-28).
    InputRequiredResult,
}

/// The embedded `schema.json` of `version`.
fn document_text(version: ProtocolVersion) -> Option<&'static str> {
    match version {
        ProtocolVersion::V2024_11_05 => Some(include_str!("../data/mcp/2024-11-05/schema.json")),
        ProtocolVersion::V2025_03_26 => Some(include_str!("../data/mcp/2025-03-26/schema.json")),
        ProtocolVersion::V2025_06_18 => Some(include_str!("../data/mcp/2025-06-18/schema.json")),
        ProtocolVersion::V2025_11_25 => Some(include_str!("../data/mcp/2025-11-25/schema.json")),
        ProtocolVersion::V2026_07_28 => Some(include_str!("../data/mcp/2026-07-28/schema.json")),
    }
}

/// Whether messages of `version` can be validated (a schema.json is carried for it).
pub(crate) fn has_schema(version: ProtocolVersion) -> bool {
    document_text(version).is_some()
}

/// The name of `definition` in `version`'s schema.json, if it has one.
fn definition_name(version: ProtocolVersion, definition: Definition) -> Option<&'static str> {
    let modern_names = version >= ProtocolVersion::V2025_11_25;
    let stateless = version.is_stateless();
    Some(match definition {
        Definition::ResultResponse if modern_names => "JSONRPCResultResponse",
        Definition::ResultResponse => "JSONRPCResponse",
        Definition::ErrorResponse if modern_names => "JSONRPCErrorResponse",
        Definition::ErrorResponse => "JSONRPCError",
        Definition::Notification => "JSONRPCNotification",
        Definition::Request => "JSONRPCRequest",
        Definition::ServerNotification => "ServerNotification",
        Definition::ServerRequest if stateless => return None,
        Definition::ServerRequest => "ServerRequest",
        Definition::InitializeResult if stateless => return None,
        Definition::InitializeResult => "InitializeResult",
        Definition::DiscoverResult if stateless => "DiscoverResult",
        Definition::DiscoverResult => return None,
        Definition::ListToolsResult => "ListToolsResult",
        Definition::CallToolResult => "CallToolResult",
        Definition::InputRequiredResult if stateless => "InputRequiredResult",
        Definition::InputRequiredResult => return None,
    })
}

type Compiled = Option<Arc<CompiledSchema>>;

/// The parsed documents and the compiled definitions, shared by every check in the process.
struct Spec {
    engine: SchemaEngine,
    documents: Mutex<HashMap<ProtocolVersion, Option<Arc<Value>>>>,
    compiled: Mutex<HashMap<(ProtocolVersion, Definition), Compiled>>,
}

fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(|| Spec {
        // The spec's own schemas: trusted (validation inline, no time budget).
        engine: SchemaEngine::builder().trust(Trust::Trusted).build(),
        documents: Mutex::default(),
        compiled: Mutex::default(),
    })
}

impl Spec {
    fn document(&self, version: ProtocolVersion) -> Option<Arc<Value>> {
        let mut documents = self
            .documents
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        documents
            .entry(version)
            .or_insert_with(|| {
                let text = document_text(version)?;
                match serde_json::from_str(text) {
                    Ok(value) => Some(Arc::new(value)),
                    Err(error) => {
                        tracing::error!(%version, %error, "the embedded schema.json is not JSON");
                        None
                    }
                }
            })
            .clone()
    }

    fn compiled(&self, version: ProtocolVersion, definition: Definition) -> Compiled {
        let key = (version, definition);
        if let Some(compiled) = self
            .compiled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return compiled.clone();
        }
        let compiled = self.compile(version, definition);
        self.compiled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, compiled.clone());
        compiled
    }

    /// Compiles the whole document with its root pointing at one definition.
    fn compile(&self, version: ProtocolVersion, definition: Definition) -> Compiled {
        let name = definition_name(version, definition)?;
        let document = self.document(version)?;
        let container = if document.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        document.get(container)?.get(name)?;
        let schema = json!({
            "$schema": document.get("$schema"),
            container: document.get(container),
            "$ref": format!("#/{container}/{name}"),
        });
        match self.engine.compile(&schema) {
            Ok(compiled) => Some(compiled),
            Err(error) => {
                tracing::error!(%version, name, %error, "an embedded spec definition does not compile");
                None
            }
        }
    }
}

/// Validates `instance` against `definition` of `version`'s schema.json:
/// `None` when that revision has no such definition (or no schema is
/// carried for it), else the violations (empty when valid).
pub(crate) fn violations(
    version: ProtocolVersion,
    definition: Definition,
    instance: &Value,
) -> Option<Vec<Violation>> {
    let compiled = spec().compiled(version, definition)?;
    Some(match compiled.validate(instance) {
        Ok(()) => Vec::new(),
        Err(error) => {
            let listed = error.violations().to_vec();
            if listed.is_empty() {
                // Too deep or over budget: one violation at the root saying so.
                vec![Violation::new("", "bounds", error.to_string())]
            } else {
                listed
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_definition_used_compiles_where_it_exists() {
        use Definition::*;
        for version in ProtocolVersion::ALL {
            for definition in [
                ResultResponse,
                ErrorResponse,
                Notification,
                Request,
                ServerNotification,
                ServerRequest,
                InitializeResult,
                DiscoverResult,
                ListToolsResult,
                CallToolResult,
                InputRequiredResult,
            ] {
                let expected =
                    has_schema(version) && definition_name(version, definition).is_some();
                let compiled = spec().compiled(version, definition);
                assert_eq!(compiled.is_some(), expected, "{version} {definition:?}");
            }
        }
    }

    /// Each revision's own list of content: audio is a 2024-11-05 peer's
    /// violation, not a 2025-03-26 one's.
    #[test]
    fn every_revision_is_validated_against_its_own_schema() {
        for version in ProtocolVersion::ALL {
            assert!(has_schema(version), "{version}");
        }
        let audio =
            json!({"content": [{"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}]});
        let found = violations(
            ProtocolVersion::V2024_11_05,
            Definition::CallToolResult,
            &audio,
        );
        assert!(
            found.is_some_and(|found| found.iter().any(|v| v.instance_path == "/content/0")),
            "2024-11-05 took audio"
        );
        assert_eq!(
            violations(
                ProtocolVersion::V2025_03_26,
                Definition::CallToolResult,
                &audio
            ),
            Some(vec![])
        );
    }

    #[test]
    fn validation_is_not_vacuous() {
        let version = ProtocolVersion::V2025_06_18;
        let good =
            json!({"content": [{"type": "text", "text": "hi"}], "structuredContent": {"a": 1}});
        assert_eq!(
            violations(version, Definition::CallToolResult, &good),
            Some(vec![])
        );
        let bad = json!({"content": "hi", "structuredContent": [1]});
        let found = violations(version, Definition::CallToolResult, &bad).unwrap_or_default();
        assert!(
            found.iter().any(|v| v.instance_path == "/content"),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|v| v.instance_path == "/structuredContent"),
            "{found:?}"
        );
    }

    /// The embedded copies are the repository's test data, byte for byte.
    #[test]
    fn embedded_schemas_equal_the_test_data() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/mcp");
        for version in ProtocolVersion::ALL {
            let Some(embedded) = document_text(version) else {
                continue;
            };
            let path = root.join(version.as_str()).join("schema.json");
            let carried = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            assert!(
                carried == embedded,
                "{} differs from the embedded copy",
                path.display()
            );
        }
    }
}
