//! Name, version and direct dependencies from project manifests.

use std::collections::BTreeSet;

use serde_json::Value;

/// Reads one kind of manifest's text; `None` when it does not parse.
pub(crate) type Parser = fn(&str) -> Option<Facts>;

/// What one manifest says about the project.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Facts {
    pub(crate) name: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) dependencies: BTreeSet<String>,
}

fn table(value: Option<&toml::Value>) -> Option<&toml::Table> {
    value.and_then(toml::Value::as_table)
}

fn keys_of(deps: Option<&toml::Table>, into: &mut BTreeSet<String>) {
    if let Some(deps) = deps {
        into.extend(deps.keys().cloned());
    }
}

/// A `Cargo.toml`: `[package]` name and version (also an inherited
/// `version.workspace = true`), keys of `[dependencies]`,
/// `[target.*.dependencies]` and `[workspace.dependencies]`. A virtual
/// workspace has no name; its version is `[workspace.package] version`.
pub(crate) fn cargo(text: &str) -> Option<Facts> {
    let doc: toml::Table = toml::from_str(text).ok()?;
    let package = table(doc.get("package"));
    let workspace = table(doc.get("workspace"));
    let workspace_version = table(workspace.and_then(|w| w.get("package")))
        .and_then(|p| p.get("version"))
        .and_then(toml::Value::as_str);
    let version = match package.and_then(|p| p.get("version")) {
        Some(toml::Value::String(version)) => Some(version.as_str()),
        Some(toml::Value::Table(_)) | None => workspace_version,
        Some(_) => None,
    };
    let mut dependencies = BTreeSet::new();
    keys_of(table(doc.get("dependencies")), &mut dependencies);
    keys_of(
        table(workspace.and_then(|w| w.get("dependencies"))),
        &mut dependencies,
    );
    if let Some(targets) = table(doc.get("target")) {
        for target in targets.values() {
            keys_of(table(target.get("dependencies")), &mut dependencies);
        }
    }
    Some(Facts {
        name: package
            .and_then(|p| p.get("name"))
            .and_then(toml::Value::as_str)
            .map(str::to_owned),
        version: version.map(str::to_owned),
        dependencies,
    })
}

/// A `package.json`: `name`, `version`, keys of `dependencies`.
pub(crate) fn package_json(text: &str) -> Option<Facts> {
    let doc: Value = serde_json::from_str(text).ok()?;
    let string = |key: &str| doc.get(key).and_then(Value::as_str).map(str::to_owned);
    let dependencies = doc
        .get("dependencies")
        .and_then(Value::as_object)
        .map(|deps| deps.keys().cloned().collect())
        .unwrap_or_default();
    Some(Facts {
        name: string("name"),
        version: string("version"),
        dependencies,
    })
}

/// A `pyproject.toml`: `[project]` name, version and the names in
/// `dependencies` (PEP 508 strings such as `requests>=2`).
pub(crate) fn pyproject(text: &str) -> Option<Facts> {
    let doc: toml::Table = toml::from_str(text).ok()?;
    let project = table(doc.get("project"))?;
    let string = |key: &str| {
        project
            .get(key)
            .and_then(toml::Value::as_str)
            .map(str::to_owned)
    };
    let dependencies = project
        .get("dependencies")
        .and_then(toml::Value::as_array)
        .map(|deps| {
            deps.iter()
                .filter_map(toml::Value::as_str)
                .map(requirement_name)
                .filter(|name| !name.is_empty())
                .collect()
        })
        .unwrap_or_default();
    Some(Facts {
        name: string("name"),
        version: string("version"),
        dependencies,
    })
}

/// The distribution name at the start of a PEP 508 requirement.
fn requirement_name(requirement: &str) -> String {
    requirement
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_package_and_workspace() {
        let facts = cargo(
            "[package]\nname = \"demo\"\nversion.workspace = true\n\
             [workspace.package]\nversion = \"1.2.3\"\n\
             [dependencies]\nserde = \"1\"\nlocal = { path = \"x\" }\n\
             [target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n\
             [workspace.dependencies]\nanyhow = \"1\"\n\
             [dev-dependencies]\ntempfile = \"3\"\n",
        );
        let facts = facts.unwrap_or_default();
        assert_eq!(facts.name.as_deref(), Some("demo"));
        assert_eq!(facts.version.as_deref(), Some("1.2.3"));
        let deps: Vec<_> = facts.dependencies.iter().map(String::as_str).collect();
        assert_eq!(deps, ["anyhow", "libc", "local", "serde"]);
        assert_eq!(cargo("not [toml"), None);
    }

    #[test]
    fn package_json_and_pyproject() {
        let js = package_json(r#"{"name":"web","version":"0.1.0","dependencies":{"react":"^18"}}"#)
            .unwrap_or_default();
        assert_eq!(js.name.as_deref(), Some("web"));
        assert!(js.dependencies.contains("react"));
        let py = pyproject(
            "[project]\nname = \"tool\"\nversion = \"2.0\"\ndependencies = [\"requests>=2\", \"numpy ; python_version>'3'\"]\n",
        )
        .unwrap_or_default();
        assert_eq!(py.version.as_deref(), Some("2.0"));
        let deps: Vec<_> = py.dependencies.iter().map(String::as_str).collect();
        assert_eq!(deps, ["numpy", "requests"]);
    }
}
