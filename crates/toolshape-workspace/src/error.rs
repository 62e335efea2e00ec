//! The one error type every workspace tool returns.

use std::io;
use std::time::Duration;

use thiserror::Error;

/// Longest user-supplied string (path, glob) echoed back in an error
/// message, in characters; longer strings are cut and end in `…`.
pub const MAX_ECHO_CHARS: usize = 200;

/// Why a workspace tool refused or failed.
///
/// Every message is written for the person (or model) that called the tool:
/// it names the offending path relative to the workspace root (never the
/// host's absolute path) and says what to do instead where that helps.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The path is absolute, climbs out with `..`, or resolves (through a
    /// symbolic link) to somewhere outside the workspace root.
    #[error(
        "`{path}` is outside the workspace root; use a path relative to the root (\".\" is the root itself) that stays inside it"
    )]
    OutsideRoot {
        /// The path as given, cut to [`MAX_ECHO_CHARS`].
        path: String,
    },
    /// Nothing exists at the path.
    #[error("`{path}` does not exist in the workspace")]
    NotFound {
        /// The path as given, cut to [`MAX_ECHO_CHARS`].
        path: String,
    },
    /// The tool needs a directory and the path is something else.
    #[error("`{path}` is not a directory")]
    NotADirectory {
        /// The path as given, cut to [`MAX_ECHO_CHARS`].
        path: String,
    },
    /// The tool needs a regular file and the path is something else
    /// (a directory, a socket, a FIFO, a device).
    #[error("`{path}` is not a regular file")]
    NotAFile {
        /// The path as given, cut to [`MAX_ECHO_CHARS`].
        path: String,
    },
    /// The file is not text: it has a NUL byte in its first 8 KiB, or (for
    /// tools that return text) it is not valid UTF-8.
    #[error("`{path}` looks like a binary file ({detail}); this tool only reads text files")]
    Binary {
        /// The path as given, cut to [`MAX_ECHO_CHARS`].
        path: String,
        /// What gave it away, e.g. `contains a NUL byte`.
        detail: String,
    },
    /// The file is bigger than the tool is willing to read.
    #[error("`{path}` is {size} bytes, over this tool's limit of {limit} bytes")]
    TooLarge {
        /// The path as given, cut to [`MAX_ECHO_CHARS`].
        path: String,
        /// The file's size in bytes.
        size: u64,
        /// The tool's limit in bytes.
        limit: u64,
    },
    /// The input holds more of something (directory entries, CSV rows or
    /// columns) than the tool handles.
    #[error("`{path}` has more than {limit} {what}{hint}")]
    TooMany {
        /// The path as given, cut to [`MAX_ECHO_CHARS`].
        path: String,
        /// What there are too many of, e.g. `directory entries`.
        what: &'static str,
        /// The tool's limit.
        limit: u64,
        /// Advice on what to do instead, starting with `; ` (or empty).
        hint: &'static str,
    },
    /// The path cannot name anything (it contains a NUL byte, or is absurdly long).
    #[error("invalid path `{path}`: {reason}")]
    InvalidPath {
        /// The path as given, cut to [`MAX_ECHO_CHARS`].
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The glob pattern given to `find` does not parse, or points outside the root.
    #[error("invalid glob `{glob}`: {reason}")]
    InvalidGlob {
        /// The pattern as given, cut to [`MAX_ECHO_CHARS`].
        glob: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The CSV file given to `analyze_dataset` cannot be analysed.
    #[error("invalid CSV at line {line}: {reason}")]
    InvalidCsv {
        /// The 1-based line of the file where the problem is.
        line: u64,
        /// What is wrong there.
        reason: String,
    },
    /// The server's memory budget stayed full for as long as this call
    /// could wait: other calls hold it. Trying again later can succeed.
    #[error(
        "the server is busy: `{tool}` needs {} of the server's memory budget of {}, which other calls kept in use for {} s; try again shortly",
        mib(*needed),
        mib(*budget),
        waited.as_secs_f64().round()
    )]
    Busy {
        /// The tool that was called.
        tool: &'static str,
        /// What the call would reserve, in bytes.
        needed: u64,
        /// The whole budget, in bytes.
        budget: u64,
        /// How long the call waited.
        waited: Duration,
    },
    /// As many workspace operations as the server runs at once were
    /// running (each on a thread of its own), and none ended while this
    /// call could wait. Trying again later can succeed.
    #[error(
        "the server is busy: {running} workspace operations are running, and no place came free for this call within {:.1} s; try again shortly",
        waited.as_secs_f64()
    )]
    TooManyRunning {
        /// How many run at once at most.
        running: usize,
        /// How long the call waited.
        waited: Duration,
    },
    /// The call ended (cancelled, or past its time limit) before its work
    /// did: the work stopped there.
    #[error("the call ended before its work was done")]
    CallEnded,
    /// The call needs more memory than the server's whole budget allows.
    #[error(
        "`{tool}` needs {} of memory, more than the server's whole memory budget of {}",
        mib(*needed),
        mib(*budget)
    )]
    OverBudget {
        /// The tool that was called.
        tool: &'static str,
        /// What the call would reserve, in bytes.
        needed: u64,
        /// The whole budget, in bytes.
        budget: u64,
    },
    /// The operating system refused an operation (permissions, a symlink
    /// loop, a file that vanished mid-read, …).
    #[error("could not read `{path}`: {source}")]
    Io {
        /// The path as given, cut to [`MAX_ECHO_CHARS`].
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// Bytes as MiB for messages: `12 MiB`, `0.25 MiB`.
fn mib(bytes: u64) -> String {
    let mib = bytes as f64 / (1024.0 * 1024.0);
    if mib >= 10.0 || mib.fract() == 0.0 {
        format!("{mib:.0} MiB")
    } else {
        format!("{mib:.2} MiB")
    }
}

/// Cuts `s` to [`MAX_ECHO_CHARS`] characters, marking the cut with `…`.
pub(crate) fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_ECHO_CHARS) {
        None => s.to_owned(),
        Some((end, _)) => format!("{}…", &s[..end]),
    }
}

