//! The control plane the API-server chapter runs against: etcd, kube-apiserver
//! and promtool, built from the Go module proxy, then started with
//! controller-runtime's envtest.
//!
//! Nothing can be downloaded prebuilt on the machines this book is tested on,
//! so each binary is built from a small Go module under `tools/control-plane/`
//! whose `go.sum` is committed. They land where setup-envtest keeps its
//! binaries (`~/.local/share/kubebuilder-envtest/k8s/1.37.2-linux-amd64/`), so
//! a reader who already ran setup-envtest builds nothing, and so does one who
//! points `KUBEBUILDER_ASSETS` at a folder holding `etcd` and
//! `kube-apiserver`. With an empty Go build cache the three took 33 s, 199 s
//! and 63 s on the project's two-core machine (etcd, kube-apiserver,
//! promtool; kube-apiserver peaks at about 2.5 GB); a machine under load takes
//! several times longer. Go's build cache makes a rebuild a relink.
//!
//! The processes are started by `listings/internal/cluster`, a Go program
//! around envtest (see its doc comment for how no etcd or kube-apiserver
//! outlives it). [`Cluster`] is the suite's handle on one: dropping it stops
//! the control plane and checks that its processes are gone.

use std::collections::VecDeque;
use std::env;
use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::{Result, root};

pub const KUBERNETES_VERSION: &str = "1.37.2";
pub const ETCD_VERSION: &str = "3.7.3";
pub const PROMETHEUS_VERSION: &str = "3.16.0";

/// How long a control plane may take to start on a busy two-core machine
/// (measured: 3.9-5.4 s when idle).
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the processes may take to stop (measured: about 1.2 s).
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a long build says how far it got.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// One binary of the control plane and how to build it.
struct Tool {
    name: &'static str,
    /// The folder of its tools module, relative to the repository root.
    module: &'static str,
    package: &'static str,
    tags: &'static str,
    ldflags: &'static str,
    /// What a cold build took on the two-core machine, for the progress line.
    cold: &'static str,
}

const ETCD: Tool = Tool {
    name: "etcd",
    module: "tools/control-plane/etcd",
    package: "go.etcd.io/etcd/server/v3",
    tags: "",
    ldflags: "-s -w",
    cold: "about 35 s on two idle cores",
};

const KUBE_APISERVER: Tool = Tool {
    name: "kube-apiserver",
    module: "tools/control-plane/kube-apiserver",
    package: "k8s.io/kubernetes/cmd/kube-apiserver",
    tags: "",
    // Without the stamp the server reports v0.0.0-master to its clients.
    ldflags: "-s -w -X k8s.io/component-base/version.gitVersion=v1.37.2 \
              -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37",
    cold: "about 3.5 minutes on two idle cores",
};

const PROMTOOL: Tool = Tool {
    name: "promtool",
    module: "tools/control-plane/promtool",
    package: "github.com/prometheus/prometheus/cmd/promtool",
    // Drops the cloud service discoveries: a third of the build, and promtool's
    // rule tests and metric checks do not use them.
    tags: "remove_all_sd",
    ldflags: "-s -w",
    cold: "about a minute on two idle cores",
};

/// Where the binaries are.
pub struct Binaries {
    /// A folder holding `etcd` and `kube-apiserver` (envtest's `KUBEBUILDER_ASSETS`).
    pub assets: PathBuf,
    pub promtool: PathBuf,
}

pub(crate) fn data_home() -> Result<PathBuf> {
    if let Some(dir) = env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let home = env::var_os("HOME").ok_or("HOME is not set: cannot find ~/.local/share")?;
    Ok(PathBuf::from(home).join(".local/share"))
}

/// setup-envtest's folder for this Kubernetes version.
pub fn envtest_dir() -> Result<PathBuf> {
    Ok(data_home()?.join(format!("kubebuilder-envtest/k8s/{KUBERNETES_VERSION}-linux-amd64")))
}

/// promtool is not part of envtest's layout; it gets a versioned folder of
/// its own beside it.
fn promtool_dir() -> Result<PathBuf> {
    Ok(data_home()?.join(format!("forget-is-not-delete/promtool-{PROMETHEUS_VERSION}-linux-amd64")))
}

