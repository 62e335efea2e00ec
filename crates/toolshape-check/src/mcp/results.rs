//! What a `tools/call` answer says: structured content present, valid and of
//! the shape the revision allows, the text block equivalent to it, tool
//! errors well formed, invalid arguments refused.

use serde_json::{Map, Value};
use toolshape_protocol::ProtocolVersion;
use toolshape_schema::{ValidationErrorKind, mcp::WRAPPED_RESULT_KEY};

use crate::finding::{Document, Finding, Location, join};
use crate::rules::Rule;
use crate::schemas::Usable;

/// What one call was, for its findings.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    pub(crate) version: ProtocolVersion,
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a Map<String, Value>,
    /// The tool declares an `outputSchema`.
    pub(crate) declares_output: bool,
    /// ... and it is usable.
    pub(crate) output: Option<&'a Usable>,
    /// A schema of the tool was not compiled: the check's compile budget was spent.
    pub(crate) over_budget: bool,
}

/// How a call was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// A successful result.
    Succeeded,
    /// `isError: true`.
    ToolError,
    /// A JSON-RPC error.
    Rejected,
    /// An `input_required` result (2026-07-28).
    InputRequired,
}

impl Call<'_> {
    fn finding(&self, rule: Rule, document: Document, pointer: &str, message: String) -> Finding {
        Finding::new(rule, Location::new(document, pointer), message)
            .tool(self.tool)
            .revision(Some(self.version))
            .arguments(&Value::Object(self.arguments.clone()))
    }

    /// Judges the answer to a call with valid arguments.
    pub(crate) fn valid(&self, response: &Value, findings: &mut Vec<Finding>) -> Verdict {
        let Some(result) = response.get("result") else {
            if !is_error_object(response) {
                // A malformed error: the message's own finding says so.
                return Verdict::Rejected;
            }
            findings.push(self.finding(
                Rule::CallRejectedValid,
                Document::Message,
                "/error",
                format!(
                    "answered a JSON-RPC error to arguments its inputSchema accepts: {}",
                    error_text(response)
                ),
            ));
            return Verdict::Rejected;
        };
        // 2026-07-28: "A `resultType` of any value unrecognized by the
        // client MUST be considered invalid" (the schema types it a string).
        if let Some(Value::String(kind)) = result.get("resultType")
            && self.version.is_stateless()
            && kind != "complete"
            && kind != "input_required"
        {
            findings.push(self.finding(
                Rule::MessageInvalid,
                Document::Result,
                "/resultType",
                format!(
                    "resultType {:?} is not one this revision defines (\"complete\", \"input_required\"): a client must take the result as invalid",
                    toolshape_protocol::text::excerpt(kind, 40)
                ),
            ));
            return Verdict::Rejected;
        }
        if result.get("resultType") == Some(&Value::from("input_required")) {
            findings.push(self.finding(
                Rule::CallInputRequired,
                Document::Result,
                "/resultType",
                "the server asked for input, which check does not provide".into(),
            ));
            return Verdict::InputRequired;
        }
        if result.get("isError") == Some(&Value::Bool(true)) {
            findings.push(self.finding(
                Rule::CallToolError,
                Document::Result,
                "/isError",
                format!("isError: {}", excerpt_text(result)),
            ));
            self.error_message(result, findings);
            return Verdict::ToolError;
        }
        self.structured(result, findings);
        Verdict::Succeeded
    }

    /// Judges the answer to a call with invalid arguments.
    pub(crate) fn invalid(&self, response: &Value, findings: &mut Vec<Finding>) -> Verdict {
        let Some(result) = response.get("result") else {
            if !is_error_object(response) {
                return Verdict::Rejected;
            }
            let code = response
                .get("error")
                .and_then(|error| error.get("code"))
                .and_then(Value::as_i64);
            if code != Some(-32602) {
                findings.push(self.finding(
                    Rule::InvalidArgsErrorCode,
                    Document::Message,
                    "/error/code",
                    format!("invalid arguments answered with {}", error_text(response)),
                ));
            }
            return Verdict::Rejected;
        };
        if result.get("isError") == Some(&Value::Bool(true)) {
            self.error_message(result, findings);
            return Verdict::ToolError;
        }
        if result.get("resultType") == Some(&Value::from("input_required")) {
            return Verdict::InputRequired;
        }
        findings.push(self.finding(
            Rule::InvalidArgsAccepted,
            Document::Result,
            "",
            "arguments its inputSchema rejects were answered with a successful result".into(),
        ));
        Verdict::Succeeded
    }

    /// An `isError` result must say what went wrong.
    fn error_message(&self, result: &Value, findings: &mut Vec<Finding>) {
        let said = texts(result)
            .iter()
            .any(|(_, text)| !text.trim().is_empty());
        if !said {
            findings.push(self.finding(
                Rule::ErrorResultEmpty,
                Document::Result,
                "/content",
                "isError: true without a text block saying what went wrong".into(),
            ));
        }
    }

    /// The structured content: present, valid, of the revision's shape, with its text.
    fn structured(&self, result: &Value, findings: &mut Vec<Finding>) {
        let structured = result.get("structuredContent");
        if !self.version.supports_structured_output() {
            if structured.is_some() {
                findings.push(self.finding(
                    Rule::OutputUnexpectedStructured,
                    Document::Result,
                    "/structuredContent",
                    format!(
                        "structuredContent sent to a {} peer, which has none",
                        self.version
                    ),
                ));
            }
            return;
        }
        let Some(structured) = structured else {
            if self.declares_output {
                findings.push(
                    self.finding(
                        Rule::OutputMissingStructured,
                        Document::Result,
                        "/structuredContent",
                        "the tool declares an outputSchema but the result has no structuredContent"
                            .into(),
                    ),
                );
            }
            return;
        };
        // On revisions that allow only objects, a value that is not one is
        // this one defect: its schema (object-rooted there) is not asked again.
        let not_object = !self.version.allows_any_structured_content() && !structured.is_object();
        if not_object {
            findings.push(self.finding(
                Rule::OutputNotObject,
                Document::Result,
                "/structuredContent",
                format!("structuredContent must be an object on {}", self.version),
            ));
        }
        match self.output {
            Some(_) if not_object => {}
            Some(output) => self.validate(output, structured, findings),
            None if self.declares_output => findings.push(self.finding(
                Rule::OutputUnvalidated,
                Document::Result,
                "/structuredContent",
                match self.over_budget {
                    true => "not validated: the outputSchema was not compiled (the check's compile budget was spent)",
                    false => "not validated: the outputSchema is unusable",
                }
                .into(),
            )),
            None => {}
        }
        self.text_equivalence(result, structured, findings);
    }

    fn validate(&self, output: &Usable, structured: &Value, findings: &mut Vec<Finding>) {
        let error = match output.dialect_default.validate(structured) {
            Ok(()) => {
                if let Err(error) = output.asserting.validate(structured) {
                    for violation in error.violations() {
                        findings.push(self.finding(
                            Rule::OutputFormat,
                            Document::Result,
                            &format!("/structuredContent{}", violation.instance_path),
                            violation.message.clone(),
                        ));
                    }
                }
                return;
            }
            Err(error) => error,
        };
        match error.kind() {
            ValidationErrorKind::Mismatch { violations, .. } => {
                for violation in violations {
                    findings.push(self.finding(
                        Rule::OutputInvalid,
                        Document::Result,
                        &format!("/structuredContent{}", violation.instance_path),
                        format!("{} ({})", violation.message, violation.keyword),
                    ));
                }
            }
            _ => findings.push(self.finding(
                Rule::ResponseOverBounds,
                Document::Result,
                "/structuredContent",
                error.to_string(),
            )),
        }
    }

    /// A text block should carry the same JSON (it may carry prose instead).
    fn text_equivalence(&self, result: &Value, structured: &Value, findings: &mut Vec<Finding>) {
        let blocks = texts(result);
        if blocks.is_empty() {
            findings.push(self.finding(
                Rule::OutputTextMissing,
                Document::Result,
                "/content",
                "structuredContent without a text block carrying the same JSON".into(),
            ));
            return;
        }
        let unwrapped = match structured {
            Value::Object(map) if map.len() == 1 => map.get(WRAPPED_RESULT_KEY),
            _ => None,
        };
        let mut differing = None;
        for (index, text) in &blocks {
            let Ok(parsed) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if json_equal(&parsed, structured) || unwrapped.is_some_and(|v| json_equal(&parsed, v))
            {
                return;
            }
            differing.get_or_insert(*index);
        }
        if let Some(index) = differing {
            findings.push(self.finding(
                Rule::OutputTextMismatch,
                Document::Result,
                &join(&join("/content", &index.to_string()), "text"),
                "the text block is JSON, but not the same value as structuredContent".into(),
            ));
        }
    }
}

