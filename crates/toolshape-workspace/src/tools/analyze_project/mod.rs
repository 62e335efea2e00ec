//! `analyze_project`: the seed's `analyze_project_structure` output shape.

mod languages;
mod manifests;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use cap_std::fs::Dir;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::WorkspaceError;
use crate::fsutil::EntryKind;
use crate::limits::{
    MANIFEST_MAX_BYTES, PROJECT_LOC_MAX_FILE_BYTES, PROJECT_MAX_DEPTH, PROJECT_MAX_FILES,
    PROJECT_MAX_VISITED, WALK_MAX_PENDING_BYTES, reserve,
};
use crate::sandbox::walk::{self, Step, WalkEntry, WalkLimits};
use crate::sandbox::{self as confined, Target};
use crate::{Workspace, text};

/// Input of `analyze_project`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalyzeProjectInput {
    /// Project directory, relative to the workspace root; the root when
    /// omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// Result of `analyze_project`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectAnalysis {
    /// The analysed project.
    pub project: Project,
}

/// Facts about one project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    /// Package name from the manifest (Cargo.toml `[package]`, package.json,
    /// pyproject.toml `[project]`), else the directory's name.
    pub name: String,
    /// Version from the same manifest; absent when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub version: Option<String>,
    /// Languages of the recognised files, most files first.
    pub languages: Vec<Language>,
    /// Declared dependencies.
    pub dependencies: Dependencies,
    /// Size metrics.
    pub metrics: Metrics,
}

/// One language's share of the project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Language {
    /// Language name, e.g. `Rust`, `TypeScript`, `Markdown`.
    pub name: String,
    /// Share of the recognised files, in percent (rounded to two decimals;
    /// the shares add up to about 100).
    #[schemars(range(min = 0, max = 100))]
    pub percentage: f64,
    /// Number of files in this language.
    pub file_count: u64,
}

/// Declared dependencies of the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Dependencies {
    /// Names of direct dependencies, sorted: Cargo.toml `[dependencies]`,
    /// `[target.*.dependencies]` and `[workspace.dependencies]`, package.json
    /// `dependencies`, pyproject.toml `[project] dependencies`. Development
    /// and build dependencies are not included.
    pub direct: Vec<String>,
}

/// Size metrics of the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    /// Lines in files of programming languages (not Markdown, JSON, TOML,
    /// YAML, XML or reStructuredText), including blank lines and comments;
    /// files over 4 MiB and binary files are not counted.
    pub lines_of_code: u64,
}

/// Directories never walked into (besides every hidden directory).
const SKIPPED_DIRS: [&str; 3] = ["target", "node_modules", "__pycache__"];

impl Workspace {
    /// Summarises the project at `input.path` (the root by default).
    pub fn analyze_project(
        &self,
        input: AnalyzeProjectInput,
    ) -> Result<ProjectAnalysis, WorkspaceError> {
        let _memory = self
            .budget
            .reserve("analyze_project", reserve::ANALYZE_PROJECT)?;
        let user = input.path.as_deref().unwrap_or(".");
        let target = self.root.target(user)?;
        let dir = self.root.open_dir(&target, user)?;
        let (name, version, direct) = read_manifests(&dir);
        let name = match name {
            Some(name) => name,
            None => self.dir_name(&target, user)?,
        };
        let tally = tally_files(dir, &target.rel);
        Ok(ProjectAnalysis {
            project: Project {
                name,
                version,
                languages: tally.languages(),
                dependencies: Dependencies {
                    direct: direct.into_iter().collect(),
                },
                metrics: Metrics {
                    lines_of_code: tally.lines_of_code,
                },
            },
        })
    }

    /// The name of the directory `target` leads to (the root's own name for `.`).
    fn dir_name(&self, target: &Target, user: &str) -> Result<String, WorkspaceError> {
        let resolved = self.root.resolved(target, user)?;
        let name = match resolved.rsplit_once('/') {
            Some((_, last)) => Some(last.to_owned()),
            None if resolved != "." => Some(resolved),
            None => self
                .root()
                .file_name()
                .map(|name| name.to_string_lossy().into_owned()),
        };
        Ok(name.unwrap_or_else(|| "project".to_owned()))
    }
}