/// The binaries, built first where they are missing.
pub fn ensure_binaries() -> Result<Binaries> {
    let assets = match env::var_os("KUBEBUILDER_ASSETS").filter(|d| !d.is_empty()) {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            for name in ["etcd", "kube-apiserver"] {
                if !dir.join(name).is_file() {
                    return Err(format!(
                        "KUBEBUILDER_ASSETS={} has no {name}; unset it to have the binaries built into {}",
                        dir.display(),
                        envtest_dir()?.display()
                    ));
                }
            }
            eprintln!("xtask: control plane: using etcd and kube-apiserver from KUBEBUILDER_ASSETS={}", dir.display());
            dir
        }
        None => {
            let dir = envtest_dir()?;
            for tool in [&ETCD, &KUBE_APISERVER] {
                build_if_missing(tool, &dir)?;
            }
            dir
        }
    };
    let promtool = match assets.join("promtool") {
        own if own.is_file() => own,
        _ => {
            let dir = promtool_dir()?;
            build_if_missing(&PROMTOOL, &dir)?;
            dir.join("promtool")
        }
    };
    Ok(Binaries { assets, promtool })
}

fn build_if_missing(tool: &Tool, dir: &Path) -> Result {
    let bin = dir.join(tool.name);
    if bin.is_file() {
        return Ok(());
    }
    fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    // Build beside the final name, then rename: an interrupted build never
    // leaves a half-written binary that a later run would take for a good one.
    let partial = dir.join(format!(".{}.partial", tool.name));
    let mut cmd = go_command();
    cmd.current_dir(root().join(tool.module))
        .args(["build", "-v", "-trimpath", "-mod=readonly"])
        .arg(format!("-tags={}", tool.tags))
        .arg(format!("-ldflags={}", tool.ldflags))
        .arg("-o")
        .arg(&partial)
        .arg(tool.package);
    let what = format!("building {} (cold: {}; a relink with a warm Go build cache)", tool.name, tool.cold);
    run_with_progress(cmd, &what, tool.name)?;
    fs::rename(&partial, &bin).map_err(|e| format!("moving {} into place: {e}", bin.display()))?;
    eprintln!("xtask: {} is in {}", tool.name, bin.display());
    Ok(())
}

/// `go`, with the installed toolchain only: a module that asked for a newer
/// one would otherwise try to download it, which these machines cannot.
pub fn go_command() -> Command {
    let mut cmd = Command::new("go");
    cmd.env("GOTOOLCHAIN", "local");
    cmd
}

/// Runs a long build, printing a line every 30 s with how many packages it
/// has compiled (`go build -v` names each one on stderr). On failure the
/// error names the step, the command and the last lines it printed.
pub(crate) fn run_with_progress(mut cmd: Command, what: &str, step: &str) -> Result {
    eprintln!("xtask: {what}");
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{step}: cannot start `{shown}`: {e}"))?;
    let lines = Arc::new(Mutex::new((0usize, VecDeque::<String>::new())));
    let reader = {
        let lines = Arc::clone(&lines);
        let stderr = child.stderr.take().expect("stderr is piped");
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(std::result::Result::ok) {
                let mut guard = lines.lock().unwrap();
                guard.0 += 1;
                guard.1.push_back(line);
                if guard.1.len() > 40 {
                    guard.1.pop_front();
                }
            }
        })
    };
    let started = Instant::now();
    let mut next_report = started + PROGRESS_EVERY;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("{step}: waiting for go build: {e}"))? {
            break status;
        }
        if Instant::now() >= next_report {
            next_report += PROGRESS_EVERY;
            let packages = lines.lock().unwrap().0;
            eprintln!("xtask: {step}: {}s, {packages} packages built so far", started.elapsed().as_secs());
        }
        thread::sleep(Duration::from_millis(200));
    };
    reader.join().expect("the stderr reader does not panic");
    if status.success() {
        eprintln!("xtask: {step}: built in {}s", started.elapsed().as_secs());
        return Ok(());
    }
    let last: Vec<String> = lines.lock().unwrap().1.iter().cloned().collect();
    Err(format!("{step}: `{shown}` failed ({status}); its last lines:\n{}", last.join("\n")))
}

/// Builds the cluster supervisor (`listings/internal/cluster`) into `target/cluster/`.
fn supervisor() -> Result<PathBuf> {
    let out = root().join("target/cluster/cluster");
    let mut build = go_command();
    build.current_dir(root().join("listings")).args(["build", "-o"]).arg(&out).arg("./internal/cluster");
    crate::run(build, "go build ./internal/cluster (envtest: starts and stops the control plane)")?;
    Ok(out)
}

