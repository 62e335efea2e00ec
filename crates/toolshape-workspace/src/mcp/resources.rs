//! The workspace's files as MCP resources: `file:///` URIs of their absolute
//! paths under the root, listed (bounded), read whole (text or base64 blob,
//! at most 1 MiB) through the same sandbox as the tools, and completed one
//! directory level at a time.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use base64::Engine as _;
use toolshape::prompt::InvalidArguments;
use toolshape::protocol::ContentBlock;
use toolshape::protocol::content::{
    BlobResourceContents, ResourceContents, ResourceLink, TextResourceContents,
};
use toolshape::protocol::resources::Resource as ResourceDefinition;
use toolshape::resource::{ResourceLister, ResourceNotFound, UriTemplateError, lister};
use toolshape::{ResourceTemplate, ToolError};

use super::blocking;
use crate::{FileContents, ListDirectoryInput, Workspace, WorkspaceError};

/// Most files listed by `resources/list` (the rest stay readable).
pub const MAX_LISTED_FILES: usize = 1_000;
/// Most values a path completion suggests.
const MAX_COMPLETIONS: usize = 100;

/// Bytes kept as they are in a URI path: RFC 3986 unreserved, and `/`.
fn keep(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/')
}

/// `text` percent-encoded for a URI path.
fn encode_path(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        if keep(byte) {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

/// The `file://` URI prefix of the workspace root, ending in `/`.
fn root_prefix(workspace: &Workspace) -> String {
    format!("file://{}/", uri_path(workspace.root()))
}

/// The root as a URI's path, percent-encoded, without a trailing `/`.
#[cfg(not(windows))]
fn uri_path(root: &std::path::Path) -> String {
    encode_path(root.to_string_lossy().trim_end_matches('/'))
}

/// The root as a URI's path, percent-encoded, without a trailing `/`:
/// `C:\dir` as `/C:/dir` (RFC 8089), a share `\\host\share` as
/// `//host/share`.
#[cfg(windows)]
fn uri_path(root: &std::path::Path) -> String {
    let slashed = root.to_string_lossy().replace('\\', "/");
    let slashed = slashed.trim_end_matches('/');
    match slashed.split_once(':') {
        Some((drive, rest))
            if drive.len() == 1 && drive.chars().all(|c| c.is_ascii_alphabetic()) =>
        {
            format!("/{drive}:{}", encode_path(rest))
        }
        _ => format!("/{}", encode_path(slashed)),
    }
}

/// The URI of the file at `path` (relative to the root).
pub fn file_uri(workspace: &Workspace, path: &str) -> String {
    format!("{}{}", root_prefix(workspace), encode_path(path))
}

/// A `resource_link` to the file at `path`.
pub(super) fn link(workspace: &Workspace, path: &str, size: Option<u64>) -> ContentBlock {
    let mut link = ResourceLink::new(file_uri(workspace, path), path);
    link.mime_type = Some(mime_type(path, None).to_owned());
    link.size = size;
    ContentBlock::ResourceLink(link)
}

/// A MIME type guessed from the file name's extension.
fn mime_type(path: &str, contents: Option<&FileContents>) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let known = match extension.as_deref() {
        Some("md" | "markdown") => Some("text/markdown"),
        Some("json") => Some("application/json"),
        Some("toml") => Some("application/toml"),
        Some("yaml" | "yml") => Some("application/yaml"),
        Some("csv") => Some("text/csv"),
        Some("html" | "htm") => Some("text/html"),
        Some("rs") => Some("text/x-rust"),
        Some("py") => Some("text/x-python"),
        Some("js" | "mjs") => Some("text/javascript"),
        Some("png") => Some("image/png"),
        Some("jpg" | "jpeg") => Some("image/jpeg"),
        Some("gif") => Some("image/gif"),
        Some("pdf") => Some("application/pdf"),
        _ => None,
    };
    known.unwrap_or(match contents {
        Some(FileContents::Binary(_)) => "application/octet-stream",
        _ => "text/plain",
    })
}

/// The template that reads any workspace file, `file:///<root>/{+path}`,
/// completing `path` from the directory it names so far.
pub fn file_template(workspace: &Workspace) -> Result<ResourceTemplate, UriTemplateError> {
    let reader = workspace.clone();
    let completer = workspace.clone();
    let template = ResourceTemplate::new(
        format!("{}{{+path}}", root_prefix(workspace)),
        "workspace-file",
        move |_, uri, variables: BTreeMap<String, String>| {
            let path = variables.get("path").cloned().unwrap_or_default();
            let workspace = reader.clone();
            async move {
                let reading = super::run_blocking(&workspace, move |workspace| {
                    workspace.read_file(&path).map(|c| (path, c))
                });
                let read = reading.await?;
                let (path, contents) = match read {
                    Ok(read) => read,
                    // Nothing there (or nothing the sandbox lets it name):
                    // the resource does not exist.
                    Err(
                        WorkspaceError::NotFound { .. }
                        | WorkspaceError::OutsideRoot { .. }
                        | WorkspaceError::NotAFile { .. }
                        | WorkspaceError::NotADirectory { .. },
                    ) => return Err(ToolError::from_error(ResourceNotFound::new(uri))),
                    // A path nothing can have (a NUL byte, too long): the
                    // request's fault, answered as invalid params.
                    Err(WorkspaceError::InvalidPath { path, reason }) => {
                        return Err(InvalidArguments::new(format!(
                            "the resource URI names no possible file ({reason}): {path:?}"
                        ))
                        .into());
                    }
                    Err(WorkspaceError::TooLarge { path, size, limit }) => {
                        return Err(ToolError::new(format!(
                            "`{path}` is {size} bytes, over the {limit} bytes a resource read \
                             returns whole; the read_text tool returns its first part"
                        )));
                    }
                    Err(error) => return Err(ToolError::from_error(error)),
                };
                let mime = mime_type(&path, Some(&contents)).to_owned();
                let contents = match contents {
                    FileContents::Text(text) => {
                        let mut text = TextResourceContents::new(uri, text);
                        text.mime_type = Some(mime);
                        ResourceContents::Text(text)
                    }
                    FileContents::Binary(bytes) => {
                        let blob = base64::engine::general_purpose::STANDARD.encode(bytes);
                        let mut blob = BlobResourceContents::new(uri, blob);
                        blob.mime_type = Some(mime);
                        ResourceContents::Blob(blob)
                    }
                };
                Ok::<_, ToolError>(vec![contents])
            }
        },
    )?;
    Ok(template
        .description(
            "Any file of the workspace, read whole (UTF-8 text, or base64 for binary; at most 1 MiB)",
        )
        .complete("path", move |partial, _| {
            let workspace = completer.clone();
            async move { complete_path(&workspace, partial).await }
        }))
}

/// The entries of the directory `partial` names so far whose names start
/// with its last segment; directories end in `/`.
async fn complete_path(workspace: &Workspace, partial: String) -> Vec<String> {
    // As the URI writes it: `%3F` is a `?`.
    let partial = toolshape::resource::percent_decode(&partial);
    if partial.starts_with('/') {
        // No path under the root starts so: nothing to suggest.
        return Vec::new();
    }
    let (directory, prefix) = match partial.rsplit_once('/') {
        Some((directory, prefix)) => (directory.to_owned(), prefix.to_owned()),
        None => (".".to_owned(), partial.clone()),
    };
    let listing = blocking(workspace, {
        let path = directory.clone();
        move |w| w.list_directory(ListDirectoryInput { path })
    })
    .await;
    let Ok(entries) = listing else {
        return Vec::new();
    };
    let base = if directory == "." {
        String::new()
    } else {
        format!("{directory}/")
    };
    entries
        .into_iter()
        .filter(|entry| entry.name.starts_with(&prefix))
        .take(MAX_COMPLETIONS)
        .map(|entry| {
            let slash = if entry.kind == crate::EntryKind::Dir {
                "/"
            } else {
                ""
            };
            // Written as the URI writes it, so that the template's `{+path}`
            // expansion (which keeps `?`, `#` and `%XX` as they are) gives
            // the file's own URI.
            encode_path(&format!("{base}{}{slash}", entry.name))
        })
        .collect()
}

/// Lists the workspace's files (at most [`MAX_LISTED_FILES`]).
pub fn file_lister(workspace: &Workspace) -> ResourceLister {
    let workspace = workspace.clone();
    lister(move || {
        let listing = blocking(&workspace, |w| w.list_files(MAX_LISTED_FILES));
        let prefix = root_prefix(&workspace);
        async move {
            let (files, _truncated) = listing.await?;
            Ok(files
                .into_iter()
                .map(|file| {
                    let uri = format!("{prefix}{}", encode_path(&file.path));
                    let mut definition = ResourceDefinition::new(uri, file.path.clone());
                    definition.mime_type = Some(mime_type(&file.path, None).to_owned());
                    definition.size = Some(file.size);
                    definition
                })
                .collect())
        }
    })
}
