//! Running statistics: each value is seen once, and memory is fixed per
//! column (or per pair of columns) whatever the number of rows, but for a
//! median past its counted values.
//!
//! - [`Moments`]: count, mean and variance (Welford's update), min, max;
//! - [`CoMoments`]: the same for a pair of columns plus their co-moment, for
//!   Pearson's r over the rows where both have a value;
//! - [`Median`]: counted while a column has at most
//!   [`DATASET_EXACT_MEDIAN_DISTINCT`] distinct values (small columns, and
//!   columns of codes, digits or categories however long); past that, the
//!   caller reads the column again into a [`Median::collecting`] of its
//!   count, so every median is exact.
//!
//! Both moments keep their sums in units of a power of two (`scale`) that
//! grows with the largest magnitude seen, so that squares of values near
//! `f64::MAX` (1e200, say) do not overflow: the results are those of exact
//! arithmetic on the values, to f64's precision.

use crate::limits::DATASET_EXACT_MEDIAN_DISTINCT;

/// The largest magnitude a value may have in scaled units (2^480): its
/// square, times the most rows a dataset has, stays far below `f64::MAX`.
const SCALED_MAX: f64 = f64::from_bits((1023 + 480) << 52);

/// Grows `scale` (a power of two) until `x` is within [`SCALED_MAX`] of
/// it; the factor by which sums kept in the old units are to be multiplied
/// (1 when it did not grow; exact, a power of two).
fn grow(scale: &mut f64, x: f64) -> f64 {
    let old = *scale;
    while x.abs() / *scale > SCALED_MAX {
        *scale *= SCALED_MAX;
    }
    old / *scale
}

