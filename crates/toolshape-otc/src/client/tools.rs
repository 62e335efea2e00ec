//! A server's tools as listed: checked, each output schema compiled once
//! (untrusted), and found by id, id without version, name, or tool part.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use toolshape::schema::{CompiledSchema, SchemaEngine, SchemaError};
use toolshape::tool::ToolVersion;

use super::error::{OtcError, OtcErrorKind};
use crate::wire::{DeclaredOutput, ToolDefinition, ToolId};

/// Most tools one listing may hold.
pub(crate) const MAX_TOOLS: usize = 10_000;

/// One listed tool.
#[derive(Debug)]
pub struct ListedTool {
    /// Its definition.
    pub definition: ToolDefinition,
    /// Its id, parsed.
    pub id: ToolId,
    output: OnceLock<Result<Arc<CompiledSchema>, SchemaError>>,
}

impl ListedTool {
    /// The compiled output schema (`None`: the tool returns nothing or any value).
    pub(crate) async fn output_schema(
        &self,
        engine: &SchemaEngine,
    ) -> Option<Result<Arc<CompiledSchema>, SchemaError>> {
        let DeclaredOutput::Schema(schema) = self.definition.output() else {
            return None;
        };
        if let Some(compiled) = self.output.get() {
            return Some(compiled.clone());
        }
        let (engine, schema) = (engine.clone(), schema.clone());
        let compiled = tokio::task::spawn_blocking(move || engine.compile(&schema))
            .await
            .unwrap_or_else(|_| {
                Err(toolshape::schema::SchemaErrorKind::Compile(
                    "the compiler thread failed".into(),
                )
                .into())
            });
        Some(self.output.get_or_init(|| compiled).clone())
    }

    fn version(&self) -> ToolVersion {
        self.id.version.unwrap_or(ToolVersion::new(0, 0, 0))
    }
}

/// A listing.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<Arc<ListedTool>>,
    /// The tools by their id as listed (the first of an id): an exact id
    /// is found without a search (a bridge looks up each of 10,000).
    by_id: HashMap<String, Arc<ListedTool>>,
}