/// A running control plane, started for the suite. Dropping it closes the
/// supervisor's stdin, which makes it stop etcd and kube-apiserver, and waits.
pub struct Cluster {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    pub kubeconfig: PathBuf,
    pub binaries: Binaries,
    /// The PIDs of etcd and kube-apiserver, read once the control plane was up.
    pub processes: Vec<u32>,
}

impl Cluster {
    /// Builds what is missing and starts a control plane whose kubeconfig is
    /// written to `kubeconfig`.
    pub fn start(kubeconfig: &Path) -> Result<Cluster> {
        let binaries = ensure_binaries()?;
        let supervisor = supervisor()?;
        let _ = fs::remove_file(kubeconfig);
        eprintln!("xtask: starting etcd and kube-apiserver (envtest)");
        let mut child = Command::new(&supervisor)
            .arg("-kubeconfig")
            .arg(kubeconfig)
            .arg("-stop-when-stdin-closes")
            .env("KUBEBUILDER_ASSETS", &binaries.assets)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", supervisor.display()))?;
        let stdin = child.stdin.take();
        let ready = wait_for_ready(child.stdout.take().expect("stdout is piped"));
        let mut cluster = Cluster {
            child: Some(child),
            stdin,
            kubeconfig: kubeconfig.to_path_buf(),
            binaries,
            processes: Vec::new(),
        };
        match ready {
            Ok(()) => {
                let pid = cluster.child.as_ref().map(Child::id).unwrap_or_default();
                cluster.processes = children_of(pid);
                eprintln!("xtask: control plane up (etcd and kube-apiserver: PIDs {:?})", cluster.processes);
                Ok(cluster)
            }
            Err(e) => Err(e), // dropping `cluster` stops whatever did start
        }
    }

    /// The supervisor's PID (listing 9-8 signals it to restart kube-apiserver).
    pub fn supervisor_pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or_default()
    }

    /// Stops the control plane and fails if one of its processes survives.
    pub fn stop(mut self) -> Result {
        self.shut_down()
    }

    fn shut_down(&mut self) -> Result {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        // kube-apiserver may have been restarted since the start: look again.
        for pid in children_of(child.id()) {
            if !self.processes.contains(&pid) {
                self.processes.push(pid);
            }
        }
        drop(self.stdin.take());
        let deadline = Instant::now() + STOP_TIMEOUT;
        while child.try_wait().map_err(|e| e.to_string())?.is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            thread::sleep(Duration::from_millis(50));
        }
        // The supervisor has exited; its processes must be gone with it.
        let deadline = Instant::now() + STOP_TIMEOUT;
        loop {
            let alive: Vec<u32> = self.processes.iter().copied().filter(|pid| is_alive(*pid)).collect();
            if alive.is_empty() {
                eprintln!("xtask: control plane stopped; no etcd or kube-apiserver left");
                return Ok(());
            }
            if Instant::now() > deadline {
                for pid in &alive {
                    let _ = Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
                }
                return Err(format!("control plane processes {alive:?} outlived their supervisor (now killed)"));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Err(e) = self.shut_down() {
            eprintln!("xtask: {e}");
        }
    }
}

/// Waits for the supervisor's `ready` line, for at most [`START_TIMEOUT`].
fn wait_for_ready(stdout: impl Read + Send + 'static) -> Result {
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next();
        let _ = tx.send(first);
        // Keep reading so the supervisor never blocks on a full pipe.
        for _ in lines {}
    });
    match rx.recv_timeout(START_TIMEOUT) {
        Ok(Some(Ok(line))) if line == "ready" => Ok(()),
        Ok(Some(Ok(line))) => Err(format!("the cluster supervisor said {line:?} instead of \"ready\"")),
        Ok(_) => Err("the cluster supervisor exited before the control plane was ready (its stderr is above)".into()),
        Err(_) => Err(format!("the control plane was not ready within {}s", START_TIMEOUT.as_secs())),
    }
}

/// The PIDs whose parent is `pid` (from /proc).
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut children = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else { return children };
    for entry in entries.flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else { continue };
        // The fields after the command name, which is in parentheses and may hold spaces.
        let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else { continue };
        if rest.split_whitespace().nth(1).and_then(|ppid| ppid.parse::<u32>().ok()) == Some(pid) {
            children.push(child);
        }
    }
    children.sort_unstable();
    children
}

