//! Shared test helpers: a temporary workspace and schema checks.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Serialize;
use serde_json::Value;
use tempfile::TempDir;
use toolshape_workspace::Workspace;

/// A temporary directory holding the workspace root (`root/`) and a sibling
/// directory outside it (`outside/`).
pub struct Fixture {
    pub dir: TempDir,
    pub ws: Workspace,
}

impl Fixture {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("root")).unwrap();
        fs::create_dir(dir.path().join("outside")).unwrap();
        fs::write(dir.path().join("outside/secret.txt"), "top secret\n").unwrap();
        let ws = Workspace::open(dir.path().join("root")).unwrap();
        Self { dir, ws }
    }

    pub fn root(&self) -> PathBuf {
        self.ws.root().to_path_buf()
    }

    pub fn outside(&self) -> PathBuf {
        self.dir.path().join("outside").canonicalize().unwrap()
    }

    /// Writes `contents` at `rel` under the root, creating parent directories.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, contents).unwrap();
        path
    }

    pub fn mkdir(&self, rel: &str) {
        fs::create_dir_all(self.root().join(rel)).unwrap();
    }

    #[cfg(unix)]
    pub fn symlink(&self, target: impl AsRef<Path>, rel: &str) {
        std::os::unix::fs::symlink(target, self.root().join(rel)).unwrap();
    }
}

/// The schema a server would advertise as `inputSchema` for `T`.
pub fn input_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// The schema a server would advertise as `outputSchema` for `T`.
pub fn output_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// Serialises `output` and checks it against `T`'s output schema (formats
/// such as `date-time` included), returning the JSON.
pub fn validated<T: JsonSchema + Serialize>(output: &T) -> Value {
    let schema = output_schema::<T>();
    let value = serde_json::to_value(output).unwrap();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{value:#} does not match its schema: {errors:?}"
    );
    value
}

/// True when `value` is valid against `schema`.
pub fn is_valid(schema: &Value, value: &Value) -> bool {
    jsonschema::validator_for(schema).unwrap().is_valid(value)
}
