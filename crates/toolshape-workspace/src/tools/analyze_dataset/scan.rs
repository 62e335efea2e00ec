//! One streaming pass over a CSV file: every row is read, folded into
//! per-column (and per-pair) running statistics, and dropped. Memory grows
//! with the number of columns, never with the number of rows.

use std::collections::HashSet;
use std::io::Read;

use crate::error::WorkspaceError;
use crate::limits::{
    DATASET_MAX_COLUMNS, DATASET_MAX_CORRELATION_COLUMNS, DATASET_MAX_ROW_BYTES, DATASET_MAX_ROWS,
};

use super::input::{Bounded, Overrun, PARSER_BUFFER_BYTES, RowStart};
use super::stats::{CoMoments, Median, Moments};

/// Cell texts (after trimming, case-insensitive) that mean "no value".
const MISSING: [&str; 6] = ["", "na", "n/a", "nan", "null", "none"];

fn is_missing(cell: &str) -> bool {
    MISSING.iter().any(|token| cell.eq_ignore_ascii_case(token))
}

/// Which pairs of columns to correlate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PairPlan {
    /// None.
    Skip,
    /// Every pair, when the header names at most
    /// [`DATASET_MAX_CORRELATION_COLUMNS`] columns (else none: the caller
    /// makes a second pass over the columns that turned out numeric).
    EveryColumn,
    /// Every pair of these columns (indices, ascending).
    Columns(Vec<usize>),
}

/// What to compute in a pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Track each column's median, counted.
    pub(crate) median: bool,
    /// Collect every value of these columns (index, the count a first pass
    /// found), for their medians past what is counted.
    pub(crate) collect: Vec<(usize, usize)>,
    /// Which pairs to correlate.
    pub(crate) pairs: PairPlan,
}

/// One column: its name and, while every value so far was a number, its
/// running statistics.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    pub(crate) name: String,
    /// False once a present cell was not a finite number.
    pub(crate) numeric: bool,
    pub(crate) moments: Moments,
    /// Only when the plan asks for medians.
    pub(crate) median: Option<Median>,
}

/// Running co-moments of every pair of some columns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pairs {
    /// Column indices, ascending.
    pub(crate) columns: Vec<usize>,
    /// Pair (a, b), a < b, of `columns` at index a·k − a(a+1)/2 + (b − a − 1).
    moments: Vec<CoMoments>,
}

impl Pairs {
    fn new(columns: Vec<usize>) -> Self {
        let k = columns.len();
        Self {
            columns,
            moments: vec![CoMoments::default(); k * k.saturating_sub(1) / 2],
        }
    }

    fn push(&mut self, values: &[Option<f64>]) {
        let k = self.columns.len();
        let mut index = 0;
        for (a, &i) in self.columns.iter().enumerate() {
            let row = k - a - 1;
            let Some(x) = values.get(i).copied().flatten() else {
                index += row;
                continue;
            };
            for (&j, moments) in self.columns[a + 1..]
                .iter()
                .zip(&mut self.moments[index..index + row])
            {
                if let Some(y) = values.get(j).copied().flatten() {
                    moments.push(x, y);
                }
            }
            index += row;
        }
    }

    /// Every pair as (first column, second column, moments), in header order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, usize, &CoMoments)> {
        let columns = &self.columns;
        columns
            .iter()
            .enumerate()
            .flat_map(move |(a, &i)| columns[a + 1..].iter().map(move |&j| (i, j)))
            .zip(&self.moments)
            .map(|((i, j), moments)| (i, j, moments))
    }
}

/// What a pass found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scan {
    pub(crate) columns: Vec<Column>,
    /// Data rows (the header is not one).
    pub(crate) rows: u64,
    /// Missing cells, counting cells absent from short rows.
    pub(crate) missing: u64,
    /// Correlation sums, when the plan asked for them and they were kept.
    pub(crate) pairs: Option<Pairs>,
}

fn csv_error(err: &csv::Error, line: u64, user: &str) -> WorkspaceError {
    let line = err.position().map_or(line, csv::Position::line);
    match err.kind() {
        csv::ErrorKind::Io(io) => match Overrun::of(io) {
            Some(kind @ (Overrun::Row | Overrun::Fields)) => {
                WorkspaceError::invalid_csv(line, kind.to_string())
            }
            Some(Overrun::File) => WorkspaceError::too_large(
                user,
                crate::limits::DATASET_MAX_BYTES + 1,
                crate::limits::DATASET_MAX_BYTES,
            ),
            None => WorkspaceError::io(user, io_copy(io)),
        },
        csv::ErrorKind::Utf8 { .. } => {
            WorkspaceError::binary(user, format!("not valid UTF-8 on line {line}"))
        }
        _ => WorkspaceError::invalid_csv(line, err.to_string()),
    }
}

