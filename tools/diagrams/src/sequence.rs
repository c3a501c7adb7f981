//! A sequence diagram from a trace of steps.
//!
//! The trace is a header line (`time from to call`) and one line per step:
//! the time on the listing's clock, the participant that acts, the one it
//! acts on, and what happens (`0s worker queue get -> "web"`). Participants
//! get a lifeline each, left to right in the order they first appear. Each
//! step is an arrow between two lifelines, labelled with its call; a step
//! that answers an earlier one in the opposite direction (the reconciler's
//! result to the worker) is drawn dashed. A participant that took a key with
//! a `get` holds it until its `done` for that key: that span is shaded on
//! its lifeline, and an answer that arrives there goes into the controller's
//! switch, which is marked.

use crate::svg::{ACCENT, INK, MUTED, RULE, Svg, text_width};

/// One parsed step.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub time: String,
    pub from: String,
    pub to: String,
    pub call: String,
}

/// Parses a trace: the header line, then one step per non-empty line.
pub fn parse(trace: &str) -> Result<Vec<Step>, String> {
    let mut lines = trace.lines();
    let header = lines.next().ok_or("the trace is empty")?;
    if !header.split_whitespace().eq(["time", "from", "to", "call"]) {
        return Err(format!("a sequence trace starts with `time from to call`, not {header:?}"));
    }
    let mut steps = Vec::new();
    for (n, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let (Some(time), Some(from), Some(to)) = (words.next(), words.next(), words.next()) else {
            return Err(format!("line {} has no time, from and to: {line:?}", n + 2));
        };
        let call = words.collect::<Vec<_>>().join(" ");
        if call.is_empty() {
            return Err(format!("line {} has no call: {line:?}", n + 2));
        }
        steps.push(Step { time: time.into(), from: from.into(), to: to.into(), call });
    }
    if steps.is_empty() {
        return Err("the trace has no steps".into());
    }
    Ok(steps)
}

const TOP: f64 = 16.0;
const HEAD: f64 = 28.0;
const FIRST_ROW: f64 = 84.0;
const ROW: f64 = 26.0;
const LEFT: f64 = 64.0;

