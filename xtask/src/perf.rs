//! `cargo xtask perf [--write] [--by-placement] [--fallbacks]`: the Rust
//! crate against the real Go implementations, on identical workloads, in one
//! run, and the book's page that reports it.
//!
//! Builds `listings/perf` (`workqueue-perf`, the Rust side and its floor) with
//! `cargo build --release --locked` and `listings/perf/go` (client-go's queue
//! and delaying queue, controller-runtime's priority queue) with `go build`
//! into `target/perf/`. Then, row by row, it runs Go, Rust and the floor
//! [`REPS`] times each, interleaved (one process per measurement, the order
//! reversed every other repetition) so that machine noise hits all three
//! alike, takes the median ops/s of each, checks that Go and Rust handed out
//! the same number of items with the same checksum, and prints the report.
//! `--write` also writes it, whole, as the book's appendix [`PAGE`]: every
//! figure on that page comes from the run that wrote it. The workloads are
//! defined in `listings/perf/src/main.rs`.
//!
//! In the same run: upstream's own benchmarks ([`UPSTREAM`]:
//! controller-runtime's and client-go's `func Benchmark…`, run as they are
//! from test binaries that `go test -c` builds from the module cache) beside
//! the same operations on the crate; the hardware's own costs ([`HW`]: a
//! cache line moved between the cores, an atomic read-modify-write, a
//! lock/unlock pair alone and contended, a wake-up, a hand-off), from which
//! a second table derives what the hardware allows per row; and some rows
//! again with keys that have no reference count ([`COUNT_FREE_ROWS`]), which
//! says what the key's count costs. For each row that misses a target the
//! page says, with these numbers, what stands in the way.
//!
//! For whoever digs further, two investigations print to stdout only, never
//! to the page: `--by-placement` measures [`PLACEMENT_ROWS`] again round by
//! round, sorted by how far apart the cores were and by where tokio ran the
//! workers; `--fallbacks` lists how often the queues' lock gave up spinning
//! in each Rust run.

use std::env;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::{Result, cargo, root, run};

/// Measurements per cell; the table shows their median, and the range of
/// the ratios of the runs made side by side. An odd number, for the median.
const REPS: usize = 11;

/// A measurement process that runs longer than this has hung.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The rows: the workload's name on both sides, and what one op is.
const WORKLOADS: [(&str, &str); 6] = [
    ("cycles-1", "add+get+done cycles over 10,000 keys, 1 worker"),
    ("cycles-2", "add+get+done cycles over 10,000 keys, 2 workers"),
    ("cycles-8", "add+get+done cycles over 10,000 keys, 8 workers"),
    ("burst", "adds: 100,000 over 1,000 keys into a fresh queue"),
    ("delaying", "add_after: 100,000 of random delays 1-10,000 ms over 10,000 keys, fake clock, then get+done all"),
    ("priority", "hand-outs: 10,000 keys added at priority 0-4, then get+done by 1 worker"),
];

/// Upstream's benchmarks: our row name, the Go test binary, the benchmark,
/// `-test.benchtime` iterations (the Rust side runs as many), what one op is.
const UPSTREAM: [(&str, &str, &str, u64, &str); 5] = [
    (
        "pq-add-get-done",
        "priorityqueue",
        "BenchmarkAddGetDone",
        200,
        "controller-runtime priorityqueue_test.go:366: 1,000 `Add` of ints, then 1,000 `Get`+`Done`",
    ),
    (
        "pq-add-only",
        "priorityqueue",
        "BenchmarkAddOnly",
        2_000,
        "priorityqueue_test.go:381: 1,000 `Add` of ints already queued",
    ),
    (
        "pq-add-lock-contended",
        "priorityqueue",
        "BenchmarkAddLockContended",
        200,
        "priorityqueue_test.go:392: 1,000 `Add` while 1,000 workers `Get`, sleep 1 ms, `Done` over 1,000,000 queued items",
    ),
    (
        "queue",
        "workqueue",
        "BenchmarkQueue",
        10_000,
        "client-go queue_test.go:465: 100 × `Add`+`Get`+`Done` on a fresh queue",
    ),
    (
        "delaying-add-after",
        "workqueue",
        "BenchmarkDelayingQueue_AddAfter",
        100_000,
        "client-go delaying_queue_test.go:215: one `AddAfter` of a new key (random delay < 10 min, fake clock), and its `Get` after the clock steps",
    ),
];

/// The Go packages whose test binaries hold [`UPSTREAM`]'s benchmarks.
const UPSTREAM_PACKAGES: [(&str, &str); 2] = [
    ("priorityqueue", "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"),
    ("workqueue", "k8s.io/client-go/util/workqueue"),
];

/// The rows measured again round by round, each round with the distance
/// between the cores right after it (`--by-placement` on both sides).
const PLACEMENT_ROWS: [&str; 2] = ["cycles-2", "cycles-8"];

/// Processes per side and row of the by-placement measurement (150 rounds
/// each), Go and Rust interleaved.
const PLACEMENT_PROCESSES: usize = 5;

/// A ping-pong round trip up to this means two cores near each other (on
/// the machine of the README, 30 or 70-130 ns)...
const NEAR_ROUND_TRIP_NS: f64 = 200.0;

/// ... and up to this, two cores far apart (360-650 ns there). A slower
/// round trip means a ping-pong thread waited for a core, which says
/// nothing about the distance: its round is left out.
const FAR_ROUND_TRIP_NS: f64 = 1_000.0;

/// A Rust `cycles` round whose workers made at least this share of its
/// hand-outs on the runtime thread the producer ran on ran on one core in
/// turn: the producer adds a round's keys without yielding, so a worker on
/// its thread runs after the adds. Below it, some worker ran on the other
/// core beside the adds.
const ONE_THREAD_SHARE: f64 = 0.9;

/// The rows measured again with keys that have no reference count
/// (`workqueue-perf` built with `--features count-free-keys`), beside the
/// same rows with `SharedKey`, to show what the count costs.
const COUNT_FREE_ROWS: [&str; 3] = ["cycles-1", "cycles-2", "queue"];

/// The hardware's own costs (`workqueue-perf --workload hw-…`).
const HW: [&str; 6] = ["hw-pingpong", "hw-wake", "hw-atomic", "hw-lock", "hw-lock-contended", "hw-handoff"];

const BEGIN: &str = "<!-- perf:begin -->";
const END: &str = "<!-- perf:end -->";

/// The book's appendix that `--write` writes, relative to the root, and
/// its title (as `src/SUMMARY.md` names it).
pub const PAGE: &str = "src/performance.md";
const PAGE_TITLE: &str = "Performance against Go";

/// The first line of [`PAGE`]: what wrote it. `tests/book.rs` lets the page
/// hold tables only below this line.
pub const PAGE_STAMP: &str =
    "<!-- Written whole from one measurement by `cargo xtask perf`, with its write flag; never edit it by hand. -->";

/// The three programs of one row.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Go,
    Rust,
    Floor,
}

/// One workload line of a side's output.
#[derive(Clone, Debug, PartialEq)]
struct Sample {
    ops: u64,
    elapsed_ns: u64,
    handouts: u64,
    checksum: String,
}

impl Sample {
    fn ops_per_s(&self) -> f64 {
        self.ops as f64 * 1e9 / self.elapsed_ns.max(1) as f64
    }
}

/// The medians of one row, the spread of its ratios, and what the floor
/// counted per op.
struct Row {
    name: &'static str,
    what: &'static str,
    go: f64,
    rust: f64,
    /// `None` on upstream's benchmarks, which have no floor.
    floor: Option<f64>,
    /// The lowest and highest Rust/Go of the repetitions, each Rust run
    /// against the Go run of its own repetition.
    rust_over_go_range: (f64, f64),
    /// Likewise floor/Rust.
    floor_over_rust_range: (f64, f64),
    floor_counts: String,
    /// The floor's lock/unlock pairs per op.
    floor_locks: f64,
    /// Each Rust run's ns per op and its lock fallbacks (`# lock` line).
    rust_fallbacks: Vec<(f64, u64)>,
}

impl Row {
    fn rust_over_go(&self) -> f64 {
        self.rust / self.go
    }
    fn floor_over_rust(&self) -> f64 {
        self.floor.map_or(f64::NAN, |f| f / self.rust)
    }
    /// The bar: 2× Go at the median, and no run of the row below 1.5× the
    /// Go run beside it.
    fn fast_enough(&self) -> bool {
        self.rust_over_go() >= 2.0 && self.rust_over_go_range.0 >= SLOWEST_RUN_OVER_GO
    }
    fn near_floor(&self) -> bool {
        self.floor.is_none() || self.floor_over_rust() <= 2.0
    }
    /// Some runs meet a target and others miss it: the verdict is noise.
    fn straddles_a_target(&self) -> bool {
        let (lo, hi) = self.rust_over_go_range;
        let (flo, fhi) = self.floor_over_rust_range;
        (lo < 2.0 && hi >= 2.0) || (self.floor.is_some() && flo <= 2.0 && fhi > 2.0)
    }
}

/// The least Rust/Go that any one run of a row may show (issue 16's bar,
/// beside 2× at the median).
const SLOWEST_RUN_OVER_GO: f64 = 1.5;

/// The lowest and highest of `a[i] / b[i]` over the repetitions.
fn ratio_range(a: &[Sample], b: &[Sample]) -> (f64, f64) {
    a.iter()
        .zip(b)
        .map(|(a, b)| a.ops_per_s() / b.ops_per_s())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| (lo.min(r), hi.max(r)))
}

