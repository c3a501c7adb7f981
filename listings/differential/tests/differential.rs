//! Holds the Rust port to the real Go queues: seeded random scripts run on
//! `faithful_workqueue::RateLimitingQueue` and, through the Go replayer
//! (`listings/differential/replay`), on client-go's
//! `NewTypedRateLimitingQueueWithConfig`; `queue pq` scripts run on
//! `faithful_workqueue::priorityqueue::PriorityQueue` and on
//! controller-runtime's `priorityqueue.New`; every observation must agree.
//!
//! * `DIFFERENTIAL_SEQUENCES`: how many scripts per queue (default 10,000);
//! * `DIFFERENTIAL_SEED`: the seed (decimal or 0x-hex; default fixed);
//! * `DIFFERENTIAL_REPLAY`: a file of scripts to run on both sides and show
//!   side by side (a divergence found here is saved in that format).
//!
//! Needs `go` (1.26) on PATH: without it the Go tests print a "skipped" line,
//! or fail when `CI=true`.

use std::sync::OnceLock;
use std::time::Instant;

use differential::compare::{compare_all, render};
use differential::generate::{
    Generated, generate_pq_sequence, generate_sequence,
};
use differential::go_side::{self, GoReplayer, go_on_path};
use differential::rust_side::{Fault, run_script};
use differential::script::{QueueKind, Script, format_scripts, parse_scripts};
use differential::shrink::shrink_divergence;

const DEFAULT_SEED: u64 = 0x5EED_0F0E_7000_2026;
const DEFAULT_SEQUENCES: u64 = 10_000;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => {
            let v = v.trim().replace('_', "");
            let parsed =
                match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => v.parse(),
                };
            parsed.unwrap_or_else(|e| panic!("{name}={v:?}: {e}"))
        }
        Err(_) => default,
    }
}

/// The built Go replayer, or `None` (after saying so) when Go is missing.
fn go_replayer() -> Option<&'static GoReplayer> {
    if !go_on_path() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!(
                "Go is required: CI=true and go is not on PATH; the differential harness needs Go 1.26"
            );
        }
        eprintln!(
            "skipped: go not found on PATH; the differential harness needs Go 1.26"
        );
        return None;
    }
    static REPLAYER: OnceLock<Result<GoReplayer, String>> = OnceLock::new();
    let built = REPLAYER.get_or_init(|| {
        let start = Instant::now();
        let r = GoReplayer::build();
        eprintln!(
            "differential: built the Go replayer in {:.1?}",
            start.elapsed()
        );
        r
    });
    match built {
        Ok(r) => Some(r),
        Err(e) => panic!("{e}"),
    }
}

fn generate_all(seed: u64, n: u64, fault: Option<Fault>) -> Vec<Generated> {
    (0..n).map(|i| generate_sequence(seed, i, fault)).collect()
}

fn generate_all_pq(seed: u64, n: u64, fault: Option<Fault>) -> Vec<Generated> {
    (0..n).map(|i| generate_pq_sequence(seed, i, fault)).collect()
}

/// Runs everything through Go once, and on a divergence fails with the shrunk
/// script (returned as the error text).
fn check(
    go: &GoReplayer,
    seed: u64,
    generated: &[Generated],
    fault: Option<Fault>,
) -> Result<(), String> {
    let scripts: Vec<Script> =
        generated.iter().map(|g| g.script.clone()).collect();
    let rust: Vec<Vec<String>> =
        generated.iter().map(|g| g.observations.clone()).collect();
    let start = Instant::now();
    let go_obs = go.run(&scripts)?;
    eprintln!(
        "differential: Go replayed {} scripts in {:.1?}",
        scripts.len(),
        start.elapsed()
    );
    let mismatches = compare_all(&rust, &go_obs);
    let Some(first) = mismatches.first() else {
        return Ok(());
    };
    let header = format!(
        "{} of {} {} scripts diverge; the first is sequence {} of seed {seed:#x} \
         (DIFFERENTIAL_SEED={seed:#x}), first difference at op {}.",
        mismatches.len(),
        scripts.len(),
        scripts[first.script].queue.word(),
        first.script,
        first.line + 1,
    );
    let body = match shrink_divergence(go, &scripts[first.script], fault) {
        // A planted bug: nothing to keep.
        Ok(divergence) if fault.is_some() => divergence.to_string(),
        Ok(divergence) => {
            // Keep the shrunk script, to replay with DIFFERENTIAL_REPLAY.
            let saved =
                go_side::target_dir().join("differential").join(format!(
                    "divergence-{}-{seed:x}-{}.txt",
                    divergence.script.queue.word(),
                    first.script
                ));
            let _ = std::fs::write(
                &saved,
                format_scripts(std::slice::from_ref(&divergence.script)),
            );
            format!("{divergence}(saved to {})\n", saved.display())
        }
        Err(e) => format!(
            "shrinking failed ({e}); the unshrunk script:\n{}",
            render(
                &scripts[first.script].ops,
                &rust[first.script],
                &go_obs[first.script]
            )
        ),
    };
    Err(format!("{header}\n{body}"))
}

