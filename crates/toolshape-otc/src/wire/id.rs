//! Tool ids: `Toolkit.Tool`, optionally `@x` (meaning `x.0.0`) or `@x.y.z`.

use std::fmt;

use toolshape::tool::ToolVersion;

/// Most characters of a tool id.
pub const MAX_TOOL_ID_CHARS: usize = 256;

/// A parsed tool id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolId {
    /// `Toolkit.Tool`.
    pub qualified: String,
    /// The version asked for; `None` means the latest.
    pub version: Option<ToolVersion>,
}

/// Why a tool id is not `Toolkit.Tool[@version]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid tool_id {0:?}: expected Toolkit.Tool, Toolkit.Tool@x or Toolkit.Tool@x.y.z")]
pub struct InvalidToolId(pub String);

fn is_word(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl ToolId {
    /// Parses `text` (the pattern of the OTC `ToolId` schema).
    pub fn parse(text: &str) -> Result<ToolId, InvalidToolId> {
        let invalid = || InvalidToolId(toolshape_protocol::text::excerpt(text, 80));
        if text.len() > MAX_TOOL_ID_CHARS {
            return Err(invalid());
        }
        let (qualified, version) = match text.split_once('@') {
            Some((qualified, version)) => (qualified, Some(version)),
            None => (text, None),
        };
        let Some((toolkit, tool)) = qualified.split_once('.') else {
            return Err(invalid());
        };
        if !is_word(toolkit) || !is_word(tool) {
            return Err(invalid());
        }
        let version = version
            .map(|v| v.parse::<ToolVersion>().map_err(|_| invalid()))
            .transpose()?;
        Ok(ToolId {
            qualified: qualified.to_owned(),
            version,
        })
    }

    /// The toolkit part.
    pub fn toolkit(&self) -> &str {
        self.qualified
            .split_once('.')
            .map_or("", |(toolkit, _)| toolkit)
    }

    /// The tool part.
    pub fn tool(&self) -> &str {
        self.qualified.split_once('.').map_or("", |(_, tool)| tool)
    }
}

impl fmt::Display for ToolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.version {
            Some(version) => write!(f, "{}@{version}", self.qualified),
            None => f.write_str(&self.qualified),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_as_the_pattern_says() -> Result<(), InvalidToolId> {
        let plain = ToolId::parse("Calculator.Add")?;
        assert_eq!(
            (plain.toolkit(), plain.tool(), plain.version),
            ("Calculator", "Add", None)
        );
        assert_eq!(
            ToolId::parse("Calculator.Add@1")?.version,
            Some(ToolVersion::new(1, 0, 0))
        );
        assert_eq!(
            ToolId::parse("Calculator.Add@1.2.3")?.to_string(),
            "Calculator.Add@1.2.3"
        );
        for bad in [
            "",
            "Add",
            ".Add",
            "Calc.",
            "Calc.Add@",
            "Calc.Add@1.2",
            "Calc.Add@v1",
            "Calc.A-dd",
            "Calc.Add.More",
            "Calc.Add@1.2.3.4",
            "Calc .Add",
        ] {
            assert!(ToolId::parse(bad).is_err(), "{bad}");
        }
        assert!(ToolId::parse(&format!("K.{}", "a".repeat(300))).is_err());
        Ok(())
    }
}