pub fn perf(args: &[String]) -> Result {
    let (mut write, mut by_placement, mut fallbacks) = (false, false, false);
    for arg in args {
        match arg.as_str() {
            "--write" => write = true,
            "--by-placement" => by_placement = true,
            "--fallbacks" => fallbacks = true,
            "--readme" => return Err(format!("perf: --readme is now --write, which writes the report into {PAGE}")),
            other => {
                return Err(format!(
                    "perf: unknown argument {other:?}; usage: cargo xtask perf [--write] [--by-placement] [--fallbacks]"
                ));
            }
        }
    }
    let rust_bin = build_rust()?;
    let count_free_bin = build_rust_count_free()?;
    let std_mutex_bin = build_rust_std_mutex()?;
    let go_bin = build_go()?;
    let go_tests = build_go_tests()?;

    let started = Instant::now();
    let mut facts = Facts::default();
    let mut rows = Vec::new();
    let mut mismatches = Vec::new();
    for (name, what) in WORKLOADS {
        let mut samples: [Vec<Sample>; 3] = Default::default();
        let mut floor_counts = String::new();
        let mut floor_locks = 0.0;
        let mut rust_fallbacks = Vec::new();
        for rep in 0..REPS {
            let order =
                if rep % 2 == 0 { [Side::Go, Side::Rust, Side::Floor] } else { [Side::Floor, Side::Rust, Side::Go] };
            for side in order {
                let (bin, extra): (&Path, &[&str]) = match side {
                    Side::Go => (&go_bin, &[]),
                    Side::Rust => (&rust_bin, &[]),
                    Side::Floor => (&rust_bin, &["--floor"]),
                };
                let (sample, comments) = measure(bin, extra, name)?;
                facts.read(&comments);
                if side == Side::Floor {
                    floor_counts = floor_counts_of(&comments, name);
                    floor_locks = floor_locks_of(&comments, name);
                }
                if side == Side::Rust {
                    rust_fallbacks.push((1e9 / sample.ops_per_s(), fallbacks_of(&comments, name)));
                }
                samples[side as usize].push(sample);
            }
        }
        let [go, rust, floor] = &samples;
        for (g, r) in go.iter().zip(rust) {
            if (g.ops, g.handouts, &g.checksum) != (r.ops, r.handouts, &r.checksum) {
                mismatches.push(format!("{name}: Go did {g:?}, Rust did {r:?}"));
            }
        }
        for f in floor {
            if f.ops != rust[0].ops {
                mismatches.push(format!("{name}: the floor did {} ops, Rust {}", f.ops, rust[0].ops));
            }
        }
        let row = Row {
            name,
            what,
            go: median(go),
            rust: median(rust),
            floor: Some(median(floor)),
            rust_over_go_range: ratio_range(rust, go),
            floor_over_rust_range: ratio_range(floor, rust),
            floor_counts,
            floor_locks,
            rust_fallbacks,
        };
        eprintln!(
            "xtask: perf {name}: Go {}, Rust {}, floor {} ops/s (medians of {REPS})",
            si(row.go),
            si(row.rust),
            si(median(floor))
        );
        rows.push(row);
    }
    for (name, package, bench, iterations, what) in UPSTREAM {
        let go_test = &go_tests.iter().find(|(p, _)| *p == package).expect("a built test binary").1;
        let (mut go, mut rust) = (Vec::new(), Vec::new());
        for rep in 0..REPS {
            let rust_first = rep % 2 == 1;
            if rust_first {
                rust.push(measure(&rust_bin, &[], name)?.0);
            }
            go.push(measure_go_bench(go_test, bench, iterations)?);
            if !rust_first {
                rust.push(measure(&rust_bin, &[], name)?.0);
            }
        }
        if let Some(r) = rust.iter().find(|r| r.ops != iterations) {
            mismatches.push(format!("{name}: Go ran {iterations} iterations of {bench}, Rust {}", r.ops));
        }
        let row = Row {
            name,
            what,
            go: median(&go),
            rust: median(&rust),
            floor: None,
            rust_over_go_range: ratio_range(&rust, &go),
            floor_over_rust_range: (f64::NAN, f64::NAN),
            floor_counts: String::new(),
            floor_locks: 0.0,
            rust_fallbacks: Vec::new(),
        };
        eprintln!("xtask: perf {name} ({bench}): Go {}, Rust {} ops/s (medians of {REPS})", si(row.go), si(row.rust));
        rows.push(row);
    }
    let mut count_free_rows = Vec::new();
    for name in COUNT_FREE_ROWS {
        let (mut shared, mut count_free) = (Vec::new(), Vec::new());
        for rep in 0..REPS {
            let order = if rep % 2 == 0 { [&rust_bin, &count_free_bin] } else { [&count_free_bin, &rust_bin] };
            for bin in order {
                let sample = measure(bin, &[], name)?.0;
                if bin == &rust_bin { shared.push(sample) } else { count_free.push(sample) }
            }
        }
        for (a, b) in shared.iter().zip(&count_free) {
            if (a.ops, a.handouts, &a.checksum) != (b.ops, b.handouts, &b.checksum) {
                mismatches.push(format!("{name}: with SharedKey keys Rust did {a:?}, with count-free keys {b:?}"));
            }
        }
        let go = rows.iter().find(|r| r.name == name).expect("a measured row").go;
        let row = CountFreeRow { name, go, shared: median(&shared), count_free: median(&count_free) };
        eprintln!(
            "xtask: perf {name} with count-free keys: {} ops/s, against {} with SharedKey",
            si(row.count_free),
            si(row.shared)
        );
        count_free_rows.push(row);
    }
    let locks = measure_lock_rows(&rust_bin, &std_mutex_bin, &mut mismatches)?;
    let mut hw_samples: Vec<Vec<Sample>> = vec![Vec::new(); HW.len()];
    for rep in 0..REPS {
        for k in 0..HW.len() {
            let i = if rep % 2 == 0 { k } else { HW.len() - 1 - k };
            hw_samples[i].push(measure(&rust_bin, &[], HW[i])?.0);
        }
    }
    let ns = |i: usize| 1e9 / median(&hw_samples[i]);
    let one_way: Vec<f64> = hw_samples[0].iter().map(|s| 1e9 / s.ops_per_s() / 2.0).collect();
    let hw = Hardware {
        transfer_ns: ns(0) / 2.0,
        transfer_range_ns: (
            one_way.iter().copied().fold(f64::INFINITY, f64::min),
            one_way.iter().copied().fold(0.0, f64::max),
        ),
        wake_ns: ns(1) / 2.0,
        atomic_ns: ns(2),
        lock_ns: ns(3),
        lock_contended_ns: ns(4),
        handoff_ns: ns(5),
    };
    eprintln!(
        "xtask: perf hardware: one-way transfer {:.1} ns, wake-up {:.0} ns, atomic RMW {:.1} ns, lock pair {:.1} ns, contended {:.1} ns, hand-off {:.1} ns",
        hw.transfer_ns, hw.wake_ns, hw.atomic_ns, hw.lock_ns, hw.lock_contended_ns, hw.handoff_ns
    );
    let (mut placement_rows, mut thread_rows) = (Vec::new(), Vec::new());
    for name in PLACEMENT_ROWS.iter().copied().filter(|_| by_placement) {
        let (mut go, mut rust, mut rust_threads) = (Vec::new(), Vec::new(), Vec::new());
        for process in 0..PLACEMENT_PROCESSES {
            let order = if process % 2 == 0 { [Side::Go, Side::Rust] } else { [Side::Rust, Side::Go] };
            let mut samples = Vec::new();
            for side in order {
                let bin = if side == Side::Go { &go_bin } else { &rust_bin };
                let (sample, comments) = measure(bin, &["--by-placement"], name)?;
                let rounds = rounds_of(&comments);
                if rounds.is_empty() {
                    return Err(format!(
                        "{} --by-placement --workload {name}: printed no `# round` line",
                        bin.display()
                    ));
                }
                if side == Side::Go {
                    go.extend(rounds)
                } else {
                    let threads = thread_rounds_of(&comments);
                    if threads.len() != rounds.len() {
                        return Err(format!(
                            "{} --by-placement --workload {name}: {} of {} `# round` lines say where the workers ran",
                            bin.display(),
                            threads.len(),
                            rounds.len()
                        ));
                    }
                    rust.extend(rounds);
                    rust_threads.extend(threads);
                }
                samples.push(sample);
            }
            if (samples[0].ops, samples[0].handouts, &samples[0].checksum)
                != (samples[1].ops, samples[1].handouts, &samples[1].checksum)
            {
                mismatches
                    .push(format!("{name} --by-placement: one side did {:?}, the other {:?}", samples[0], samples[1]));
            }
        }
        let floor_locks = rows.iter().find(|r| r.name == name).map_or(0.0, |r| r.floor_locks);
        let row = PlacementRow::new(name, &go, &rust, floor_locks);
        eprintln!("xtask: perf {name} by placement: {}", row.summary());
        placement_rows.push(row);
        thread_rows.push(ThreadRow::new(name, &go, &rust_threads));
    }
    let mut handoff_rounds = Vec::new();
    for _ in (0..PLACEMENT_PROCESSES).filter(|_| by_placement) {
        let (_, comments) = measure(&rust_bin, &["--by-placement"], "hw-handoff")?;
        handoff_rounds.extend(rounds_of(&comments));
    }
    let handoff = Rounds::new(&handoff_rounds);
    let handoff_kept = kept_median(&handoff_rounds);
    let took = started.elapsed();

    facts.rustc = command_line("rustc", &["--version"]);
    let measured = Measurement { rows, facts, hw, count_free: count_free_rows, locks, when: utc_now(), took };
    let page = page(&measured);
    println!("{page}");
    println!("{}", count_free_report(&measured.count_free, &measured.hw));
    if by_placement {
        println!("{}", placement_report(&placement_rows, &handoff, &measured.hw));
        println!("{}", threads_report(&thread_rows, handoff_kept));
    }
    if fallbacks {
        println!("{}", lock_report(&measured.rows, &measured.hw));
    }
    println!("measured in {:.0} s after the builds", took.as_secs_f64());
    if !mismatches.is_empty() {
        return Err(format!("Go and Rust did not do the same work:\n{}", mismatches.join("\n")));
    }
    if write {
        let path = root().join(PAGE);
        fs::write(&path, &page).map_err(|e| format!("writing {}: {e}", path.display()))?;
        eprintln!("xtask: wrote the report into {PAGE}; review it with `git diff -- {PAGE}`");
    }
    Ok(())
}

/// `cargo build --release --locked -p workqueue-perf`, returning the binary
/// cargo reports (wherever the target directory is).
fn build_rust() -> Result<PathBuf> {
    build_rust_with(&[])
}

/// [`build_rust`] with `--features count-free-keys`, in a target directory
/// of its own (`target/perf-count-free-keys`), so that the two binaries do
/// not overwrite each other.
fn build_rust_count_free() -> Result<PathBuf> {
    let dir = root().join("target/perf-count-free-keys");
    build_rust_with(&["--features", "count-free-keys", "--target-dir", &dir.display().to_string()])
}

/// [`build_rust`] with `--features std-mutex` (the queues take
/// `std::sync::Mutex`), in `target/perf-std-mutex`.
fn build_rust_std_mutex() -> Result<PathBuf> {
    let dir = root().join("target/perf-std-mutex");
    build_rust_with(&["--features", "std-mutex", "--target-dir", &dir.display().to_string()])
}