/// An I/O error as a new value (`csv::Error` keeps its own).
fn io_copy(err: &std::io::Error) -> std::io::Error {
    std::io::Error::new(err.kind(), err.to_string())
}

/// Whether the row between these byte offsets passes [`DATASET_MAX_ROW_BYTES`].
fn too_long(start: u64, end: u64) -> bool {
    end.saturating_sub(start) > DATASET_MAX_ROW_BYTES as u64
}

/// Reads the header and builds the columns.
fn columns(
    header: &csv::StringRecord,
    user: &str,
    plan: &Plan,
) -> Result<Vec<Column>, WorkspaceError> {
    if header.is_empty() {
        return Err(WorkspaceError::invalid_csv(
            1,
            "the file is empty; the first row must name the columns",
        ));
    }
    if header.len() as u64 > DATASET_MAX_COLUMNS {
        return Err(WorkspaceError::too_many(
            user,
            "columns",
            DATASET_MAX_COLUMNS,
            "",
        ));
    }
    // The header's own names first: a name made up for an unnamed column
    // (`column_2`) never takes one the header gives (`_2` after it then).
    let named: HashSet<&str> = header.iter().filter(|name| !name.is_empty()).collect();
    let mut seen = HashSet::with_capacity(header.len());
    let mut columns = Vec::with_capacity(header.len());
    for (index, name) in header.iter().enumerate() {
        let name = if name.is_empty() {
            let mut made = format!("column_{}", index + 1);
            while named.contains(made.as_str()) || seen.contains(&made) {
                made.push_str("_2");
            }
            made
        } else {
            name.to_owned()
        };
        if !seen.insert(name.clone()) {
            return Err(WorkspaceError::invalid_csv(
                1,
                format!("the column name `{name}` appears twice"),
            ));
        }
        columns.push(Column {
            name,
            numeric: true,
            moments: Moments::default(),
            median: match plan
                .collect
                .iter()
                .find(|(index, _)| *index == columns.len())
            {
                Some(&(_, count)) => Some(Median::collecting(count)),
                None => plan.median.then(Median::default),
            },
        });
    }
    Ok(columns)
}