#[test]
fn the_rust_queue_agrees_with_the_go_queue() {
    let Some(go) = go_replayer() else { return };
    let seed = env_u64("DIFFERENTIAL_SEED", DEFAULT_SEED);
    let n = env_u64("DIFFERENTIAL_SEQUENCES", DEFAULT_SEQUENCES);
    let start = Instant::now();
    let generated = generate_all(seed, n, None);
    let ops: usize = generated.iter().map(|g| g.script.ops.len()).sum();
    eprintln!(
        "differential: generated and ran {n} scripts ({ops} ops, seed {seed:#x}) on Rust in {:.1?}",
        start.elapsed()
    );
    if let Err(report) = check(go, seed, &generated, None) {
        panic!("{report}");
    }
    eprintln!(
        "differential: {n} scripts agree ({:.1?} without the Go build)",
        start.elapsed()
    );
}

#[test]
fn the_rust_priority_queue_agrees_with_the_go_priority_queue() {
    let Some(go) = go_replayer() else { return };
    let seed = env_u64("DIFFERENTIAL_SEED", DEFAULT_SEED);
    let n = env_u64("DIFFERENTIAL_SEQUENCES", DEFAULT_SEQUENCES);
    let start = Instant::now();
    let generated = generate_all_pq(seed, n, None);
    let ops: usize = generated.iter().map(|g| g.script.ops.len()).sum();
    let blocked = generated
        .iter()
        .filter(|g| g.observations.last().is_some_and(|o| o == "blocked"))
        .count();
    eprintln!(
        "differential: generated and ran {n} pq scripts ({ops} ops, {blocked} ending in a \
         blocking get, seed {seed:#x}) on Rust in {:.1?}",
        start.elapsed()
    );
    if let Err(report) = check(go, seed, &generated, None) {
        panic!("{report}");
    }
    eprintln!(
        "differential: {n} pq scripts agree ({:.1?} without the Go build)",
        start.elapsed()
    );
}

#[test]
fn the_comparer_catches_a_wrong_observation() {
    let generated = generate_all(7, 50, None);
    let rust: Vec<Vec<String>> =
        generated.iter().map(|g| g.observations.clone()).collect();
    assert!(compare_all(&rust, &rust).is_empty());

    // A deliberately wrong expected observation in script 17.
    let mut wrong = rust.clone();
    let line = wrong[17].len() / 2;
    wrong[17][line] = format!("{}-not", wrong[17][line]);
    let mismatches = compare_all(&rust, &wrong);
    assert_eq!(mismatches.len(), 1);
    assert_eq!((mismatches[0].script, mismatches[0].line), (17, line));
    let table = render(&generated[17].script.ops, &rust[17], &wrong[17]);
    let marked: Vec<&str> =
        table.lines().filter(|l| l.starts_with(">>")).collect();
    assert_eq!(marked.len(), 1, "{table}");
    assert!(
        marked[0].contains("-not")
            && marked[0].contains("<-- first difference"),
        "{table}"
    );

    // A missing observation, and a missing script, are differences too.
    let mut short = rust.clone();
    short[3].pop();
    assert_eq!(compare_all(&rust, &short)[0].script, 3);
    assert_eq!(compare_all(&rust, &rust[..49]).len(), 1);
}

/// Replays `text` on both sides; each must observe `expected`, one line of
/// space-separated observations per script.
fn assert_both_sides_observe(
    go: &GoReplayer,
    text: &str,
    expected: &[&str],
) -> Vec<Script> {
    let scripts = parse_scripts(text).unwrap();
    let expected: Vec<Vec<String>> = expected
        .iter()
        .map(|s| s.split_whitespace().map(String::from).collect())
        .collect();
    let rust: Vec<Vec<String>> =
        scripts.iter().map(|s| run_script(s, None).observations).collect();
    assert_eq!(rust, expected, "the Rust side");
    assert_eq!(go.run(&scripts).unwrap(), expected, "the Go side");
    scripts
}

#[test]
fn the_go_replayer_gives_the_known_answers() {
    let Some(go) = go_replayer() else { return };
    let text = "add a\nadd_after b 10ms\nadd_rate_limited c\nlen\nstep 5ms\nlen\nget\nget\nstep 5ms\nget\n\
                num_requeues c\nget\n---\nadd a\nget\nadd a\nlen\ndone a\nlen\ndone a\nlen\nget\nget\nlen\n\
                forget a\nshut_down\nget\nget\nadd_rate_limited a\nnum_requeues a\n---\n---\n";
    assert_both_sides_observe(
        go,
        text,
        &[
            "ok ok ok 1 ok 2 a c ok b 1 empty",
            "ok a ok 0 ok 1 ok 2 a a 0 ok ok shutdown shutdown ok 1",
            "",
        ],
    );
}