/// Whether a process exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// `cargo xtask cluster up|down|status`: a control plane for readers.
pub fn cluster(args: &[String]) -> Result {
    let dir = root().join("target/cluster");
    let kubeconfig = dir.join("kubeconfig");
    let pid_file = dir.join("supervisor.pid");
    let running =
        || fs::read_to_string(&pid_file).ok().and_then(|s| s.trim().parse::<u32>().ok()).filter(|p| is_alive(*p));
    match args.first().map(String::as_str) {
        Some("up") => {
            if let Some(pid) = running() {
                println!("a control plane is already running (supervisor PID {pid})");
                print_how_to_use(&kubeconfig, pid, &ensure_binaries()?.promtool);
                return Ok(());
            }
            let binaries = ensure_binaries()?;
            let supervisor = supervisor()?;
            let _ = fs::remove_file(&kubeconfig);
            let log_path = dir.join("cluster.log");
            let log = fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
            let child = Command::new(&supervisor)
                .arg("-kubeconfig")
                .arg(&kubeconfig)
                .env("KUBEBUILDER_ASSETS", &binaries.assets)
                .stdin(Stdio::null())
                .stdout(log.try_clone().map_err(|e| e.to_string())?)
                .stderr(log)
                // Its own process group: a Ctrl-C in this terminal later must
                // not stop it; `cluster down` does.
                .process_group(0)
                .spawn()
                .map_err(|e| format!("starting {}: {e}", supervisor.display()))?;
            let pid = child.id();
            fs::write(&pid_file, format!("{pid}\n")).map_err(|e| e.to_string())?;
            let deadline = Instant::now() + START_TIMEOUT;
            loop {
                let log = fs::read_to_string(&log_path).unwrap_or_default();
                if log.lines().any(|l| l == "ready") {
                    break;
                }
                if !is_alive(pid) || Instant::now() > deadline {
                    let _ = Command::new("kill").arg(pid.to_string()).status();
                    let _ = fs::remove_file(&pid_file);
                    return Err(format!("the control plane did not start; {}:\n{log}", log_path.display()));
                }
                thread::sleep(Duration::from_millis(100));
            }
            println!(
                "control plane up: kube-apiserver v{KUBERNETES_VERSION} and etcd v{ETCD_VERSION} (supervisor PID {pid}, log in {})",
                log_path.display()
            );
            print_how_to_use(&kubeconfig, pid, &binaries.promtool);
            Ok(())
        }
        Some("down") => {
            let Some(pid) = running() else {
                let _ = fs::remove_file(&pid_file);
                println!("no control plane is running");
                return Ok(());
            };
            let processes = children_of(pid);
            let _ = Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
            let deadline = Instant::now() + STOP_TIMEOUT;
            while is_alive(pid) || processes.iter().any(|p| is_alive(*p)) {
                if Instant::now() > deadline {
                    return Err(format!(
                        "the control plane (PIDs {pid} and {processes:?}) did not stop within {}s",
                        STOP_TIMEOUT.as_secs()
                    ));
                }
                thread::sleep(Duration::from_millis(100));
            }
            let _ = fs::remove_file(&pid_file);
            let _ = fs::remove_file(&kubeconfig);
            println!("control plane stopped");
            Ok(())
        }
        Some("status") => {
            match running() {
                Some(pid) => {
                    println!("running (supervisor PID {pid}, etcd and kube-apiserver {:?})", children_of(pid));
                    print_how_to_use(&kubeconfig, pid, &ensure_binaries()?.promtool);
                }
                None => println!("no control plane is running"),
            }
            Ok(())
        }
        _ => Err("usage: cargo xtask cluster <up | down | status>".to_owned()),
    }
}

fn print_how_to_use(kubeconfig: &Path, pid: u32, promtool: &Path) {
    println!("kubeconfig: {}", kubeconfig.display());
    println!("point a listing at it:");
    println!("  KUBECONFIG={} cargo run -p listing-09-01", kubeconfig.display());
    println!("listing 9-8 also needs the supervisor's PID, to restart kube-apiserver:");
    println!("  KUBECONFIG={} CLUSTER_SUPERVISOR_PID={pid} cargo run -p listing-09-08", kubeconfig.display());
    println!("or a Go twin:");
    println!("  KUBECONFIG={} go -C listings run ./ch09-real-api-server/listing-09-01/twin", kubeconfig.display());
    println!("listing 10-14, Kubernetes's PVC protection controller, also needs promtool:");
    println!(
        "  cd listings/workqueuedone/corpus && KUBECONFIG={} PROMTOOL={} go run ./pvcleak [-fixed]",
        kubeconfig.display(),
        promtool.display()
    );
    println!("stop it with `cargo xtask cluster down`");
}
