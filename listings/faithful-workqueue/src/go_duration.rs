//! Go's `time.Duration` notation, so that Rust output and Go output can be
//! compared byte for byte.
//!
//! Go prints durations as `5ms`, `2.56s`, `2m43.84s`, `16m40s`, `1h28m31s`:
//! the largest unit first, no spaces, trailing zeros of the fraction dropped.
//! Rust's `Debug` for [`Duration`] prints `2.56s` but also `163.84s` where Go
//! prints `2m43.84s`, so the book formats every duration through [`GoDuration`].

use std::fmt;
use std::time::Duration;

/// Formats a [`Duration`] the way Go's `time.Duration.String()` does.
///
/// ```
/// use faithful_workqueue::go_duration::GoDuration;
/// use std::time::Duration;
///
/// assert_eq!(GoDuration(Duration::from_millis(5)).to_string(), "5ms");
/// assert_eq!(GoDuration(Duration::from_millis(163_840)).to_string(), "2m43.84s");
/// assert_eq!(GoDuration(Duration::from_secs(1000)).to_string(), "16m40s");
/// assert_eq!(GoDuration(Duration::from_secs(5311)).to_string(), "1h28m31s");
/// assert_eq!(GoDuration(Duration::ZERO).to_string(), "0s");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct GoDuration(pub Duration);

const NANOS_PER_MICRO: u128 = 1_000;
const NANOS_PER_MILLI: u128 = 1_000_000;
const NANOS_PER_SEC: u128 = 1_000_000_000;

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = self.0.as_nanos();
        if nanos == 0 {
            return f.pad("0s");
        }
        let text = if nanos < NANOS_PER_SEC {
            // Below one second Go switches to the smallest unit that keeps an
            // integer part: ns, µs or ms.
            let (unit, scale, digits) = if nanos < NANOS_PER_MICRO {
                ("ns", 1, 0)
            } else if nanos < NANOS_PER_MILLI {
                ("µs", NANOS_PER_MICRO, 3)
            } else {
                ("ms", NANOS_PER_MILLI, 6)
            };
            format!(
                "{}{}{unit}",
                nanos / scale,
                fraction(nanos % scale, digits)
            )
        } else {
            let secs = nanos / NANOS_PER_SEC;
            let frac = fraction(nanos % NANOS_PER_SEC, 9);
            let (hours, minutes, seconds) =
                (secs / 3600, secs / 60 % 60, secs % 60);
            if hours > 0 {
                format!("{hours}h{minutes}m{seconds}{frac}s")
            } else if minutes > 0 {
                format!("{minutes}m{seconds}{frac}s")
            } else {
                format!("{seconds}{frac}s")
            }
        };
        f.pad(&text)
    }
}

/// `.ddd` with trailing zeros removed, or nothing when the remainder is zero.
fn fraction(remainder: u128, digits: usize) -> String {
    if remainder == 0 {
        return String::new();
    }
    let padded = format!("{remainder:0digits$}");
    format!(".{}", padded.trim_end_matches('0'))
}

/// Rounds like Go's `Duration.Round(m)`: to the nearest multiple of `m`,
/// halfway values away from zero.
///
/// ```
/// use faithful_workqueue::go_duration::round;
/// use std::time::Duration;
///
/// let second = Duration::from_secs(1);
/// assert_eq!(round(Duration::from_millis(1_500), second), Duration::from_secs(2));
/// assert_eq!(round(Duration::from_millis(1_275), second), Duration::from_secs(1));
/// assert_eq!(round(Duration::from_millis(5), second), Duration::ZERO);
/// ```
pub fn round(d: Duration, m: Duration) -> Duration {
    if m.is_zero() {
        return d;
    }
    let (d_n, m_n) = (d.as_nanos(), m.as_nanos());
    let r = d_n % m_n;
    let rounded = if r + r < m_n { d_n - r } else { d_n + m_n - r };
    Duration::from_nanos(u64::try_from(rounded).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go(d: Duration) -> String {
        GoDuration(d).to_string()
    }

    #[test]
    fn matches_go_for_the_books_figures() {
        // Every figure below is what Go 1.26 prints for the same duration.
        let cases = [
            (Duration::from_nanos(1), "1ns"),
            (Duration::from_nanos(1_500), "1.5µs"),
            (Duration::from_millis(5), "5ms"),
            (Duration::from_millis(640), "640ms"),
            (Duration::from_millis(1_280), "1.28s"),
            (Duration::from_millis(2_560), "2.56s"),
            (Duration::from_millis(40_960), "40.96s"),
            (Duration::from_millis(81_920), "1m21.92s"),
            (Duration::from_millis(655_360), "10m55.36s"),
            (Duration::from_secs(3_600), "1h0m0s"),
            (Duration::from_millis(5_310_715), "1h28m30.715s"),
        ];
        for (d, want) in cases {
            assert_eq!(go(d), want, "{d:?}");
        }
    }

    #[test]
    fn padding_applies_to_the_whole_text() {
        assert_eq!(
            format!("{:>8}", GoDuration(Duration::from_millis(5))),
            "     5ms"
        );
        assert_eq!(format!("{:<6}|", GoDuration(Duration::ZERO)), "0s    |");
    }

    #[test]
    fn round_half_goes_up() {
        let s = Duration::from_secs(1);
        assert_eq!(round(Duration::from_millis(500), s), s);
        assert_eq!(round(Duration::from_millis(499), s), Duration::ZERO);
        assert_eq!(
            round(Duration::from_millis(2_310_715), s),
            Duration::from_secs(2_311)
        );
    }
}
