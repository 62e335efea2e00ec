//! Running statistics: each value is seen once and forgotten, so memory is
//! fixed per column (or per pair of columns), whatever the number of rows.
//!
//! - [`Moments`]: count, mean and variance (Welford's update), min, max;
//! - [`CoMoments`]: the same for a pair of columns plus their co-moment, for
//!   Pearson's r over the rows where both have a value;
//! - [`Median`]: exact while a column has at most
//!   [`DATASET_EXACT_MEDIAN_DISTINCT`] distinct values (small columns, and
//!   columns of codes, digits or categories however long), then estimated
//!   with the P² algorithm (Jain & Chlamtac, 1985: five markers whose
//!   heights are adjusted by piecewise-parabolic interpolation), started
//!   from the exact counts seen so far.

use crate::limits::DATASET_EXACT_MEDIAN_DISTINCT;

/// Count, mean, sum of squared deviations, min and max of a stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Moments {
    pub(crate) count: u64,
    pub(crate) mean: f64,
    m2: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

impl Default for Moments {
    fn default() -> Self {
        Self {
            count: 0,
            mean: 0.0,
            m2: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Moments {
    /// Adds one finite value.
    pub(crate) fn push(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// Sample standard deviation (divides by count − 1; 0 for one value).
    pub(crate) fn std_dev(&self) -> f64 {
        if self.count > 1 {
            (self.m2.max(0.0) / (self.count - 1) as f64).sqrt()
        } else {
            0.0
        }
    }
}

/// Running moments of a pair of columns over the rows both have.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CoMoments {
    n: u64,
    mean_x: f64,
    mean_y: f64,
    m2_x: f64,
    m2_y: f64,
    c_xy: f64,
}

impl CoMoments {
    /// Adds one row's pair of finite values.
    pub(crate) fn push(&mut self, x: f64, y: f64) {
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

    /// Pearson's r; `None` for fewer than two rows, a constant column, or
    /// overflow.
    pub(crate) fn pearson(&self) -> Option<f64> {
        if self.n < 2 || self.m2_x <= 0.0 || self.m2_y <= 0.0 {
            return None;
        }
        let r = self.c_xy / (self.m2_x.sqrt() * self.m2_y.sqrt());
        r.is_finite().then(|| r.clamp(-1.0, 1.0))
    }
}

/// The median of a stream: exact while it has at most
/// [`DATASET_EXACT_MEDIAN_DISTINCT`] distinct values (each kept with its
/// count), a P² estimate beyond.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Median {
    /// Every distinct value so far with how often it came, ascending.
    Exact(Vec<(f64, u64)>),
    /// The P² markers.
    Estimate(P2),
}

impl Default for Median {
    fn default() -> Self {
        Self::Exact(Vec::new())
    }
}

impl Median {
    /// Adds one finite value.
    pub(crate) fn push(&mut self, x: f64) {
        match self {
            Self::Exact(counts) => {
                match counts.binary_search_by(|(value, _)| value.total_cmp(&x)) {
                    Ok(found) => {
                        if let Some((_, count)) = counts.get_mut(found) {
                            *count += 1;
                        }
                    }
                    Err(at) if counts.len() < DATASET_EXACT_MEDIAN_DISTINCT => {
                        counts.insert(at, (x, 1));
                    }
                    Err(_) => {
                        let mut estimate = P2::from_counts(counts);
                        estimate.push(x);
                        *self = Self::Estimate(estimate);
                    }
                }
            }
            Self::Estimate(estimate) => estimate.push(x),
        }
    }

    /// The median (mean of the two middle values for an even count), or its
    /// estimate; `None` before any value.
    pub(crate) fn value(&self) -> Option<f64> {
        match self {
            Self::Exact(counts) => {
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
            Self::Estimate(estimate) => Some(estimate.heights[2]),
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

/// The P² estimator of the median: five markers at the minimum, the
/// quartiles, the median and the maximum of what was seen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct P2 {
    /// Marker heights (estimated quantiles), ascending.
    heights: [f64; 5],
    /// Marker positions (1-based ranks among the values seen).
    positions: [f64; 5],
    /// Where the markers should be.
    desired: [f64; 5],
}

/// How far each marker's desired position moves per value, for the median.
const INCREMENTS: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

impl P2 {
    /// Starts from counted values (at least five), markers at their exact
    /// ranks.
    fn from_counts(counts: &[(f64, u64)]) -> Self {
        let n: u64 = counts.iter().map(|(_, count)| count).sum();
        let last = n.saturating_sub(1) as f64;
        let mut estimate = Self {
            heights: [0.0; 5],
            positions: [0.0; 5],
            desired: [0.0; 5],
        };
        for (i, increment) in INCREMENTS.iter().enumerate() {
            let desired = 1.0 + last * increment;
            // Distinct, ascending ranks: 1, …, n for n ≥ 5 values.
            let rank = desired
                .round()
                .clamp(1.0 + i as f64, last + 1.0 - (4 - i) as f64);
            estimate.desired[i] = desired;
            estimate.positions[i] = rank;
            estimate.heights[i] = value_at_rank(counts, rank as u64).unwrap_or_default();
        }
        estimate
    }

    fn push(&mut self, x: f64) {
        let h = &mut self.heights;
        let cell = if x < h[0] {
            h[0] = x;
            0
        } else if x >= h[4] {
            h[4] = x;
            3
        } else {
            (0..4).rev().find(|&i| h[i] <= x).unwrap_or(0)
        };
        for position in &mut self.positions[cell + 1..] {
            *position += 1.0;
        }
        for (desired, increment) in self.desired.iter_mut().zip(INCREMENTS) {
            *desired += increment;
        }
        for i in 1..4 {
            let gap = self.desired[i] - self.positions[i];
            let room_up = self.positions[i + 1] - self.positions[i] > 1.0;
            let room_down = self.positions[i - 1] - self.positions[i] < -1.0;
            if (gap >= 1.0 && room_up) || (gap <= -1.0 && room_down) {
                let step = gap.signum();
                let parabolic = self.parabolic(i, step);
                self.heights[i] =
                    if self.heights[i - 1] < parabolic && parabolic < self.heights[i + 1] {
                        parabolic
                    } else {
                        self.linear(i, step)
                    };
                self.positions[i] += step;
            }
        }
    }

    fn parabolic(&self, i: usize, step: f64) -> f64 {
        let (q, n) = (&self.heights, &self.positions);
        q[i] + step / (n[i + 1] - n[i - 1])
            * ((n[i] - n[i - 1] + step) * (q[i + 1] - q[i]) / (n[i + 1] - n[i])
                + (n[i + 1] - n[i] - step) * (q[i] - q[i - 1]) / (n[i] - n[i - 1]))
    }

    fn linear(&self, i: usize, step: f64) -> f64 {
        let j = if step > 0.0 { i + 1 } else { i - 1 };
        let (q, n) = (&self.heights, &self.positions);
        q[i] + step * (q[j] - q[i]) / (n[j] - n[i])
    }
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
    fn median_estimates_stay_close_on_large_columns() {
        type Shape = fn(f64) -> f64;
        let shapes: [(&str, Shape); 4] = [
            ("uniform", |u| u * 100.0),
            ("skewed", |u| -(1.0 - u).ln() * 10.0),
            ("digits", |u| (u * 10.0).floor()),
            ("sorted-like", |u| u),
        ];
        for (name, shape) in shapes {
            for n in [DATASET_EXACT_MEDIAN_DISTINCT + 1, 10_000, 200_000] {
                let mut values = stream(0x9e37_79b9_7f4a_7c15, n, shape);
                if name == "sorted-like" {
                    values.sort_by(f64::total_cmp);
                }
                let mut m = Median::default();
                values.iter().for_each(|&x| m.push(x));
                let estimate = m.value().unwrap_or(f64::NAN);
                let exact = exact_median(&values).unwrap_or(f64::NAN);
                let (lo, hi) = values
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
                // Within 1% of the range, and never outside it.
                let error = (estimate - exact).abs() / (hi - lo);
                assert!(
                    error < 0.01,
                    "{name} n={n}: {estimate} vs {exact} ({error})"
                );
                assert!((lo..=hi).contains(&estimate), "{name} n={n}: {estimate}");
            }
        }
    }
}