/// Whether a response carries a well-formed JSON-RPC error object.
fn is_error_object(response: &Value) -> bool {
    let error = response.get("error");
    error.and_then(|e| e.get("code")).is_some_and(Value::is_i64)
        && error
            .and_then(|e| e.get("message"))
            .is_some_and(Value::is_string)
}

/// The text blocks of a result, with their index in `content`.
fn texts(result: &Value) -> Vec<(usize, &str)> {
    let Some(Value::Array(blocks)) = result.get("content") else {
        return Vec::new();
    };
    blocks
        .iter()
        .enumerate()
        .filter(|(_, block)| block.get("type") == Some(&Value::from("text")))
        .filter_map(|(index, block)| {
            block
                .get("text")
                .and_then(Value::as_str)
                .map(|t| (index, t))
        })
        .collect()
}

fn excerpt_text(result: &Value) -> String {
    let joined = texts(result)
        .iter()
        .map(|(_, text)| *text)
        .collect::<Vec<_>>()
        .join(" ");
    toolshape_protocol::text::excerpt(joined.trim(), 200)
}

fn error_text(response: &Value) -> String {
    let error = response.get("error");
    let code = error
        .and_then(|e| e.get("code"))
        .map(Value::to_string)
        .unwrap_or_default();
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    toolshape_protocol::text::excerpt(&format!("{code} {message}"), 200)
}

