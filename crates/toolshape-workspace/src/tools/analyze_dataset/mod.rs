//! `analyze_dataset`: statistics over a CSV file, with the seed's
//! conditional (`allOf`/`if`/`then`) output schema.

mod input;
mod scan;
mod stats;

use std::collections::BTreeMap;
use std::io::{Cursor, Read, Seek, SeekFrom};

use schemars::{JsonSchema, Schema, json_schema};
use serde::{Deserialize, Serialize};

use crate::error::WorkspaceError;
use crate::limits::{DATASET_MAX_BYTES, DATASET_MAX_CORRELATION_COLUMNS, SNIFF_BYTES, reserve};
use crate::{Workspace, text};

use scan::{PairPlan, Plan, Scan};
use stats::Median;

/// Which analysis `analyze_dataset` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AnalysisType {
    /// Per numeric column: count, mean, median (exact), standard deviation,
    /// min, max.
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
    /// Median, exact (the mean of the two middle values for an even count):
    /// counted in the one pass over the file while the column has at most
    /// 256 distinct values, else from a second pass that keeps every value
    /// of the column.
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
    /// Runs `input.analysis_type` over the CSV file at `input.path`, in one
    /// streaming pass (two for a correlation over a file whose header names
    /// more than 50 columns: the second over the numeric ones only; two for
    /// a description with a column of more than 256 distinct values: the
    /// second keeps those columns' values, 8 bytes each from the memory
    /// budget, for their exact medians).
    pub fn analyze_dataset(
        &self,
        input: AnalyzeDatasetInput,
    ) -> Result<DatasetAnalysis, WorkspaceError> {
        let user = input.path.as_str();
        let target = self.root.target(user)?;
        let (mut file, meta) = self
            .root
            .open_file(&target, user, Some(DATASET_MAX_BYTES))?;
        let correlate = input.analysis_type == AnalysisType::Correlation;
        // The worst case, reserved first as every tool does: a description
        // may keep every numeric value for the medians (8 bytes each; a
        // value takes at least two bytes of the file, its separator's too).
        let values_room = if correlate {
            0
        } else {
            meta.len().saturating_add(2) / 2 * 8
        };
        let _memory = self.budget.reserve(
            "analyze_dataset",
            reserve::ANALYZE_DATASET.saturating_add(values_room),
        )?;
        let plan = Plan {
            median: !correlate,
            collect: Vec::new(),
            pairs: if correlate {
                PairPlan::EveryColumn
            } else {
                PairPlan::Skip
            },
        };
        let mut first = scan_file(&mut file, &plan, user)?;
        let mut analysis = DatasetAnalysis {
            analysis_type: input.analysis_type,
            summary: DatasetSummary {
                total_rows: first.rows,
                total_columns: first.columns.len() as u64,
                missing_values: first.missing,
            },
            statistics: None,
            correlations: None,
        };
        let numeric: Vec<usize> = first
            .columns
            .iter()
            .enumerate()
            .filter(|(_, column)| column.numeric && column.moments.count > 0)
            .map(|(index, _)| index)
            .collect();
        if !correlate {
            exact_medians(&mut file, &mut first, values_room, user)?;
            analysis.statistics = Some(describe(&mut first));
            return Ok(analysis);
        }
        if numeric.len() as u64 > DATASET_MAX_CORRELATION_COLUMNS {
            return Err(WorkspaceError::too_many(
                user,
                "numeric columns",
                DATASET_MAX_CORRELATION_COLUMNS,
                " (the most a correlation analysis handles)",
            ));
        }
        let pairs = match first.pairs {
            Some(pairs) => pairs,
            None => {
                // A wide header: only now is it known which columns to pair.
                file.seek(SeekFrom::Start(0))
                    .map_err(|err| WorkspaceError::io(user, err))?;
                let plan = Plan {
                    median: false,
                    collect: Vec::new(),
                    pairs: PairPlan::Columns(numeric.clone()),
                };
                let second = scan_file(&mut file, &plan, user)?;
                let same = second.rows == first.rows
                    && numeric
                        .iter()
                        .all(|&i| second.columns.get(i).is_some_and(|c| c.numeric));
                match second.pairs {
                    Some(pairs) if same => pairs,
                    _ => return Err(changed(user)),
                }
            }
        };
        let name = |index: usize| {
            first
                .columns
                .get(index)
                .map(|column| column.name.clone())
                .unwrap_or_default()
        };
        let correlations = pairs
            .iter()
            .filter(|(a, b, _)| numeric.contains(a) && numeric.contains(b))
            .filter_map(|(a, b, moments)| {
                Some(Correlation {
                    variable1: name(a),
                    variable2: name(b),
                    coefficient: moments.pearson()?,
                })
            })
            .collect();
        analysis.correlations = Some(correlations);
        Ok(analysis)
    }
}

