//! The derived schemas have the roots and shapes the server advertises.
//! Run with `--nocapture` to print them all.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{input_schema, is_valid, output_schema};
use serde_json::{Value, json};
use toolshape_workspace::catalog;
use toolshape_workspace::{
    AnalyzeDatasetInput, AnalyzeProjectInput, CountLinesInput, DatasetAnalysis, DirEntry, FileInfo,
    FileInfoInput, FindInput, FindOutput, ListDirectoryInput, ProjectAnalysis, ReadTextInput,
};

fn print(name: &str, schema: &Value) {
    println!(
        "== {name}\n{}",
        serde_json::to_string_pretty(schema).unwrap()
    );
}

#[test]
fn input_schemas_are_objects_except_find() {
    let inputs = [
        ("list_directory", input_schema::<ListDirectoryInput>()),
        ("file_info", input_schema::<FileInfoInput>()),
        ("read_text", input_schema::<ReadTextInput>()),
        ("count_lines", input_schema::<CountLinesInput>()),
        ("analyze_project", input_schema::<AnalyzeProjectInput>()),
        ("analyze_dataset", input_schema::<AnalyzeDatasetInput>()),
    ];
    for (name, schema) in &inputs {
        print(&format!("{name} input"), schema);
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        assert!(schema["properties"].is_object(), "{name}");
    }
    let dataset = &inputs[5].1;
    assert!(is_valid(
        dataset,
        &json!({"path": "a.csv", "analysisType": "correlation"})
    ));
    assert!(!is_valid(
        dataset,
        &json!({"path": "a.csv", "analysisType": "regression"})
    ));
    assert!(is_valid(&inputs[4].1, &json!({})));
}

#[test]
fn find_input_is_one_of_two_closed_objects() {
    let schema = input_schema::<FindInput>();
    print("find input", &schema);
    assert!(
        schema.get("type").is_none(),
        "the server adds the root `type: object`"
    );
    let branches = schema["oneOf"].as_array().unwrap();
    assert_eq!(branches.len(), 2);
    for (branch, key) in branches.iter().zip(["path", "glob"]) {
        assert_eq!(branch["type"], "object");
        assert_eq!(branch["required"], json!([key]));
        assert_eq!(branch["additionalProperties"], false);
        assert_eq!(branch["properties"][key]["type"], "string");
        assert!(branch["description"].is_string());
    }
    assert!(is_valid(&schema, &json!({"path": "src/lib.rs"})));
    assert!(is_valid(&schema, &json!({"glob": "src/**/*.rs"})));
    for bad in [
        json!({}),
        json!({"path": "a", "glob": "b"}),
        json!({"path": 1}),
        json!("a"),
    ] {
        assert!(!is_valid(&schema, &bad), "{bad} was accepted");
    }
}

#[test]
fn output_schema_roots() {
    let list = output_schema::<Vec<DirEntry>>();
    print("list_directory output", &list);
    assert_eq!(list["type"], "array");
    let count = output_schema::<u64>();
    print("count_lines output", &count);
    assert_eq!(count["type"], "integer");
    assert_eq!(count["minimum"], 0);
    for (name, schema) in [
        ("file_info", output_schema::<FileInfo>()),
        ("find", output_schema::<FindOutput>()),
        ("analyze_project", output_schema::<ProjectAnalysis>()),
    ] {
        print(&format!("{name} output"), &schema);
        assert_eq!(schema["type"], "object", "{name}");
    }
    // read_text returns plain text and is served without an output schema.
    let info = output_schema::<FileInfo>();
    let required = info["required"].as_array().unwrap();
    for always in ["modified", "text", "directory", "permissions"] {
        assert!(
            required.contains(&json!(always)),
            "{always} is always serialised"
        );
    }
}

#[test]
fn project_output_matches_the_seed_shape() {
    let schema = output_schema::<ProjectAnalysis>();
    assert_eq!(schema["required"], json!(["project"]));
    let project = &schema["$defs"]["Project"];
    assert_eq!(project["properties"]["version"]["type"], "string");
    let required = project["required"].as_array().unwrap();
    assert!(required.contains(&json!("name")) && required.contains(&json!("languages")));
    let language = &schema["$defs"]["Language"];
    assert_eq!(
        language["required"],
        json!(["name", "percentage", "fileCount"])
    );
    assert_eq!(language["properties"]["percentage"]["minimum"], 0);
    assert_eq!(language["properties"]["percentage"]["maximum"], 100);
    assert_eq!(
        schema["$defs"]["Dependencies"]["required"],
        json!(["direct"])
    );
    assert!(schema["$defs"]["Metrics"]["properties"]["linesOfCode"].is_object());
}

#[test]
fn dataset_output_has_the_seed_conditionals() {
    let schema = output_schema::<DatasetAnalysis>();
    print("analyze_dataset output", &schema);
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["allOf"],
        json!([
            {
                "if": { "properties": { "analysisType": { "const": "descriptive" } } },
                "then": { "required": ["statistics"] }
            },
            {
                "if": { "properties": { "analysisType": { "const": "correlation" } } },
                "then": { "required": ["correlations"] }
            }
        ])
    );
    assert_eq!(schema["required"], json!(["analysisType", "summary"]));
    assert_eq!(schema["properties"]["statistics"]["type"], "object");
    assert_eq!(schema["properties"]["correlations"]["type"], "array");
    let stats = &schema["$defs"]["ColumnStatistics"]["properties"];
    assert_eq!(stats["standardDeviation"]["minimum"], 0);
    let coefficient = &schema["$defs"]["Correlation"]["properties"]["coefficient"];
    assert_eq!(
        (&coefficient["minimum"], &coefficient["maximum"]),
        (&json!(-1), &json!(1))
    );
    // The conditionals bite.
    let summary = json!({"totalRows": 0, "totalColumns": 0, "missingValues": 0});
    let ok = json!({"analysisType": "descriptive", "summary": summary, "statistics": {}});
    let missing = json!({"analysisType": "descriptive", "summary": summary, "correlations": []});
    let wrong = json!({"analysisType": "correlation", "summary": summary, "statistics": {}});
    assert!(is_valid(&schema, &ok));
    assert!(!is_valid(&schema, &missing));
    assert!(!is_valid(&schema, &wrong));
}

#[test]
fn catalog_names_are_unique_snake_case_and_described() {
    let mut names: Vec<&str> = catalog::ALL.iter().map(|t| t.name).collect();
    assert_eq!(names[0], catalog::LIST_DIRECTORY.name);
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), catalog::ALL.len());
    for tool in catalog::ALL {
        assert!(
            tool.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_')
        );
        assert!(!tool.title.is_empty());
        assert!(tool.description.len() > 80, "{}", tool.name);
        assert!(
            !tool.description.contains("  "),
            "{}: stray spaces",
            tool.name
        );
    }
}
