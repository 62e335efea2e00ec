//! Loading a CSV file into per-column numeric values.

use crate::error::WorkspaceError;
use crate::limits::{DATASET_MAX_COLUMNS, DATASET_MAX_ROWS};

/// Cell texts (after trimming, case-insensitive) that mean "no value".
const MISSING: [&str; 6] = ["", "na", "n/a", "nan", "null", "none"];

/// One column: its name and, while every value so far was a number, the
/// values with their 0-based row index.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    pub(crate) name: String,
    /// False once a present cell was not a finite number.
    pub(crate) numeric: bool,
    /// Rows that have a value, ascending (only kept while `numeric`).
    pub(crate) rows: Vec<u32>,
    /// The values, parallel to `rows`, all finite.
    pub(crate) values: Vec<f64>,
}

/// A parsed CSV file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    pub(crate) columns: Vec<Column>,
    /// Data rows (the header is not one).
    pub(crate) rows: u64,
    /// Missing cells, counting cells absent from short rows.
    pub(crate) missing: u64,
}

fn is_missing(cell: &str) -> bool {
    MISSING.iter().any(|token| cell.eq_ignore_ascii_case(token))
}

fn csv_error(err: &csv::Error) -> WorkspaceError {
    let line = err.position().map_or(0, csv::Position::line);
    WorkspaceError::invalid_csv(line, err.to_string())
}

/// Parses UTF-8 CSV text whose first row is the header.
pub(crate) fn parse(text: &str, user: &str) -> Result<Table, WorkspaceError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header = reader.headers().map_err(|err| csv_error(&err))?.clone();
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
    let mut columns: Vec<Column> = Vec::with_capacity(header.len());
    for (index, name) in header.iter().enumerate() {
        let name = if name.is_empty() {
            format!("column_{}", index + 1)
        } else {
            name.to_owned()
        };
        if columns.iter().any(|column| column.name == name) {
            return Err(WorkspaceError::invalid_csv(
                1,
                format!("the column name `{name}` appears twice"),
            ));
        }
        columns.push(Column {
            name,
            numeric: true,
            rows: Vec::new(),
            values: Vec::new(),
        });
    }
    let mut table = Table {
        columns,
        rows: 0,
        missing: 0,
    };
    let mut record = csv::StringRecord::new();
    while reader
        .read_record(&mut record)
        .map_err(|err| csv_error(&err))?
    {
        let line = record.position().map_or(0, csv::Position::line);
        if record.len() > table.columns.len() {
            return Err(WorkspaceError::invalid_csv(
                line,
                format!(
                    "the row has {} fields but the header names {} columns",
                    record.len(),
                    table.columns.len()
                ),
            ));
        }
        if table.rows >= DATASET_MAX_ROWS {
            return Err(WorkspaceError::too_many(
                user,
                "data rows",
                DATASET_MAX_ROWS,
                "",
            ));
        }
        let row = u32::try_from(table.rows).unwrap_or(u32::MAX);
        table.rows += 1;
        for (index, column) in table.columns.iter_mut().enumerate() {
            let cell = record.get(index).unwrap_or("");
            if is_missing(cell) {
                table.missing += 1;
            } else if column.numeric {
                match cell.parse::<f64>() {
                    Ok(value) if value.is_finite() => {
                        column.rows.push(row);
                        column.values.push(value);
                    }
                    _ => {
                        column.numeric = false;
                        column.rows = Vec::new();
                        column.values = Vec::new();
                    }
                }
            }
        }
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_numbers_missing_cells_and_text_columns() {
        let table = parse("\u{feff}a, b ,c\n1,x,\n2,y,NA\n3\n", "t.csv").unwrap();
        assert_eq!(table.rows, 3);
        assert_eq!(table.missing, 4);
        let names: Vec<_> = table.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(table.columns[0].values, [1.0, 2.0, 3.0]);
        assert!(!table.columns[1].numeric);
        assert!(table.columns[2].numeric && table.columns[2].values.is_empty());
    }

    #[test]
    fn refuses_bad_shapes() {
        assert!(matches!(
            parse("", "t"),
            Err(WorkspaceError::InvalidCsv { line: 1, .. })
        ));
        assert!(matches!(
            parse("a,a\n", "t"),
            Err(WorkspaceError::InvalidCsv { line: 1, .. })
        ));
        assert!(matches!(
            parse("a,b\n1,2\n1,2,3\n", "t"),
            Err(WorkspaceError::InvalidCsv { line: 3, .. })
        ));
        assert!(matches!(
            parse("a,b\n\"1,2\n", "t"),
            Ok(_) | Err(WorkspaceError::InvalidCsv { .. })
        ));
        assert!(parse("inf,x\n", "t").is_ok());
    }
}
