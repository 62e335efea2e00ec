//! `POST /tools/call`: valid input answered 200 with a well-formed
//! CallToolResponse whose `value` matches `output_schema`; invalid input
//! answered 422; an unknown tool or `$schema` answered 400.

use std::time::Instant;

use serde_json::{Map, Value, json};

use super::OtcTool;
use super::http::{Answer, Failure, Http};
use crate::finding::{Document, Finding, Location, join};
use crate::generate::Generator;
use crate::options::Options;
use crate::report::CallCounts;
use crate::rules::Rule;

/// Stands for the server as a whole where a tool is expected.
const SERVER: &str = "(server)";

/// Consecutive failed exchanges after which calling stops.
const FAILURES_BEFORE_STOP: usize = 2;

/// Makes the calls of one OTC check.
pub(crate) struct Caller<'a> {
    http: &'a Http,
    options: &'a Options,
    deadline: Instant,
    findings: &'a mut Vec<Finding>,
    calls: usize,
    failures: usize,
    /// Why calling stopped early, if it did.
    pub(crate) stopped: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Succeeded,
    ToolError,
    Unusable,
}

fn message_of(answer: &Answer) -> Option<&str> {
    answer.json.as_ref()?.get("message")?.as_str()
}

impl<'a> Caller<'a> {
    pub(crate) fn new(
        http: &'a Http,
        options: &'a Options,
        deadline: Instant,
        findings: &'a mut Vec<Finding>,
    ) -> Self {
        Caller {
            http,
            options,
            deadline,
            findings,
            calls: 0,
            failures: 0,
            stopped: None,
        }
    }

    fn finding(
        &mut self,
        rule: Rule,
        tool: &str,
        pointer: &str,
        message: String,
        input: Option<&Value>,
    ) {
        let mut finding =
            Finding::new(rule, Location::new(Document::Otc, pointer), message).tool(tool);
        if let Some(input) = input {
            finding = finding.arguments(input);
        }
        self.findings.push(finding);
    }

    /// Sends one call; the call id it carried and the answer.
    async fn send(
        &mut self,
        tool_id: &str,
        input: &Value,
        schema_version: Option<&str>,
    ) -> Result<(String, Answer), Failure> {
        self.calls += 1;
        let call_id = format!("toolshape-check-{}", self.calls);
        let mut body = json!({"request": {"tool_id": tool_id, "call_id": call_id, "input": input}});
        if let Some(version) = schema_version {
            body["$schema"] = json!(version);
        }
        let answer = self.http.post("tools/call", &body).await?;
        Ok((call_id, answer))
    }

    /// Records a failed exchange; false when calling must stop.
    fn failed(&mut self, tool: &str, failure: &Failure, input: &Value) -> bool {
        let (rule, message) = match failure {
            Failure::Timeout => (
                Rule::RequestTimeout,
                format!(
                    "POST /tools/call: no answer within {} ms",
                    self.options.call_timeout.as_millis()
                ),
            ),
            Failure::Connection(detail) => {
                (Rule::ServerExited, format!("POST /tools/call: {detail}"))
            }
            Failure::TooLarge(_) => (
                Rule::ResponseOverBounds,
                format!("POST /tools/call: {failure}"),
            ),
        };
        self.finding(rule, tool, "", message, Some(input));
        self.failures += 1;
        if self.failures >= FAILURES_BEFORE_STOP {
            self.stopped = Some("the server failed twice in a row; calls stopped".into());
            return false;
        }
        true
    }

    fn out_of_time(&mut self) -> bool {
        if Instant::now() >= self.deadline {
            self.stopped = Some(format!(
                "the time limit ({} s) ran out before every call was made",
                self.options.max_time.as_secs()
            ));
            return true;
        }
        false
    }

    /// An unknown tool must be answered 400 with a message.
    pub(crate) async fn unknown_tool(&mut self) {
        let input = json!({});
        match self
            .send("ToolshapeCheck.NoSuchTool@1.0.0", &input, None)
            .await
        {
            Ok((_, answer)) => self.expect_400(&answer, SERVER, "an unknown tool id"),
            Err(failure) => {
                self.failed(SERVER, &failure, &input);
            }
        }
    }

    /// An unknown `$schema` must be answered 400 (called with valid input, so
    /// a server that ignores `$schema` runs the tool: only under `--call all`).
    pub(crate) async fn unknown_schema_version(&mut self, tool: &OtcTool) {
        // Not once calls have stopped (failures, or the time limit).
        if self.stopped.is_some() || self.out_of_time() {
            return;
        }
        let Some(input) = self.valid_inputs(tool).into_iter().next() else {
            return;
        };
        let input = Value::Object(input);
        match self
            .send(
                &tool.id,
                &input,
                Some("urn:toolshape-check:no-such-version"),
            )
            .await
        {
            Ok((_, answer)) => self.expect_400(&answer, SERVER, "an unknown $schema"),
            Err(failure) => {
                self.failed(SERVER, &failure, &input);
            }
        }
    }

