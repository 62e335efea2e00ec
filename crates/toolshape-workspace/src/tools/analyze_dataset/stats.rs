//! Descriptive statistics and Pearson correlation over finite values.

use super::table::Column;

/// Summary of one numeric column; every field finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Describe {
    pub(crate) count: u64,
    pub(crate) mean: f64,
    pub(crate) median: f64,
    pub(crate) std_dev: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

/// Count, mean, median, sample standard deviation (n − 1; 0 for one value),
/// min and max; `None` for no values or when a result overflows `f64`.
pub(crate) fn describe(values: &[f64]) -> Option<Describe> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let count = n as f64;
    let mean = values.iter().sum::<f64>() / count;
    let squares: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    let std_dev = if n > 1 {
        (squares / (count - 1.0)).sqrt()
    } else {
        0.0
    };
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = n / 2;
    let median = if n % 2 == 1 {
        sorted[mid]
    } else {
        sorted[mid - 1] / 2.0 + sorted[mid] / 2.0
    };
    let stats = Describe {
        count: n as u64,
        mean,
        median,
        std_dev,
        min: sorted[0],
        max: sorted[n - 1],
    };
    let finite = [mean, median, std_dev].iter().all(|v| v.is_finite());
    finite.then_some(stats)
}

/// Pearson's r over the rows where both columns have a value; `None` for
/// fewer than two such rows, a constant column, or overflow.
pub(crate) fn pearson(a: &Column, b: &Column) -> Option<f64> {
    let pairs = paired(a, b);
    if pairs.len() < 2 {
        return None;
    }
    let n = pairs.len() as f64;
    let mean_x = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in &pairs {
        let (dx, dy) = (x - mean_x, y - mean_y);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    let r = sxy / (sxx.sqrt() * syy.sqrt());
    r.is_finite().then(|| r.clamp(-1.0, 1.0))
}

/// Values of `a` and `b` on the rows both have, by merging the row lists.
fn paired(a: &Column, b: &Column) -> Vec<(f64, f64)> {
    let mut pairs = Vec::with_capacity(a.rows.len().min(b.rows.len()));
    let (mut i, mut j) = (0, 0);
    while let (Some(&row_a), Some(&row_b)) = (a.rows.get(i), b.rows.get(j)) {
        match row_a.cmp(&row_b) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                if let (Some(&x), Some(&y)) = (a.values.get(i), b.values.get(j)) {
                    pairs.push((x, y));
                }
                i += 1;
                j += 1;
            }
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(rows: &[u32], values: &[f64]) -> Column {
        Column {
            name: String::new(),
            numeric: true,
            rows: rows.to_vec(),
            values: values.to_vec(),
        }
    }

    #[test]
    fn describe_known_values() {
        let d = describe(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(
            (d.count, d.mean, d.median, d.min, d.max),
            (4, 2.5, 2.5, 1.0, 4.0)
        );
        assert!((d.std_dev - (5.0_f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(describe(&[7.0]).map(|d| d.std_dev), Some(0.0));
        assert_eq!(describe(&[]), None);
        assert_eq!(describe(&[f64::MAX, f64::MAX]), None, "overflowing mean");
    }

    #[test]
    fn pearson_pairs_rows_and_skips_constants() {
        let x = column(&[0, 1, 2, 3, 4], &[1.0, 2.0, 3.0, 4.0, 5.0]);
        let y = column(&[0, 1, 2, 3, 4], &[5.0, 3.0, 4.0, 1.0, 2.0]);
        assert!(pearson(&x, &y).is_some_and(|r| (r + 0.8).abs() < 1e-12));
        let sparse = column(&[1, 3], &[10.0, 20.0]);
        assert!(pearson(&x, &sparse).is_some_and(|r| (r - 1.0).abs() < 1e-12));
        let constant = column(&[0, 1, 2], &[1.0, 1.0, 1.0]);
        assert_eq!(pearson(&x, &constant), None);
    }
}