/// One pass over `file` from where it stands: its first 8 KiB are checked
/// for a NUL byte and a UTF-8 byte order mark is dropped.
fn scan_file(
    file: &mut cap_std::fs::File,
    plan: &Plan,
    user: &str,
) -> Result<Scan, WorkspaceError> {
    let mut prefix = Vec::new();
    file.by_ref()
        .take(SNIFF_BYTES)
        .read_to_end(&mut prefix)
        .map_err(|err| WorkspaceError::io(user, err))?;
    if text::looks_binary(&prefix) {
        return Err(WorkspaceError::binary(user, "contains a NUL byte"));
    }
    if prefix.starts_with(b"\xef\xbb\xbf") {
        prefix.drain(..3);
    }
    scan::scan(Cursor::new(prefix).chain(file), plan, user)
}

/// The medians of the columns the first pass could not count (more
/// distinct values than it counts): a second pass keeps their values, at
/// most `room` bytes of them (reserved by the caller), into `first`.
fn exact_medians(
    file: &mut cap_std::fs::File,
    first: &mut Scan,
    room: u64,
    user: &str,
) -> Result<(), WorkspaceError> {
    let uncounted: Vec<(usize, usize)> = first
        .columns
        .iter()
        .enumerate()
        .filter(|(_, column)| {
            column.numeric && column.median.as_ref().is_some_and(Median::is_uncounted)
        })
        .map(|(index, column)| {
            let count = usize::try_from(column.moments.count).unwrap_or(usize::MAX);
            (index, count)
        })
        .collect();
    if uncounted.is_empty() {
        return Ok(());
    }
    let values: usize = uncounted.iter().map(|(_, count)| count).sum();
    if u64::try_from(values).unwrap_or(u64::MAX).saturating_mul(8) > room {
        // More values than the file had bytes for when opened.
        return Err(changed(user));
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|err| WorkspaceError::io(user, err))?;
    let plan = Plan {
        median: false,
        collect: uncounted.clone(),
        pairs: PairPlan::Skip,
    };
    let mut second = scan_file(file, &plan, user)?;
    for (index, count) in uncounted {
        let again = second.columns.get_mut(index).filter(|column| {
            column.numeric && usize::try_from(column.moments.count).ok() == Some(count)
        });
        let Some(again) = again.filter(|_| second.rows == first.rows) else {
            return Err(changed(user));
        };
        if let Some(column) = first.columns.get_mut(index) {
            column.median = again.median.take();
        }
    }
    Ok(())
}

/// The error for a file that changed between two passes over it.
fn changed(user: &str) -> WorkspaceError {
    WorkspaceError::io(
        user,
        std::io::Error::other("the file changed while it was read"),
    )
}

/// Statistics of every numeric column with values whose results are finite.
fn describe(scan: &mut Scan) -> BTreeMap<String, ColumnStatistics> {
    scan.columns
        .iter_mut()
        .filter(|column| column.numeric && column.moments.count > 0)
        .filter_map(|column| {
            let m = &column.moments;
            let stats = ColumnStatistics {
                count: m.count,
                mean: m.mean(),
                median: column.median.as_mut()?.value()?,
                standard_deviation: m.std_dev(),
                min: m.min,
                max: m.max,
            };
            let finite = [stats.mean, stats.median, stats.standard_deviation]
                .iter()
                .all(|v| v.is_finite());
            finite.then(|| (column.name.clone(), stats))
        })
        .collect()
}
