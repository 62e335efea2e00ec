//! `analyze_dataset`: statistics over a CSV file, with the seed's
//! conditional (`allOf`/`if`/`then`) output schema.

mod stats;
mod table;

use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, json_schema};
use serde::{Deserialize, Serialize};

use crate::error::WorkspaceError;
use crate::limits::{DATASET_MAX_BYTES, DATASET_MAX_CORRELATION_COLUMNS};
use crate::{Workspace, fsutil, text};

/// Which analysis `analyze_dataset` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AnalysisType {
    /// Per numeric column: count, mean, median, standard deviation, min, max.
    Descriptive,
    /// Pearson correlation of every pair of numeric columns.
    Correlation,
}

/// Input of `analyze_dataset`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnalyzeDatasetInput {
    /// CSV file to analyse, relative to the workspace root. Comma-separated,
    /// UTF-8, first row naming the columns.
    pub path: String,
    /// `descriptive` for per-column statistics, `correlation` for pairwise
    /// Pearson coefficients.
    pub analysis_type: AnalysisType,
}

/// Result of `analyze_dataset`: `statistics` is present exactly for
/// `descriptive`, `correlations` exactly for `correlation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = require_by_analysis_type)]
pub struct DatasetAnalysis {
    /// The analysis that was run.
    pub analysis_type: AnalysisType,
    /// Size of the dataset.
    pub summary: DatasetSummary,
    /// For `descriptive`: statistics per numeric column, keyed by column
    /// name. A column is numeric when every non-missing cell is a finite
    /// number and at least one cell is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "BTreeMap<String, ColumnStatistics>")]
    pub statistics: Option<BTreeMap<String, ColumnStatistics>>,
    /// For `correlation`: one entry per pair of numeric columns, in header
    /// order, over the rows where both have a value. Pairs with fewer than
    /// two such rows or where either column is constant are left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<Correlation>")]
    pub correlations: Option<Vec<Correlation>>,
}

/// Size of a dataset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatasetSummary {
    /// Data rows, not counting the header row.
    pub total_rows: u64,
    /// Columns named by the header row.
    pub total_columns: u64,
    /// Missing cells: empty, `NA`, `N/A`, `NaN`, `null` or `None` (any
    /// case), or absent because the row is short.
    pub missing_values: u64,
}

/// Statistics of one numeric column, over its non-missing values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ColumnStatistics {
    /// Number of non-missing values.
    pub count: u64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (the mean of the two middle values for an even count).
    pub median: f64,
    /// Sample standard deviation (divides by count − 1; 0 for a single value).
    #[schemars(range(min = 0))]
    pub standard_deviation: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

/// Pearson correlation of two numeric columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Correlation {
    /// The first column's name (earlier in the header).
    pub variable1: String,
    /// The second column's name.
    pub variable2: String,
    /// Pearson's r, from −1 (perfect inverse) through 0 (none) to 1 (perfect).
    #[schemars(range(min = -1, max = 1))]
    pub coefficient: f64,
}

/// Adds the seed's conditional requirements: `statistics` for descriptive,
/// `correlations` for correlation.
fn require_by_analysis_type(schema: &mut Schema) {
    let when = |kind: &str, field: &str| {
        json_schema!({
            "if": { "properties": { "analysisType": { "const": kind } } },
            "then": { "required": [field] }
        })
    };
    schema.insert(
        "allOf".to_owned(),
        serde_json::Value::Array(vec![
            when("descriptive", "statistics").into(),
            when("correlation", "correlations").into(),
        ]),
    );
}

impl Workspace {
    /// Runs `input.analysis_type` over the CSV file at `input.path`.
    pub fn analyze_dataset(
        &self,
        input: AnalyzeDatasetInput,
    ) -> Result<DatasetAnalysis, WorkspaceError> {
        let user = input.path.as_str();
        let target = self.root.target(user)?;
        let (file, _) = self
            .root
            .open_file(&target, user, Some(DATASET_MAX_BYTES))?;
        let (bytes, more) = fsutil::read_prefix(file, DATASET_MAX_BYTES, user)?;
        if more {
            // The file grew past the limit after it was measured.
            return Err(WorkspaceError::too_large(
                user,
                DATASET_MAX_BYTES + 1,
                DATASET_MAX_BYTES,
            ));
        }
        if text::looks_binary(&bytes) {
            return Err(WorkspaceError::binary(user, "contains a NUL byte"));
        }
        let csv_text = std::str::from_utf8(&bytes).map_err(|err| {
            WorkspaceError::binary(
                user,
                format!("not valid UTF-8 at byte offset {}", err.valid_up_to()),
            )
        })?;
        let table = table::parse(csv_text, user)?;
        let mut analysis = DatasetAnalysis {
            analysis_type: input.analysis_type,
            summary: DatasetSummary {
                total_rows: table.rows,
                total_columns: table.columns.len() as u64,
                missing_values: table.missing,
            },
            statistics: None,
            correlations: None,
        };
        let numeric: Vec<&table::Column> = table
            .columns
            .iter()
            .filter(|column| column.numeric && !column.values.is_empty())
            .collect();
        match input.analysis_type {
            AnalysisType::Descriptive => {
                let statistics = numeric
                    .iter()
                    .filter_map(|column| {
                        let d = stats::describe(&column.values)?;
                        Some((
                            column.name.clone(),
                            ColumnStatistics {
                                count: d.count,
                                mean: d.mean,
                                median: d.median,
                                standard_deviation: d.std_dev,
                                min: d.min,
                                max: d.max,
                            },
                        ))
                    })
                    .collect();
                analysis.statistics = Some(statistics);
            }
            AnalysisType::Correlation => {
                if numeric.len() as u64 > DATASET_MAX_CORRELATION_COLUMNS {
                    return Err(WorkspaceError::too_many(
                        user,
                        "numeric columns",
                        DATASET_MAX_CORRELATION_COLUMNS,
                        " (the most a correlation analysis handles)",
                    ));
                }
                let mut correlations = Vec::new();
                for (i, a) in numeric.iter().enumerate() {
                    for b in &numeric[i + 1..] {
                        if let Some(coefficient) = stats::pearson(a, b) {
                            correlations.push(Correlation {
                                variable1: a.name.clone(),
                                variable2: b.name.clone(),
                                coefficient,
                            });
                        }
                    }
                }
                analysis.correlations = Some(correlations);
            }
        }
        Ok(analysis)
    }
}
