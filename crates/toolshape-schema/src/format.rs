//! How the `format` keyword is treated: asserted, annotated, or as the dialect says.

/// How an engine treats `format` (`date-time`, `email`, `uri`, `idn-hostname`, ...).
///
/// JSON Schema 2020-12 and 2019-09 make `format` an annotation unless the
/// meta-schema asks for assertion; draft-07 and older leave it to the
/// implementation. The engine asserts by default: a tool that declares
/// `"format": "date-time"` gets date-times. Formats the engine does not know
/// (`int32`, ...) never fail an instance in any mode.
///
/// ```
/// use serde_json::json;
/// use toolshape_schema::{FormatMode, SchemaEngine};
/// let schema = json!({"type": "string", "format": "date"});
///
/// let asserting = SchemaEngine::builder().build();
/// assert!(asserting.compile(&schema)?.validate(&json!("yesterday")).is_err());
///
/// let annotating = SchemaEngine::builder().format_mode(FormatMode::Annotate).build();
/// assert!(annotating.compile(&schema)?.validate(&json!("yesterday")).is_ok());
/// # Ok::<(), toolshape_schema::SchemaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum FormatMode {
    /// Every known format is an assertion, in every dialect (the default).
    #[default]
    Assert,
    /// `format` is only an annotation: it never fails an instance.
    Annotate,
    /// As each dialect specifies by default: an annotation in 2020-12 and
    /// 2019-09, unless the schema's meta-schema requires format assertion
    /// (2020-12's format-assertion vocabulary, or 2019-09's format vocabulary
    /// declared required); an assertion in draft-07, draft-06 and draft-04,
    /// where the choice is the implementation's. This is what the official
    /// JSON Schema test suite expects of its required tests.
    DialectDefault,
}

impl FormatMode {
    /// The override to hand the validator library, `None` to keep its per-dialect default.
    pub(crate) fn assert_formats(self) -> Option<bool> {
        match self {
            FormatMode::Assert => Some(true),
            FormatMode::Annotate => Some(false),
            FormatMode::DialectDefault => None,
        }
    }
}
