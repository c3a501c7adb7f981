//! Comparing observations, and showing a divergence.

use std::fmt::Write as _;

use crate::script::Op;

/// Where a script's Rust and Go observations first differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The index of the script in the batch.
    pub script: usize,
    /// The index of the first differing observation (the op), or the length of
    /// the shorter side if one side has fewer.
    pub line: usize,
}

/// The index of the first differing observation of one script, if any.
pub fn first_difference(rust: &[String], go: &[String]) -> Option<usize> {
    match rust.iter().zip(go).position(|(r, g)| r != g) {
        Some(i) => Some(i),
        None if rust.len() != go.len() => Some(rust.len().min(go.len())),
        None => None,
    }
}

/// Every script whose observations differ, in order. A script missing on the
/// Go side counts as differing (from its first op).
pub fn compare_all(rust: &[Vec<String>], go: &[Vec<String>]) -> Vec<Mismatch> {
    let mut out: Vec<Mismatch> = rust
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let line = match go.get(i) {
                Some(g) => first_difference(r, g)?,
                None => 0,
            };
            Some(Mismatch { script: i, line })
        })
        .collect();
    // Extra scripts on the Go side are a mismatch as well.
    for i in rust.len()..go.len() {
        out.push(Mismatch { script: i, line: 0 });
    }
    out
}

/// A script as a table: op, Rust observation, Go observation, with the first
/// differing line marked `>>`.
pub fn render(script: &[Op], rust: &[String], go: &[String]) -> String {
    let first = first_difference(rust, go);
    let rows = script.len().max(rust.len()).max(go.len());
    let ops: Vec<String> = (0..rows)
        .map(|i| script.get(i).map_or_else(|| "?".into(), Op::to_string))
        .collect();
    let op_w = ops.iter().map(String::len).max().unwrap_or(0).max(2);
    let rust_w = rust.iter().map(String::len).max().unwrap_or(0).max(4);
    let mut out = String::new();
    let _ = writeln!(out, "     #  {:op_w$}  {:rust_w$}  go", "op", "rust");
    for (i, op) in ops.iter().enumerate() {
        let r = rust.get(i).map_or("(none)", String::as_str);
        let g = go.get(i).map_or("(none)", String::as_str);
        let mark = if first == Some(i) { ">>" } else { "  " };
        let note =
            if first == Some(i) { "   <-- first difference" } else { "" };
        let _ = writeln!(
            out,
            "{mark} {:>3}  {op:op_w$}  {r:rust_w$}  {g}{note}",
            i + 1
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn differences() {
        assert_eq!(first_difference(&v(&["ok", "1"]), &v(&["ok", "1"])), None);
        assert_eq!(
            first_difference(&v(&["ok", "1"]), &v(&["ok", "0"])),
            Some(1)
        );
        assert_eq!(first_difference(&v(&["ok", "1"]), &v(&["ok"])), Some(1));
        let rust = vec![v(&["ok"]), v(&["a"]), v(&["1"])];
        assert_eq!(compare_all(&rust, &rust), vec![]);
        let go = vec![v(&["ok"]), v(&["b"])];
        assert_eq!(
            compare_all(&rust, &go),
            vec![
                Mismatch { script: 1, line: 0 },
                Mismatch { script: 2, line: 0 }
            ]
        );
    }

    #[test]
    fn render_marks_the_first_difference() {
        let text = render(
            &[Op::Add("a".into()), Op::Len],
            &v(&["ok", "1"]),
            &v(&["ok", "0"]),
        );
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("     1  add a"), "{text}");
        assert!(
            lines[2].starts_with(">>   2  len")
                && lines[2].ends_with("<-- first difference"),
            "{text}"
        );
    }
}
