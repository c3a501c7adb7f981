//! The Go side: builds the replayer (`listings/differential/replay`, a Go test
//! package using `testing/synctest`) into the target directory and runs it over
//! a file of scripts.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::script::{Script, format_scripts, split_blocks};

/// The Go module: `listings/`.
pub fn go_module_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("listings/")
        .to_path_buf()
}

/// Whether a `go` executable is on `PATH`.
pub fn go_on_path() -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        let candidate = dir.join("go");
        std::fs::metadata(&candidate).map(|m| m.is_file()).unwrap_or(false)
    })
}

/// The cargo target directory this process was built into (from the test
/// executable's path, `target/<profile>/deps/...`), else `CARGO_TARGET_DIR`,
/// else the workspace's `target/`.
pub fn target_dir() -> PathBuf {
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        let deps = exe
            .parent()
            .filter(|d| d.file_name().is_some_and(|n| n == "deps"))?;
        Some(deps.parent()?.parent()?.to_path_buf())
    });
    from_exe
        .or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        })
        .unwrap_or_else(|| {
            go_module_dir().parent().expect("the workspace").join("target")
        })
}

/// A built Go replayer.
#[derive(Clone, Debug)]
pub struct GoReplayer {
    binary: PathBuf,
    scratch: PathBuf,
}

static RUNS: AtomicU64 = AtomicU64::new(0);

impl GoReplayer {
    /// Builds the replayer into `<target>/differential/replay.test`:
    /// `go test -c -o <that> ./differential/replay`, in `listings/`, with
    /// `GOFLAGS=-mod=readonly`.
    pub fn build() -> Result<Self, String> {
        let scratch = target_dir().join("differential");
        std::fs::create_dir_all(&scratch)
            .map_err(|e| format!("creating {}: {e}", scratch.display()))?;
        let binary = scratch.join("replay.test");
        let output = Command::new("go")
            .args(["test", "-c", "-o"])
            .arg(&binary)
            .arg("./differential/replay")
            .current_dir(go_module_dir())
            .env("GOFLAGS", "-mod=readonly")
            .env("GOTOOLCHAIN", "local")
            .output()
            .map_err(|e| format!("running go: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "go test -c ./differential/replay failed ({}):\n{}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        Ok(Self { binary, scratch })
    }

    /// The replayer binary.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// Replays `scripts` in one run of the replayer and returns the Go
    /// observations of each.
    pub fn run(&self, scripts: &[Script]) -> Result<Vec<Vec<String>>, String> {
        let id = format!(
            "{}-{}",
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed)
        );
        let input = self.scratch.join(format!("scripts-{id}.txt"));
        let out = self.scratch.join(format!("observations-{id}.txt"));
        std::fs::write(&input, format_scripts(scripts))
            .map_err(|e| format!("writing {}: {e}", input.display()))?;
        let _ = std::fs::remove_file(&out);
        let output = Command::new(&self.binary)
            .arg("-test.run=^TestReplay$")
            .env("DIFFERENTIAL_SCRIPTS", &input)
            .env("DIFFERENTIAL_OUT", &out)
            .output()
            .map_err(|e| format!("running {}: {e}", self.binary.display()))?;
        if !output.status.success() {
            return Err(format!(
                "the Go replayer failed ({}) on {}:\n{}{}",
                output.status,
                input.display(),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let text = std::fs::read_to_string(&out)
            .map_err(|e| format!("reading {}: {e}", out.display()))?;
        let observations = split_blocks(&text);
        if observations.len() != scripts.len() {
            return Err(format!(
                "the Go replayer wrote {} observation blocks for {} scripts ({})",
                observations.len(),
                scripts.len(),
                out.display()
            ));
        }
        let _ = std::fs::remove_file(&input);
        let _ = std::fs::remove_file(&out);
        Ok(observations)
    }
}