impl WorkspaceError {
    pub(crate) fn outside_root(path: &str) -> Self {
        Self::OutsideRoot { path: clip(path) }
    }

    pub(crate) fn not_found(path: &str) -> Self {
        Self::NotFound { path: clip(path) }
    }

    pub(crate) fn not_a_directory(path: &str) -> Self {
        Self::NotADirectory { path: clip(path) }
    }

    pub(crate) fn not_a_file(path: &str) -> Self {
        Self::NotAFile { path: clip(path) }
    }

    pub(crate) fn binary(path: &str, detail: impl Into<String>) -> Self {
        Self::Binary {
            path: clip(path),
            detail: detail.into(),
        }
    }

    pub(crate) fn too_large(path: &str, size: u64, limit: u64) -> Self {
        Self::TooLarge {
            path: clip(path),
            size,
            limit,
        }
    }

    pub(crate) fn too_many(path: &str, what: &'static str, limit: u64, hint: &'static str) -> Self {
        Self::TooMany {
            path: clip(path),
            what,
            limit,
            hint,
        }
    }

    pub(crate) fn invalid_path(path: &str, reason: &'static str) -> Self {
        Self::InvalidPath {
            path: clip(path),
            reason,
        }
    }

    pub(crate) fn invalid_glob(glob: &str, reason: impl Into<String>) -> Self {
        Self::InvalidGlob {
            glob: clip(glob),
            reason: clip(&reason.into()),
        }
    }

    pub(crate) fn invalid_csv(line: u64, reason: impl Into<String>) -> Self {
        Self::InvalidCsv {
            line,
            reason: clip(&reason.into()),
        }
    }

    pub(crate) fn io(path: &str, source: io::Error) -> Self {
        Self::Io {
            path: clip(path),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_short_strings_and_cuts_long_ones_on_char_boundaries() {
        assert_eq!(clip("abc"), "abc");
        let long = "é".repeat(500);
        let cut = clip(&long);
        assert_eq!(cut.chars().count(), MAX_ECHO_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
