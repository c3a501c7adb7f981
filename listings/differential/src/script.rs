//! The script format shared with the Go replayer.
//!
//! One op per line; scripts are separated by a line `---`; blank lines and
//! lines starting with `#` are ignored. A script whose first line is
//! `queue pq` runs on controller-runtime's priority queue; any other script
//! (or one starting `queue client-go`) on client-go's rate-limiting queue:
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
//! ---
//! queue pq
//! add_with_opts a after=15ms rate_limited=true priority=-100
//! add_with_opts b,c priority=5
//! add_with_opts d
//! get
//! ```
//!
//! `add_with_opts` (priority queue only) takes one item or a comma-separated
//! list (`AddWithOpts(o, items...)`) and any subset of the options, each at
//! most once, in any order.
//!
//! Durations are Go's `time.ParseDuration` syntax restricted to one integer
//! and one unit (`ns`, `us`, `ms`, `s`), which both sides read the same way.

use std::fmt;
use std::time::Duration;

/// Which queue a script runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QueueKind {
    /// client-go's `NewTypedRateLimitingQueueWithConfig` (Rust: `RateLimitingQueue`).
    #[default]
    ClientGo,
    /// controller-runtime's `priorityqueue.New` (Rust: `PriorityQueue`).
    Priority,
}

impl QueueKind {
    /// The header line's word: `queue client-go` or `queue pq`.
    pub fn word(self) -> &'static str {
        match self {
            QueueKind::ClientGo => "client-go",
            QueueKind::Priority => "pq",
        }
    }
}

/// The options of one `add_with_opts` (upstream's `AddOpts`); `None` is an
/// option left out of the line (`After: 0`, `RateLimited: false`, `Priority: nil`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Opts {
    /// `after=<duration>`.
    pub after: Option<Duration>,
    /// `rate_limited=<bool>`.
    pub rate_limited: Option<bool>,
    /// `priority=<int>`.
    pub priority: Option<i32>,
}

/// One queue operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `Add(item)`.
    Add(String),
    /// `Get()` (priority queue: `GetWithPriority()`), called only when it
    /// would not block.
    Get,
    /// `Done(item)`.
    Done(String),
    /// `Forget(item)`.
    Forget(String),
    /// `AddRateLimited(item)`.
    AddRateLimited(String),
    /// `AddAfter(item, d)`.
    AddAfter(String, Duration),
    /// `AddWithOpts(opts, items...)`: priority queue only.
    AddWithOpts(Vec<String>, Opts),
    /// `Len()`.
    Len,
    /// `NumRequeues(item)`.
    NumRequeues(String),
    /// `ShutDown()`.
    ShutDown,
    /// Advances the clock.
    Step(Duration),
}

/// A script: ops run in order on a fresh queue of one kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    /// The queue the ops run on.
    pub queue: QueueKind,
    /// The ops.
    pub ops: Vec<Op>,
}

impl Script {
    /// A script on client-go's queue.
    pub fn client_go(ops: Vec<Op>) -> Self {
        Self { queue: QueueKind::ClientGo, ops }
    }

    /// A script on controller-runtime's priority queue.
    pub fn priority(ops: Vec<Op>) -> Self {
        Self { queue: QueueKind::Priority, ops }
    }

    /// The same queue with other ops (a shrinking candidate).
    pub fn with_ops(&self, ops: Vec<Op>) -> Self {
        Self { queue: self.queue, ops }
    }

    /// The script's lines: the `queue pq` header (priority queue only), then the ops.
    pub fn lines(&self) -> Vec<String> {
        let header = match self.queue {
            QueueKind::ClientGo => None,
            QueueKind::Priority => Some(format!("queue {}", self.queue.word())),
        };
        header.into_iter().chain(self.ops.iter().map(Op::to_string)).collect()
    }
}

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
            Op::AddAfter(x, d) => {
                write!(f, "add_after {x} {}", format_duration(*d))
            }
            Op::AddWithOpts(items, o) => {
                write!(f, "add_with_opts {}", items.join(","))?;
                if let Some(d) = o.after {
                    write!(f, " after={}", format_duration(d))?;
                }
                if let Some(r) = o.rate_limited {
                    write!(f, " rate_limited={r}")?;
                }
                if let Some(p) = o.priority {
                    write!(f, " priority={p}")?;
                }
                Ok(())
            }
            Op::Len => write!(f, "len"),
            Op::NumRequeues(x) => write!(f, "num_requeues {x}"),
            Op::ShutDown => write!(f, "shut_down"),
            Op::Step(d) => write!(f, "step {}", format_duration(*d)),
        }
    }
}