/// Draws the trace as a sequence diagram.
pub fn render(trace: &str) -> Result<String, String> {
    let steps = parse(trace)?;
    let mut lanes: Vec<&str> = Vec::new();
    for s in &steps {
        for p in [&s.from, &s.to] {
            if !lanes.contains(&p.as_str()) {
                lanes.push(p);
            }
        }
    }
    let lane = |p: &str| lanes.iter().position(|l| *l == p).expect("every participant has a lane");

    // Lanes far enough apart for the widest label between two neighbours.
    let mut gap = 150.0_f64;
    for s in &steps {
        let span = lane(&s.from).abs_diff(lane(&s.to)).max(1) as f64;
        gap = gap.max((text_width(&s.call) + 28.0) / span);
    }
    let head_width = lanes.iter().map(|p| text_width(p) + 24.0).fold(90.0, f64::max);
    gap = gap.max(head_width + 16.0);
    let x = |p: &str| LEFT + head_width / 2.0 + 10.0 + lane(p) as f64 * gap;
    let width = x(lanes.last().unwrap()) + head_width / 2.0 + 20.0;
    let bottom = FIRST_ROW + (steps.len() as f64 - 0.4) * ROW;
    let height = bottom + 58.0;

    let mut svg =
        Svg::new(width.round(), height.round(), "The controller loop as a sequence of calls, from a listing's trace");

    // Each instant of the clock gets a band; the time is written once.
    let mut previous: Option<&str> = None;
    for (i, s) in steps.iter().enumerate() {
        let y = FIRST_ROW + i as f64 * ROW;
        if previous != Some(s.time.as_str()) {
            if previous.is_some() {
                svg.line((8.0, y - ROW / 2.0 - 3.0), (width - 8.0, y - ROW / 2.0 - 3.0), RULE, "");
            }
            svg.text(12.0, y + 4.0, "start", &format!(r#"fill="{MUTED}" font-weight="bold""#), &s.time);
            previous = Some(&s.time);
        }
    }

    // Holding spans: from a get to the done of the same key, on the getter.
    let mut holds: Vec<(String, usize, usize)> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        if let Some(key) = s.call.strip_prefix("get -> ") {
            let end = steps[i..]
                .iter()
                .position(|d| d.from == s.from && d.call == format!("done {key}"))
                .map_or(steps.len() - 1, |j| i + j);
            holds.push((s.from.clone(), i, end));
        }
    }

    // Heads and lifelines.
    for p in &lanes {
        let cx = x(p);
        svg.raw(&format!(
            r##"<rect x="{:.1}" y="{TOP}" width="{head_width:.1}" height="{HEAD}" rx="4" fill="#f6f8fa" stroke="{INK}"/>"##,
            cx - head_width / 2.0
        ));
        svg.text(cx, TOP + 18.0, "middle", r#"font-weight="bold""#, p);
        svg.line((cx, TOP + HEAD), (cx, bottom), MUTED, r#"stroke-dasharray="4 4""#);
    }
    for (p, from, to) in &holds {
        let (y1, y2) = (FIRST_ROW + *from as f64 * ROW, FIRST_ROW + *to as f64 * ROW);
        svg.raw(&format!(
            r##"<rect x="{:.1}" y="{y1:.1}" width="10" height="{:.1}" fill="#ddf4ff" stroke="{ACCENT}"/>"##,
            x(p) - 5.0,
            y2 - y1
        ));
    }

    // The arrows. An answer goes back along an open call, drawn dashed.
    let mut open: Vec<(&str, &str)> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let y = FIRST_ROW + i as f64 * ROW;
        let answer = open.iter().rposition(|&(f, t)| f == s.to && t == s.from);
        match answer {
            Some(k) => {
                open.remove(k);
            }
            None => open.push((&s.from, &s.to)),
        }
        let (x1, x2) = (x(&s.from), x(&s.to));
        let dir = if x2 >= x1 { 1.0 } else { -1.0 };
        let (start, end) = (x1 + dir * 6.0, x2 - dir * 6.0);
        let dash = if answer.is_some() { r#"stroke-dasharray="5 3""# } else { "" };
        svg.line((start, y), (end - dir * 6.0, y), INK, &format!(r#"stroke-width="1.4" {dash}"#));
        svg.raw(&format!(
            r#"<polygon points="{end:.1},{y:.1} {:.1},{:.1} {:.1},{:.1}" fill="{INK}"/>"#,
            end - dir * 8.0,
            y - 4.0,
            end - dir * 8.0,
            y + 4.0
        ));
        svg.text((x1 + x2) / 2.0, y - 5.0, "middle", "", &s.call);
        let into_switch = answer.is_some() && holds.iter().any(|(p, a, b)| *p == s.to && (*a..=*b).contains(&i));
        if into_switch {
            let cx = x2 + dir * 26.0;
            svg.raw(&format!(
                r##"<polygon points="{:.1},{y:.1} {cx:.1},{:.1} {:.1},{y:.1} {cx:.1},{:.1}" fill="#fff8c5" stroke="{INK}"/>"##,
                cx - 16.0,
                y - 9.0,
                cx + 16.0,
                y + 9.0
            ));
            svg.text(
                cx + dir * 22.0,
                y + 4.0,
                if dir > 0.0 { "start" } else { "end" },
                r#"font-style="italic""#,
                "switch",
            );
        }
    }

    // The key to the picture.
    let y = bottom + 26.0;
    svg.raw(&format!(
        r##"<rect x="12" y="{:.1}" width="10" height="14" fill="#ddf4ff" stroke="{ACCENT}"/>"##,
        y - 11.0
    ));
    svg.text(28.0, y, "start", "", "the worker holds the key, from get to done");
    let dashed_at = 28.0 + text_width("the worker holds the key, from get to done") + 30.0;
    svg.line((dashed_at, y - 4.0), (dashed_at + 30.0, y - 4.0), INK, r#"stroke-width="1.4" stroke-dasharray="5 3""#);
    svg.text(dashed_at + 38.0, y, "start", "", "an answer");
    Ok(svg.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "time   from       to         call\n\
                         0s     source     queue      add \"web\"\n\
                         0s     worker     queue      get -> \"web\"\n\
                         0s     worker     Reconcile  reconcile \"web\" #1\n\
                         0s     Reconcile  worker     error: connection refused\n\
                         5ms    worker     queue      done \"web\"\n";

    #[test]
    fn parses_each_step_with_its_call_whole() {
        let steps = parse(TRACE).unwrap();
        assert_eq!(steps.len(), 5);
        assert_eq!(
            steps[3],
            Step {
                time: "0s".into(),
                from: "Reconcile".into(),
                to: "worker".into(),
                call: "error: connection refused".into()
            }
        );
    }

    #[test]
    fn draws_a_lifeline_per_participant_an_arrow_per_step_and_one_dashed_answer() {
        let svg = render(TRACE).unwrap();
        for p in ["source", "queue", "worker", "Reconcile"] {
            assert!(svg.contains(&format!(r#"font-weight="bold">{p}</text>"#)), "no head for {p}");
        }
        assert_eq!(svg.matches("<polygon points").count(), 5 + 1, "five arrowheads and one switch");
        assert_eq!(svg.matches(r#"stroke-dasharray="5 3""#).count(), 1 + 1, "the answer, and the key's sample");
        assert!(svg.contains("&quot;web&quot;"), "calls are escaped");
        assert!(svg.contains(">5ms</text>"), "a new instant is labelled");
    }

    #[test]
    fn a_bad_trace_says_which_line() {
        assert_eq!(
            parse("time from to call\n0s worker\n").unwrap_err(),
            "line 2 has no time, from and to: \"0s worker\""
        );
        assert!(parse("when who\n").unwrap_err().contains("starts with `time from to call`"));
    }
}