fn build_rust_with(extra: &[&str]) -> Result<PathBuf> {
    eprintln!("xtask: cargo build --release --locked -p workqueue-perf {}", extra.join(" "));
    let out = cargo()
        .args(["build", "--release", "--locked", "-p", "workqueue-perf", "--message-format=json-render-diagnostics"])
        .args(extra)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !out.status.success() {
        return Err("building workqueue-perf failed".to_owned());
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(r#""reason":"compiler-artifact""#) && l.contains(r#""name":"workqueue-perf""#))
        .find_map(|l| json_string(l, "executable"))
        .map(PathBuf::from)
        .ok_or_else(|| "cargo reported no workqueue-perf executable".to_owned())
}

/// `go build` of `listings/perf/go` into `target/perf/go-workqueue-perf`.
fn build_go() -> Result<PathBuf> {
    let dir = root().join("target/perf");
    fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let bin = dir.join("go-workqueue-perf");
    let mut cmd = Command::new("go");
    cmd.current_dir(root().join("listings"))
        .args(["build", "-o"])
        .arg(&bin)
        .arg("./perf/go")
        .env("GOFLAGS", "-mod=readonly -buildvcs=false")
        .env("GOTOOLCHAIN", "local");
    run(cmd, "go build ./perf/go (client-go v0.37.2, controller-runtime v0.25.3) into target/perf/")
        .map_err(|e| format!("{e}; the Go side needs Go 1.26 on PATH and the Go module proxy"))?;
    Ok(bin)
}

/// `go test -c` of each of [`UPSTREAM_PACKAGES`] into `target/perf/`: the
/// upstream test files as they are, from the module cache, with the twins'
/// `go.sum` (`-mod=readonly`).
fn build_go_tests() -> Result<Vec<(&'static str, PathBuf)>> {
    let dir = root().join("target/perf");
    let mut built = Vec::new();
    for (name, package) in UPSTREAM_PACKAGES {
        let bin = dir.join(format!("{name}.test"));
        let mut cmd = Command::new("go");
        cmd.current_dir(root().join("listings"))
            .args(["test", "-c", "-o"])
            .arg(&bin)
            .arg(package)
            .env("GOFLAGS", "-mod=readonly -buildvcs=false")
            .env("GOTOOLCHAIN", "local");
        run(cmd, &format!("go test -c {package} (upstream's own benchmarks) into target/perf/"))?;
        built.push((name, bin));
    }
    Ok(built)
}

/// Runs one upstream benchmark for `iterations` iterations and reads its
/// `ns/op`.
fn measure_go_bench(bin: &Path, bench: &str, iterations: u64) -> Result<Sample> {
    let what = format!("{} -test.bench=^{bench}$", bin.display());
    let out = Command::new(bin)
        .args(["-test.run=^$", &format!("-test.bench=^{bench}$"), &format!("-test.benchtime={iterations}x")])
        .args(["-test.count=1"])
        .output()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("{what}: failed ({}):\n{stdout}{}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    let ns_per_op = parse_bench_ns(&stdout, bench).ok_or_else(|| format!("{what}: no ns/op in:\n{stdout}"))?;
    Ok(Sample {
        ops: iterations,
        elapsed_ns: (ns_per_op * iterations as f64).round() as u64,
        handouts: 0,
        checksum: String::new(),
    })
}

/// The `ns/op` of `BenchmarkX-2   200   4604340 ns/op`.
fn parse_bench_ns(stdout: &str, bench: &str) -> Option<f64> {
    stdout.lines().find_map(|l| {
        let mut fields = l.split_whitespace();
        let name = fields.next()?;
        if name != bench && !name.starts_with(&format!("{bench}-")) {
            return None;
        }
        let fields: Vec<&str> = fields.collect();
        let at = fields.iter().position(|f| *f == "ns/op")?;
        fields.get(at.checked_sub(1)?)?.parse().ok()
    })
}

/// Runs one measurement process and returns its workload line and its `#` lines.
fn measure(bin: &Path, extra: &[&str], workload: &str) -> Result<(Sample, Vec<String>)> {
    measure_in(None, bin, extra, workload)
}

/// [`measure`], inside `quota`'s cgroup when there is one.
fn measure_in(quota: Option<&HalfCore>, bin: &Path, extra: &[&str], workload: &str) -> Result<(Sample, Vec<String>)> {
    let what = format!(
        "{}{} {} --workload {workload}",
        if quota.is_some() { "(under half a core) " } else { "" },
        bin.display(),
        extra.join(" ")
    );
    let mut command = match quota {
        // The shell moves itself into the cgroup, then becomes the program.
        Some(q) => {
            let mut sh = Command::new("sh");
            sh.arg("-c").arg(format!("echo $$ > '{}' && exec \"$0\" \"$@\"", q.dir.join("cgroup.procs").display()));
            sh.arg(bin);
            sh
        }
        None => Command::new(bin),
    };
    let mut child = command
        .args(extra)
        .args(["--workload", workload])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("{what}: {e}"))? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what}: still running after {} s; killed", TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (mut stdout, mut stderr) = (String::new(), String::new());
    child.stdout.take().expect("piped").read_to_string(&mut stdout).map_err(|e| format!("{what}: {e}"))?;
    child.stderr.take().expect("piped").read_to_string(&mut stderr).map_err(|e| format!("{what}: {e}"))?;
    if !status.success() {
        return Err(format!("{what}: failed ({status}); its stderr:\n{stderr}"));
    }
    let comments = stdout.lines().filter(|l| l.starts_with('#')).map(str::to_owned).collect();
    let sample = stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| parse_sample(l, workload))
        .ok_or_else(|| format!("{what}: printed no line for {workload}:\n{stdout}"))?;
    Ok((sample, comments))
}

/// `workload ops elapsed_ns handouts checksum`, tab-separated.
fn parse_sample(line: &str, workload: &str) -> Option<Sample> {
    let fields: Vec<&str> = line.split('\t').collect();
    let [name, ops, elapsed_ns, handouts, checksum] = fields[..] else { return None };
    if name != workload {
        return None;
    }
    Some(Sample {
        ops: ops.parse().ok()?,
        elapsed_ns: elapsed_ns.parse().ok()?,
        handouts: handouts.parse().ok()?,
        checksum: checksum.to_owned(),
    })
}

/// The floor's `# floor <name> locks/op=… hashes/op=… hash/op=… fifo/op=… tree/op=…`,
/// in words.
fn floor_counts_of(comments: &[String], name: &str) -> String {
    let prefix = format!("# floor\t{name}\t");
    let Some(line) = comments.iter().find_map(|c| c.strip_prefix(&prefix)) else { return String::new() };
    let words = [
        ("locks/op", "lock pairs"),
        ("hashes/op", "key hashes"),
        ("hash/op", "hash-table ops"),
        ("fifo/op", "FIFO ops"),
        ("tree/op", "heap/B-tree ops"),
    ];
    line.split('\t')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            let word = words.iter().find(|(key, _)| *key == k)?.1;
            (v != "0.00").then(|| format!("{v} {word}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The value of `key=` on a run's `# <kind> <name> key=value …` line.
fn comment_value<T: std::str::FromStr>(comments: &[String], kind: &str, name: &str, key: &str) -> Option<T> {
    let prefix = format!("# {kind}\t{name}\t");
    comments
        .iter()
        .filter_map(|c| c.strip_prefix(&prefix))
        .flat_map(|line| line.split('\t'))
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// The `fallbacks=` of a run's `# lock <name>` line (0 without one).
fn fallbacks_of(comments: &[String], name: &str) -> u64 {
    comment_value(comments, "lock", name, "fallbacks").unwrap_or(0)
}

/// Where the two cores were when a round ran, from the round trip measured
/// right after it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Placement {
    Near,
    Far,
}

impl Placement {
    const BOTH: [Placement; 2] = [Placement::Near, Placement::Far];

    /// `None`: a ping-pong thread waited for a core; the round is left out.
    fn of(round_trip_ns: f64) -> Option<Placement> {
        if round_trip_ns <= NEAR_ROUND_TRIP_NS {
            Some(Placement::Near)
        } else if round_trip_ns <= FAR_ROUND_TRIP_NS {
            Some(Placement::Far)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Placement::Near => "near",
            Placement::Far => "far",
        }
    }
}

/// The numbers of each `# round<TAB>…` line of a `--by-placement` run
/// (a line with one that does not parse is skipped).
fn round_fields(comments: &[String]) -> impl Iterator<Item = Vec<f64>> + '_ {
    comments.iter().filter_map(|l| l.strip_prefix("# round\t")?.split('\t').map(|f| f.parse().ok()).collect())
}

/// The `# round<TAB>ns per cycle<TAB>round trip ns` lines of a
/// `--by-placement` run.
fn rounds_of(comments: &[String]) -> Vec<(f64, f64)> {
    round_fields(comments).filter_map(|f| Some((*f.first()?, *f.get(1)?))).collect()
}

/// The `# round<TAB>ns<TAB>round trip<TAB>share` lines of a Rust
/// `--by-placement` run of `cycles-N`: ns per cycle, round trip, and the
/// share of the hand-outs made on the producer's thread.
fn thread_rounds_of(comments: &[String]) -> Vec<(f64, f64, f64)> {
    round_fields(comments).filter_map(|f| Some((*f.first()?, *f.get(1)?, *f.get(2)?))).collect()
}

/// How many of some rounds were kept (a round trip up to
/// [`FAR_ROUND_TRIP_NS`]), and their median ns per op; `None` if none was.
fn kept_median(rounds: &[(f64, f64)]) -> Option<(usize, f64)> {
    let kept: Vec<f64> = rounds.iter().filter(|r| Placement::of(r.1).is_some()).map(|r| r.0).collect();
    (!kept.is_empty()).then(|| (kept.len(), median_of(kept)))
}

/// Where the workers of a Rust `cycles` round ran (see [`ONE_THREAD_SHARE`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Threads {
    /// On the producer's thread: one core did the adds, then the hand-outs.
    One,
    /// At least partly on the other thread, beside the adds.
    Both,
}

impl Threads {
    const ALL: [Threads; 2] = [Threads::One, Threads::Both];

    fn of(share: f64) -> Threads {
        if share >= ONE_THREAD_SHARE { Threads::One } else { Threads::Both }
    }

    fn name(self) -> &'static str {
        match self {
            Threads::One => "after the adds, on the producer's thread",
            Threads::Both => "beside the adds, on the other core",
        }
    }
}

/// One row's rounds sorted by where Rust's workers ran, beside all of Go's
/// (kept rounds only, as in the by-placement table).
struct ThreadRow {
    name: &'static str,
    /// Go's kept rounds and their median ns per cycle.
    go: Option<(usize, f64)>,
    /// Rust's kept rounds of each kind ([`Threads::ALL`]'s order) and their
    /// median.
    rust: [Option<(usize, f64)>; 2],
    rust_kept: usize,
}

impl ThreadRow {
    fn new(name: &'static str, go: &[(f64, f64)], rust: &[(f64, f64, f64)]) -> ThreadRow {
        let kept: Vec<(f64, f64, f64)> = rust.iter().copied().filter(|r| Placement::of(r.1).is_some()).collect();
        let of = |kind: Threads| {
            let these: Vec<(f64, f64)> = kept.iter().filter(|r| Threads::of(r.2) == kind).map(|r| (r.0, r.1)).collect();
            kept_median(&these)
        };
        ThreadRow { name, go: kept_median(go), rust: Threads::ALL.map(of), rust_kept: kept.len() }
    }
}

/// The by-thread table: Rust's rounds of each row, sorted by where the
/// workers ran, against Go's rounds and the hand-off.
fn threads_report(rows: &[ThreadRow], handoff: Option<(usize, f64)>) -> String {
    let mut out = format!(
        "By thread (the Rust rounds of the by-placement measurement, kept ones only): each Rust round also \
         counts the hand-outs its workers made on the runtime thread the producer ran on. The producer adds a \
         round's 10,000 keys without yielding, so a worker on its thread runs after the adds, and one core does \
         everything in turn; a worker on the other thread runs beside the adds, and every line a cycle touches \
         (the lock, the queue's state, the key's table slot, FIFO slot and `Arc` count) crosses between the \
         cores. tokio decides which, round by round. A round with at least {:.0}% of its hand-outs on the \
         producer's thread counts as the first kind. Go's rounds are not sorted: its scheduler does not say \
         where a goroutine ran.\n\n",
        ONE_THREAD_SHARE * 100.0
    );
    out.push_str(
        "| workload | Rust's workers ran | Rust rounds | Rust ns/cycle | Go ns/cycle (all rounds) | Rust/Go | \
         hand-off per key | 2× Go allows |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|\n");
    let handoff_cell = handoff.map_or("too few rounds".to_owned(), |(_, ns)| format!("{ns:.0} ns"));
    let mut verdicts = Vec::new();
    for r in rows {
        for (kind, rust) in Threads::ALL.iter().zip(&r.rust) {
            let (Some((rounds, u)), Some((_, g))) = (rust, r.go) else {
                out.push_str(&format!("| `{}` | {} | 0 of {} | | | | | |\n", r.name, kind.name(), r.rust_kept));
                continue;
            };
            let (ratio, target) = (g / u, g / 2.0);
            out.push_str(&format!(
                "| `{}` | {} | {rounds} of {} | {u:.0} | {g:.0} | {ratio:.2}× | {handoff_cell} | {target:.0} ns |\n",
                r.name,
                kind.name(),
                r.rust_kept
            ));
            let verdict = if ratio >= 2.0 {
                format!("met ({ratio:.2}×).")
            } else {
                let hand_off = match (kind, handoff) {
                    (Threads::Both, Some((_, h))) => format!(
                        " The hand-off, the least a deduplicating queue does with a key that one thread adds and \
                         the other takes, took {h:.0} ns per key, {} the {target:.0} ns that 2× Go allows; Rust \
                         takes {:.2}× the hand-off.",
                        if h <= target { "within" } else { "over" },
                        u / h
                    ),
                    _ => String::new(),
                };
                format!("not met ({ratio:.2}×).{hand_off}")
            };
            verdicts.push(format!(
                "* `{}`, workers {} ({rounds} of {} rounds): 2× Go {verdict}\n",
                r.name,
                kind.name(),
                r.rust_kept
            ));
        }
    }
    out.push('\n');
    out.push_str(&verdicts.concat());
    out
}

