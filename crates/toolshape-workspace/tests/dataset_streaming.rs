//! `analyze_dataset` in one streaming pass: the running statistics agree
//! with a direct computation over the same values, medians are exact where
//! promised, wide files still correlate, and long rows are refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fmt::Write as _;

use common::{Fixture, validated};
use toolshape_workspace::limits::{DATASET_EXACT_MEDIAN_DISTINCT, DATASET_MAX_ROW_BYTES};
use toolshape_workspace::{AnalysisType, AnalyzeDatasetInput, DatasetAnalysis, WorkspaceError};

fn analyze(
    fx: &Fixture,
    path: &str,
    kind: AnalysisType,
) -> Result<DatasetAnalysis, WorkspaceError> {
    let out = fx.ws.analyze_dataset(AnalyzeDatasetInput {
        path: path.into(),
        analysis_type: kind,
    })?;
    validated::<DatasetAnalysis>(&out);
    Ok(out)
}

/// Deterministic values: column `a` continuous, `b` a linear function of
/// `a` plus noise, `c` small integers, `d` sometimes missing.
fn rows(n: usize) -> Vec<[Option<f64>; 4]> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1_u64 << 53) as f64
    };
    (0..n)
        .map(|i| {
            let a = next() * 1000.0 - 500.0;
            let b = 3.0 * a + next() * 50.0;
            let c = (next() * 7.0).floor();
            let d = (i % 5 != 0).then(|| next() * 2.0 + a / 100.0);
            [Some(a), Some(b), Some(c), d]
        })
        .collect()
}

fn write_csv(fx: &Fixture, path: &str, data: &[[Option<f64>; 4]]) {
    let mut text = String::from("a,b,c,d\n");
    for row in data {
        let cells: Vec<String> = row
            .iter()
            .map(|v| v.map_or_else(|| "NA".to_owned(), |v| format!("{v:?}")))
            .collect();
        writeln!(text, "{}", cells.join(",")).unwrap();
    }
    fx.write(path, text);
}

fn column(data: &[[Option<f64>; 4]], index: usize) -> Vec<f64> {
    data.iter().filter_map(|row| row[index]).collect()
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn sample_sd(values: &[f64]) -> f64 {
    let m = mean(values);
    (values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (values.len() as f64 - 1.0)).sqrt()
}

fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x), mean(y));
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    let syy: f64 = y.iter().map(|b| (b - my) * (b - my)).sum();
    sxy / (sxx.sqrt() * syy.sqrt())
}

fn close(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance * expected.abs().max(1.0)
}

#[test]
fn running_statistics_match_a_direct_computation() {
    let fx = Fixture::new();
    let data = rows(20_000);
    write_csv(&fx, "data.csv", &data);
    let out = analyze(&fx, "data.csv", AnalysisType::Descriptive).unwrap();
    assert_eq!(out.summary.total_rows, 20_000);
    assert_eq!(out.summary.missing_values, 4_000);
    let stats = out.statistics.unwrap();
    for (index, name) in ["a", "b", "c", "d"].iter().enumerate() {
        let values = column(&data, index);
        let s = &stats[*name];
        assert_eq!(s.count, values.len() as u64, "{name}");
        assert!(
            close(s.mean, mean(&values), 1e-9),
            "{name}: {} vs {}",
            s.mean,
            mean(&values)
        );
        assert!(
            close(s.standard_deviation, sample_sd(&values), 1e-9),
            "{name}"
        );
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!((s.min, s.max), (min, max), "{name}");
        assert!((min..=max).contains(&s.median), "{name}");
    }
    // Seven distinct values: the median is exact however long the column.
    let mut c = column(&data, 2);
    c.sort_by(f64::total_cmp);
    assert_eq!(
        stats["c"].median,
        c[c.len() / 2 - 1] / 2.0 + c[c.len() / 2] / 2.0
    );
    // A continuous column: exact too (read again, every value kept).
    let mut a = column(&data, 0);
    a.sort_by(f64::total_cmp);
    let exact = a[a.len() / 2 - 1] / 2.0 + a[a.len() / 2] / 2.0;
    assert_eq!(stats["a"].median, exact);

    let out = analyze(&fx, "data.csv", AnalysisType::Correlation).unwrap();
    let correlations = out.correlations.unwrap();
    assert_eq!(correlations.len(), 6);
    for pair in &correlations {
        let index = |name: &str| {
            ["a", "b", "c", "d"]
                .iter()
                .position(|n| *n == name)
                .unwrap()
        };
        let (i, j) = (index(&pair.variable1), index(&pair.variable2));
        let both: Vec<(f64, f64)> = data
            .iter()
            .filter_map(|row| Some((row[i]?, row[j]?)))
            .collect();
        let (x, y): (Vec<f64>, Vec<f64>) = both.into_iter().unzip();
        let expected = pearson(&x, &y);
        assert!(
            (pair.coefficient - expected).abs() < 1e-9,
            "{}-{}: {} vs {expected}",
            pair.variable1,
            pair.variable2,
            pair.coefficient
        );
    }
}

#[test]
fn every_byte_is_read_across_the_sniffed_prefix() {
    // Values that sum to a known total, long enough to span the first
    // 8 KiB read for binary detection several times.
    let fx = Fixture::new();
    let mut text = String::from("v\n");
    for i in 0..10_000_u64 {
        writeln!(text, "{}", 100_000 + i).unwrap();
    }
    fx.write("sum.csv", text);
    let out = analyze(&fx, "sum.csv", AnalysisType::Descriptive).unwrap();
    let v = &out.statistics.unwrap()["v"];
    assert_eq!(v.count, 10_000);
    assert_eq!((v.min, v.max), (100_000.0, 109_999.0));
    assert!((v.mean - 104_999.5).abs() < 1e-6, "{}", v.mean);
}

