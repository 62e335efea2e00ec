//! Every rule `check` applies: its id, its severity and a short fix, in one table.

use std::fmt;

use serde::{Serialize, Serializer};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A note: what was skipped or not applicable. Never fails a check.
    Info,
    /// A SHOULD of the spec, a portability hazard, or a bound toolshape's
    /// client holds: fails only `--strict`.
    Warning,
    /// A MUST of the spec is broken.
    Error,
}

impl Severity {
    /// Its spelling in reports: `info`, `warning`, `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Severity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

macro_rules! rules {
    ($( $(#[$doc:meta])* $variant:ident = $id:literal, $severity:ident, $fix:literal; )*) => {
        /// A rule of `check`. [`Rule::ALL`] lists them; `docs/check.md` explains each.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Rule {
            $( $(#[$doc])* $variant, )*
        }

        impl Rule {
            /// Every rule, in table order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),*];

            /// Its stable id, e.g. `output-invalid`.
            pub fn id(self) -> &'static str {
                match self { $(Rule::$variant => $id,)* }
            }

            /// How much breaking it matters.
            pub fn severity(self) -> Severity {
                match self { $(Rule::$variant => Severity::$severity,)* }
            }

            /// A short fix, addressed to the server's author.
            pub fn fix(self) -> &'static str {
                match self { $(Rule::$variant => $fix,)* }
            }

            /// The rule with this id.
            pub fn from_id(id: &str) -> Option<Rule> {
                Rule::ALL.iter().copied().find(|rule| rule.id() == id)
            }
        }
    };
}

rules! {
    // --- Reaching the server ---
    /// No revision could be spoken: the server could not be started or reached, or its handshake failed.
    ServerUnreachable = "server-unreachable", Error,
        "make the server start and answer `initialize` (or 2026-07-28 `server/discover`)";
    /// A revision `--protocol` asked for is not supported (the server offered another, or refused).
    RevisionUnsupported = "revision-unsupported", Info,
        "nothing to fix unless you mean to support this revision";
    /// The server exited or closed the connection while it was being checked.
    ServerExited = "server-exited", Error,
        "the server must not exit while its client is connected; see its stderr";
    /// A request got no answer within the time limit.
    RequestTimeout = "request-timeout", Error,
        "answer every request (a slow tool can report progress; a failing one isError)";
    /// A message is not valid against the revision's normative schema.json.
    MessageInvalid = "message-invalid", Error,
        "send messages that match the revision's schema.json";
    /// A line or body that is not a JSON message at all.
    MessageNotJson = "message-not-json", Error,
        "write only JSON-RPC messages to stdout (logs go to stderr)";
    /// A response with both `result` and `error`, or neither (JSON-RPC 2.0: exactly one).
    ResponseMalformed = "response-malformed", Error,
        "answer every request with exactly one of result and error";
    /// A response whose id answers no request the client sent.
    ResponseUnknownId = "response-unknown-id", Error,
        "answer each request once, with the id it came with";
    /// A response larger or deeper than the check's client accepts (16 MiB,
    /// `Options::max_message_bytes`; 127 levels).
    ResponseOverBounds = "response-over-bounds", Warning,
        "keep results small and shallow, or page them";
    /// More than 100,000 messages (or 64 MiB) arrived while one request was answered: the rest were not kept, so the answer among them may not have been checked.
    MessageFlood = "message-flood", Error,
        "send what the request asks for and a bounded number of notifications; logs go to stderr";

    // --- Listing ---
    /// Tools are listed but the `tools` capability is not declared.
    ToolsCapabilityMissing = "tools-capability-missing", Error,
        "declare `capabilities.tools` in the initialize (or server/discover) result";
    /// `tools/list` failed.
    ListFailed = "list-failed", Error,
        "answer `tools/list` with a ListToolsResult";
    /// A 2026-07-28 `tools/list` result does not name the server in its `_meta` (`io.modelcontextprotocol/serverInfo`, which that revision says every result should carry).
    ResultServerUnnamed = "result-server-unnamed", Warning,
        "put `io.modelcontextprotocol/serverInfo` (name and version) in every 2026-07-28 result's `_meta`";
    /// Pagination returned a cursor it had returned before (it would loop forever).
    ListCursorRepeated = "list-cursor-repeated", Error,
        "every nextCursor must lead further; the last page has none";
    /// Pagination did not end within the client's bounds (pages, tools, bytes).
    ListEndless = "list-endless", Error,
        "end the listing: the last page has no nextCursor";
    /// Two listings of the same server differ (order or definitions).
    ListUnstable = "list-unstable", Warning,
        "list the same tools in the same order on every connection (deterministic order)";
    /// The listing's schemas took longer to compile together than the check's
    /// compile budget: the rest were not checked (toolshape's proxy leaves such tools out).
    ListCompileOverBudget = "list-compile-over-budget", Warning,
        "fewer or simpler schemas: fewer patterns and references to meta-schemas, shared `$defs`";
    /// Two tools share a name.
    ToolDuplicateName = "tool-duplicate-name", Warning,
        "give every tool its own name";
    /// A name outside the naming guidance (1-128 of A-Z a-z 0-9 _ - .), 2025-11-25 on.
    ToolNameInvalid = "tool-name-invalid", Warning,
        "use 1 to 128 characters from A-Z a-z 0-9 _ - .";
    /// `notifications/tools/list_changed` sent without `listChanged: true` declared.
    ListChangedUndeclared = "list-changed-undeclared", Warning,
        "declare `capabilities.tools.listChanged: true`, or do not send the notification";
    /// `listChanged` declared differently on different revisions.
    ListChangedInconsistent = "list-changed-inconsistent", Warning,
        "declare the same `tools.listChanged` on every revision";

    // --- Schemas ---
    /// `$schema` names a dialect neither toolshape nor most clients know.
    SchemaDialectUnknown = "schema-dialect-unknown", Warning,
        "omit `$schema` (2020-12) or name 2020-12, 2019-09 or draft-07";
    /// The schema is not valid in its dialect (meta-schema, references, keywords).
    SchemaInvalid = "schema-invalid", Error,
        "make the schema valid against its dialect's meta-schema";
    /// A `$ref` leaves the document: clients must not fetch it, so they cannot validate.
    SchemaRemoteRef = "schema-remote-ref", Warning,
        "inline the referenced schema under `$defs` and point at it with `#/$defs/...`";
    /// The schema is bigger, deeper or costlier than toolshape's client accepts.
    SchemaOverBounds = "schema-over-bounds", Warning,
        "simplify the schema: fewer nested anyOf/oneOf through $ref, linear-time patterns";
    /// `inputSchema` is not rooted at `type: "object"`.
    InputSchemaNotObject = "input-schema-not-object", Error,
        "root the inputSchema at `{\"type\": \"object\", ...}`";
    /// `outputSchema` is not rooted at `type: "object"` on a revision that requires it (2025-06-18, 2025-11-25).
    OutputSchemaNotObject = "output-schema-not-object", Error,
        "wrap non-object outputs as {\"type\":\"object\",\"properties\":{\"result\": ...},\"required\":[\"result\"]} for this revision";
    /// A `format` no standard defines (e.g. `int64`): most validators ignore it.
    SchemaFormatNonstandard = "schema-format-nonstandard", Warning,
        "drop the format, or express it with minimum/maximum or a pattern";
    /// A draft-07 tuple (`items` as an array) in a 2020-12 schema, where it is invalid.
    SchemaTupleItems = "schema-tuple-items", Error,
        "use `prefixItems` (2020-12), or declare `$schema` draft-07";
    /// Bare `items: false` (without `prefixItems`): several validators mishandle it.
    SchemaItemsFalse = "schema-items-false", Warning,
        "use `maxItems: 0`";
    /// More portability warnings in one schema than are listed (256 at most).
    SchemaLintCut = "schema-lint-cut", Info,
        "fix the listed warnings and check again to see the rest";
    /// `additionalProperties: false` on an output schema makes its legacy wrapping `{"result": ...}` invalid.
    SchemaWrapClosed = "schema-wrap-closed", Error,
        "declare `result` in the wrapped schema's properties, or drop `additionalProperties: false` at its root";
    /// The same tool's schemas differ between revisions beyond the legacy wrapping.
    SchemaDrift = "schema-drift", Warning,
        "serve the same schemas on every revision (non-object outputs wrapped for 2025-06-18 and 2025-11-25)";
    /// A tool is listed on one revision and not on another.
    ToolSetDrift = "tool-set-drift", Warning,
        "list the same tools on every revision you support";

    // --- Calls ---
    /// The tool was not called (the `--call` policy, or no valid arguments could be made).
    CallSkipped = "call-skipped", Info,
        "mark read-only tools `readOnlyHint: true`; give `examples` or `default`s in the inputSchema";
    /// The tool answered `isError: true` to generated, schema-valid arguments.
    CallToolError = "call-tool-error", Info,
        "nothing, if the generated arguments were meaningless for the tool";
    /// The tool answered a JSON-RPC error to arguments its inputSchema accepts.
    CallRejectedValid = "call-rejected-valid", Warning,
        "accept what the inputSchema accepts, or tighten the schema; report tool failures as isError";
    /// The server asked for input (2026-07-28 `input_required`), which check does not provide.
    CallInputRequired = "call-input-required", Info,
        "nothing to fix";
    /// The tool declares an `outputSchema` but returned no `structuredContent`.
    OutputMissingStructured = "output-missing-structured", Error,
        "return structuredContent matching the outputSchema in every successful result";
    /// `structuredContent` does not match the `outputSchema`.
    OutputInvalid = "output-invalid", Error,
        "return values that match the outputSchema, or correct the schema";
    /// `structuredContent` breaks only a `format` of its `outputSchema` (an
    /// annotation in 2020-12, which toolshape's client asserts).
    OutputFormat = "output-format", Warning,
        "return strings in the declared format, or drop the format";
    /// `structuredContent` is not an object on a revision that requires one (2025-06-18, 2025-11-25).
    OutputNotObject = "output-not-object", Error,
        "wrap non-object values as {\"result\": value} for this revision";
    /// `structuredContent` sent on a revision that has none (before 2025-06-18).
    OutputUnexpectedStructured = "output-unexpected-structured", Warning,
        "send the JSON as text only to peers of revisions before 2025-06-18";
    /// `structuredContent` without a text block carrying the same JSON.
    OutputTextMissing = "output-text-missing", Warning,
        "add a text block with the serialized structuredContent (backwards compatibility)";
    /// A text block parses as JSON but not as the same value as `structuredContent`.
    OutputTextMismatch = "output-text-mismatch", Warning,
        "serialize the structuredContent itself into the text block";
    /// The `outputSchema` is unusable, so results could not be validated.
    OutputUnvalidated = "output-unvalidated", Info,
        "fix the outputSchema's own findings";
    /// An `isError` result without a text block saying what went wrong.
    ErrorResultEmpty = "error-result-empty", Warning,
        "say what went wrong in a text block, so the model can correct itself";
    /// Arguments the inputSchema rejects were accepted as a success.
    InvalidArgsAccepted = "invalid-args-accepted", Error,
        "validate arguments against the inputSchema before running the tool";
    /// Invalid arguments answered with a JSON-RPC error other than -32602.
    InvalidArgsErrorCode = "invalid-args-error-code", Warning,
        "answer invalid arguments with isError and a message (SEP-1303), or -32602";
    /// The check stopped before it was done (its time limit, or too many reconnections).
    CheckIncomplete = "check-incomplete", Warning,
        "run again with a longer --max-time, or fix the findings that stopped it";

    // --- OTC (Open Tool Calling) ---
    /// `GET /health` does not answer 200.
    OtcHealth = "otc-health", Warning,
        "answer GET /health with 200 when ready (503 while not)";
    /// `GET /tools` does not answer 200 with JSON.
    OtcListStatus = "otc-list-status", Error,
        "answer GET /tools with 200 and {\"items\": [ToolDefinition]}";
    /// The tool listing or a ToolDefinition breaks the OTC spec.
    OtcListShape = "otc-list-shape", Error,
        "give every tool id (Toolkit.Tool@x.y.z), name, description, version and an input_schema";
    /// A valid call does not answer 200.
    OtcCallStatus = "otc-call-status", Error,
        "answer a valid call with 200 and {\"result\": CallToolResponse}";
    /// A CallToolResponse breaks the OTC spec.
    OtcResponseShape = "otc-response-shape", Error,
        "send call_id and success; value on success, error {message} on failure, never both";
    /// The response's `call_id` is not the one the request sent.
    OtcCallId = "otc-call-id", Warning,
        "echo the request's call_id (it is an idempotency key)";
    /// `value` does not match the tool's `output_schema`.
    OtcValueInvalid = "otc-value-invalid", Error,
        "return values that match the output_schema, or correct the schema";
    /// Input its `input_schema` rejects was not answered 422.
    OtcInvalidInputStatus = "otc-invalid-input-status", Error,
        "validate input before the call; answer 422 {message, parameter_errors}";
    /// An unknown tool, version or `$schema` was not answered 400.
    OtcRequestErrorStatus = "otc-request-error-status", Error,
        "answer unknown tools, versions and $schema values with 400 {message}";
    /// A 400 or 422 body without a `message`.
    OtcErrorBody = "otc-error-body", Error,
        "send {\"message\": ...} with every 400 and 422";
    /// A ToolDefinition's schema uses `$ref` or definitions, which OTC's schemas exclude.
    OtcSchemaRef = "otc-schema-ref", Warning,
        "inline what the references point at (a recursive schema cannot be: leave it)";
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_round_trip() {
        let mut ids: Vec<&str> = Rule::ALL.iter().map(|rule| rule.id()).collect();
        for rule in Rule::ALL {
            assert_eq!(Rule::from_id(rule.id()), Some(*rule));
            assert!(!rule.fix().is_empty());
            assert!(
                rule.id()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit())
            );
        }
        let count = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), count);
    }

    /// `docs/check.md` documents every rule.
    #[test]
    fn every_rule_is_documented() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/check.md");
        let docs = std::fs::read_to_string(&path).unwrap();
        for rule in Rule::ALL {
            let row = format!("| `{}` | {} |", rule.id(), rule.severity());
            assert!(
                docs.contains(&row),
                "{} lacks the row of {}",
                path.display(),
                rule.id()
            );
        }
    }
}
