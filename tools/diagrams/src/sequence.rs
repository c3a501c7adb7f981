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
//!
//! Lifelines stand as close as their heads allow, and a label wider than
//! its arrow runs past one end of it, on paper that hides the lifelines it
//! crosses, but never across a held span: so the picture grows down, one
//! row per step, and not sideways.

use crate::svg::{ACCENT, BOX, INK, MUTED, NEW, PAPER, RULE, SWITCH, Svg, bold_width, paint, text_width};

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

const TOP: f64 = 12.0;
const HEAD: f64 = 26.0;
const FIRST_ROW: f64 = 70.0;
const ROW: f64 = 30.0;
/// The times are written left of this; the lanes start right of it.
const TIME_COLUMN: f64 = 44.0;
/// The least distance between two lifelines: room for an arrow and its
/// head. Labels are not fitted between lifelines (that made the picture
/// 956 wide); a label wider than its arrow runs past the arrow's end.
const MIN_GAP: f64 = 76.0;
/// A label stays this far from a lifeline it starts or ends at.
const LABEL_GAP: f64 = 12.0;
/// Half the width a held lifeline needs clear of labels: its shaded span,
/// or the switch drawn on it.
const HELD: f64 = 12.0;

/// Where a call's label goes: its box (left edge and width, with the paper
/// behind it) and how its text is anchored in the box.
struct Placement {
    left: f64,
    width: f64,
    anchor: &'static str,
}

impl Placement {
    fn text_x(&self) -> f64 {
        match self.anchor {
            "start" => self.left + 3.0,
            "end" => self.left + self.width - 3.0,
            _ => self.left + self.width / 2.0,
        }
    }
}

/// Places the label of an arrow between `lo` and `hi`: centred over it,
/// else starting at its left end, else ending at its right end; the first
/// that keeps clear of every lifeline in `held` (the x of each lane that
/// holds a key on this row) and of the times. A label that fits nowhere is
/// centred.
fn place(call: &str, lo: f64, hi: f64, held: &[f64]) -> Placement {
    let width = text_width(call) + 6.0;
    let candidates = [
        Placement { left: (lo + hi - width) / 2.0, width, anchor: "middle" },
        Placement { left: lo + LABEL_GAP, width, anchor: "start" },
        Placement { left: hi - LABEL_GAP - width, width, anchor: "end" },
    ];
    let clear = |p: &Placement| {
        p.left >= TIME_COLUMN && held.iter().all(|&x| p.left + p.width <= x - HELD || p.left >= x + HELD)
    };
    let [centred, start, end] = candidates;
    if clear(&centred) {
        centred
    } else if clear(&start) {
        start
    } else if clear(&end) {
        end
    } else {
        Placement { left: centred.left.max(TIME_COLUMN), ..centred }
    }
}

