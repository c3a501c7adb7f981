//! The script format shared with the Go replayer.
//!
//! One op per line; scripts are separated by a line `---`; blank lines and
//! lines starting with `#` are ignored:
//!
//! ```text
//! add a
//! get
//! done a
//! forget a
//! add_rate_limited a
//! add_after a 15ms
//! len
//! num_requeues a
//! shut_down
//! step 7ms
//! ```
//!
//! Durations are Go's `time.ParseDuration` syntax restricted to one integer
//! and one unit (`ns`, `us`, `ms`, `s`), which both sides read the same way.

use std::fmt;
use std::time::Duration;

/// One queue operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `Add(item)`.
    Add(String),
    /// `Get()`, called only when it would not block.
    Get,
    /// `Done(item)`.
    Done(String),
    /// `Forget(item)`.
    Forget(String),
    /// `AddRateLimited(item)`.
    AddRateLimited(String),
    /// `AddAfter(item, d)`.
    AddAfter(String, Duration),
    /// `Len()`.
    Len,
    /// `NumRequeues(item)`.
    NumRequeues(String),
    /// `ShutDown()`.
    ShutDown,
    /// Advances the clock.
    Step(Duration),
}

/// A script: ops run in order on a fresh queue.
pub type Script = Vec<Op>;

/// Formats a duration the way [`parse_duration`] and Go read it.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        "0ms".to_string()
    } else if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// Reads `<integer><unit>` with unit `ns`, `us`, `ms` or `s`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let split = s
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("duration {s:?} has no unit"))?;
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("bad duration {s:?}"))?;
    match unit {
        "ns" => Ok(Duration::from_nanos(n)),
        "us" => Ok(Duration::from_micros(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        _ => Err(format!("bad duration unit in {s:?}")),
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Add(x) => write!(f, "add {x}"),
            Op::Get => write!(f, "get"),
            Op::Done(x) => write!(f, "done {x}"),
            Op::Forget(x) => write!(f, "forget {x}"),
            Op::AddRateLimited(x) => write!(f, "add_rate_limited {x}"),
            Op::AddAfter(x, d) => write!(f, "add_after {x} {}", format_duration(*d)),
            Op::Len => write!(f, "len"),
            Op::NumRequeues(x) => write!(f, "num_requeues {x}"),
            Op::ShutDown => write!(f, "shut_down"),
            Op::Step(d) => write!(f, "step {}", format_duration(*d)),
        }
    }
}

/// Parses one op line.
pub fn parse_op(line: &str) -> Result<Op, String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let item = |i: usize| -> Result<String, String> {
        fields
            .get(i)
            .map(|s| s.to_string())
            .ok_or_else(|| format!("{line:?}: missing item"))
    };
    let want = match fields.first().copied() {
        Some("get" | "len" | "shut_down") => 1,
        Some("add" | "done" | "forget" | "add_rate_limited" | "num_requeues" | "step") => 2,
        Some("add_after") => 3,
        _ => return Err(format!("unknown op {line:?}")),
    };
    if fields.len() != want {
        return Err(format!("{line:?}: {} takes {want} fields", fields[0]));
    }
    Ok(match fields[0] {
        "add" => Op::Add(item(1)?),
        "get" => Op::Get,
        "done" => Op::Done(item(1)?),
        "forget" => Op::Forget(item(1)?),
        "add_rate_limited" => Op::AddRateLimited(item(1)?),
        "add_after" => Op::AddAfter(item(1)?, parse_duration(fields[2])?),
        "len" => Op::Len,
        "num_requeues" => Op::NumRequeues(item(1)?),
        "shut_down" => Op::ShutDown,
        "step" => Op::Step(parse_duration(fields[1])?),
        _ => unreachable!(),
    })
}

/// Splits a file into blocks of lines separated by `---` (the format of both
/// scripts and observations). Blank and `#` lines are dropped. A trailing
/// block without a closing `---` counts if it is not empty.
pub fn split_blocks(text: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    let mut cur = Vec::new();
    let mut started = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line == "---" {
            blocks.push(std::mem::take(&mut cur));
            started = false;
            continue;
        }
        started = true;
        cur.push(line.to_string());
    }
    if started {
        blocks.push(cur);
    }
    blocks
}

/// Parses a file of scripts.
pub fn parse_scripts(text: &str) -> Result<Vec<Script>, String> {
    split_blocks(text)
        .into_iter()
        .map(|block| block.iter().map(|l| parse_op(l)).collect())
        .collect()
}

/// Writes scripts (or observations) in the file format: every block closed by `---`.
pub fn format_blocks<T: fmt::Display>(blocks: &[Vec<T>]) -> String {
    let mut out = String::new();
    for block in blocks {
        for line in block {
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out.push_str("---\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_round_trip() {
        let text = "add a\nget\ndone a\nforget a\nadd_rate_limited a\nadd_after a 15ms\nlen\n\
                    num_requeues a\nshut_down\nstep 7ms\nadd_after b 0ms\nstep 10s\nstep 1500us\n---\nlen\n---\n";
        let scripts = parse_scripts(text).unwrap();
        assert_eq!(scripts.len(), 2);
        assert_eq!(
            scripts[0][5],
            Op::AddAfter("a".into(), Duration::from_millis(15))
        );
        assert_eq!(scripts[0][12], Op::Step(Duration::from_micros(1500)));
        assert_eq!(format_blocks(&scripts), text);
    }

    #[test]
    fn empty_scripts_survive() {
        let scripts = parse_scripts("---\nlen\n---\n---\n").unwrap();
        assert_eq!(scripts, vec![vec![], vec![Op::Len], vec![]]);
    }

    #[test]
    fn bad_lines_are_errors() {
        assert!(parse_op("pop").is_err());
        assert!(parse_op("add").is_err());
        assert!(parse_op("add_after a 5").is_err());
        assert!(parse_op("step 5m").is_err());
    }
}
