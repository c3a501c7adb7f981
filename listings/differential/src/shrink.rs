//! Delta debugging: from a diverging script down to a shortest one that still
//! diverges.
//!
//! The script is first cut after its first differing observation. Then chunks
//! of half the script, a quarter, ... down to single ops are removed; every
//! candidate of a round goes to Go in one batch, and the first that still
//! diverges is kept. The result is 1-minimal: removing any one op makes the
//! divergence go away (or makes the script ambiguous in Go). Last, every
//! `add_with_opts` loses what options and list items it can.

use crate::compare::{first_difference, render};
use crate::go_side::GoReplayer;
use crate::rust_side::{Fault, run_script};
use crate::script::{Op, Opts, QueueKind, Script};

/// Answers, for a batch of candidate op lists, which still diverge.
pub type Oracle<'a> = dyn FnMut(&[Vec<Op>]) -> Result<Vec<bool>, String> + 'a;

/// Shrinks `script` while `diverges` says the candidates still diverge.
/// `diverges` gets a batch of candidates and answers for each.
pub fn shrink(
    script: &[Op],
    diverges: &mut Oracle<'_>,
) -> Result<Vec<Op>, String> {
    let mut cur = script.to_vec();
    let mut chunk = (cur.len() / 2).max(1);
    loop {
        let candidates: Vec<Vec<Op>> = (0..cur.len())
            .step_by(chunk)
            .map(|start| {
                let mut c = cur[..start].to_vec();
                c.extend_from_slice(&cur[(start + chunk).min(cur.len())..]);
                c
            })
            .collect();
        let verdicts =
            if candidates.is_empty() { vec![] } else { diverges(&candidates)? };
        if let Some(i) = verdicts.iter().position(|&d| d) {
            cur = candidates[i].clone();
            chunk = chunk.min((cur.len() / 2).max(1));
        } else if chunk > 1 {
            chunk /= 2;
        } else {
            return Ok(cur);
        }
    }
}

/// The ways to make one op simpler: for `add_with_opts`, leave out one
/// option, or one item of a list.
pub fn simpler(op: &Op) -> Vec<Op> {
    let Op::AddWithOpts(items, o) = op else {
        return vec![];
    };
    let mut out = Vec::new();
    if o.after.is_some() {
        out.push(Op::AddWithOpts(items.clone(), Opts { after: None, ..*o }));
    }
    if o.rate_limited.is_some() {
        out.push(Op::AddWithOpts(
            items.clone(),
            Opts { rate_limited: None, ..*o },
        ));
    }
    if o.priority.is_some() {
        out.push(Op::AddWithOpts(items.clone(), Opts { priority: None, ..*o }));
    }
    if items.len() > 1 {
        for i in 0..items.len() {
            let mut fewer = items.clone();
            fewer.remove(i);
            out.push(Op::AddWithOpts(fewer, *o));
        }
    }
    out
}

/// After [`shrink`]: makes single ops simpler (see [`simpler`]) while the
/// script still diverges, one batch per round, until nothing simpler does.
pub fn simplify(
    script: &[Op],
    diverges: &mut Oracle<'_>,
) -> Result<Vec<Op>, String> {
    let mut cur = script.to_vec();
    loop {
        let candidates: Vec<Vec<Op>> = cur
            .iter()
            .enumerate()
            .flat_map(|(i, op)| {
                let cur = &cur;
                simpler(op).into_iter().map(move |s| {
                    let mut c = cur.clone();
                    c[i] = s;
                    c
                })
            })
            .collect();
        if candidates.is_empty() {
            return Ok(cur);
        }
        match diverges(&candidates)?.iter().position(|&d| d) {
            Some(i) => cur = candidates[i].clone(),
            None => return Ok(cur),
        }
    }
}

/// A divergence between the two sides, shrunk.
#[derive(Clone, Debug)]
pub struct Divergence {
    /// The script as generated.
    pub original: Script,
    /// The shortest diverging script found.
    pub script: Script,
    /// The Rust observations of `script`.
    pub rust: Vec<String>,
    /// The Go observations of `script`.
    pub go: Vec<String>,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "the Rust queue and the Go queue diverge ({}; shrunk from {} ops to {}):",
            match self.script.queue {
                QueueKind::ClientGo => "client-go rate-limiting queue",
                QueueKind::Priority => "controller-runtime priority queue",
            },
            self.original.ops.len(),
            self.script.ops.len()
        )?;
        write!(f, "{}", render(&self.script.ops, &self.rust, &self.go))?;
        writeln!(
            f,
            "script (replay with the Go replayer or rust_side::run_script):"
        )?;
        for line in self.script.lines() {
            writeln!(f, "    {line}")?;
        }
        Ok(())
    }
}