#[test]
fn small_columns_have_exact_medians() {
    let fx = Fixture::new();
    let n = DATASET_EXACT_MEDIAN_DISTINCT;
    // Distinct values in a shuffled order: exactly at the bound.
    let mut text = String::from("v\n");
    for i in 0..n {
        writeln!(text, "{}", (i * 7919) % n).unwrap();
    }
    fx.write("small.csv", text);
    let out = analyze(&fx, "small.csv", AnalysisType::Descriptive).unwrap();
    let median = out.statistics.unwrap()["v"].median;
    assert_eq!(median, (n as f64 - 1.0) / 2.0);
}

#[test]
fn wide_files_still_correlate_their_few_numeric_columns() {
    let fx = Fixture::new();
    // 80 columns, of which 3 numeric: more than 50 in the header.
    let mut header: Vec<String> = (0..77).map(|i| format!("t{i}")).collect();
    header.extend(["x".to_owned(), "y".to_owned(), "z".to_owned()]);
    let mut text = header.join(",") + "\n";
    for i in 0..6 {
        let words: Vec<String> = (0..77).map(|j| format!("w{i}{j}")).collect();
        let (x, y, z) = (f64::from(i), f64::from(2 * i + 1), f64::from(10 - i * i));
        writeln!(text, "{},{x},{y},{z}", words.join(",")).unwrap();
    }
    fx.write("wide.csv", text);
    let out = analyze(&fx, "wide.csv", AnalysisType::Correlation).unwrap();
    let pairs: Vec<(String, String, f64)> = out
        .correlations
        .unwrap()
        .into_iter()
        .map(|c| (c.variable1, c.variable2, c.coefficient))
        .collect();
    assert_eq!(pairs.len(), 3, "{pairs:?}");
    assert_eq!((pairs[0].0.as_str(), pairs[0].1.as_str()), ("x", "y"));
    assert!((pairs[0].2 - 1.0).abs() < 1e-12);
    let x: Vec<f64> = (0..6).map(f64::from).collect();
    let z: Vec<f64> = (0..6).map(|i| f64::from(10 - i * i)).collect();
    assert!((pairs[1].2 - pearson(&x, &z)).abs() < 1e-12);
    assert_eq!(out.summary.total_columns, 80);
}

#[test]
fn rows_longer_than_the_bound_are_refused_by_line() {
    let fx = Fixture::new();
    let long = "x".repeat(DATASET_MAX_ROW_BYTES + 1);
    fx.write("long.csv", format!("a,b\n1,2\n3,\"{long}\"\n5,6\n"));
    let err = analyze(&fx, "long.csv", AnalysisType::Descriptive).unwrap_err();
    assert!(
        matches!(err, WorkspaceError::InvalidCsv { line: 3, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("1048576 bytes"), "{err}");
    // Just under the bound is fine.
    let fits = "x".repeat(DATASET_MAX_ROW_BYTES - 100);
    fx.write("fits.csv", format!("a,b\n1,\"{fits}\"\n"));
    let out = analyze(&fx, "fits.csv", AnalysisType::Descriptive).unwrap();
    assert_eq!(out.summary.total_rows, 1);
}

#[test]
fn byte_order_marks_and_invalid_utf8_are_handled() {
    let fx = Fixture::new();
    fx.write("bom.csv", "\u{feff}a,b\n1,2\n");
    let out = analyze(&fx, "bom.csv", AnalysisType::Descriptive).unwrap();
    let names: Vec<&String> = out.statistics.as_ref().unwrap().keys().collect();
    assert_eq!(names, ["a", "b"]);
    fx.write("latin1.csv", b"a,b\n1,2\ncaf\xe9,3\n");
    let err = analyze(&fx, "latin1.csv", AnalysisType::Descriptive).unwrap_err();
    assert!(
        err.to_string().contains("not valid UTF-8 on line 3"),
        "{err}"
    );
}

/// A column sorted by group (4,000 values near 0, then 6,000 near 100): the
/// median is the exact one, near 100 (a one-pass estimate put it near 55).
#[test]
fn a_grouped_column_has_its_exact_median() {
    let fx = Fixture::new();
    let mut text = String::from("x\n");
    let mut values = Vec::new();
    for i in 0..10_000_u32 {
        let x = if i < 4_000 {
            f64::from(i) / 4_000.0
        } else {
            100.0 + f64::from(i) / 10_000.0
        };
        values.push(x);
        writeln!(text, "{x}").unwrap();
    }
    fx.write("grouped.csv", text);
    let out = analyze(&fx, "grouped.csv", AnalysisType::Descriptive).unwrap();
    validated::<DatasetAnalysis>(&out);
    let median = out.statistics.unwrap()["x"].median;
    assert_eq!(median, values[4_999] / 2.0 + values[5_000] / 2.0);
}

/// Values whose squares overflow f64: the statistics and the correlation
/// are still those of the values (the column was left out, and r came out
/// -0.0 where it is -1).
#[test]
fn values_near_the_limit_of_f64_are_described_and_correlated() {
    let fx = Fixture::new();
    fx.write("big.csv", "a,b\n1e200,1\n-1e200,2\n");
    let out = analyze(&fx, "big.csv", AnalysisType::Descriptive).unwrap();
    let stats = out.statistics.unwrap();
    let a = &stats["a"];
    assert_eq!((a.mean, a.median), (0.0, 0.0));
    assert!((a.standard_deviation / (1e200 * 2.0_f64.sqrt()) - 1.0).abs() < 1e-12);
    let out = analyze(&fx, "big.csv", AnalysisType::Correlation).unwrap();
    let r = out.correlations.unwrap()[0].coefficient;
    assert!((r + 1.0).abs() < 1e-12, "{r}");
}