/// A row measured with `SharedKey` keys and with keys without a count.
struct CountFreeRow {
    name: &'static str,
    /// Go's median ops/s, from the row's own measurement.
    go: f64,
    /// Rust's median ops/s with `SharedKey`, and with count-free keys,
    /// measured interleaved.
    shared: f64,
    count_free: f64,
}

/// What the keys' reference count costs: the rows of [`COUNT_FREE_ROWS`]
/// with both kinds of keys, against Go.
fn count_free_report(rows: &[CountFreeRow], hw: &Hardware) -> String {
    let mut out = format!(
        "What the keys' reference count costs (`workqueue-perf` built with `--features count-free-keys`: the same \
         workloads with each key a string leaked once and copied as a plain `&'static str`, with no count to \
         clone or drop, as Go copies a string header; {REPS} runs of each build, interleaved; a measurement, not \
         a recommendation: a controller whose objects come and go cannot leak its keys). An add+get+done cycle \
         on a `SharedKey` clones it twice and drops it twice, four atomic read-modify-writes ({:.1} ns each \
         here, alone).\n\n",
        hw.atomic_ns
    );
    out.push_str(
        "| workload | Go ns/op | Rust ns/op, `SharedKey` | Rust ns/op, count-free keys | the count's cost | \
         Rust/Go, `SharedKey` | Rust/Go, count-free |\n",
    );
    out.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
    for r in rows {
        let ns = |ops_per_s: f64| 1e9 / ops_per_s;
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {:.2}× | {:.2}× |\n",
            r.name,
            ns_text(ns(r.go)),
            ns_text(ns(r.shared)),
            ns_text(ns(r.count_free)),
            ns_text(ns(r.shared) - ns(r.count_free)),
            r.shared / r.go,
            r.count_free / r.go
        ));
    }
    out
}

/// A wait: in µs, or in ms from 1 ms on.
fn wait_text(ns: f64) -> String {
    if ns >= 1e6 { format!("{:.1} ms", ns / 1e6) } else { format!("{:.0} µs", ns / 1e3) }
}

/// A time in ns, or in µs from 1 µs on.
fn ns_text(ns: f64) -> String {
    if ns.abs() >= 1_000.0 { format!("{:.1} µs", ns / 1_000.0) } else { format!("{ns:.1} ns") }
}

/// The median of some numbers (the upper one of an even count).
fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One side's rounds of one placement: how many, their median ns per op
/// (per cycle, or per key for the hand-off) and median round trip.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PlacementCell {
    rounds: usize,
    ns_per_op: f64,
    round_trip_ns: f64,
}

impl PlacementCell {
    fn of(rounds: &[(f64, f64)], placement: Placement) -> Option<PlacementCell> {
        let these: Vec<(f64, f64)> =
            rounds.iter().copied().filter(|&(_, trip)| Placement::of(trip) == Some(placement)).collect();
        if these.is_empty() {
            return None;
        }
        Some(PlacementCell {
            rounds: these.len(),
            ns_per_op: median_of(these.iter().map(|r| r.0).collect()),
            round_trip_ns: median_of(these.iter().map(|r| r.1).collect()),
        })
    }
}

/// One program's `--by-placement` rounds, sorted: near and far, and how
/// many were left out of how many.
struct Rounds {
    /// Near, then far.
    cells: [Option<PlacementCell>; 2],
    left_out: usize,
    total: usize,
}

impl Rounds {
    fn new(rounds: &[(f64, f64)]) -> Rounds {
        Rounds {
            cells: Placement::BOTH.map(|p| PlacementCell::of(rounds, p)),
            left_out: rounds.iter().filter(|r| Placement::of(r.1).is_none()).count(),
            total: rounds.len(),
        }
    }
}

/// One row measured round by round on both sides.
struct PlacementRow {
    name: &'static str,
    go: Rounds,
    rust: Rounds,
    floor_locks: f64,
}

impl PlacementRow {
    fn new(name: &'static str, go: &[(f64, f64)], rust: &[(f64, f64)], floor_locks: f64) -> PlacementRow {
        PlacementRow { name, go: Rounds::new(go), rust: Rounds::new(rust), floor_locks }
    }

    fn summary(&self) -> String {
        let cells: Vec<String> = Placement::BOTH
            .iter()
            .zip(self.go.cells.iter().zip(&self.rust.cells))
            .map(|(p, (go, rust))| match (go, rust) {
                (Some(g), Some(r)) => format!(
                    "{}: Go {:.0}, Rust {:.0} ns per cycle ({} and {} rounds)",
                    p.name(),
                    g.ns_per_op,
                    r.ns_per_op,
                    g.rounds,
                    r.rounds
                ),
                _ => format!("{}: too few rounds", p.name()),
            })
            .collect();
        cells.join("; ")
    }
}

/// The by-placement table: per row and placement, Go's and Rust's median
/// cycle, their ratio, and the hardware's price of a cycle there (the
/// floor's lock pairs and two one-way transfers at that placement's
/// distance, measured in the same rounds) beside the time 2× Go allows.
fn placement_report(rows: &[PlacementRow], handoff: &Rounds, hw: &Hardware) -> String {
    let mut out = format!(
        "By placement (`--by-placement` on both sides; {PLACEMENT_PROCESSES} processes of each, interleaved): each \
         process runs rounds of 10,000 cycles one at a time, each on a fresh queue with fresh workers, and after \
         each round measures how far apart the two cores are (the fastest of three short ping-pongs). A round \
         trip up to {NEAR_ROUND_TRIP_NS:.0} ns counts as near, up to {FAR_ROUND_TRIP_NS:.0} ns as far; after a \
         slower one a ping-pong thread had waited for a core, and the round is left out.\n\n"
    );
    out.push_str(
        "| workload | cores | rounds (Go, Rust) | round trip (Go, Rust) | Go ns/cycle | Rust ns/cycle | Rust/Go | \
         hardware per cycle | hand-off per key | 2× Go allows |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---|---:|---:|\n");
    let mut verdicts = Vec::new();
    for r in rows {
        let sides = r.go.cells.iter().zip(&r.rust.cells);
        for ((p, (go, rust)), moved) in Placement::BOTH.iter().zip(sides).zip(&handoff.cells) {
            let (Some(g), Some(u)) = (go, rust) else {
                out.push_str(&format!("| `{}` | {} | too few rounds | | | | | | | |\n", r.name, p.name()));
                continue;
            };
            let transfer = u.round_trip_ns / 2.0;
            let hardware = r.floor_locks * hw.lock_ns + 2.0 * transfer;
            let target = g.ns_per_op / 2.0;
            let ratio = g.ns_per_op / u.ns_per_op;
            out.push_str(&format!(
                "| `{}` | {} | {}, {} | {:.0}, {:.0} ns | {:.0} | {:.0} | {ratio:.2}× | \
                 {:.2} × {:.1} + 2 × {transfer:.1} = {hardware:.0} ns | {} | {target:.0} ns |\n",
                r.name,
                p.name(),
                g.rounds,
                u.rounds,
                g.round_trip_ns,
                u.round_trip_ns,
                g.ns_per_op,
                u.ns_per_op,
                r.floor_locks,
                hw.lock_ns,
                moved.map_or("too few rounds".to_owned(), |m| format!("{:.0} ns", m.ns_per_op)),
            ));
            let price = format!("Rust takes {:.2}× that price", u.ns_per_op / hardware);
            let streamed = match moved {
                Some(m) if m.ns_per_op <= target => format!(
                    " The hand-off, which streams keys from one core to the other, moved a key in {:.0} ns at \
                     this distance: within what 2× Go allows, so a queue that does not cross the lock for every \
                     key could meet it; Rust takes {:.2}× the hand-off.",
                    m.ns_per_op,
                    u.ns_per_op / m.ns_per_op
                ),
                Some(m) => format!(
                    " Even the hand-off, which streams keys from one core to the other, took {:.0} ns per key at \
                     this distance, over what 2× Go allows; Rust takes {:.2}× the hand-off.",
                    m.ns_per_op,
                    u.ns_per_op / m.ns_per_op
                ),
                None => String::new(),
            };
            let verdict = if ratio >= 2.0 {
                format!("met ({ratio:.2}×).")
            } else if hardware > target {
                format!(
                    "not met ({ratio:.2}×). A cycle that moves the lock's cache line across the cores twice costs \
                     {hardware:.0} ns at this distance and 2× Go allows {target:.0} ns, so no queue that does that \
                     meets the target here; {price}.{streamed}"
                )
            } else {
                format!(
                    "not met ({ratio:.2}×). The hardware's price of a cycle ({hardware:.0} ns) leaves {:.0} ns of \
                     the {target:.0} that 2× Go allows; {price}.{streamed}",
                    target - hardware
                )
            };
            verdicts.push(format!("* `{}`, cores {}: 2× Go {verdict}\n", r.name, p.name()));
        }
    }
    out.push('\n');
    out.push_str(&verdicts.concat());
    let left_out: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "`{}`: {} of {} Go rounds and {} of {} Rust rounds",
                r.name, r.go.left_out, r.go.total, r.rust.left_out, r.rust.total
            )
        })
        .collect();
    out.push_str(&format!(
        "\nLeft out (a ping-pong thread waited for a core): {}; `hw-handoff`: {} of {} rounds. Hardware per \
         cycle: the floor's lock pairs at {:.1} ns and two one-way transfers of the lock's cache line, each half the \
         Rust rounds' median round trip, as in the table above; not a bound (threads that take the lock several \
         times in a row cross it less often). Hand-off per key: the median of the `hw-handoff` rounds (10,000 keys \
         each, `--by-placement`, {PLACEMENT_PROCESSES} processes) at that placement.\n",
        left_out.join("; "),
        handoff.left_out,
        handoff.total,
        hw.lock_ns
    ));
    out
}

/// Per row where the lock fell back 100 times or more in some run: the Rust
/// runs from fastest to slowest, each with its lock fallbacks, and what a
/// sleep and its wake-up cost on this machine.
fn lock_report(rows: &[Row], hw: &Hardware) -> String {
    let mut lines = Vec::new();
    for r in rows {
        if r.rust_fallbacks.iter().all(|&(_, n)| n < 100) {
            continue;
        }
        let mut runs = r.rust_fallbacks.clone();
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let listed: Vec<String> = runs.iter().map(|(ns, n)| format!("{ns:.0} ns ({n})")).collect();
        lines.push(format!("`{}`: {}", r.name, listed.join(", ")));
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "The queues' lock in the Rust runs: each run's ns per op, fastest first, with how many times in that run \
         a `lock` spun to the end of its back-off and went on to yield its thread, and then to nap if the lock \
         stayed held (held, or taken again by other threads, for the whole back-off; a sleeping thread's wake-up \
         costs {:.0} ns here): {}.\n",
        hw.wake_ns,
        lines.join("; ")
    )
}

/// The `locks/op` of the floor's `# floor` line.
fn floor_locks_of(comments: &[String], name: &str) -> f64 {
    comment_value(comments, "floor", name, "locks/op").unwrap_or(0.0)
}

fn median(samples: &[Sample]) -> f64 {
    median_of(samples.iter().map(Sample::ops_per_s).collect())
}

/// `12.3 M`, `845 k`, `217` (upstream's slow iterations).
fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.0} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// What the machine and toolchains are, from the sides' `#` lines.
#[derive(Default)]
struct Facts {
    go_version: String,
    gomaxprocs: String,
    tokio_threads: String,
    rustc: String,
}

