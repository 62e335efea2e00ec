//! RFC 3339 timestamps (UTC, whole seconds) without a date-time crate.

use std::time::{SystemTime, UNIX_EPOCH};

/// Formats `t` as `YYYY-MM-DDTHH:MM:SSZ`, or `None` outside years 0000–9999.
pub(crate) fn rfc3339_utc(t: SystemTime) -> Option<String> {
    let secs = match t.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).ok()?,
        Err(before) => {
            let d = before.duration();
            let whole = i64::try_from(d.as_secs()).ok()?;
            // Round towards the past so that e.g. -0.5 s is 23:59:59 the day before.
            if d.subsec_nanos() > 0 {
                -whole - 1
            } else {
                -whole
            }
        }
    };
    format_unix_seconds(secs)
}

/// Formats seconds since 1970-01-01T00:00:00Z.
pub(crate) fn format_unix_seconds(secs: i64) -> Option<String> {
    let days = secs.div_euclid(86_400);
    let in_day = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return None;
    }
    Some(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        in_day / 3600,
        in_day % 3600 / 60,
        in_day % 60
    ))
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day), after
/// Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        let cases = [
            (0, "1970-01-01T00:00:00Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_798_748_264, "2026-12-31T20:17:44Z"),
            (1_795_292_264, "2026-11-21T20:17:44Z"),
            (4_107_542_399, "2100-02-28T23:59:59Z"),
            (4_107_542_400, "2100-03-01T00:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
        ];
        for (secs, want) in cases {
            assert_eq!(format_unix_seconds(secs).as_deref(), Some(want), "{secs}");
        }
        assert_eq!(format_unix_seconds(253_402_300_800), None);
        assert_eq!(format_unix_seconds(i64::MIN / 2), None);
    }
}