/// Name and version from the first manifest found, dependencies from all.
fn read_manifests(dir: &Dir) -> (Option<String>, Option<String>, BTreeSet<String>) {
    let parsers: [(&str, manifests::Parser); 3] = [
        ("Cargo.toml", manifests::cargo),
        ("package.json", manifests::package_json),
        ("pyproject.toml", manifests::pyproject),
    ];
    let mut primary: Option<(Option<String>, Option<String>)> = None;
    let mut direct = BTreeSet::new();
    for (file, parse) in parsers {
        let Some(facts) = manifest_text(dir, file).as_deref().and_then(parse) else {
            continue;
        };
        primary.get_or_insert((facts.name, facts.version));
        direct.extend(facts.dependencies);
    }
    let (name, version) = primary.unwrap_or_default();
    (name, version, direct)
}

/// A manifest's text, opened from the project directory's handle (a link
/// is followed only while it stays inside that directory); `None` when
/// missing, not a regular file, too big or not UTF-8.
fn manifest_text(dir: &Dir, file: &str) -> Option<String> {
    // Looked at before it is opened: opening a device may do something.
    if !dir.metadata(file).ok()?.is_file() {
        return None;
    }
    let handle = confined::open_entry_following(dir, file.as_ref()).ok()?;
    let meta = handle.metadata().ok()?;
    if !meta.is_file() || meta.len() > MANIFEST_MAX_BYTES {
        return None;
    }
    // A chunk at a time, stopping once the call has ended.
    let (bytes, more) = crate::fsutil::read_prefix(handle, MANIFEST_MAX_BYTES, file).ok()?;
    if more {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// File counts per language and lines of code.
#[derive(Debug, Default)]
struct Tally {
    files: BTreeMap<&'static str, u64>,
    lines_of_code: u64,
}

impl Tally {
    fn languages(&self) -> Vec<Language> {
        let total: u64 = self.files.values().sum();
        let mut languages: Vec<Language> = self
            .files
            .iter()
            .map(|(name, &count)| Language {
                name: (*name).to_owned(),
                percentage: percentage(count, total),
                file_count: count,
            })
            .collect();
        languages.sort_by(|a, b| b.file_count.cmp(&a.file_count).then(a.name.cmp(&b.name)));
        languages
    }
}

fn percentage(count: u64, total: u64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    // Counts are bounded by PROJECT_MAX_FILES, far below f64's exact range.
    let share = (count as f64) * 100.0 / (total as f64);
    ((share * 100.0).round() / 100.0).clamp(0.0, 100.0)
}

fn skipped(entry: &WalkEntry<'_>) -> bool {
    entry.kind == EntryKind::Dir
        && entry
            .name
            .to_str()
            .is_some_and(|name| name.starts_with('.') || SKIPPED_DIRS.contains(&name))
}

/// Walks `dir` (by handle, never following links) and tallies recognised files.
fn tally_files(dir: Dir, rel: &str) -> Tally {
    let mut tally = Tally::default();
    let limits = WalkLimits {
        max_depth: PROJECT_MAX_DEPTH,
        max_visited: PROJECT_MAX_VISITED,
        max_pending_bytes: WALK_MAX_PENDING_BYTES,
    };
    let mut files = 0_usize;
    walk::walk(dir, rel, limits, |entry| {
        if skipped(entry) {
            return Step::Skip;
        }
        if entry.kind != EntryKind::File {
            return Step::Continue;
        }
        files += 1;
        if files > PROJECT_MAX_FILES {
            return Step::Stop;
        }
        let Some(lang) = entry.name.to_str().and_then(languages::language_of) else {
            return Step::Continue;
        };
        *tally.files.entry(lang.name).or_insert(0) += 1;
        if lang.code {
            tally.lines_of_code += lines_of(entry);
        }
        Step::Continue
    });
    tally
}

/// Lines of a small text file; 0 for big, binary or unreadable ones. The
/// file is opened from its directory's handle without following a link.
fn lines_of(entry: &WalkEntry<'_>) -> u64 {
    let Ok(file) = confined::open_entry_nofollow(entry.parent, entry.name.as_ref()) else {
        return 0;
    };
    let small = file
        .metadata()
        .is_ok_and(|meta| meta.is_file() && meta.len() <= PROJECT_LOC_MAX_FILE_BYTES);
    if !small {
        return 0;
    }
    match text::scan(file.take(PROJECT_LOC_MAX_FILE_BYTES)) {
        Ok(scan) if !scan.binary => scan.lines,
        _ => 0,
    }
}