/// JSON equality with numbers compared by value (`1` equals `1.0`).
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, x)| y.get(key).is_some_and(|y| json_equal(x, y)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn judge(version: ProtocolVersion, declares_output: bool, response: Value) -> Vec<Rule> {
        let arguments = Map::new();
        let call = Call {
            version,
            tool: "t",
            arguments: &arguments,
            declares_output,
            output: None,
            over_budget: false,
        };
        let mut findings = Vec::new();
        call.valid(&response, &mut findings);
        findings.into_iter().map(|f| f.rule).collect()
    }

    #[test]
    fn a_value_that_is_not_an_object_is_one_finding_not_two() {
        use crate::finding::Document;
        use crate::schemas::{Engines, check};
        let engines = Engines::default();
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let (_, usable) = check(&engines, &schema, Document::Tool, "/outputSchema");
        let output = usable.expect("the schema compiles");
        let arguments = Map::new();
        let judge = |version, response: Value| {
            let call = Call {
                version,
                tool: "t",
                arguments: &arguments,
                declares_output: true,
                output: Some(&output),
                over_budget: false,
            };
            let mut findings = Vec::new();
            call.valid(&response, &mut findings);
            findings.into_iter().map(|f| f.rule).collect::<Vec<_>>()
        };
        let text = json!([{"type": "text", "text": "[1]"}]);
        let array = json!({"result": {"content": text, "structuredContent": [1]}});
        assert_eq!(
            judge(ProtocolVersion::V2025_06_18, array.clone()),
            vec![Rule::OutputNotObject]
        );
        // Where any value is allowed, the schema judges it.
        assert_eq!(
            judge(ProtocolVersion::V2026_07_28, array),
            vec![Rule::OutputInvalid]
        );
    }

    #[test]
    fn an_unknown_result_type_is_an_invalid_result_on_the_stateless_revision() {
        let result = |kind: &str| json!({"result": {"resultType": kind, "content": [{"type": "text", "text": "hi"}]}});
        assert_eq!(
            judge(ProtocolVersion::V2026_07_28, false, result("completed")),
            vec![Rule::MessageInvalid]
        );
        assert!(judge(ProtocolVersion::V2026_07_28, false, result("complete")).is_empty());
        // Before it, `resultType` is nothing the revision defines: not judged here.
        assert!(judge(ProtocolVersion::V2025_11_25, false, result("completed")).is_empty());
    }

    #[test]
    fn results_are_judged_per_revision() {
        use ProtocolVersion::*;
        let text = |v: &str| json!([{"type": "text", "text": v}]);
        let ok =
            json!({"result": {"content": text("{\"a\": 1.0}"), "structuredContent": {"a": 1}}});
        assert_eq!(judge(V2025_11_25, false, ok.clone()), vec![]);
        assert_eq!(
            judge(V2025_03_26, false, ok),
            vec![Rule::OutputUnexpectedStructured]
        );
        let array = json!({"result": {"content": text("[1]"), "structuredContent": [1]}});
        assert_eq!(
            judge(V2025_06_18, false, array.clone()),
            vec![Rule::OutputNotObject]
        );
        assert_eq!(judge(V2026_07_28, false, array), vec![]);
        let wrapped =
            json!({"result": {"content": text("[1]"), "structuredContent": {"result": [1]}}});
        assert_eq!(judge(V2025_06_18, false, wrapped), vec![]);
        let missing = json!({"result": {"content": text("x")}});
        assert_eq!(
            judge(V2025_06_18, true, missing),
            vec![Rule::OutputMissingStructured]
        );
        let differs =
            json!({"result": {"content": text("{\"a\": 2}"), "structuredContent": {"a": 1}}});
        assert_eq!(
            judge(V2025_06_18, false, differs),
            vec![Rule::OutputTextMismatch]
        );
        let prose = json!({"result": {"content": text("a is one"), "structuredContent": {"a": 1}}});
        assert_eq!(judge(V2025_06_18, false, prose), vec![]);
        let bare = json!({"result": {"content": [], "structuredContent": {"a": 1}}});
        assert_eq!(
            judge(V2025_06_18, false, bare),
            vec![Rule::OutputTextMissing]
        );
        let failed = json!({"result": {"content": [], "isError": true}});
        assert_eq!(
            judge(V2025_06_18, true, failed),
            vec![Rule::CallToolError, Rule::ErrorResultEmpty]
        );
        let error = json!({"error": {"code": -32602, "message": "no"}});
        assert_eq!(
            judge(V2025_06_18, true, error),
            vec![Rule::CallRejectedValid]
        );
    }
}
