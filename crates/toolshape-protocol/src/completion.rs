//! `completion/complete`: suggestions for a prompt argument or a resource
//! template variable.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::Meta;
use crate::result::ResultType;

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum CompletionRef {
    /// An argument of the prompt `name`.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt.
        name: String,
    },
    /// A variable of the resource template `uri`.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template.
        uri: String,
    },
}

/// The argument being completed and what is typed so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// Its value so far.
    pub value: String,
}

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// The other arguments already given (`{"arguments": {...}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Map<String, Value>>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The suggestions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// How many there are in all, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// The most values a completion carries.
    pub const MAX_VALUES: usize = 100;

    /// These values, cut to [`Completion::MAX_VALUES`] with `total` and
    /// `hasMore` set to say so.
    pub fn from_values(mut values: Vec<String>) -> Self {
        let total = values.len();
        values.truncate(Self::MAX_VALUES);
        Self {
            has_more: Some(total > values.len()),
            total: u64::try_from(total).ok(),
            values,
        }
    }

    /// This completion within the bounds: past [`Completion::MAX_VALUES`]
    /// values, cut with `hasMore` and a `total` of at least as many as given.
    #[must_use]
    pub fn bounded(mut self) -> Self {
        let given = self.values.len();
        if given > Self::MAX_VALUES {
            self.values.truncate(Self::MAX_VALUES);
            self.has_more = Some(true);
            let given = u64::try_from(given).unwrap_or(u64::MAX);
            self.total = Some(self.total.map_or(given, |total| total.max(given)));
        }
        self
    }
}

/// The result of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteResult {
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The suggestions.
    pub completion: Completion,
    /// Optional metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CompleteResult {
    /// A result with `completion`.
    pub fn new(completion: Completion) -> Self {
        Self {
            result_type: None,
            completion,
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Completion;

    fn values(n: usize) -> Vec<String> {
        (0..n).map(|i| i.to_string()).collect()
    }

    #[test]
    fn a_completion_within_bounds_is_left_as_given() {
        let mut given = Completion::from_values(values(3));
        given.total = Some(40);
        given.has_more = Some(true);
        assert_eq!(given.clone().bounded(), given);
    }

    #[test]
    fn past_a_hundred_values_it_is_cut_and_says_so() {
        let mut given = Completion::from_values(Vec::new());
        given.values = values(150);
        let bounded = given.clone().bounded();
        assert_eq!(bounded.values.len(), Completion::MAX_VALUES);
        assert_eq!((bounded.total, bounded.has_more), (Some(150), Some(true)));
        given.total = Some(1_000);
        assert_eq!(given.bounded().total, Some(1_000));
    }
}
