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
    Ok(read_bounded(path)?
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect())
}

/// The whole of `path`, trimmed, as [`from_env`] reads a variable: a file
/// and `VAR="$(cat file)"` give the same secret.
pub fn from_file(path: &Path) -> Result<String, SecretError> {
    let text = read_bounded(path)?.trim().to_owned();
    if text.is_empty() {
        return Err(SecretError::File {
            path: path.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, "the file is empty"),
        });
    }
    Ok(text)
}

/// The text of `path`, read through [`MAX_SECRET_FILE_BYTES`].
fn read_bounded(path: &Path) -> Result<String, SecretError> {
    use std::io::Read;

    let failed = |source| SecretError::File {
        path: path.to_owned(),
        source,
    };
    // Read through the bound itself, not after a size check: a pipe, a
    // device or a `/proc` file reports no size.
    let file = std::fs::File::open(path).map_err(failed)?;
    let mut text = String::new();
    file.take(MAX_SECRET_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(failed)?;
    if text.len() as u64 > MAX_SECRET_FILE_BYTES {
        return Err(SecretError::TooLarge(path.to_owned()));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_file_is_read_whole_as_a_variable_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secret");
        std::fs::write(&file, "  first line\n# not a comment here\n\n").unwrap();
        assert_eq!(
            from_file(&file).unwrap(),
            "first line\n# not a comment here"
        );
        std::fs::write(&file, " \n").unwrap();
        assert!(from_file(&file).is_err());
        // Keys: one per line, comments and blank lines left out.
        std::fs::write(&file, "k1\n# c\n\n k2 \n").unwrap();
        assert_eq!(lines_from_file(&file).unwrap(), ["k1", "k2"]);
    }

    #[test]
    fn a_file_past_the_bound_is_refused_whatever_size_it_reports() {
        let dir = tempfile::tempdir().unwrap();
        let large = dir.path().join("large");
        std::fs::write(&large, vec![b'k'; 64 * 1024 + 1]).unwrap();
        assert!(matches!(
            lines_from_file(&large),
            Err(SecretError::TooLarge(_))
        ));
        // A device reporting no size, read only up to the bound.
        #[cfg(unix)]
        assert!(matches!(
            lines_from_file(Path::new("/dev/zero")),
            Err(SecretError::TooLarge(_))
        ));
        let key = dir.path().join("key");
        std::fs::write(&key, "# comment\n\n  k1  \nk2\n").unwrap();
        assert_eq!(lines_from_file(&key).unwrap(), ["k1", "k2"]);
    }
}