impl Listing {
    /// Reads a `GET /tools` body: `items` (or `tools`), each definition
    /// checked; malformed ones and repeated ids are left out, with a warning.
    pub(crate) fn from_json(body: &Value) -> Result<Listing, OtcError> {
        let items = body
            .get("items")
            .or_else(|| body.get("tools"))
            .and_then(Value::as_array)
            .ok_or_else(|| OtcErrorKind::InvalidResponse("GET /tools has no items array".into()))?;
        if items.len() > MAX_TOOLS {
            return Err(OtcErrorKind::InvalidResponse(format!(
                "GET /tools lists more than {MAX_TOOLS} tools"
            ))
            .into());
        }
        let mut seen = HashSet::new();
        let mut tools = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let definition: ToolDefinition = match serde_json::from_value(item.clone()) {
                Ok(definition) => definition,
                Err(error) => {
                    tracing::warn!(index, %error, "left out a malformed tool definition");
                    continue;
                }
            };
            let id = match ToolId::parse(&definition.id) {
                Ok(id) if id.version.is_some() => id,
                // No version in the id: take the definition's own.
                Ok(id) => match definition.version.parse() {
                    Ok(version) => ToolId {
                        version: Some(version),
                        ..id
                    },
                    Err(error) => {
                        tracing::warn!(index, %error, "left out a tool with an invalid version");
                        continue;
                    }
                },
                Err(error) => {
                    tracing::warn!(index, %error, "left out a tool with an invalid id");
                    continue;
                }
            };
            if !seen.insert(id.to_string()) {
                tracing::warn!(id = %id, "ignored a second definition of a listed tool");
                continue;
            }
            tools.push(Arc::new(ListedTool {
                definition,
                id,
                output: OnceLock::new(),
            }));
        }
        let mut by_id = HashMap::with_capacity(tools.len());
        for tool in &tools {
            by_id
                .entry(tool.definition.id.clone())
                .or_insert_with(|| Arc::clone(tool));
        }
        Ok(Listing { tools, by_id })
    }

    /// The tool `wanted` names: a full id; `Toolkit.Tool` or `Toolkit.Tool@x`;
    /// a `name`; or, when only one toolkit has it, a tool part.
    pub(crate) fn find(&self, wanted: &str) -> Result<Arc<ListedTool>, OtcError> {
        let latest = |matching: &mut dyn Iterator<Item = &Arc<ListedTool>>| {
            matching.max_by_key(|tool| tool.version()).cloned()
        };
        if let Some(exact) = self.by_id.get(wanted) {
            return Ok(Arc::clone(exact));
        }
        if let Ok(id) = ToolId::parse(wanted) {
            let found = latest(&mut self.tools.iter().filter(|tool| {
                tool.id.qualified == id.qualified
                    && id
                        .version
                        .is_none_or(|version| tool.id.version == Some(version))
            }));
            if let Some(found) = found {
                return Ok(found);
            }
        }
        if let Some(found) = latest(
            &mut self
                .tools
                .iter()
                .filter(|tool| tool.definition.name == wanted),
        ) {
            return Ok(found);
        }
        let mut by_qualified: HashMap<&str, Arc<ListedTool>> = HashMap::new();
        for tool in self.tools.iter().filter(|tool| tool.id.tool() == wanted) {
            let entry = by_qualified
                .entry(tool.id.qualified.as_str())
                .or_insert_with(|| Arc::clone(tool));
            if tool.version() > entry.version() {
                *entry = Arc::clone(tool);
            }
        }
        match by_qualified.len() {
            0 => Err(OtcErrorKind::UnknownTool(wanted.to_owned()).into()),
            1 => Ok(by_qualified
                .into_values()
                .next()
                .ok_or_else(|| OtcErrorKind::UnknownTool(wanted.to_owned()))?),
            _ => {
                let mut candidates: Vec<String> =
                    by_qualified.into_keys().map(str::to_owned).collect();
                candidates.sort();
                Err(OtcErrorKind::AmbiguousTool {
                    name: wanted.to_owned(),
                    candidates,
                }
                .into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listing() -> Result<Listing, OtcError> {
        let tool = |id: &str, name: &str, version: &str| {
            json!({"id": id, "name": name, "description": "", "version": version,
                   "input_schema": {"type": "object"}, "output_schema": null})
        };
        Listing::from_json(&json!({"items": [
            tool("Calc.Add@1.0.0", "Calc_Add", "1.0.0"),
            tool("Calc.Add@2.1.0", "Calc_Add", "2.1.0"),
            tool("Math.Add@1.0.0", "Math_Add", "1.0.0"),
            tool("Math.Sub@1.0.0", "Math_Sub", "1.0.0"),
            tool("Math.Sub@1.0.0", "Math_Sub", "1.0.0"),
            {"id": "not an id", "name": "x", "version": "1.0.0"},
        ]}))
    }

    #[test]
    fn tools_are_found_by_every_name_they_answer_to() -> Result<(), OtcError> {
        let listing = listing()?;
        assert_eq!(listing.tools.len(), 4);
        assert_eq!(
            listing.find("Calc.Add@1.0.0")?.definition.id,
            "Calc.Add@1.0.0"
        );
        assert_eq!(listing.find("Calc.Add")?.definition.id, "Calc.Add@2.1.0");
        assert_eq!(listing.find("Calc.Add@1")?.definition.id, "Calc.Add@1.0.0");
        assert_eq!(listing.find("Calc_Add")?.definition.id, "Calc.Add@2.1.0");
        assert_eq!(listing.find("Sub")?.definition.id, "Math.Sub@1.0.0");
        assert!(
            matches!(listing.find("Add").map_err(|e| e.to_string()), Err(m) if m.contains("several"))
        );
        assert!(
            matches!(listing.find("Mul").map_err(|e| e.to_string()), Err(m) if m.contains("no tool"))
        );
        Ok(())
    }
}
