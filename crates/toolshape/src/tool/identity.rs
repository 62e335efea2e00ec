//! Who a tool is beyond its MCP name: its toolkit and version, and the
//! qualified name other protocols know it by (OTC / OXP `Toolkit.Tool@x.y.z`).
//!
//! The mapping from an MCP name to a qualified name:
//!
//! - the toolkit is the one set with [`Tool::toolkit`](super::Tool::toolkit),
//!   or [`DEFAULT_TOOLKIT`];
//! - the tool part is the MCP name, less a leading `Toolkit_` (so
//!   `Calculator_Add` in toolkit `Calculator` is `Calculator.Add`), with
//!   every `-`, `.` and other character outside `A-Z a-z 0-9 _` written `_`
//!   (`get-weather` is `Tools.get_weather`; a relayed `github/create_issue`
//!   is `Tools.github_create_issue`);
//! - the OTC `name` is `Toolkit_Tool`, at most 64 characters;
//! - no version means [`DEFAULT_VERSION`]; an MCP peer sees only the latest
//!   version of each name (MCP has no tool versions).
//!
//! A tool whose toolkit is invalid, or whose qualified name is the same as
//! another tool's, is refused when it is registered. One whose OTC `name`
//! would pass 64 characters (an MCP name may have 128) is registered
//! without a qualified name: it is served over MCP only.

use std::fmt;
use std::str::FromStr;

/// The toolkit of a tool that names none.
pub const DEFAULT_TOOLKIT: &str = "Tools";

/// The version of a tool that names none.
pub const DEFAULT_VERSION: ToolVersion = ToolVersion {
    major: 1,
    minor: 0,
    patch: 0,
};

/// Most characters of an OTC tool `name` (`^[A-Za-z0-9_-]{1,64}$`).
pub const MAX_QUALIFIED_NAME_CHARS: usize = 64;

/// A tool's version: `major.minor.patch`, compared numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolVersion {
    /// The major version.
    pub major: u64,
    /// The minor version.
    pub minor: u64,
    /// The patch version.
    pub patch: u64,
}

impl ToolVersion {
    /// A version from its three numbers.
    pub const fn new(major: u64, minor: u64, patch: u64) -> Self {
        ToolVersion {
            major,
            minor,
            patch,
        }
    }
}

impl fmt::Display for ToolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A version that is not `x.y.z` (or `x`, meaning `x.0.0`) with decimal numbers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid version {0:?}: expected x.y.z (or x, meaning x.0.0) with decimal numbers")]
pub struct InvalidVersion(pub String);

fn number(part: &str) -> Option<u64> {
    if part.is_empty() || part.len() > 19 || !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

impl FromStr for ToolVersion {
    type Err = InvalidVersion;

    /// `x.y.z`, or `x` (meaning `x.0.0`, as OTC's `@x`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || InvalidVersion(toolshape_protocol::text::excerpt(text, 40));
        let parts: Vec<&str> = text.split('.').collect();
        match parts.as_slice() {
            [major] => Ok(ToolVersion::new(number(major).ok_or_else(invalid)?, 0, 0)),
            [major, minor, patch] => Ok(ToolVersion::new(
                number(major).ok_or_else(invalid)?,
                number(minor).ok_or_else(invalid)?,
                number(patch).ok_or_else(invalid)?,
            )),
            _ => Err(invalid()),
        }
    }
}

/// A tool's qualified name: `Toolkit.Tool`, and its OTC `name` `Toolkit_Tool`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QualifiedName {
    /// The toolkit.
    pub toolkit: String,
    /// The tool part.
    pub tool: String,
}

impl QualifiedName {
    /// `Toolkit.Tool`.
    pub fn dotted(&self) -> String {
        format!("{}.{}", self.toolkit, self.tool)
    }

    /// `Toolkit_Tool`, the OTC `name`.
    pub fn underscored(&self) -> String {
        format!("{}_{}", self.toolkit, self.tool)
    }
}

