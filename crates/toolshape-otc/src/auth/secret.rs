//! Where keys and secrets come from: an environment variable or a file,
//! never the command line (where `ps` and shell history would show them).

use std::path::{Path, PathBuf};

/// Largest secret file read.
const MAX_SECRET_FILE_BYTES: u64 = 64 * 1024;

/// A key or secret that could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// The environment variable is not set, or not Unicode, or empty.
    #[error("environment variable {0} is not set (or empty)")]
    MissingVariable(String),
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than a secret should be.
    #[error("{0} is larger than {MAX_SECRET_FILE_BYTES} bytes")]
    TooLarge(PathBuf),
}

/// The value of the environment variable `name`, trimmed.
pub fn from_env(name: &str) -> Result<String, SecretError> {
    std::env::var(name)
        .ok()
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
        .ok_or_else(|| SecretError::MissingVariable(name.to_owned()))
}

/// The lines of `path` that are neither empty nor `#` comments, trimmed
/// (one key per line).
pub fn lines_from_file(path: &Path) -> Result<Vec<String>, SecretError> {
    let size = std::fs::metadata(path)
        .map_err(|source| SecretError::File {
            path: path.to_owned(),
            source,
        })?
        .len();
    if size > MAX_SECRET_FILE_BYTES {
        return Err(SecretError::TooLarge(path.to_owned()));
    }
    let text = std::fs::read_to_string(path).map_err(|source| SecretError::File {
        path: path.to_owned(),
        source,
    })?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect())
}

/// The first key of `path` (see [`lines_from_file`]).
pub fn from_file(path: &Path) -> Result<String, SecretError> {
    lines_from_file(path)?
        .into_iter()
        .next()
        .ok_or_else(|| SecretError::File {
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, "no key in the file"),
        })
}
