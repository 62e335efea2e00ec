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
    /// The tools by each name that finds them without a search (a bridge
    /// looks up each of 10,000 by its `name`).
    index: Index,
}

/// A listing's tools by the names [`Listing::find`] takes, but a bare tool
/// part (searched for: it may be ambiguous).
#[derive(Debug, Default)]
struct Index {
    /// By id as listed (the first of an id).
    by_id: HashMap<String, Arc<ListedTool>>,
    /// By id with its version as parsed (`Toolkit.Tool@1.0.0` for a tool
    /// listed as `Toolkit.Tool` of version `1.0.0`).
    by_versioned_id: HashMap<String, Arc<ListedTool>>,
    /// The latest version of each `Toolkit.Tool`.
    latest_by_qualified: HashMap<String, Arc<ListedTool>>,
    /// The latest version of each `name`.
    latest_by_name: HashMap<String, Arc<ListedTool>>,
}

impl Index {
    fn of(tools: &[Arc<ListedTool>]) -> Index {
        let mut index = Index::default();
        // Of two of the same version, the one listed last, as a search for
        // the greatest version finds.
        let latest =
            |map: &mut HashMap<String, Arc<ListedTool>>, key: &str, tool: &Arc<ListedTool>| {
                match map.get_mut(key) {
                    Some(kept) if kept.version() > tool.version() => {}
                    Some(kept) => *kept = Arc::clone(tool),
                    None => {
                        map.insert(key.to_owned(), Arc::clone(tool));
                    }
                }
            };
        for tool in tools {
            index
                .by_id
                .entry(tool.definition.id.clone())
                .or_insert_with(|| Arc::clone(tool));
            index
                .by_versioned_id
                .insert(tool.id.to_string(), Arc::clone(tool));
            latest(&mut index.latest_by_qualified, &tool.id.qualified, tool);
            latest(&mut index.latest_by_name, &tool.definition.name, tool);
        }
        index
    }
}

impl Listing {
    /// Reads a `GET /tools` body: `items` (or `tools`), each definition
    /// checked; malformed ones and repeated ids are left out, with a warning.
    /// A tool listed the same in `previous` is taken from it, with its
    /// output schema compiled already.
    pub(crate) fn from_json(body: &Value, previous: Option<&Listing>) -> Result<Listing, OtcError> {
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
            let mut definition: ToolDefinition = match serde_json::from_value(item.clone()) {
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
            if definition.version.is_empty()
                && let Some(version) = &id.version
            {
                definition.version = version.to_string();
            }
            if !seen.insert(id.to_string()) {
                tracing::warn!(id = %id, "ignored a second definition of a listed tool");
                continue;
            }
            if let Some(unchanged) = previous
                .and_then(|previous| previous.index.by_versioned_id.get(&id.to_string()))
                // (Not one whose schema failed to compile: a failure may
                // have been the machine's load.)
                .filter(|listed| {
                    listed.definition == definition && !matches!(listed.output.get(), Some(Err(_)))
                })
            {
                tools.push(Arc::clone(unchanged));
                continue;
            }
            tools.push(Arc::new(ListedTool {
                definition,
                id,
                output: OnceLock::new(),
            }));
        }
        let index = Index::of(&tools);
        Ok(Listing { tools, index })
    }

    /// The tool `wanted` names: a full id; `Toolkit.Tool` or `Toolkit.Tool@x`;
    /// a `name`; or, when only one toolkit has it, a tool part, or the MCP
    /// name written as one (`get-weather` for `get_weather`).
    pub(crate) fn find(&self, wanted: &str) -> Result<Arc<ListedTool>, OtcError> {
        let index = &self.index;
        if let Some(exact) = index.by_id.get(wanted) {
            return Ok(Arc::clone(exact));
        }
        if let Ok(id) = ToolId::parse(wanted) {
            let found = match id.version {
                Some(_) => index.by_versioned_id.get(&id.to_string()),
                None => index.latest_by_qualified.get(&id.qualified),
            };
            if let Some(found) = found {
                return Ok(Arc::clone(found));
            }
        }
        if let Some(found) = index.latest_by_name.get(wanted) {
            return Ok(Arc::clone(found));
        }
        // The tool part as an MCP name is written in it (`get-weather` is
        // `Tools.get_weather`): either spelling finds it. Not for a dotted
        // name, which says its toolkit (`Foo.bar` is never `Foo_bar`).
        let written: String = if wanted.contains('.') {
            wanted.to_owned()
        } else {
            wanted
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect()
        };
        let mut by_qualified: HashMap<&str, Arc<ListedTool>> = HashMap::new();
        for tool in self
            .tools
            .iter()
            .filter(|tool| tool.id.tool() == wanted || tool.id.tool() == written)
        {
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
        Listing::from_json(
            &json!({"items": [
                tool("Calc.Add@1.0.0", "Calc_Add", "1.0.0"),
                tool("Calc.Add@2.1.0", "Calc_Add", "2.1.0"),
                tool("Math.Add@1.0.0", "Math_Add", "1.0.0"),
                tool("Math.Sub@1.0.0", "Math_Sub", "1.0.0"),
                tool("Math.Sub@1.0.0", "Math_Sub", "1.0.0"),
                tool("Tools.get_weather@1.0.0", "Tools_get_weather", "1.0.0"),
                // Its version given beside its id.
                tool("Calc.Mul", "Calc_Mul", "1.2.0"),
                // One name, one version, two toolkits: the one listed last.
                tool("Calc.Dup@1.0.0", "Dup", "1.0.0"),
                tool("Math.Dup@1.0.0", "Dup", "1.0.0"),
                {"id": "not an id", "name": "x", "version": "1.0.0"},
                // An OTC-era definition: no version beside the id's.
                {"id": "Calc.Old@3.0.0", "name": "Calc_Old", "description": "",
                 "input_schema": {"parameters": {}}, "output_schema": {}},
                // Neither: left out.
                {"id": "Calc.Bare", "name": "Calc_Bare", "description": ""},
            ]}),
            None,
        )
    }

    #[test]
    fn tools_are_found_by_every_name_they_answer_to() -> Result<(), OtcError> {
        let listing = listing()?;
        assert_eq!(listing.tools.len(), 9);
        assert!(listing.find("get.weather").is_err());
        for mcp_name in ["get-weather", "get_weather", "get/weather"] {
            assert_eq!(
                listing.find(mcp_name)?.definition.id,
                "Tools.get_weather@1.0.0"
            );
        }
        assert_eq!(listing.find("Calc.Old")?.definition.version, "3.0.0");
        assert!(listing.find("Calc.Bare").is_err());
        assert_eq!(listing.find("Dup")?.definition.id, "Math.Dup@1.0.0");
        assert_eq!(listing.find("Calc.Mul")?.definition.id, "Calc.Mul");
        assert_eq!(listing.find("Calc.Mul@1.2.0")?.definition.id, "Calc.Mul");
        assert_eq!(listing.find("Calc_Mul")?.definition.id, "Calc.Mul");
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
            matches!(listing.find("Div").map_err(|e| e.to_string()), Err(m) if m.contains("no tool"))
        );
        Ok(())
    }
}