impl Facts {
    fn read(&mut self, comments: &[String]) {
        for c in comments {
            for kv in c.split('\t') {
                match kv.split_once('=') {
                    Some(("version", v)) if c.starts_with("# go") => self.go_version = v.to_owned(),
                    Some(("GOMAXPROCS", v)) => self.gomaxprocs = v.to_owned(),
                    Some(("tokio_worker_threads", v)) => self.tokio_threads = v.to_owned(),
                    _ => {}
                }
            }
        }
    }

    fn machine(&self) -> String {
        machine()
    }
}

/// The machine a measurement ran on: its CPU, its cores, its OS.
pub(crate) fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("model name")?.split_once(':').map(|(_, m)| m.trim().to_owned()))
        })
        .unwrap_or_else(|| "an unknown CPU".to_owned());
    format!("{cpu}, {} cores, {} {}", cores(), env::consts::OS, env::consts::ARCH)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn report(rows: &[Row], facts: &Facts) -> String {
    let mut out = String::new();
    out.push_str("| workload | Go ops/s | Rust ops/s | Rust/Go (runs) | floor ops/s | floor/Rust (runs) | targets |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---|\n");
    for r in rows {
        let met = |ok: bool| if ok { "met" } else { "not met" };
        let range = |(lo, hi): (f64, f64)| format!("{lo:.2}–{hi:.2}");
        let (floor, floor_ratio, floor_target) = match r.floor {
            Some(f) => (
                si(f),
                format!("{:.2}× ({})", r.floor_over_rust(), range(r.floor_over_rust_range)),
                format!("; within 2× of floor: {}", met(r.near_floor())),
            ),
            None => ("—".to_owned(), "—".to_owned(), String::new()),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {:.2}× ({}) | {floor} | {floor_ratio} | ≥ 2× Go, no run < 1.5×: {}{floor_target} |\n",
            r.name,
            si(r.go),
            si(r.rust),
            r.rust_over_go(),
            range(r.rust_over_go_range),
            met(r.fast_enough()),
        ));
    }
    out.push('\n');
    for r in rows {
        match UPSTREAM.iter().find(|u| u.0 == r.name) {
            Some((_, _, bench, iterations, _)) => out.push_str(&format!(
                "* `{}`: upstream's `{bench}`, run as it is with `-test.benchtime={iterations}x`; \
                 the Rust side does the same on the crate. ops = iterations; one is {}. No floor.\n",
                r.name, r.what
            )),
            None => out.push_str(&format!("* `{}`: ops = {}. Floor per op: {}.\n", r.name, r.what, r.floor_counts)),
        }
    }
    out.push('\n');
    let slow: Vec<&str> = rows.iter().filter(|r| !r.fast_enough()).map(|r| r.name).collect();
    let far: Vec<&str> = rows.iter().filter(|r| !r.near_floor()).map(|r| r.name).collect();
    let list = |names: &[&str]| {
        let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        match quoted.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => quoted.join(""),
        }
    };
    if slow.is_empty() && far.is_empty() {
        out.push_str("Every target is met.\n");
    } else {
        if !slow.is_empty() {
            out.push_str(&format!(
                "Not met: Rust at least 2× Go at the median with no run below 1.5× on {}.",
                list(&slow)
            ));
            let unreachable: Vec<&str> =
                rows.iter().filter(|r| r.floor.is_some_and(|f| f < 2.0 * r.go)).map(|r| r.name).collect();
            if !unreachable.is_empty() {
                out.push_str(&format!(
                    " On {} even the floor (the crate's locks and hash operations alone) is below 2× Go.",
                    list(&unreachable)
                ));
            }
            out.push('\n');
        }
        if !far.is_empty() {
            out.push_str(&format!("Not met: Rust within 2× of the floor on {}.\n", list(&far)));
        }
    }
    let noisy: Vec<&str> = rows.iter().filter(|r| r.straddles_a_target()).map(|r| r.name).collect();
    if !noisy.is_empty() {
        out.push_str(&format!(
            "On {} some runs meet a target that others miss: that verdict is within this machine's noise.\n",
            list(&noisy)
        ));
    }
    out.push_str(&format!(
        "\nMedians of {REPS} runs per cell, Go, Rust and floor interleaved, one process each; \
         (runs): the lowest and highest ratio of the runs made side by side. \
         Machine: {}; Go {} with GOMAXPROCS={}; {} with {} tokio worker threads.\n",
        facts.machine(),
        facts.go_version,
        facts.gomaxprocs,
        facts.rustc,
        facts.tokio_threads
    ));
    out
}

/// Everything one run measured that the page reports.
struct Measurement {
    rows: Vec<Row>,
    facts: Facts,
    hw: Hardware,
    count_free: Vec<CountFreeRow>,
    locks: LockRows,
    /// When the run ended, as `YYYY-MM-DD HH:MM UTC`, and how long it took
    /// after the builds.
    when: String,
    took: Duration,
}

/// The book's appendix, whole: what is compared and how, the main table
/// between the perf markers with the date and machine of the run, the
/// hardware's costs from the same run, and for each row that misses a
/// target a paragraph on what stands in the way, with its numbers. The
/// prose around the figures says only how they were measured, never what
/// they turned out to be: that is the figures' and the verdicts' job.
fn page(m: &Measurement) -> String {
    let mut out = String::new();
    out.push_str(PAGE_STAMP);
    out.push_str(&format!("\n# {PAGE_TITLE}\n\n"));
    out.push_str(INTRO);
    out.push_str("\n## The comparison\n\n");
    out.push_str(&format!("{BEGIN}\n"));
    out.push_str(&format!(
        "Measured {} on {}, with `cargo xtask perf --write` ({:.0} s after the builds).\n\n",
        m.when,
        m.facts.machine(),
        m.took.as_secs_f64()
    ));
    out.push_str(&report(&m.rows, &m.facts));
    out.push_str(&format!("{END}\n"));
    out.push_str(TARGETS);
    out.push_str("\n## What the hardware costs\n\n");
    out.push_str(&hardware_report(&m.rows, &m.hw));
    out.push_str("\n## What stands in the way\n\n");
    out.push_str(&obstacles(m));
    out.push_str("\n## Where spin locks fail\n\n");
    out.push_str(&lock_rows_report(&m.locks));
    out.push_str("\n## How the port is built\n\n");
    out.push_str(INSIDE);
    out.push_str("\n## Measuring it yourself\n\n");
    out.push_str(YOURSELF);
    out
}

/// The page's opening: what is compared, and how.
const INTRO: &str = "\
The listings of this book run on `faithful-workqueue`, the book's Rust port \
of client-go's `util/workqueue` and of controller-runtime's priority queue. \
A port that behaves like the Go code but runs slower would be a poor thing \
to copy into a controller, so this page measures it against the Go it ports: \
the real client-go and controller-runtime at the versions the book pins, on \
identical workloads, in one run.

Each row is run by a Go program and by a Rust program (`listings/perf/go` and \
`listings/perf`), and by a third, the *floor*: a loop that does only the lock \
acquisitions, key hashes and hash-table, FIFO, heap and B-tree operations that \
the crate's code does for one op, on the same types, and nothing else. The \
three run interleaved, one process per measurement, so that noise on the \
machine hits them alike. Both sides print how many items they handed out and \
a checksum of them, and the run fails if the two differ: a faster queue that \
does less work would prove nothing. Beside the book's own rows, upstream's own \
benchmarks run as they are, from the test binaries of client-go's and \
controller-runtime's packages, with the same operations done on the crate.
";

/// Under the main table: the targets its verdicts judge.
const TARGETS: &str = "
The targets are Rust at least 2× Go on every row at the median, with no run \
of the row below 1.5× the Go run beside it, and Rust within 2× of the floor. \
The first says the port is worth copying; the second, that it spends little \
beyond the operations it cannot avoid.
";

/// The port's internals, which the introduction points to.
const INSIDE: &str = "\
The port keeps upstream's behaviour and its files, not its lines; inside, \
it differs where Rust does better another way, and those differences are \
what the rows above measure. The queue's dirty and processing sets are one \
table of flags, whose capacity is kept, so that a steady add, get and done \
on a key the queue has seen allocates nothing. Keys are hashed with foldhash, \
seeded per process as Go's map hash is, before the lock is taken. The queues' \
lock is a spin lock of its own, released by a plain store: a waiter reads it \
before it tries it and backs off, doubling its pauses, then yields and naps, \
so that no thread ever has to wake another. A `get` looks at the queue before \
it registers as a waiter, and a `done` wakes only a drain that is waiting. The \
priority queue's add buffer is applied by the calls that read the queue, \
where controller-runtime applies it in a goroutine. The crate's documentation \
lists every deliberate difference from upstream, each with a test that shows \
it, and the differential harness holds the whole to the Go code.
";

/// How to run it, and what the flags add.
const YOURSELF: &str = "\
`cargo xtask perf` builds both sides with their pinned dependencies and \
prints this report; `cargo xtask perf --write` also writes this page. Run it \
on a quiet machine: the rows that share the queue between threads move by a \
factor of two from run to run on a busy one. The workloads are defined at \
the top of `listings/perf/src/main.rs` and mirrored in \
`listings/perf/go/main.go`; `cargo test -p workqueue-perf` checks at small \
sizes that both sides do the same work. Two investigations print more to the \
terminal, never to this page: `--by-placement` runs the two-worker and \
eight-worker rows again round by round, sorted by how far apart the cores \
were and by where tokio ran the workers, and `--fallbacks` lists how often \
the queues' lock gave up spinning in each Rust run.
";

/// One paragraph per row that misses a target, with the numbers of the
/// same run that say what stands in the way; or a sentence that none does.
fn obstacles(m: &Measurement) -> String {
    let missed: Vec<&Row> = m.rows.iter().filter(|r| !r.fast_enough() || !r.near_floor()).collect();
    if missed.is_empty() {
        return "Every row meets both targets in this run.\n".to_owned();
    }
    let ns = |ops_per_s: f64| 1e9 / ops_per_s;
    let mut out = String::new();
    for r in missed {
        let mut text = format!(
            "**`{}`** takes {} per op in Rust against {} in Go: {:.2}× Go at the median and {:.2}–{:.2}× run by run.",
            r.name,
            ns_text(ns(r.rust)),
            ns_text(ns(r.go)),
            r.rust_over_go(),
            r.rust_over_go_range.0,
            r.rust_over_go_range.1
        );
        if r.rust_over_go() < 2.0 {
            text.push_str(&format!(" 2× Go would be {} per op.", ns_text(ns(2.0 * r.go))));
        } else if !r.fast_enough() {
            text.push_str(&format!(
                " The median meets 2× Go, but the slowest of its {REPS} runs was {:.2}× the Go run beside it, \
                 below the {SLOWEST_RUN_OVER_GO}× that every run must reach: a single run decides this verdict.",
                r.rust_over_go_range.0
            ));
        }
        if r.floor.is_some() {
            let (locks, transfers) = hardware_per_op(r);
            let lock_ns = locks * m.hw.lock_ns;
            if transfers > 0.0 {
                text.push_str(&format!(
                    " Each op takes the queue's lock {locks:.0} times ({} uncontended), and when the add and the \
                     get and done run on different cores the lock's cache line crosses between them both ways \
                     ({} more, at {} one way here): {} of hardware before any hashing or table work.",
                    ns_text(lock_ns),
                    ns_text(transfers * m.hw.transfer_ns),
                    ns_text(m.hw.transfer_ns),
                    ns_text(lock_ns + transfers * m.hw.transfer_ns)
                ));
            }
        }
        if let Some(c) = m.count_free.iter().find(|c| c.name == r.name) {
            text.push_str(&format!(
                " Each add, get and done also clones the key twice and drops it twice, four atomic \
                 read-modify-writes on the key's reference count ({} each here, alone). Built with keys that \
                 have no count (`--features count-free-keys`: each key a string leaked once, a measurement and \
                 not a key to use), the same row takes {} per op, {:.2}× Go, against {} with `SharedKey` keys \
                 in the runs interleaved with it (not the table's run above): the count costs {} per op.",
                ns_text(m.hw.atomic_ns),
                ns_text(ns(c.count_free)),
                c.count_free / c.go,
                ns_text(ns(c.shared)),
                ns_text(ns(c.shared) - ns(c.count_free))
            ));
        }
        if let Some(f) = r.floor {
            text.push_str(&format!(
                " The floor does the same op in {}: Rust takes {:.2}× as long{}, {} beyond the locks, hashes and \
                 table operations the floor counts.",
                ns_text(ns(f)),
                ns(r.rust) / ns(f),
                if r.near_floor() { "" } else { ", more than the 2× the target allows" },
                ns_text(ns(r.rust) - ns(f))
            ));
        }
        if r.rust_over_go() < 2.0 && r.rust_over_go_range.1 >= 2.0 {
            text.push_str(
                " Some runs of the row reach 2× Go where the median does not: the verdict is within this machine's noise.",
            );
        }
        out.push_str(&text);
        out.push_str("\n\n");
    }
    out.pop();
    out
}