/// Reads UTF-8 CSV from `input` (its first row is the header) in one pass.
pub(crate) fn scan(input: impl Read, plan: &Plan, user: &str) -> Result<Scan, WorkspaceError> {
    let row_start = RowStart::default();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .buffer_capacity(PARSER_BUFFER_BYTES)
        .from_reader(Bounded::new(input, row_start.clone()));
    let header = reader
        .headers()
        .map_err(|err| csv_error(&err, 1, user))?
        .clone();
    if too_long(0, reader.position().byte()) {
        return Err(WorkspaceError::invalid_csv(1, Overrun::Row.to_string()));
    }
    let mut scan = Scan {
        columns: columns(&header, user, plan)?,
        rows: 0,
        missing: 0,
        pairs: None,
    };
    drop(header);
    scan.pairs = match &plan.pairs {
        PairPlan::Skip => None,
        PairPlan::EveryColumn => (scan.columns.len() as u64 <= DATASET_MAX_CORRELATION_COLUMNS)
            .then(|| Pairs::new((0..scan.columns.len()).collect())),
        PairPlan::Columns(columns) => Some(Pairs::new(columns.clone())),
    };
    let mut values: Vec<Option<f64>> = vec![None; scan.columns.len()];
    let mut record = csv::StringRecord::new();
    loop {
        let next = reader.position().clone();
        row_start.set(next.byte());
        let more = reader
            .read_record(&mut record)
            .map_err(|err| csv_error(&err, next.line(), user))?;
        if !more {
            break;
        }
        let line = record.position().map_or(next.line(), csv::Position::line);
        // The reader stops a row once it passes the bound by the parser's
        // buffer; this makes the bound exact.
        if too_long(next.byte(), reader.position().byte()) {
            return Err(WorkspaceError::invalid_csv(line, Overrun::Row.to_string()));
        }
        if record.len() > scan.columns.len() {
            return Err(WorkspaceError::invalid_csv(
                line,
                format!(
                    "the row has {} fields but the header names {} columns",
                    record.len(),
                    scan.columns.len()
                ),
            ));
        }
        if scan.rows >= DATASET_MAX_ROWS {
            return Err(WorkspaceError::too_many(
                user,
                "data rows",
                DATASET_MAX_ROWS,
                "",
            ));
        }
        scan.rows += 1;
        for (index, (column, value)) in scan.columns.iter_mut().zip(&mut values).enumerate() {
            *value = None;
            let cell = record.get(index).unwrap_or("");
            if is_missing(cell) {
                scan.missing += 1;
                continue;
            }
            if !column.numeric {
                continue;
            }
            match cell.parse::<f64>() {
                Ok(x) if x.is_finite() => {
                    column.moments.push(x);
                    if let Some(median) = &mut column.median {
                        median.push(x);
                    }
                    *value = Some(x);
                }
                _ => {
                    column.numeric = false;
                    column.median = None;
                }
            }
        }
        if let Some(pairs) = &mut scan.pairs {
            pairs.push(&values);
        }
    }
    Ok(scan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, plan: &Plan) -> Result<Scan, WorkspaceError> {
        scan(text.as_bytes(), plan, "t.csv")
    }

    const DESCRIBE: Plan = Plan {
        median: true,
        collect: Vec::new(),
        pairs: PairPlan::Skip,
    };

    #[test]
    fn unnamed_columns_get_names_the_header_does_not_give() {
        let table = run("a,,column_2,\n1,2,3,4\n", &DESCRIBE).unwrap();
        let names: Vec<_> = table.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "column_2_2", "column_2", "column_4"]);
        assert!(run("a,a\n1,2\n", &DESCRIBE).is_err());
    }

    #[test]
    fn numbers_missing_cells_and_text_columns() {
        let table = run("a, b ,c\n1,x,\n2,y,NA\n3\n", &DESCRIBE).unwrap();
        assert_eq!(table.rows, 3);
        assert_eq!(table.missing, 4);
        let names: Vec<_> = table.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(table.columns[0].moments.count, 3);
        assert_eq!(table.columns[0].moments.mean(), 2.0);
        assert!(!table.columns[1].numeric);
        assert!(table.columns[2].numeric && table.columns[2].moments.count == 0);
    }

    #[test]
    fn bad_shapes_are_refused() {
        assert!(matches!(
            run("", &DESCRIBE),
            Err(WorkspaceError::InvalidCsv { line: 1, .. })
        ));
        assert!(matches!(
            run("a,a\n", &DESCRIBE),
            Err(WorkspaceError::InvalidCsv { line: 1, .. })
        ));
        assert!(matches!(
            run("a,b\n1,2\n1,2,3\n", &DESCRIBE),
            Err(WorkspaceError::InvalidCsv { line: 3, .. })
        ));
        assert!(matches!(
            run("a,b\n\"1,2\n", &DESCRIBE),
            Ok(_) | Err(WorkspaceError::InvalidCsv { .. })
        ));
        assert!(run("inf,x\n", &DESCRIBE).is_ok());
        assert!(matches!(
            scan(&b"a\n\xff\n"[..], &DESCRIBE, "t.csv"),
            Err(WorkspaceError::Binary { .. })
        ));
    }

    #[test]
    fn pairs_follow_the_rows_both_columns_have() {
        let plan = Plan {
            median: false,
            collect: Vec::new(),
            pairs: PairPlan::EveryColumn,
        };
        let table = run("x,y,s\n1,5,a\n2,3,b\n3,4,c\n4,1,d\n5,2,e\n,9,f\n", &plan).unwrap();
        let pairs = table.pairs.unwrap();
        let found: Vec<_> = pairs.iter().map(|(i, j, m)| (i, j, m.pearson())).collect();
        assert_eq!(found.len(), 3);
        assert_eq!((found[0].0, found[0].1), (0, 1));
        assert!(
            found[0].2.is_some_and(|r| (r + 0.8).abs() < 1e-12),
            "{found:?}"
        );
        let only = Plan {
            median: false,
            collect: Vec::new(),
            pairs: PairPlan::Columns(vec![0, 1]),
        };
        let table = run("x,y,s\n1,5,a\n2,3,b\n3,4,c\n4,1,d\n5,2,e\n", &only).unwrap();
        assert_eq!(table.pairs.map(|p| p.iter().count()), Some(1));
    }
}