    fn expect_400(&mut self, answer: &Answer, tool: &str, what: &str) {
        if answer.status != 400 {
            self.finding(
                Rule::OtcRequestErrorStatus,
                tool,
                "",
                format!("{what} was answered {}, not 400", answer.status),
                None,
            );
        } else if message_of(answer).is_none() {
            self.finding(
                Rule::OtcErrorBody,
                tool,
                "/message",
                format!("the 400 for {what} has no message"),
                None,
            );
        }
    }

    fn valid_inputs(&self, tool: &OtcTool) -> Vec<Map<String, Value>> {
        let Some(input) = &tool.input else {
            return Vec::new();
        };
        Generator::new(&tool.input_schema)
            .valid_candidates(self.options.arguments.get(&tool.id))
            .into_iter()
            .filter(|candidate| {
                input
                    .asserting
                    .validate(&Value::Object(candidate.clone()))
                    .is_ok()
            })
            .take(self.options.max_valid_calls)
            .collect()
    }

    /// Calls one tool; false when calling must stop.
    pub(crate) async fn tool(&mut self, tool: &OtcTool, counts: &mut CallCounts) -> bool {
        let Some(schema) = &tool.input else {
            counts.skipped = Some("its input_schema is unusable".into());
            return true;
        };
        let valid = self.valid_inputs(tool);
        let Some(base) = valid.first().cloned() else {
            counts.skipped = Some("no input its input_schema accepts could be made".into());
            self.finding(
                Rule::CallSkipped,
                &tool.id,
                "",
                "not called: no input its input_schema accepts could be made".into(),
                None,
            );
            return true;
        };
        for input in valid {
            if self.out_of_time() {
                return false;
            }
            let input = Value::Object(input);
            counts.valid += 1;
            match self.send(&tool.id, &input, None).await {
                Ok((call_id, answer)) => {
                    self.failures = 0;
                    match self.valid_answer(tool, &call_id, &answer, &input) {
                        Verdict::Succeeded => counts.succeeded += 1,
                        Verdict::ToolError => counts.tool_errors += 1,
                        Verdict::Unusable => {}
                    }
                }
                Err(failure) => {
                    if !self.failed(&tool.id, &failure, &input) {
                        return false;
                    }
                }
            }
        }
        let invalid: Vec<Map<String, Value>> = Generator::new(&tool.input_schema)
            .invalid_candidates(&base)
            .into_iter()
            .filter(|candidate| {
                schema
                    .asserting
                    .validate(&Value::Object(candidate.clone()))
                    .is_err()
            })
            .take(self.options.max_invalid_calls)
            .collect();
        for input in invalid {
            if self.out_of_time() {
                return false;
            }
            let input = Value::Object(input);
            counts.invalid += 1;
            match self.send(&tool.id, &input, None).await {
                Ok((_, answer)) => {
                    self.failures = 0;
                    if self.invalid_answer(tool, &answer, &input) {
                        counts.invalid_rejected += 1;
                    }
                }
                Err(failure) => {
                    if !self.failed(&tool.id, &failure, &input) {
                        return false;
                    }
                }
            }
        }
        true
    }

    fn valid_answer(
        &mut self,
        tool: &OtcTool,
        call_id: &str,
        answer: &Answer,
        input: &Value,
    ) -> Verdict {
        match answer.status {
            200 => {}
            422 => {
                let message = message_of(answer).unwrap_or_default().to_owned();
                self.finding(
                    Rule::CallRejectedValid,
                    &tool.id,
                    "",
                    format!("answered 422 to input its input_schema accepts: {message}"),
                    Some(input),
                );
                return Verdict::Unusable;
            }
            status => {
                let detail = message_of(answer).map_or_else(|| answer.text.clone(), str::to_owned);
                self.finding(
                    Rule::OtcCallStatus,
                    &tool.id,
                    "",
                    format!("a valid call was answered {status}: {detail}"),
                    Some(input),
                );
                return Verdict::Unusable;
            }
        }
        let Some(body) = &answer.json else {
            self.finding(
                Rule::OtcCallStatus,
                &tool.id,
                "",
                "answered 200 without a JSON body".into(),
                Some(input),
            );
            return Verdict::Unusable;
        };
        let (response, base) = match body.get("result") {
            Some(result) => (result, "/result"),
            None if body.get("success").is_some() => (body, ""),
            None => {
                self.finding(
                    Rule::OtcResponseShape,
                    &tool.id,
                    "/result",
                    "the body has no `result` (CallToolResponse)".into(),
                    Some(input),
                );
                return Verdict::Unusable;
            }
        };
        self.response(tool, call_id, response, base, input)
    }