impl fmt::Display for Script {
    /// The script's lines, each ended by a newline (no closing `---`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in self.lines() {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

fn parse_add_with_opts(line: &str, fields: &[&str]) -> Result<Op, String> {
    let items: Vec<String> = fields
        .get(1)
        .ok_or_else(|| format!("{line:?}: missing item"))?
        .split(',')
        .map(str::to_string)
        .collect();
    if items.iter().any(String::is_empty) {
        return Err(format!("{line:?}: empty item"));
    }
    let mut o = Opts::default();
    for field in &fields[2..] {
        let (key, value) = field.split_once('=').ok_or_else(|| {
            format!("{line:?}: option {field:?} is not key=value")
        })?;
        let dup = match key {
            "after" => o.after.replace(parse_duration(value)?).is_some(),
            "rate_limited" => {
                let v = value
                    .parse()
                    .map_err(|_| format!("{line:?}: bad bool {value:?}"))?;
                o.rate_limited.replace(v).is_some()
            }
            "priority" => {
                let v = value
                    .parse()
                    .map_err(|_| format!("{line:?}: bad priority {value:?}"))?;
                o.priority.replace(v).is_some()
            }
            _ => return Err(format!("{line:?}: unknown option {key:?}")),
        };
        if dup {
            return Err(format!("{line:?}: option {key:?} given twice"));
        }
    }
    Ok(Op::AddWithOpts(items, o))
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
        Some(
            "add" | "done" | "forget" | "add_rate_limited" | "num_requeues"
            | "step",
        ) => 2,
        Some("add_after") => 3,
        Some("add_with_opts") if (2..=5).contains(&fields.len()) => {
            return parse_add_with_opts(line, &fields);
        }
        Some("add_with_opts") => {
            return Err(format!(
                "{line:?}: add_with_opts takes an item list and up to 3 options"
            ));
        }
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

/// Parses one block of lines into a script: an optional `queue` header, then ops.
pub fn parse_script(block: &[String]) -> Result<Script, String> {
    let (queue, rest) =
        match block.first().map(|l| l.split_whitespace().collect::<Vec<_>>()) {
            Some(f) if f.first() == Some(&"queue") => {
                let kind = match f.get(1..) {
                    Some(["pq"]) => QueueKind::Priority,
                    Some(["client-go"]) => QueueKind::ClientGo,
                    _ => {
                        return Err(format!(
                            "{:?}: want `queue pq` or `queue client-go`",
                            block[0]
                        ));
                    }
                };
                (kind, &block[1..])
            }
            _ => (QueueKind::ClientGo, block),
        };
    let ops =
        rest.iter().map(|l| parse_op(l)).collect::<Result<Vec<_>, _>>()?;
    if queue == QueueKind::ClientGo
        && let Some(op) =
            ops.iter().find(|op| matches!(op, Op::AddWithOpts(..)))
    {
        return Err(format!("{op}: add_with_opts needs `queue pq`"));
    }
    Ok(Script { queue, ops })
}

/// Parses a file of scripts.
pub fn parse_scripts(text: &str) -> Result<Vec<Script>, String> {
    split_blocks(text).iter().map(|b| parse_script(b)).collect()
}

/// Writes scripts in the file format: every script closed by `---`.
pub fn format_scripts(scripts: &[Script]) -> String {
    scripts.iter().map(|s| format!("{s}---\n")).collect()
}

/// Writes observations in the file format: every block closed by `---`.
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
        assert_eq!(scripts[0].queue, QueueKind::ClientGo);
        assert_eq!(
            scripts[0].ops[5],
            Op::AddAfter("a".into(), Duration::from_millis(15))
        );
        assert_eq!(scripts[0].ops[12], Op::Step(Duration::from_micros(1500)));
        assert_eq!(format_scripts(&scripts), text);
    }

    #[test]
    fn priority_queue_scripts_round_trip() {
        let text = "queue pq\nadd_with_opts a after=15ms rate_limited=true priority=-100\n\
                    add_with_opts b,c priority=5\nadd_with_opts d\nadd_with_opts e rate_limited=false\n\
                    get\n---\nqueue pq\n---\nlen\n---\n";
        let scripts = parse_scripts(text).unwrap();
        assert_eq!(scripts[0].queue, QueueKind::Priority);
        assert_eq!(
            scripts[0].ops[0],
            Op::AddWithOpts(
                vec!["a".into()],
                Opts {
                    after: Some(Duration::from_millis(15)),
                    rate_limited: Some(true),
                    priority: Some(-100)
                }
            )
        );
        assert_eq!(
            scripts[0].ops[1],
            Op::AddWithOpts(
                vec!["b".into(), "c".into()],
                Opts { priority: Some(5), ..Opts::default() }
            )
        );
        assert_eq!(scripts[1], Script::priority(vec![]));
        assert_eq!(scripts[2], Script::client_go(vec![Op::Len]));
        assert_eq!(format_scripts(&scripts), text);
        // Options in another order read the same.
        assert_eq!(
            parse_op("add_with_opts a priority=1 after=1s").unwrap(),
            parse_op("add_with_opts a after=1s priority=1").unwrap()
        );
        assert_eq!(
            parse_scripts("queue client-go\nlen\n---\n").unwrap(),
            vec![Script::client_go(vec![Op::Len])]
        );
    }

    #[test]
    fn empty_scripts_survive() {
        let scripts = parse_scripts("---\nlen\n---\n---\n").unwrap();
        assert_eq!(
            scripts,
            vec![
                Script::client_go(vec![]),
                Script::client_go(vec![Op::Len]),
                Script::client_go(vec![])
            ]
        );
    }

    #[test]
    fn bad_lines_are_errors() {
        assert!(parse_op("pop").is_err());
        assert!(parse_op("add").is_err());
        assert!(parse_op("add_after a 5").is_err());
        assert!(parse_op("step 5m").is_err());
        assert!(parse_op("add_with_opts").is_err());
        assert!(parse_op("add_with_opts a after=1ms after=2ms").is_err());
        assert!(parse_op("add_with_opts a colour=red").is_err());
        assert!(parse_op("add_with_opts a,,b").is_err());
        assert!(parse_op("add_with_opts a priority=high").is_err());
        // add_with_opts is the priority queue's.
        assert!(parse_scripts("add_with_opts a\n---\n").is_err());
        assert!(parse_scripts("queue fifo\n---\n").is_err());
    }
}