/// Shrinks a script on which Rust (with `fault`, if any) and Go diverge,
/// keeping its queue kind. Candidates that are ambiguous in Go (client-go: two
/// equal ready times; priority queue: a second `shut_down`) are never kept.
pub fn shrink_divergence(
    go: &GoReplayer,
    script: &Script,
    fault: Option<Fault>,
) -> Result<Divergence, String> {
    let mut diverges = |candidates: &[Vec<Op>]| -> Result<Vec<bool>, String> {
        let candidates: Vec<Script> =
            candidates.iter().map(|c| script.with_ops(c.clone())).collect();
        let runs: Vec<_> =
            candidates.iter().map(|c| run_script(c, fault)).collect();
        let clear: Vec<Script> = candidates
            .iter()
            .zip(&runs)
            .filter(|(_, r)| r.excluded_at().is_none())
            .map(|(c, _)| c.clone())
            .collect();
        let mut go_obs =
            if clear.is_empty() { vec![] } else { go.run(&clear)? }.into_iter();
        Ok(runs
            .iter()
            .map(|r| {
                r.excluded_at().is_none()
                    && first_difference(
                        &r.observations,
                        &go_obs.next().unwrap(),
                    )
                    .is_some()
            })
            .collect())
    };
    // Cut after the first difference: a prefix of an unambiguous script is unambiguous.
    let rust = run_script(script, fault).observations;
    let go_obs = go.run(std::slice::from_ref(script))?.remove(0);
    let first = first_difference(&rust, &go_obs)
        .ok_or("the script does not diverge")?;
    let cut = &script.ops[..(first + 1).min(script.ops.len())];
    let shrunk = if diverges(&[cut.to_vec()])?[0] {
        shrink(cut, &mut diverges)?
    } else {
        shrink(&script.ops, &mut diverges)?
    };
    let shrunk = script.with_ops(simplify(&shrunk, &mut diverges)?);
    let rust = run_script(&shrunk, fault).observations;
    let go_obs = go.run(std::slice::from_ref(&shrunk))?.remove(0);
    Ok(Divergence {
        original: script.clone(),
        script: shrunk,
        rust,
        go: go_obs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::parse_op;

    #[test]
    fn shrinks_to_the_ops_that_matter() {
        // "Diverges" when the script holds `add b` somewhere before `len`.
        let script: Vec<Op> = [
            "add a", "step 5ms", "add b", "get", "done a", "len", "forget a",
            "len",
        ]
        .iter()
        .map(|l| parse_op(l).unwrap())
        .collect();
        let mut batches = 0;
        let mut oracle = |cs: &[Vec<Op>]| -> Result<Vec<bool>, String> {
            batches += 1;
            Ok(cs
                .iter()
                .map(|c| {
                    let b = c.iter().position(|o| *o == Op::Add("b".into()));
                    let l = c.iter().rposition(|o| *o == Op::Len);
                    matches!((b, l), (Some(b), Some(l)) if b < l)
                })
                .collect())
        };
        let shrunk = shrink(&script, &mut oracle).unwrap();
        assert_eq!(shrunk, vec![Op::Add("b".into()), Op::Len]);
        assert!(batches < 20, "{batches} batches");
    }

    #[test]
    fn simplifies_add_with_opts() {
        // "Diverges" while the add has a priority and names b.
        let script = vec![
            parse_op(
                "add_with_opts a,b,a after=5ms rate_limited=true priority=5",
            )
            .unwrap(),
            Op::Get,
        ];
        let mut oracle = |cs: &[Vec<Op>]| -> Result<Vec<bool>, String> {
            Ok(cs
                .iter()
                .map(|c| matches!(&c[0], Op::AddWithOpts(items, o) if o.priority.is_some() && items.contains(&"b".to_string())))
                .collect())
        };
        let simple = simplify(&script, &mut oracle).unwrap();
        assert_eq!(
            simple,
            vec![parse_op("add_with_opts b priority=5").unwrap(), Op::Get]
        );
    }
}