/// Repetitions of each lock row and lock (fewer than [`REPS`]: three
/// settings and two builds each).
const LOCK_REPS: usize = 7;

/// The lock rows (`listings/perf/src/lock_rows.rs`): a label, the workload,
/// and whether it runs under a CPU quota of half a core.
const LOCK_SETTINGS: [(&str, &str, bool); 3] = [
    ("as many runtime threads as cores", "lock-cores", false),
    ("4 runtime threads per core", "lock-oversubscribed", false),
    ("as many runtime threads as cores, under a quota of half a core", "lock-cores", true),
];

/// A cgroup whose CPU quota is half a core (50 ms in every 100 ms), for
/// the lock rows; removed when dropped.
struct HalfCore {
    dir: PathBuf,
    /// How the quota was set, for the page.
    how: &'static str,
    /// Where the kernel counts throttled periods.
    stat: PathBuf,
}

impl HalfCore {
    /// Under cgroup v2 where the root delegates the cpu controller, else
    /// under cgroup v1's cpu hierarchy; an error says why neither works.
    fn create() -> std::result::Result<HalfCore, String> {
        let name = format!("forget-is-not-delete-perf-{}", std::process::id());
        let v2 = Path::new("/sys/fs/cgroup");
        let delegated = fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|s| s.split_whitespace().any(|c| c == "cpu"));
        let (dir, files, how): (PathBuf, &[(&str, &str)], &'static str) = if delegated {
            (v2.join(&name), &[("cpu.max", "50000 100000")], "cgroup v2, `cpu.max` 50000 100000")
        } else if Path::new("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists() {
            (
                Path::new("/sys/fs/cgroup/cpu").join(&name),
                &[("cpu.cfs_period_us", "100000"), ("cpu.cfs_quota_us", "50000")],
                "cgroup v1, `cpu.cfs_quota_us` 50000 per `cpu.cfs_period_us` 100000",
            )
        } else {
            return Err("no cgroup with a CPU controller to write to (neither cgroup v2 with `cpu` in the root's \
                        `cgroup.subtree_control` nor cgroup v1's `/sys/fs/cgroup/cpu`)"
                .to_owned());
        };
        fs::create_dir(&dir).map_err(|e| format!("creating {}: {e} (it takes root)", dir.display()))?;
        let quota = HalfCore { stat: dir.join("cpu.stat"), dir, how };
        for (file, value) in files {
            let path = quota.dir.join(file);
            fs::write(&path, value).map_err(|e| format!("writing {value:?} to {}: {e}", path.display()))?;
        }
        Ok(quota)
    }

    /// The periods in which the kernel throttled the cgroup, so far.
    fn throttled(&self) -> u64 {
        fs::read_to_string(&self.stat)
            .ok()
            .and_then(|s| s.lines().find_map(|l| l.strip_prefix("nr_throttled ")?.trim().parse().ok()))
            .unwrap_or(0)
    }
}

impl Drop for HalfCore {
    fn drop(&mut self) {
        // The last process may take a moment to leave it.
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!("xtask: could not remove {}", self.dir.display());
    }
}

/// One lock row with both locks: each run's ops/s and worst wait in ns.
struct LockRow {
    label: &'static str,
    spin: Vec<(f64, u64)>,
    std: Vec<(f64, u64)>,
}

impl LockRow {
    fn ops(runs: &[(f64, u64)]) -> f64 {
        median_f64(runs.iter().map(|r| r.0).collect())
    }
    fn worst(runs: &[(f64, u64)]) -> f64 {
        median_f64(runs.iter().map(|r| r.1 as f64).collect())
    }
    fn slowest(runs: &[(f64, u64)]) -> u64 {
        runs.iter().map(|r| r.1).max().unwrap_or(0)
    }
}

/// The lock rows of a run, and how the quota was set (or why it was not).
struct LockRows {
    rows: Vec<LockRow>,
    quota: std::result::Result<(&'static str, u64), String>,
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Runs the lock rows with both builds, interleaved, the order reversed
/// every other repetition; the quota row only where a cgroup can be made.
fn measure_lock_rows(spin_bin: &Path, std_bin: &Path, mismatches: &mut Vec<String>) -> Result<LockRows> {
    let quota = HalfCore::create();
    if let Err(why) = &quota {
        eprintln!("xtask: perf: the lock row under a CPU quota is skipped: {why}");
    }
    let before = quota.as_ref().map_or(0, HalfCore::throttled);
    let mut rows = Vec::new();
    for (label, workload, under_quota) in LOCK_SETTINGS {
        let q = match (under_quota, &quota) {
            (false, _) => None,
            (true, Ok(q)) => Some(q),
            (true, Err(_)) => continue,
        };
        let mut row = LockRow { label, spin: Vec::new(), std: Vec::new() };
        let mut samples: Vec<Sample> = Vec::new();
        for rep in 0..LOCK_REPS {
            let order = if rep % 2 == 0 { [spin_bin, std_bin] } else { [std_bin, spin_bin] };
            for bin in order {
                let (sample, comments) = measure_in(q, bin, &[], workload)?;
                let prefix = format!("# latency\t{workload}\tworst_ns=");
                let worst = comments
                    .iter()
                    .find_map(|c| c.strip_prefix(&prefix)?.parse().ok())
                    .ok_or_else(|| format!("{} --workload {workload} printed no `# latency` line", bin.display()))?;
                let run = (sample.ops_per_s(), worst);
                if bin == spin_bin {
                    row.spin.push(run)
                } else {
                    row.std.push(run)
                }
                samples.push(sample);
            }
        }
        if let Some(odd) = samples
            .iter()
            .find(|s| (s.ops, s.handouts, &s.checksum) != (samples[0].ops, samples[0].handouts, &samples[0].checksum))
        {
            mismatches.push(format!(
                "{workload} ({label}): the two locks did different work: {odd:?} against {:?}",
                samples[0]
            ));
        }
        eprintln!(
            "xtask: perf {workload} ({label}): spin lock {} ops/s, worst wait {}; std::sync::Mutex {} ops/s, worst wait {}",
            si(LockRow::ops(&row.spin)),
            wait_text(LockRow::worst(&row.spin)),
            si(LockRow::ops(&row.std)),
            wait_text(LockRow::worst(&row.std))
        );
        rows.push(row);
    }
    let quota = quota.map(|q| (q.how, q.throttled() - before));
    Ok(LockRows { rows, quota })
}

/// The lock rows, for the page: where spin locks are said to fail, the
/// crate's lock beside `std::sync::Mutex`, and a verdict per setting.
fn lock_rows_report(l: &LockRows) -> String {
    let mut out = format!(
        "A spin lock's waiters keep their cores while they wait, which pays when the holder runs on another \
         core and costs when it does not run at all: more runnable threads than cores, or a process throttled \
         by a CPU quota that spinning uses up. These rows run the shape of `cycles-N` with rounds of {} keys, \
         so that little of a key's wait is its round's backlog, once with the crate's lock and once with the \
         queues built on `std::sync::Mutex` (`workqueue-perf` built with `--features std-mutex`), {LOCK_REPS} \
         runs of each, interleaved. The worst wait is the longest any key waited between its add and the `get` \
         that handed it out: the median of the runs' worst, and the slowest run's in parentheses.",
        100
    );
    match &l.quota {
        Ok((how, throttled)) => out.push_str(&format!(
            " The quota is set with {how}; the kernel throttled those runs in {throttled} periods of 100 ms.\n\n"
        )),
        Err(why) => out.push_str(&format!(" The row under a quota was not measured in this run: {why}.\n\n")),
    }
    out.push_str(
        "| setting | spin lock, ops/s | `std::sync::Mutex`, ops/s | spin / std | worst wait, spin lock | worst \
         wait, `std::sync::Mutex` |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for r in &l.rows {
        out.push_str(&format!(
            "| {} | {} | {} | {:.2}× | {} ({}) | {} ({}) |\n",
            r.label,
            si(LockRow::ops(&r.spin)),
            si(LockRow::ops(&r.std)),
            LockRow::ops(&r.spin) / LockRow::ops(&r.std),
            wait_text(LockRow::worst(&r.spin)),
            wait_text(LockRow::slowest(&r.spin) as f64),
            wait_text(LockRow::worst(&r.std)),
            wait_text(LockRow::slowest(&r.std) as f64),
        ));
    }
    out.push('\n');
    let (mut slower, mut later) = (Vec::new(), Vec::new());
    for r in &l.rows {
        let (spin, std) = (LockRow::ops(&r.spin), LockRow::ops(&r.std));
        let (spin_worst, std_worst) = (LockRow::worst(&r.spin), LockRow::worst(&r.std));
        if spin < std {
            slower.push(format!("with {}, it hands out {:.2}× as many keys a second as `std`'s", r.label, spin / std));
        }
        if spin_worst > 2.0 * std_worst {
            later.push(format!(
                "with {}, its worst wait is {:.1}× `std`'s ({} against {})",
                r.label,
                spin_worst / std_worst,
                wait_text(spin_worst),
                wait_text(std_worst)
            ));
        }
    }
    if slower.is_empty() && later.is_empty() {
        out.push_str(
            "In this run the spin lock loses in none of these settings: it hands out at least as many keys a \
             second as `std`'s lock, and its worst wait is within twice `std`'s.\n",
        );
        return out;
    }
    let losses: Vec<String> = slower.iter().chain(&later).cloned().collect();
    out.push_str(&format!("In this run the spin lock loses here: {}.", losses.join("; ")));
    if !slower.is_empty() {
        out.push_str(
            " Its waiters spend on spinning the core time, or the quota, that the holder needs to finish and \
             release the lock.",
        );
    }
    if !later.is_empty() {
        out.push_str(
            " A waiter that has spun and yielded to the end of its back-off naps, from 10 µs up to 1 ms, and \
             nobody wakes it when the lock is released, so a key can wait up to a nap longer than it would \
             behind `std`'s lock, which wakes a parked waiter at the unlock.",
        );
    }
    out.push_str(
        " The crate keeps the spin lock for the rate the rows above show; a controller in a setting where it \
         loses pays this price for it.\n",
    );
    out
}

/// The hardware's own costs, medians of the `hw-…` rows.
struct Hardware {
    /// One cache line moved from one core to the other: half a ping-pong
    /// round trip.
    transfer_ns: f64,
    /// The fastest and slowest process's one-way transfer: on a virtual
    /// machine the two cores are not always the same two physical ones.
    transfer_range_ns: (f64, f64),
    /// A sleeping thread woken by the other: half a park/unpark round trip.
    wake_ns: f64,
    /// An uncontended atomic read-modify-write.
    atomic_ns: f64,
    /// An uncontended lock/unlock pair of the queues' lock.
    lock_ns: f64,
    /// A lock/unlock pair with two threads hammering one mutex.
    lock_contended_ns: f64,
    /// A key moved from one thread to the other through a locked FIFO and a
    /// table of slots, with a cycle's three lock pairs.
    handoff_ns: f64,
}

/// What one op of a row costs the hardware in lock/unlock pairs and, for
/// the `cycles` rows, in the lock's line crossing the cores once each way
/// per cycle. Not a bound (threads that take the lock several times in a
/// row cross it less often); see the legend [`hardware_report`] writes.
fn hardware_per_op(row: &Row) -> (f64, f64) {
    match row.name {
        n if n.starts_with("cycles-") => (row.floor_locks, 2.0),
        _ => (row.floor_locks, 0.0),
    }
}

/// The second table: per own row, the hardware's price of one op counted as
/// [`hardware_per_op`] does, and how far Go, Rust and the 2× target are from
/// it.
fn hardware_report(rows: &[Row], hw: &Hardware) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Measured in the same run (medians of {REPS} processes each; `workqueue-perf --workload hw-…`):\n\n\
         * a cache line moved between the two cores: **{:.1} ns** one way (an `AtomicU64` ping-pong, round \
         trip / 2; {:.1} ns in the fastest process, {:.1} ns in the slowest);\n\
         * a sleeping thread woken by the other: **{:.0} ns** (`park`/`unpark` ping-pong, round trip / 2);\n\
         * an uncontended atomic read-modify-write: **{:.1} ns**;\n\
         * a lock/unlock pair of the queues' lock (`faithful_workqueue::sync::Mutex`): **{:.1} ns** alone, \
         **{:.1} ns** per pair with two threads contending;\n\
         * a key handed from one thread to the other through the least a deduplicating queue does, behind \
         that lock: **{:.1} ns** per key (a `VecDeque` of keys and a table of 24-byte slots: one thread writes \
         the key's slot and pushes, the other pops, marks the slot, then locks once more and clears it; a \
         cycle's three lock pairs, no hashing, no task).\n\n\
         From them, per row, what one op costs the hardware, counted as the legend says, and how far Go, Rust \
         and 2× Go are from it:\n\n",
        hw.transfer_ns,
        hw.transfer_range_ns.0,
        hw.transfer_range_ns.1,
        hw.wake_ns,
        hw.atomic_ns,
        hw.lock_ns,
        hw.lock_contended_ns,
        hw.handoff_ns
    ));
    out.push_str(
        "| workload | hardware per op (legend below) | limit ops/s | Go / limit | Rust / limit | 2× Go / limit | ns/op left at 2× Go |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|\n");
    for r in rows.iter().filter(|r| r.floor.is_some()) {
        let (locks, transfers) = hardware_per_op(r);
        let ns = locks * hw.lock_ns + transfers * hw.transfer_ns;
        let mut terms = vec![format!("{locks:.2} × {:.1} (lock pairs)", hw.lock_ns)];
        if transfers > 0.0 {
            terms.push(format!("{transfers:.0} × {:.1} (transfers)", hw.transfer_ns));
        }
        let limit = 1e9 / ns;
        let left = 1e9 / (2.0 * r.go) - ns;
        out.push_str(&format!(
            "| `{}` | {} = {ns:.1} ns | {} | {:.2} | {:.2} | {:.2} | {} |\n",
            r.name,
            terms.join(" + "),
            si(limit),
            r.go / limit,
            r.rust / limit,
            2.0 * r.go / limit,
            if left >= 0.0 { format!("{left:.1} ns") } else { format!("none ({:.1} ns short)", -left) },
        ));
    }
    out.push_str(&format!(
        "\nHow the hardware column counts, per op:\n\n\
         * `cycles-N`: the floor's 3 lock pairs (add, get, done) and 2 transfers of the mutex's cache line, \
         because when the add and the get+done of a cycle run on different cores the lock must reach the \
         getter and come back to the adder. Not counted are the key's map entry, FIFO slot and `Arc` count, \
         which also move when both cores touch them, nor any wake-up ({:.0} ns each): the limit is what a \
         queue pays when every cycle's lock crosses the cores. It is not a bound: two threads that each take \
         the lock several times in a row while the other waits cross it less often, so a figure above 1.00 \
         is possible. Were every lock pair contended as in the two-thread hammer, a cycle would take \
         3 × {:.1} = {:.1} ns; the hand-off moves a key in {:.1} ns.\n\
         * `burst`: the floor's lock pair only (the key goes in by reference, `add_ref`, so a deduplicated \
         add touches no reference count); one thread, no transfers.\n\
         * `delaying`, `priority`: the floor's lock pairs only; one thread at a time.\n\
         * Limit = 1 / (hardware per op); ns/op left at 2× Go = 1 / (2 × Go ops/s) − hardware per op: the \
         time 2× Go leaves for hashing, the FIFO and everything else.\n",
        hw.wake_ns,
        hw.lock_contended_ns,
        3.0 * hw.lock_contended_ns,
        hw.handoff_ns
    ));
    out
}