/// Why a tool's qualified name cannot be formed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QualifiedNameError {
    /// The toolkit is empty or has a character outside `A-Z a-z 0-9 _`.
    #[error("toolkit {0:?} must be 1 or more of A-Z a-z 0-9 _")]
    Toolkit(String),
    /// The name is empty.
    #[error("the name is empty")]
    Tool,
    /// `Toolkit_Tool` is longer than an OTC name may be.
    #[error("{0:?} is longer than {MAX_QUALIFIED_NAME_CHARS} characters")]
    TooLong(String),
}

fn is_word(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The qualified name of the tool called `name` (its MCP name) in `toolkit`.
pub fn qualify(toolkit: &str, name: &str) -> Result<QualifiedName, QualifiedNameError> {
    let qualified = qualify_unbounded(toolkit, name)?;
    check_length(&qualified)?;
    Ok(qualified)
}

/// Whether `qualified`'s OTC `name` (`Toolkit_Tool`) is short enough.
pub(crate) fn check_length(qualified: &QualifiedName) -> Result<(), QualifiedNameError> {
    let underscored = qualified.underscored();
    if underscored.len() > MAX_QUALIFIED_NAME_CHARS {
        return Err(QualifiedNameError::TooLong(underscored));
    }
    Ok(())
}

/// [`qualify`], whatever the length of the result.
pub(crate) fn qualify_unbounded(
    toolkit: &str,
    name: &str,
) -> Result<QualifiedName, QualifiedNameError> {
    if !is_word(toolkit) {
        return Err(QualifiedNameError::Toolkit(
            toolshape_protocol::text::excerpt(toolkit, 64),
        ));
    }
    let rest = name
        .strip_prefix(toolkit)
        .and_then(|rest| rest.strip_prefix('_'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(name);
    let tool: String = rest
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !is_word(&tool) {
        return Err(QualifiedNameError::Tool);
    }
    Ok(QualifiedName {
        toolkit: toolkit.to_owned(),
        tool,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_compare_and_print() -> Result<(), InvalidVersion> {
        let one: ToolVersion = "1".parse()?;
        assert_eq!(one, ToolVersion::new(1, 0, 0));
        let later: ToolVersion = "1.10.0".parse()?;
        assert!(later > "1.9.9".parse()?);
        assert_eq!(later.to_string(), "1.10.0");
        for bad in [
            "",
            "1.0",
            "1.0.0.0",
            "v1",
            "1.x.0",
            "-1.0.0",
            "1..0",
            "99999999999999999999",
        ] {
            assert!(bad.parse::<ToolVersion>().is_err(), "{bad}");
        }
        Ok(())
    }

    #[test]
    fn names_map_to_qualified_names() -> Result<(), QualifiedNameError> {
        let add = qualify("Calculator", "Calculator_Add")?;
        assert_eq!(
            (add.dotted(), add.underscored()),
            ("Calculator.Add".into(), "Calculator_Add".into())
        );
        let plain = qualify(DEFAULT_TOOLKIT, "get-weather.now")?;
        assert_eq!(plain.dotted(), "Tools.get_weather_now");
        assert_eq!(
            qualify("Workspace", "read_file")?.underscored(),
            "Workspace_read_file"
        );
        // The prefix alone is the tool's name, not an empty tool part.
        assert_eq!(qualify("Calc", "Calc_")?.dotted(), "Calc.Calc_");
        assert!(matches!(
            qualify("bad-kit", "x"),
            Err(QualifiedNameError::Toolkit(_))
        ));
        // A relayed name's other characters are written `_` too.
        assert_eq!(
            qualify(DEFAULT_TOOLKIT, "github/create issue:é")?.dotted(),
            "Tools.github_create_issue__"
        );
        assert!(matches!(qualify("K", ""), Err(QualifiedNameError::Tool)));
        assert!(matches!(
            qualify("K", &"a".repeat(63)),
            Err(QualifiedNameError::TooLong(_))
        ));
        Ok(())
    }
}