    /// Checks one CallToolResponse at `base` of the body.
    fn response(
        &mut self,
        tool: &OtcTool,
        call_id: &str,
        response: &Value,
        base: &str,
        input: &Value,
    ) -> Verdict {
        let shape = |caller: &mut Self, field: &str, message: String| {
            caller.finding(
                Rule::OtcResponseShape,
                &tool.id,
                &join(base, field),
                message,
                Some(input),
            );
        };
        match response.get("call_id").and_then(Value::as_str) {
            Some(echoed) if echoed == call_id => {}
            Some(echoed) => self.finding(
                Rule::OtcCallId,
                &tool.id,
                &join(base, "call_id"),
                format!("call_id {echoed:?} is not the request's {call_id:?}"),
                Some(input),
            ),
            None => shape(self, "call_id", "no string call_id".into()),
        }
        if let Some(duration) = response.get("duration")
            && !duration.as_f64().is_some_and(|d| d >= 0.0)
        {
            shape(
                self,
                "duration",
                "duration is not a number of milliseconds".into(),
            );
        }
        let Some(success) = response.get("success").and_then(Value::as_bool) else {
            shape(self, "success", "no boolean success".into());
            return Verdict::Unusable;
        };
        let value = response.get("value");
        let error = response.get("error");
        if success {
            if error.is_some() {
                shape(self, "error", "success: true with an error".into());
            }
            self.value(tool, value, base, input);
            return Verdict::Succeeded;
        }
        if value.is_some() {
            shape(self, "value", "success: false with a value".into());
        }
        match error {
            Some(error) if error.get("message").is_some_and(Value::is_string) => {
                if error.get("can_retry").is_some_and(|v| !v.is_boolean()) {
                    shape(self, "error/can_retry", "can_retry is not a boolean".into());
                }
                if error
                    .get("retry_after_ms")
                    .is_some_and(|v| !v.is_i64() && !v.is_u64())
                {
                    shape(
                        self,
                        "error/retry_after_ms",
                        "retry_after_ms is not an integer".into(),
                    );
                }
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.finding(
                    Rule::CallToolError,
                    &tool.id,
                    &join(base, "error"),
                    format!(
                        "success: false: {}",
                        toolshape_protocol::text::excerpt(message, 200)
                    ),
                    Some(input),
                );
            }
            _ => shape(
                self,
                "error",
                "success: false without an error {message}".into(),
            ),
        }
        Verdict::ToolError
    }

    /// `value` against `output_schema`.
    fn value(&mut self, tool: &OtcTool, value: Option<&Value>, base: &str, input: &Value) {
        let at = join(base, "value");
        match (&tool.output_schema, value) {
            (Some(Value::Null), Some(value)) if !value.is_null() => self.finding(
                Rule::OtcValueInvalid,
                &tool.id,
                &at,
                "a value, but the output_schema is null (the tool returns nothing)".into(),
                Some(input),
            ),
            (_, value) => {
                let Some(output) = &tool.output else {
                    return;
                };
                let Some(value) = value else {
                    self.finding(
                        Rule::OtcValueInvalid,
                        &tool.id,
                        &at,
                        "no value, but the output_schema describes one".into(),
                        Some(input),
                    );
                    return;
                };
                if let Err(error) = output.dialect_default.validate(value) {
                    let violations = error.violations().to_vec();
                    if violations.is_empty() {
                        self.finding(
                            Rule::ResponseOverBounds,
                            &tool.id,
                            &at,
                            error.to_string(),
                            Some(input),
                        );
                    }
                    for violation in violations {
                        self.finding(
                            Rule::OtcValueInvalid,
                            &tool.id,
                            &format!("{at}{}", violation.instance_path),
                            format!("{} ({})", violation.message, violation.keyword),
                            Some(input),
                        );
                    }
                }
            }
        }
    }

    /// Input that fails `input_schema`: 422 with a message. True when refused.
    fn invalid_answer(&mut self, tool: &OtcTool, answer: &Answer, input: &Value) -> bool {
        match answer.status {
            422 => {
                if message_of(answer).is_none() {
                    self.finding(
                        Rule::OtcErrorBody,
                        &tool.id,
                        "/message",
                        "the 422 has no message".into(),
                        Some(input),
                    );
                }
                true
            }
            200 => {
                let success = answer
                    .json
                    .as_ref()
                    .and_then(|body| body.get("result").or(Some(body)))
                    .and_then(|response| response.get("success"))
                    .and_then(Value::as_bool);
                let message = if success == Some(false) {
                    "answered 200 with success: false; input that fails input_schema is answered 422 before the tool runs"
                } else {
                    "input its input_schema rejects was accepted and run"
                };
                self.finding(
                    Rule::OtcInvalidInputStatus,
                    &tool.id,
                    "",
                    message.into(),
                    Some(input),
                );
                success == Some(false)
            }
            status => {
                self.finding(
                    Rule::OtcInvalidInputStatus,
                    &tool.id,
                    "",
                    format!("input that fails input_schema was answered {status}, not 422"),
                    Some(input),
                );
                status == 400
            }
        }
    }
}