#[test]
fn the_go_replayer_gives_the_known_answers_for_the_priority_queue() {
    let Some(go) = go_replayer() else { return };
    let text = "queue pq\nadd_with_opts a priority=-100\nadd b\nadd_with_opts c priority=5\nlen\n\
                get\nget\nget\nget\nlen\n---\n\
                queue pq\nadd_with_opts a after=10ms\nadd_rate_limited b\nlen\nnum_requeues b\nstep 5ms\n\
                len\nget\nstep 5ms\nget\n---\n\
                queue pq\nadd a\nget\nadd a\nlen\ndone a\nget\nadd_with_opts b,c,b priority=1\nlen\n\
                shut_down\nget\nadd d\nlen\nadd_rate_limited d\nnum_requeues d\n---\n\
                queue pq\nadd_with_opts a after=1s rate_limited=true\nnum_requeues a\nstep 4ms\nlen\n\
                step 1ms\nlen\n---\nqueue pq\n---\n";
    let scripts = assert_both_sides_observe(
        go,
        text,
        &[
            "ok ok ok 3 c@5 b@0 a@-100 blocked -",
            "ok ok 0 1 ok 1 b@0 ok a@0",
            "ok a@0 ok 1 ok a@0 ok 2 ok shutdown ok 2 ok 0",
            "ok 1 ok 0 ok 1",
            "",
        ],
    );
    assert!(scripts.iter().all(|s| s.queue == QueueKind::Priority));
}

/// The shrunk script a divergence report prints (the indented lines after
/// `script (`), as lines and parsed.
fn shrunk_script(report: &str) -> (Vec<&str>, Script) {
    let listing: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with("script ("))
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .map(str::trim)
        .collect();
    let shrunk = parse_scripts(&listing.join("\n")).unwrap().remove(0);
    (listing, shrunk)
}

#[test]
fn a_planted_bug_is_caught_and_shrunk() {
    let Some(go) = go_replayer() else { return };
    let fault = Some(Fault::ForgetAlsoDone);
    let generated = generate_all(DEFAULT_SEED, 500, fault);
    let report = check(go, DEFAULT_SEED, &generated, fault)
        .expect_err("forget-as-done must diverge from Go");
    eprintln!(
        "differential: the planted bug (forget also calls done) is reported as:\n{report}"
    );
    let (listing, shrunk) = shrunk_script(&report);
    assert!(shrunk.ops.len() <= 5, "not shrunk enough:\n{report}");
    assert!(listing.iter().any(|l| l.starts_with("forget ")), "{report}");
    assert!(report.contains("<-- first difference"), "{report}");
}

#[test]
fn a_planted_bug_in_the_priority_queue_is_caught_and_shrunk() {
    let Some(go) = go_replayer() else { return };
    let fault = Some(Fault::ForgetAlsoDone);
    let generated = generate_all_pq(DEFAULT_SEED, 500, fault);
    let report = check(go, DEFAULT_SEED, &generated, fault)
        .expect_err("forget-as-done must diverge from Go");
    eprintln!(
        "differential: the planted pq bug (forget also calls done) is reported as:\n{report}"
    );
    let (listing, shrunk) = shrunk_script(&report);
    assert_eq!(shrunk.queue, QueueKind::Priority, "{report}");
    assert!(shrunk.ops.len() <= 6, "not shrunk enough:\n{report}");
    assert!(listing.iter().any(|l| l.starts_with("forget ")), "{report}");
    assert!(report.contains("<-- first difference"), "{report}");
}

/// Found by this harness and fixed in the port: after `ShutDown`, Go's
/// `handleWaitingItems` has returned (`priorityqueue.go:331-333`), so a waiting
/// item never becomes ready and `Len` stays 0. The port once promoted it.
#[test]
fn len_after_shut_down_matches_go() {
    let Some(go) = go_replayer() else { return };
    let scripts = parse_scripts(
        "queue pq\nadd_after a 10s\nshut_down\nstep 1000s\nlen\n---\n",
    )
    .unwrap();
    let run = run_script(&scripts[0], None);
    assert_eq!(run.observations, ["ok", "ok", "ok", "0"]);
    assert_eq!(go.run(&scripts).unwrap()[0], ["ok", "ok", "ok", "0"]);
}

#[test]
fn replay_a_script_file_when_asked() {
    let Ok(path) = std::env::var("DIFFERENTIAL_REPLAY") else {
        return;
    };
    let Some(go) = go_replayer() else { return };
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {path}: {e}"));
    let scripts =
        parse_scripts(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let go_obs = go.run(&scripts).unwrap();
    let mut diverging = 0;
    for (i, (script, g)) in scripts.iter().zip(&go_obs).enumerate() {
        let run = run_script(script, None);
        let differs = run.observations != *g;
        // An ambiguous script may differ without a bug: Go's heap order of equal
        // times is not FIFO; a second priority-queue ShutDown panics in Go.
        diverging += usize::from(differs && run.excluded_at().is_none());
        let note = match run.ambiguous_at {
            Some(at) => format!(
                " (ambiguous in Go from op {}: {})",
                at + 1,
                run.ambiguity()
            ),
            None => String::new(),
        };
        let verdict = if differs { "DIVERGES" } else { "agrees" };
        eprintln!(
            "script {} ({}): {verdict}{note}\n{}",
            i + 1,
            script.queue.word(),
            render(&script.ops, &run.observations, g)
        );
    }
    assert_eq!(
        diverging,
        0,
        "{diverging} of {} scripts in {path} diverge",
        scripts.len()
    );
}