/// Draws the trace as a sequence diagram, taller rather than wider: lanes
/// as close as their heads allow, so that on a phone the picture shrinks
/// little and its labels stay legible.
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

    // Each head as wide as its name; neighbours at least MIN_GAP apart.
    let heads: Vec<f64> = lanes.iter().map(|p| (bold_width(p) + 14.0).max(50.0)).collect();
    let mut xs = vec![TIME_COLUMN + 4.0 + heads[0] / 2.0];
    for i in 1..lanes.len() {
        let gap = MIN_GAP.max((heads[i - 1] + heads[i]) / 2.0 + 8.0);
        xs.push(xs[i - 1] + gap);
    }
    let x = |p: &str| xs[lane(p)];
    let y = |i: usize| FIRST_ROW + i as f64 * ROW;

    // Holding spans: from a get to the done of the same key, on the getter.
    let mut holds: Vec<(usize, usize, usize)> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        if let Some(key) = s.call.strip_prefix("get -> ") {
            let end = steps[i..]
                .iter()
                .position(|d| d.from == s.from && d.call == format!("done {key}"))
                .map_or(steps.len() - 1, |j| i + j);
            holds.push((lane(&s.from), i, end));
        }
    }
    let held = |i: usize| -> Vec<f64> {
        holds.iter().filter(|(_, a, b)| (*a..=*b).contains(&i)).map(|(l, _, _)| xs[*l]).collect()
    };

    // Each arrow: whether it answers an open call (dashed), whether that
    // answer lands in a held span (the switch), and where its label goes.
    let mut open: Vec<(&str, &str)> = Vec::new();
    let mut arrows = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let answer = open.iter().rposition(|&(f, t)| f == s.to && t == s.from);
        match answer {
            Some(k) => {
                open.remove(k);
            }
            None => open.push((&s.from, &s.to)),
        }
        let into_switch = answer.is_some() && holds.iter().any(|(l, a, b)| *l == lane(&s.to) && (*a..=*b).contains(&i));
        let (x1, x2) = (x(&s.from), x(&s.to));
        let label = place(&s.call, x1.min(x2), x1.max(x2), &held(i));
        arrows.push((answer.is_some(), into_switch, label));
    }

    // The key to the picture, one line per sign.
    let mut key = vec![("hold", "the worker holds the key, from get to done"), ("answer", "an answer")];
    if arrows.iter().any(|(_, switch, _)| *switch) {
        key.push(("switch", "the answer goes into the controller's switch"));
    }

    let lanes_end = xs.last().unwrap() + heads.last().unwrap() / 2.0;
    let labels_end = arrows.iter().map(|(_, _, l)| l.left + l.width).fold(0.0, f64::max);
    let key_end = key.iter().map(|(_, text)| 44.0 + text_width(text)).fold(0.0, f64::max);
    let width = (lanes_end.max(labels_end).max(key_end) + 8.0).round();
    let bottom = y(steps.len() - 1) + 14.0;
    let height = (bottom + 14.0 + key.len() as f64 * 20.0 + 6.0).round();

    let mut svg = Svg::new(width, height, "The controller loop as a sequence of calls, from a listing's trace");

    // Each instant of the clock gets a band; the time is written once.
    let mut previous: Option<&str> = None;
    for (i, s) in steps.iter().enumerate() {
        if previous != Some(s.time.as_str()) {
            if previous.is_some() {
                svg.line((8.0, y(i) - 20.0), (width - 8.0, y(i) - 20.0), RULE, "");
            }
            svg.text(12.0, y(i) + 4.0, "start", MUTED, r#"font-weight="bold""#, &s.time);
            previous = Some(&s.time);
        }
    }

    // Heads and lifelines.
    for (p, (cx, head)) in lanes.iter().zip(xs.iter().zip(&heads)) {
        svg.rect((cx - head / 2.0, TOP), (*head, HEAD), 4.0, Some(BOX), Some(INK));
        svg.text(*cx, TOP + 17.0, "middle", INK, r#"font-weight="bold""#, p);
        svg.line((*cx, TOP + HEAD), (*cx, bottom), MUTED, r#"stroke-dasharray="4 4""#);
    }
    for (l, from, to) in &holds {
        svg.rect((xs[*l] - 5.0, y(*from)), (10.0, y(*to) - y(*from)), 0.0, Some(NEW), Some(ACCENT));
    }

    // The arrows, each with its label above it on paper, so that a
    // lifeline it crosses does not run through its letters.
    for (i, (s, (answer, into_switch, label))) in steps.iter().zip(&arrows).enumerate() {
        let y = y(i);
        // The paper is as wide as the text in Arial-like fonts; the label's
        // place was chosen for the wider estimate, so a wider font still
        // keeps clear of held spans.
        let paper = text_width(&s.call) * 0.9 + 6.0;
        let paper_left = match label.anchor {
            "start" => label.left,
            "end" => label.left + label.width - paper,
            _ => label.left + (label.width - paper) / 2.0,
        };
        svg.rect((paper_left, y - 18.0), (paper, 13.5), 0.0, Some(PAPER), None);
        svg.text(label.text_x(), y - 7.0, label.anchor, INK, "", &s.call);
        let (x1, x2) = (x(&s.from), x(&s.to));
        let dir = if x2 >= x1 { 1.0 } else { -1.0 };
        // An answer into the switch ends at the diamond drawn on the lifeline.
        let (start, end) = (x1 + dir * 6.0, x2 - dir * if *into_switch { 12.0 } else { 6.0 });
        let dash = if *answer { r#" stroke-dasharray="5 3""# } else { "" };
        svg.line((start, y), (end - dir * 6.0, y), INK, &format!(r#"stroke-width="1.4"{dash}"#));
        svg.raw(&format!(
            r#"<polygon points="{end:.1},{y:.1} {:.1},{:.1} {:.1},{:.1}" {}/>"#,
            end - dir * 8.0,
            y - 4.0,
            end - dir * 8.0,
            y + 4.0,
            paint(Some(INK), None)
        ));
        if *into_switch {
            svg.raw(&diamond(x2, y, 11.0, 8.0));
        }
    }

    // The key.
    for (n, (sign, text)) in key.iter().enumerate() {
        let y = bottom + 28.0 + n as f64 * 20.0;
        match *sign {
            "hold" => svg.rect((19.0, y - 11.0), (10.0, 14.0), 0.0, Some(NEW), Some(ACCENT)),
            "answer" => svg.line((12.0, y - 4.0), (36.0, y - 4.0), INK, r#"stroke-width="1.4" stroke-dasharray="5 3""#),
            _ => svg.raw(&diamond(24.0, y - 4.0, 11.0, 8.0)),
        }
        svg.text(44.0, y, "start", INK, "", text);
    }
    Ok(svg.finish())
}

/// The controller's switch: a diamond centred on (x, y).
fn diamond(x: f64, y: f64, half_width: f64, half_height: f64) -> String {
    format!(
        r#"<polygon points="{:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1}" {}/>"#,
        x - half_width,
        y - half_height,
        x + half_width,
        y + half_height,
        paint(Some(SWITCH), Some(INK))
    )
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
        assert_eq!(svg.matches("<polygon points").count(), 5 + 1 + 1, "five arrowheads, one switch and the key's");
        assert_eq!(svg.matches(r#"stroke-dasharray="5 3""#).count(), 1 + 1, "the answer, and the key's sample");
        assert!(svg.contains("&quot;web&quot;"), "calls are escaped");
        assert!(svg.contains(">5ms</text>"), "a new instant is labelled");
    }

    #[test]
    fn a_label_wider_than_its_arrow_runs_past_the_end_that_is_not_held() {
        let (worker, reconcile) = (200.0, 280.0);
        // Fits between the two lifelines: centred.
        let short = place("ok", worker, reconcile, &[worker]);
        assert_eq!(short.anchor, "middle");
        // Too wide: it starts beside the held worker and runs to the right.
        let long = place("error: connection refused", worker, reconcile, &[worker]);
        assert_eq!(long.anchor, "start");
        assert!(long.left >= worker + HELD);
        // Held on the right: it ends beside it and runs to the left.
        let (queue, worker) = (160.0, 240.0);
        let left = place("add_rate_limited \"web\"", queue, worker, &[worker]);
        assert_eq!(left.anchor, "end");
        assert!(left.left + left.width <= worker - HELD && left.left >= TIME_COLUMN);
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
