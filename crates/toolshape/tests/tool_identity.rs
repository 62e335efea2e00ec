//! Toolkits, versions and qualified names: several versions of one tool,
//! the latest for MCP, names that cannot map to an OTC id refused at
//! registration with a clear error, and one whose OTC name would be too
//! long served over MCP only.

use schemars::JsonSchema;
use serde::Deserialize;
use toolshape::tool::{OutputShape, ToolVersion};
use toolshape::{RegistrationError, Tool, ToolError, ToolRegistry};

#[derive(Deserialize, JsonSchema)]
struct Empty {}

fn answering(name: &str, answer: &'static str) -> Tool {
    Tool::typed(name, move |_: Empty| async move {
        Ok::<_, ToolError>(answer.to_owned())
    })
}

#[tokio::test]
async fn versions_register_side_by_side_and_mcp_sees_the_latest()
-> Result<(), Box<dyn std::error::Error>> {
    let registry = ToolRegistry::new();
    registry.register(answering("Calc_Add", "one").toolkit("Calc").version("1"))?;
    registry.register(
        answering("Calc_Add", "three")
            .toolkit("Calc")
            .version("1.10.0"),
    )?;
    registry.register(
        answering("Calc_Add", "two")
            .toolkit("Calc")
            .version("1.9.0"),
    )?;
    assert_eq!(registry.len(), 1);
    assert_eq!(registry.definitions().len(), 1);
    let latest = registry.latest("Calc_Add").ok_or("no tool")?;
    assert_eq!(
        (latest.otc_id(), latest.version()),
        (
            Some("Calc.Add@1.10.0".to_owned()),
            ToolVersion::new(1, 10, 0)
        )
    );
    let versions: Vec<String> = registry.tools().iter().filter_map(|t| t.otc_id()).collect();
    assert_eq!(
        versions,
        ["Calc.Add@1.0.0", "Calc.Add@1.9.0", "Calc.Add@1.10.0"]
    );
    let first = registry
        .find_qualified("Calc.Add", Some(ToolVersion::new(1, 0, 0)))
        .ok_or("no 1.0.0")?;
    let outcome = first.call(None, toolshape::CallOptions::new()).await;
    assert!(format!("{outcome:?}").contains("one"));
    // The registry's own call (MCP's) runs the latest.
    let outcome = registry
        .call("Calc_Add", None, toolshape::CallOptions::new())
        .await?;
    assert!(format!("{outcome:?}").contains("three"));
    assert!(registry.remove_version("Calc_Add", ToolVersion::new(1, 10, 0)));
    assert_eq!(
        registry.latest("Calc_Add").map(|t| t.version()),
        Some(ToolVersion::new(1, 9, 0))
    );
    Ok(())
}

#[test]
fn names_that_cannot_map_are_refused_clearly() {
    let registry = ToolRegistry::new();
    let refused = |tool: Tool| {
        registry
            .register(tool)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert!(registry.register(answering("get_weather", "x")).is_ok());
    let collision = refused(answering("get-weather", "x"));
    assert!(
        collision.contains("Tools.get_weather") && collision.contains("already has"),
        "{collision}"
    );
    // An MCP name may be 128 characters, an OTC name 64: a longer one is
    // served over MCP only, and may not clash with another's OTC id.
    let long = "a".repeat(70);
    assert!(registry.register(answering(&long, "x")).is_ok());
    let served = registry.latest(&long).expect("registered");
    assert_eq!((served.otc_id(), served.qualified_name()), (None, None));
    assert!(
        registry
            .register(answering(&format!("{long}-"), "x"))
            .is_ok()
    );
    assert!(registry.definitions().iter().any(|d| d.name == long));
    // A gateway's relayed names may pass MCP's guidance, within 1,024 bytes.
    let relayed = "r".repeat(1000);
    assert!(
        registry
            .register(answering(&relayed, "x").relayed_name())
            .is_ok()
    );
    let huge = refused(answering(&"h".repeat(1025), "x").relayed_name());
    assert!(huge.contains("1025 bytes"), "{huge}");
    let toolkit = refused(answering("x", "x").toolkit("bad-kit"));
    assert!(toolkit.contains("toolkit"), "{toolkit}");
    let version = refused(answering("y", "x").version("1.0"));
    assert!(version.contains("x.y.z"), "{version}");
    assert!(
        registry
            .register(answering("z", "x").toolkit("One"))
            .is_ok()
    );
    assert!(matches!(
        registry.register(answering("z", "x").toolkit("Two").version("2.0.0")),
        Err(RegistrationError::ToolkitMismatch { .. })
    ));
    assert!(matches!(
        registry.register(answering("z", "x").toolkit("One")),
        Err(RegistrationError::Duplicate(_))
    ));
    // Dotted MCP names map too.
    assert!(
        registry
            .register(answering("github.create_issue", "x"))
            .is_ok()
    );
    assert!(
        registry
            .find_qualified("Tools.github_create_issue", None)
            .is_some()
    );
}

#[test]
fn a_typed_tool_of_unit_output_returns_nothing() {
    let tool = Tool::typed("ring", |_: Empty| async move { Ok::<_, ToolError>(()) });
    assert_eq!(tool.output_shape(), OutputShape::Nothing);
    assert!(tool.output_schema().is_none());
    assert_eq!(
        Tool::text("t", |_: Empty| async move { Ok("x".to_owned()) }).output_shape(),
        OutputShape::Text
    );
}