/// Count, mean, sum of squared deviations, min and max of a stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Moments {
    pub(crate) count: u64,
    /// The mean, in units of `scale`.
    mean: f64,
    /// The sum of squared deviations, in units of `scale` squared.
    m2: f64,
    scale: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Default for Moments {
    fn default() -> Self {
        Self {
            count: 0,
            mean: 0.0,
            m2: 0.0,
            scale: 1.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Moments {
    /// Adds one finite value.
    pub(crate) fn push(&mut self, x: f64) {
        let shrink = grow(&mut self.scale, x);
        self.mean *= shrink;
        self.m2 *= shrink * shrink;
        let x_scaled = x / self.scale;
        self.count += 1;
        let delta = x_scaled - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x_scaled - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// The arithmetic mean (0 before any value).
    pub(crate) fn mean(&self) -> f64 {
        self.mean * self.scale
    }

    /// Sample standard deviation (divides by count − 1; 0 for one value).
    pub(crate) fn std_dev(&self) -> f64 {
        if self.count > 1 {
            (self.m2.max(0.0) / (self.count - 1) as f64).sqrt() * self.scale
        } else {
            0.0
        }
    }
}

/// Running moments of a pair of columns over the rows both have, each
/// column in units of its own scale (Pearson's r does not depend on them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CoMoments {
    n: u64,
    mean_x: f64,
    mean_y: f64,
    m2_x: f64,
    m2_y: f64,
    c_xy: f64,
    scale_x: f64,
    scale_y: f64,
}

impl Default for CoMoments {
    fn default() -> Self {
        Self {
            n: 0,
            mean_x: 0.0,
            mean_y: 0.0,
            m2_x: 0.0,
            m2_y: 0.0,
            c_xy: 0.0,
            scale_x: 1.0,
            scale_y: 1.0,
        }
    }
}

impl CoMoments {
    /// Adds one row's pair of finite values.
    pub(crate) fn push(&mut self, x: f64, y: f64) {
        let (shrink_x, shrink_y) = (grow(&mut self.scale_x, x), grow(&mut self.scale_y, y));
        self.mean_x *= shrink_x;
        self.mean_y *= shrink_y;
        self.m2_x *= shrink_x * shrink_x;
        self.m2_y *= shrink_y * shrink_y;
        self.c_xy *= shrink_x * shrink_y;
        let (x, y) = (x / self.scale_x, y / self.scale_y);
        self.n += 1;
        let n = self.n as f64;
        let dx = x - self.mean_x;
        self.mean_x += dx / n;
        let dy = y - self.mean_y;
        self.mean_y += dy / n;
        self.m2_x += dx * (x - self.mean_x);
        self.m2_y += dy * (y - self.mean_y);
        self.c_xy += dx * (y - self.mean_y);
    }

    /// Pearson's r; `None` for fewer than two rows or a constant column.
    pub(crate) fn pearson(&self) -> Option<f64> {
        let sums = [self.m2_x, self.m2_y, self.c_xy];
        if self.n < 2 || self.m2_x <= 0.0 || self.m2_y <= 0.0 || !sums.iter().all(|v| v.is_finite())
        {
            return None;
        }
        let r = self.c_xy / (self.m2_x.sqrt() * self.m2_y.sqrt());
        r.is_finite().then(|| r.clamp(-1.0, 1.0))
    }
}

/// The median of a stream, exact: counted while it has at most
/// [`DATASET_EXACT_MEDIAN_DISTINCT`] distinct values (each kept with its
/// count), or every value when collected.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Median {
    /// Every distinct value so far with how often it came, ascending.
    Counted(Vec<(f64, u64)>),
    /// More distinct values came than are counted: the column must be read
    /// again, collecting.
    Uncounted,
    /// Every value, up to `limit` (the column's count from a first pass).
    Collected {
        /// The values so far.
        values: Vec<f64>,
        /// The most kept.
        limit: usize,
    },
}

impl Default for Median {
    fn default() -> Self {
        Self::Counted(Vec::new())
    }
}

impl Median {
    /// Collects up to `count` values (the column's count from a first pass).
    pub(crate) fn collecting(count: usize) -> Self {
        Self::Collected {
            values: Vec::with_capacity(count),
            limit: count,
        }
    }

    /// Adds one finite value.
    pub(crate) fn push(&mut self, x: f64) {
        match self {
            Self::Counted(counts) => {
                match counts.binary_search_by(|(value, _)| value.total_cmp(&x)) {
                    Ok(found) => {
                        if let Some((_, count)) = counts.get_mut(found) {
                            *count += 1;
                        }
                    }
                    Err(at) if counts.len() < DATASET_EXACT_MEDIAN_DISTINCT => {
                        counts.insert(at, (x, 1));
                    }
                    Err(_) => *self = Self::Uncounted,
                }
            }
            Self::Uncounted => {}
            // Never past what was set aside: a file grown since the first
            // pass has more values, which its caller tells by the count.
            Self::Collected { values, limit } => {
                if values.len() < *limit {
                    values.push(x);
                }
            }
        }
    }

    /// Whether the column must be read again for its median.
    pub(crate) fn is_uncounted(&self) -> bool {
        matches!(self, Self::Uncounted)
    }

    /// The median (mean of the two middle values for an even count); `None`
    /// before any value, or while uncounted. Orders collected values in place.
    pub(crate) fn value(&mut self) -> Option<f64> {
        match self {
            Self::Counted(counts) => {
                let n: u64 = counts.iter().map(|(_, count)| count).sum();
                match n {
                    0 => None,
                    _ if n % 2 == 1 => value_at_rank(counts, n / 2 + 1),
                    _ => Some(
                        value_at_rank(counts, n / 2)? / 2.0
                            + value_at_rank(counts, n / 2 + 1)? / 2.0,
                    ),
                }
            }
            Self::Uncounted => None,
            Self::Collected { values, .. } => {
                let n = values.len();
                if n == 0 {
                    return None;
                }
                let (_, &mut upper, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
                if n % 2 == 1 {
                    return Some(upper);
                }
                // The lower middle: the largest of those before it.
                let lower = values[..n / 2].iter().copied().max_by(f64::total_cmp)?;
                Some(lower / 2.0 + upper / 2.0)
            }
        }
    }
}

/// The value of 1-based `rank` among counted values.
fn value_at_rank(counts: &[(f64, u64)], rank: u64) -> Option<f64> {
    let mut seen = 0;
    for &(value, count) in counts {
        seen += count;
        if seen >= rank {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_of_known_values() {
        let mut m = Moments::default();
        for x in [4.0, 1.0, 3.0, 2.0] {
            m.push(x);
        }
        assert_eq!((m.count, m.mean, m.min, m.max), (4, 2.5, 1.0, 4.0));
        assert!((m.std_dev() - (5.0_f64 / 3.0).sqrt()).abs() < 1e-12);
        let mut one = Moments::default();
        one.push(7.0);
        assert_eq!(one.std_dev(), 0.0);
    }

    #[test]
    fn moments_stay_accurate_around_a_large_offset() {
        // The naive sum-of-squares formula loses every digit here.
        let mut m = Moments::default();
        for i in 0..10_000 {
            m.push(1e9 + f64::from(i % 2));
        }
        let exact = 0.5 * (10_000.0_f64 / 9_999.0).sqrt();
        assert!((m.std_dev() - exact).abs() < 1e-9, "{}", m.std_dev());
    }

    #[test]
    fn pearson_of_known_pairs() {
        let mut c = CoMoments::default();
        for (x, y) in [(1.0, 5.0), (2.0, 3.0), (3.0, 4.0), (4.0, 1.0), (5.0, 2.0)] {
            c.push(x, y);
        }
        assert!(c.pearson().is_some_and(|r| (r + 0.8).abs() < 1e-12));
        let mut constant = CoMoments::default();
        for x in [1.0, 2.0, 3.0] {
            constant.push(x, 1.0);
        }
        assert_eq!(constant.pearson(), None);
        assert_eq!(CoMoments::default().pearson(), None);
    }

    #[test]
    fn medians_are_exact_for_small_columns() {
        let median = |values: &[f64]| {
            let mut m = Median::default();
            values.iter().for_each(|&x| m.push(x));
            m.value()
        };
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        let many: Vec<f64> = (0..DATASET_EXACT_MEDIAN_DISTINCT)
            .map(|i| i as f64)
            .collect();
        assert_eq!(
            median(&many),
            Some((DATASET_EXACT_MEDIAN_DISTINCT as f64 - 1.0) / 2.0)
        );
        // Few distinct values stay exact however many there are.
        let digits: Vec<f64> = (0..100_001).map(|i| f64::from(i % 10)).collect();
        assert_eq!(median(&digits), exact_median(&digits));
    }

    /// xorshift, for repeatable streams.
    fn stream(seed: u64, n: usize, shape: impl Fn(f64) -> f64) -> Vec<f64> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                shape((state >> 11) as f64 / (1_u64 << 53) as f64)
            })
            .collect()
    }

    /// The exact median of `values`, for reference.
    fn exact_median(values: &[f64]) -> Option<f64> {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        match sorted.len() {
            0 => None,
            n if n % 2 == 1 => sorted.get(mid).copied(),
            _ => Some(sorted[mid - 1] / 2.0 + sorted[mid] / 2.0),
        }
    }

    #[test]
    fn a_column_past_its_counted_values_is_collected_and_exact() {
        type Shape = fn(f64) -> f64;
        let shapes: [(&str, Shape); 4] = [
            ("uniform", |u| u * 100.0),
            ("skewed", |u| -(1.0 - u).ln() * 10.0),
            // Sorted by group: 40% near 0, 60% near 100 (an estimate from
            // one pass, P², put the median near 55 on such data).
            ("grouped", |u| if u < 0.4 { u } else { 100.0 + u }),
            ("sorted", |u| u),
        ];
        for (name, shape) in shapes {
            for n in [DATASET_EXACT_MEDIAN_DISTINCT + 1, 10_000, 10_001] {
                let mut values = stream(0x9e37_79b9_7f4a_7c15, n, shape);
                if name != "uniform" && name != "skewed" {
                    values.sort_by(f64::total_cmp);
                }
                let mut counted = Median::default();
                values.iter().for_each(|&x| counted.push(x));
                assert!(counted.is_uncounted(), "{name} n={n}");
                assert_eq!(counted.value(), None);
                let mut collected = Median::collecting(n);
                values.iter().for_each(|&x| collected.push(x));
                assert_eq!(collected.value(), exact_median(&values), "{name} n={n}");
            }
        }
    }

    #[test]
    fn moments_of_values_whose_squares_overflow() {
        let mut m = Moments::default();
        for x in [1e200, -1e200, 1e200, -1e200] {
            m.push(x);
        }
        assert_eq!(m.mean(), 0.0);
        let exact = 1e200 * (4.0_f64 / 3.0).sqrt();
        assert!((m.std_dev() / exact - 1.0).abs() < 1e-12, "{}", m.std_dev());
        let mut c = CoMoments::default();
        for (x, y) in [(1e200, 1.0), (-1e200, 2.0), (3e200, 0.5)] {
            c.push(x, y);
        }
        let mut plain = CoMoments::default();
        for (x, y) in [(1.0, 1.0), (-1.0, 2.0), (3.0, 0.5)] {
            plain.push(x, y);
        }
        let (r, expected) = (c.pearson().unwrap(), plain.pearson().unwrap());
        assert!((r - expected).abs() < 1e-12, "{r} vs {expected}");
        // Growing past a scale midway keeps what came before.
        let mut mixed = Moments::default();
        for x in [1.0, 2.0, 3.0, 1e300] {
            mixed.push(x);
        }
        assert!((mixed.mean() / (1e300 / 4.0) - 1.0).abs() < 1e-12);
    }
}