/// The first line a command prints, or `unknown`.
fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_owned))
        .unwrap_or_else(|| format!("{program} (version unknown)"))
}

/// The string value of `"key":"…"` in one line of cargo's JSON output.
fn json_string(line: &str, key: &str) -> Option<String> {
    let start = line.find(&format!(r#""{key}":""#))? + key.len() + 4;
    let rest = &line[start..];
    let end = rest.find('"')?;
    Some(rest[..end].replace("\\\\", "\\"))
}

/// Now, as `YYYY-MM-DD HH:MM UTC`.
pub(crate) fn utc_now() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02} UTC", rem / 3600, rem % 3600 / 60)
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_from_day_counts() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }

    #[test]
    fn reads_a_sample_and_the_executable() {
        let s = parse_sample("burst\t1000\t2000\t10\t00000000000000ff", "burst").unwrap();
        assert_eq!((s.ops, s.elapsed_ns, s.handouts, s.checksum.as_str()), (1000, 2000, 10, "00000000000000ff"));
        assert_eq!(s.ops_per_s(), 5e8);
        assert!(parse_sample("burst\t1000\t2000\t10\t00", "priority").is_none());
        let line = r#"{"reason":"compiler-artifact","executable":"/t/release/workqueue-perf","fresh":true}"#;
        assert_eq!(json_string(line, "executable").as_deref(), Some("/t/release/workqueue-perf"));
    }

    #[test]
    fn rounds_are_read_and_sorted_by_placement() {
        let comments: Vec<String> = [
            "# go\tversion=go1.26.8",
            "# round\t200.0\t75.0",
            "# round\t600.0\t420.0",
            "# round\t900.0\t5000.0",
            "# round\t240.0\t30.5",
            "# round\t700.0\t400.0",
            "# round\t220.0\t80.0",
        ]
        .map(str::to_owned)
        .to_vec();
        let rounds = rounds_of(&comments);
        assert_eq!(rounds.len(), 6);
        assert_eq!(rounds[0], (200.0, 75.0));
        assert_eq!(Placement::of(200.0), Some(Placement::Near));
        assert_eq!(Placement::of(200.1), Some(Placement::Far));
        assert_eq!(Placement::of(1_000.1), None);
        let near = PlacementCell::of(&rounds, Placement::Near).unwrap();
        assert_eq!((near.rounds, near.ns_per_op, near.round_trip_ns), (3, 220.0, 75.0));
        let far = PlacementCell::of(&rounds, Placement::Far).unwrap();
        assert_eq!((far.rounds, far.ns_per_op, far.round_trip_ns), (2, 700.0, 420.0));
        let go: Vec<(f64, f64)> = vec![(700.0, 90.0), (760.0, 440.0)];
        let row = PlacementRow::new("cycles-2", &go, &rounds, 3.0);
        assert_eq!((row.go.left_out, row.go.total, row.rust.left_out, row.rust.total), (0, 2, 1, 6));
    }

    /// The hardware of the tests below: a machine's costs, made up.
    fn test_hardware() -> Hardware {
        Hardware {
            transfer_ns: 40.0,
            transfer_range_ns: (15.0, 220.0),
            wake_ns: 30_000.0,
            atomic_ns: 3.0,
            lock_ns: 5.0,
            lock_contended_ns: 12.0,
            handoff_ns: 50.0,
        }
    }

    #[test]
    fn the_placement_verdict_names_the_hardware_price() {
        let hw = test_hardware();
        let go = [(700.0, 90.0), (760.0, 440.0)];
        let rust = [(230.0, 75.0), (610.0, 420.0)];
        let handoff = Rounds::new(&[(60.0, 75.0), (170.0, 420.0), (50.0, 9_000.0)]);
        let text = placement_report(&[PlacementRow::new("cycles-2", &go, &rust, 3.0)], &handoff, &hw);
        let cheaper = Hardware { lock_ns: 1.0, ..hw };
        let closer = [(230.0, 75.0), (610.0, 300.0)];
        let slow_handoff = Rounds::new(&[(400.0, 300.0)]);
        let leaves = placement_report(&[PlacementRow::new("cycles-2", &go, &closer, 3.0)], &slow_handoff, &cheaper);
        // Far: 2 × 150 + 3 = 303 ns against 380: 77 ns left; the hand-off (400 ns) is over it.
        assert!(
            leaves.contains(
                "not met (1.25×). The hardware's price of a cycle (303 ns) leaves 77 ns of the 380 that 2× Go \
                 allows; Rust takes 2.01× that price. Even the hand-off, which streams keys from one core to the \
                 other, took 400 ns per key at this distance, over what 2× Go allows; Rust takes 1.52× the hand-off."
            ),
            "{leaves}"
        );
        assert_eq!((slow_handoff.left_out, handoff.left_out, handoff.total), (0, 1, 3));
        // Near: 700 / 230 is over 2; far: 2 × 210 + 15 = 435 ns against 380.
        assert!(text.contains("* `cycles-2`, cores near: 2× Go met (3.04×).\n"), "{text}");
        assert!(text.contains("3.00 × 5.0 + 2 × 210.0 = 435 ns | 170 ns | 380 ns |"), "{text}");
        assert!(
            text.contains(
                "* `cycles-2`, cores far: 2× Go not met (1.25×). A cycle that moves the lock's cache line across \
                 the cores twice costs 435 ns at this distance and 2× Go allows 380 ns, so no queue that does that \
                 meets the target here; Rust takes 1.40× that price. The hand-off, which streams keys from one \
                 core to the other, moved a key in 170 ns at this distance: within what 2× Go allows, so a queue \
                 that does not cross the lock for every key could meet it; Rust takes 3.59× the hand-off.\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn rounds_are_sorted_by_where_the_workers_ran() {
        let comments: Vec<String> =
            ["# round\t110.0\t120.0\t1.000", "# round\t530.0\t118.0\t0.049", "# round\t90.0\t5000.0\t1.000"]
                .map(str::to_owned)
                .to_vec();
        let rust = thread_rounds_of(&comments);
        assert_eq!(rust, [(110.0, 120.0, 1.0), (530.0, 118.0, 0.049), (90.0, 5000.0, 1.0)]);
        // Go's lines have no share, and are not read as such.
        assert!(thread_rounds_of(&["# round\t300.0\t120.0".to_owned()]).is_empty());
        assert_eq!((Threads::of(0.9), Threads::of(0.899)), (Threads::One, Threads::Both));
        assert_eq!(kept_median(&[(1.0, 50.0), (3.0, 900.0), (2.0, 1_500.0)]), Some((2, 3.0)));
        assert_eq!(kept_median(&[(2.0, 1_500.0)]), None);

        let go = [(340.0, 120.0), (350.0, 125.0), (10.0, 9_000.0)];
        let row = ThreadRow::new("cycles-2", &go, &rust);
        // The left-out Rust round (a 5,000 ns round trip) counts nowhere.
        assert_eq!((row.go, row.rust, row.rust_kept), (Some((2, 350.0)), [Some((1, 110.0)), Some((1, 530.0))], 2));
        let text = threads_report(&[row], Some((10, 135.0)));
        assert!(
            text.contains("| `cycles-2` | after the adds, on the producer's thread | 1 of 2 | 110 | 350 | 3.18× | 135 ns | 175 ns |"),
            "{text}"
        );
        assert!(
            text.contains(
                "* `cycles-2`, workers after the adds, on the producer's thread (1 of 2 rounds): 2× Go met (3.18×).\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "* `cycles-2`, workers beside the adds, on the other core (1 of 2 rounds): 2× Go not met (0.66×). The \
                 hand-off, the least a deduplicating queue does with a key that one thread adds and the other \
                 takes, took 135 ns per key, within the 175 ns that 2× Go allows; Rust takes 3.93× the hand-off.\n"
            ),
            "{text}"
        );
        let none = threads_report(&[ThreadRow::new("cycles-8", &go, &rust[..1])], None);
        assert!(none.contains("| `cycles-8` | beside the adds, on the other core | 0 of 1 | | | | | |"), "{none}");
    }

    #[test]
    fn the_count_free_table_shows_what_the_count_costs() {
        let hw = Hardware { atomic_ns: 9.1, ..test_hardware() };
        // ns per op: Go 317, SharedKey 169, count-free 126; queue in µs.
        let rows = [
            CountFreeRow { name: "cycles-2", go: 1e9 / 317.0, shared: 1e9 / 169.0, count_free: 1e9 / 126.0 },
            CountFreeRow { name: "queue", go: 1e9 / 15_900.0, shared: 1e9 / 9_100.0, count_free: 1e9 / 4_600.0 },
        ];
        let text = count_free_report(&rows, &hw);
        assert!(text.contains("four atomic read-modify-writes (9.1 ns each here, alone)"), "{text}");
        assert!(text.contains("| `cycles-2` | 317.0 ns | 169.0 ns | 126.0 ns | 43.0 ns | 1.88× | 2.52× |"), "{text}");
        assert!(text.contains("| `queue` | 15.9 µs | 9.1 µs | 4.6 µs | 4.5 µs | 1.75× | 3.46× |"), "{text}");
    }

    #[test]
    fn a_ratio_range_pairs_the_runs_of_one_repetition() {
        let sample = |ops| Sample { ops, elapsed_ns: 1_000_000_000, handouts: 0, checksum: String::new() };
        let rust = [sample(30), sample(10), sample(40)];
        let go = [sample(10), sample(10), sample(10)];
        assert_eq!(ratio_range(&rust, &go), (1.0, 4.0));
    }

    #[test]
    fn a_row_is_fast_enough_only_with_its_slowest_run_too() {
        let row = |go: f64, rust: f64, lo: f64| Row {
            name: "r",
            what: "",
            go,
            rust,
            floor: None,
            rust_over_go_range: (lo, 4.0),
            floor_over_rust_range: (f64::NAN, f64::NAN),
            floor_counts: String::new(),
            floor_locks: 0.0,
            rust_fallbacks: Vec::new(),
        };
        assert!(row(1.0, 2.0, 1.5).fast_enough());
        assert!(!row(1.0, 2.0, 1.49).fast_enough(), "a slow run fails the row");
        assert!(!row(1.0, 1.99, 1.9).fast_enough(), "so does the median");
    }

    /// A made-up run: `cycles-2` misses 2× Go (1.75×) and has a count-free
    /// measurement; `burst` meets both targets.
    fn test_measurement(cycles_rust_ns: f64) -> Measurement {
        let row = |name: &'static str, go_ns: f64, rust_ns: f64, floor_ns: f64| Row {
            name,
            what: "what one op is",
            go: 1e9 / go_ns,
            rust: 1e9 / rust_ns,
            floor: Some(1e9 / floor_ns),
            rust_over_go_range: (go_ns / rust_ns * 0.9, go_ns / rust_ns * 1.1),
            floor_over_rust_range: (rust_ns / floor_ns * 0.95, rust_ns / floor_ns * 1.05),
            floor_counts: "3.00 lock pairs".to_owned(),
            floor_locks: 3.0,
            rust_fallbacks: Vec::new(),
        };
        Measurement {
            rows: vec![row("cycles-2", 300.0, cycles_rust_ns, 80.0), row("burst", 30.0, 10.0, 9.0)],
            facts: Facts {
                go_version: "go1.26.8".into(),
                gomaxprocs: "2".into(),
                tokio_threads: "2".into(),
                rustc: "rustc 1.95.0".into(),
            },
            hw: test_hardware(),
            count_free: vec![CountFreeRow {
                name: "cycles-2",
                go: 1e9 / 300.0,
                shared: 1e9 / cycles_rust_ns,
                count_free: 1e9 / 120.0,
            }],
            locks: test_lock_rows(1_000_000),
            when: "2026-12-03 19:00 UTC".to_owned(),
            took: Duration::from_secs(140),
        }
    }

    /// Lock rows where the spin lock is faster everywhere, and its worst
    /// wait oversubscribed is `oversubscribed_worst_ns` (std's: 150 µs).
    fn test_lock_rows(oversubscribed_worst_ns: u64) -> LockRows {
        let runs = |ops: f64, worst: u64| vec![(ops, worst); 3];
        LockRows {
            rows: vec![
                LockRow { label: LOCK_SETTINGS[0].0, spin: runs(2.7e6, 80_000), std: runs(1.0e6, 100_000) },
                LockRow {
                    label: LOCK_SETTINGS[1].0,
                    spin: runs(3.9e6, oversubscribed_worst_ns),
                    std: runs(2.5e6, 150_000),
                },
            ],
            quota: Err("no cgroup with a CPU controller to write to".to_owned()),
        }
    }

    #[test]
    fn the_lock_rows_say_where_the_spin_lock_loses_and_why() {
        let lost = lock_rows_report(&test_lock_rows(1_000_000));
        assert!(
            lost.contains(
                "| 4 runtime threads per core | 3.90 M | 2.50 M | 1.56× | 1.0 ms (1.0 ms) | 150 µs (150 µs) |"
            ),
            "{lost}"
        );
        assert!(lost.contains("loses here: with 4 runtime threads per core, its worst wait is 6.7× `std`'s"), "{lost}");
        assert!(lost.contains("naps, from 10 µs up to 1 ms"), "{lost}");
        assert!(!lost.contains("spend on spinning"), "it is not slower anywhere: {lost}");
        assert!(lost.contains("was not measured in this run: no cgroup"), "{lost}");
        let fine = lock_rows_report(&test_lock_rows(200_000));
        assert!(fine.contains("loses in none of these settings"), "{fine}");
    }

    #[test]
    fn the_page_is_the_report_whole_with_the_go_table_first_after_the_marker() {
        let text = page(&test_measurement(171.4));
        if std::env::var_os("SHOW_PAGE").is_some() {
            eprintln!("{text}");
        }
        assert!(text.starts_with(&format!("{PAGE_STAMP}\n# {PAGE_TITLE}\n")), "{text}");
        let after =
            &text[text.find(BEGIN).expect("the begin marker") + BEGIN.len()..text.find(END).expect("the end marker")];
        assert!(after.contains("Measured 2026-12-03 19:00 UTC on "), "the run's date and machine: {after}");
        let first_table = after.lines().find(|l| l.starts_with('|')).unwrap();
        assert_eq!(
            first_table,
            "| workload | Go ops/s | Rust ops/s | Rust/Go (runs) | floor ops/s | floor/Rust (runs) | targets |"
        );
        for heading in ["## What the hardware costs", "## What stands in the way", "## How the port is built"] {
            assert!(text.contains(heading), "{heading}");
        }
    }

    /// The EPUB is XHTML, where a comment may not hold `--`.
    #[test]
    fn the_stamp_is_a_comment_that_xhtml_accepts() {
        let inside = PAGE_STAMP.strip_prefix("<!--").and_then(|s| s.strip_suffix("-->")).unwrap();
        assert!(!inside.contains("--"), "{PAGE_STAMP}");
    }

    #[test]
    fn a_row_that_misses_a_target_gets_a_paragraph_with_its_numbers() {
        let text = page(&test_measurement(171.4));
        let way = text.split("## What stands in the way").nth(1).unwrap().split("\n## ").next().unwrap();
        assert!(way.contains("**`cycles-2`** takes 171.4 ns per op in Rust against 300.0 ns in Go: 1.75× Go"), "{way}");
        assert!(way.contains("2× Go would be 150.0 ns per op"), "{way}");
        assert!(
            way.contains("(15.0 ns uncontended)") && way.contains("(80.0 ns more, at 40.0 ns one way here)"),
            "{way}"
        );
        assert!(
            way.contains(
                "the same row takes 120.0 ns per op, 2.50× Go, against 171.4 ns with `SharedKey` keys in the runs \
                 interleaved with it (not the table's run above): the count costs 51.4 ns per op"
            ),
            "{way}"
        );
        assert!(
            way.contains("Rust takes 2.14× as long, more than the 2× the target allows, 91.4 ns beyond"),
            "the floor target, missed too: {way}"
        );
        assert!(!way.contains("`burst`"), "a row that meets both targets has no paragraph: {way}");
        let mut slow_run = test_measurement(140.0);
        slow_run.rows[1].rust_over_go_range = (1.39, 3.7);
        let one = page(&slow_run);
        assert!(
            one.contains("The median meets 2× Go, but the slowest of its 11 runs was 1.39× the Go run beside it"),
            "{one}"
        );
        assert!(!one.contains("2× Go would be"), "{one}");
        let met = page(&test_measurement(140.0));
        assert!(met.contains("Every row meets both targets in this run."), "{met}");
    }

    #[test]
    fn reads_a_go_benchmark_line() {
        let out = "goos: linux\nBenchmarkAddGetDone-2   \t     200\t   4604340 ns/op\nPASS\n";
        assert_eq!(parse_bench_ns(out, "BenchmarkAddGetDone"), Some(4_604_340.0));
        assert_eq!(parse_bench_ns(out, "BenchmarkAddOnly"), None);
        assert_eq!(parse_bench_ns("BenchmarkQueue 10 35.5 ns/op", "BenchmarkQueue"), Some(35.5));
    }

    #[test]
    fn reads_a_runs_lock_fallbacks() {
        let c = vec!["# floor\tcycles-2\tlocks/op=3.00".to_owned(), "# lock\tcycles-2\tfallbacks=1234".to_owned()];
        assert_eq!(fallbacks_of(&c, "cycles-2"), 1234);
        assert_eq!(fallbacks_of(&c, "cycles-8"), 0);
    }

    #[test]
    fn floor_counts_in_words() {
        let c =
            vec!["# floor\tburst\tlocks/op=1.00\thashes/op=1.00\thash/op=1.01\tfifo/op=0.01\ttree/op=0.00".to_owned()];
        assert_eq!(
            floor_counts_of(&c, "burst"),
            "1.00 lock pairs, 1.00 key hashes, 1.01 hash-table ops, 0.01 FIFO ops"
        );
    }
}
