package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
	"forget-is-not-delete/workqueuedone/vetsuite"
)

// measureCost measures what the analyzer costs a CI job over m's packages,
// each way it can run there:
//
//   - plain go vet beside go vet -vettool=vet-workqueuedone, the one step
//     that runs go vet's own analyzers and workqueuedone together: cold
//     (every compile cached, no analysis cached, as in a CI job whose build
//     cache is restored but whose code changed under every package) and
//     warm (the same command again: go vet reuses each package's result);
//   - the standalone command, which type-checks every package and every
//     dependency from source on each run and caches nothing;
//   - golangci-lint built with the plugin (when g names it): govet alone
//     against govet and workqueuedone, cold (an empty lint cache) and warm
//     (the cache kept, as a CI job that restores it);
//   - and the analysis alone, in this process, on packages already loaded:
//     workqueuedone's own share of a vet run.
//
// Times are wall-clock. Memory is the peak resident set of the largest
// process the command started (go vet starts one tool process a package).
func measureCost(m *module, g golangciRun) (string, error) {
	tools, err := os.MkdirTemp("", "workqueuedone-cost-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tools)
	vettool := filepath.Join(tools, "vet-workqueuedone")
	standalone := filepath.Join(tools, "workqueuedone")
	// The vet tool is built as chapter 10's CI step builds it, by
	// cmd/build-vet-workqueuedone in the analyzer's own module, for the Go
	// that runs this: go vet's analyzers are then the same code in both
	// tools. (This module needs a later x/tools, which writes each
	// package's types into its vet output; every run hashes that output.)
	own, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "forget-is-not-delete/workqueuedone").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m forget-is-not-delete/workqueuedone (the analyzer's module): %v", err)
	}
	for _, b := range []struct {
		args []string
		dir  string
	}{
		{[]string{"run", "./cmd/build-vet-workqueuedone", "-o", vettool}, strings.TrimSpace(string(own))},
		{[]string{"build", "-o", standalone, "forget-is-not-delete/workqueuedone/cmd/workqueuedone"}, ""},
	} {
		build := exec.Command("go", b.args...)
		build.Dir = b.dir
		if out, err := build.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go %s: %v\n%s", strings.Join(b.args, " "), err, out)
		}
	}

	// Every compile go vet needs, done once under a vet flag that no
	// measured run passes. go vet keys a package's analysis by the tool,
	// its flags and the package, so a flag value never used before
	// (-printf.funcs, which names extra printf wrappers and changes no
	// result here) makes a run cold while every compile stays cached.
	if _, err := runMeasured(m.goDir, vetCommand("", "-printf.funcs=ForgetIsNotDeleteWarmUp", m.packages)); err != nil {
		return "", fmt.Errorf("the warm-up go vet (every compile the measured runs need): %w", err)
	}
	fresh := "-printf.funcs=ForgetIsNotDeleteCold" + strconv.FormatInt(time.Now().UnixNano(), 36)

	// Cold, twice each, in turn (plain go vet first, then the tool first),
	// and the faster run of each counts: a busy moment on the machine only
	// ever adds time. A cold run caches its analyses, so the second round
	// gets a flag value of its own.
	var plainCold, withCold []measurement
	var flag string
	for round := range 2 {
		flag = fmt.Sprintf("%s%d", fresh, round)
		order := []struct {
			vettool string
			runs    *[]measurement
		}{{"", &plainCold}, {vettool, &withCold}}
		if round == 1 {
			slices.Reverse(order)
		}
		for _, r := range order {
			run, err := runMeasured(m.goDir, vetCommand(r.vettool, flag, m.packages))
			if err != nil {
				return "", fmt.Errorf("go vet, cold: %w", err)
			}
			*r.runs = append(*r.runs, run)
		}
	}
	// Warm: the last cold runs again, now cached, over the packages on
	// which neither reported anything: a green run. go vet caches no
	// failed result, so a package with a report is analyzed again on every
	// run, by either tool, until it is fixed or its report accepted; the
	// step fails on it anyway. A run takes two seconds or so and varies by
	// a third from run to run on a shared machine, so each is run nine
	// times, in turn and in alternating order (neither always goes first),
	// and the median counts.
	reportedDirs := map[string]bool{}
	for _, run := range append(slices.Clone(plainCold), withCold...) {
		for _, dir := range run.reportedDirs {
			reportedDirs[dir] = true
		}
	}
	list := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}} {{.Dir}}"}, m.packages...)...)
	list.Dir = m.goDir
	listed, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("go list (the packages' folders): %w", err)
	}
	green := []string{}
	for _, line := range strings.Split(strings.TrimSpace(string(listed)), "\n") {
		if path, dir, ok := strings.Cut(line, " "); ok && !reportedDirs[dir] {
			green = append(green, path)
		}
	}
	plain, with := vetCommand("", flag, green), vetCommand(vettool, flag, green)
	var plainWarm, withWarm []measurement
	for round := range 9 {
		order := []struct {
			args []string
			runs *[]measurement
		}{{plain, &plainWarm}, {with, &withWarm}}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, r := range order {
			run, err := runMeasured(m.goDir, r.args)
			if err != nil {
				return "", fmt.Errorf("go vet, warm: %w", err)
			}
			*r.runs = append(*r.runs, run)
		}
	}
	alone, err := runMeasured(m.goDir, append([]string{standalone}, m.packages...))
	if err != nil {
		return "", fmt.Errorf("workqueuedone (standalone): %w", err)
	}
	// And on a module of the size a reader's controller is: the
	// standalone command's memory is what a small CI runner must hold.
	small, err := runMeasured(m.goDir, []string{standalone, sampleController})
	if err != nil {
		return "", fmt.Errorf("workqueuedone (standalone) over %s: %w", sampleController, err)
	}
	var golangci string
	if g.bin != "" {
		dirs := []string{}
		for _, line := range strings.Split(strings.TrimSpace(string(listed)), "\n") {
			if _, dir, ok := strings.Cut(line, " "); ok {
				dirs = append(dirs, dir)
			}
		}
		if golangci, err = measureGolangci(m.goDir, tools, g, dirs); err != nil {
			return "", err
		}
	}
	ours, vet, err := analysisOnly(m)
	if err != nil {
		return "", err
	}

	// The first line names what was measured and is compared byte for byte
	// by the xtask; the figures below it vary from run to run.
	var b strings.Builder
	fmt.Fprintf(&b, "%d packages of %s@%s, every compile cached:\n", len(m.packages), m.path, m.version)
	fmt.Fprintf(&b, "  %-44s %8s %16s\n", "", "wall", "largest process")
	row := func(what string, r measurement) {
		fmt.Fprintf(&b, "  %-44s %8s %13d MB\n", what, r.wall.Round(100*time.Millisecond), r.peakMB)
	}
	coldPlain, coldWith := fastest(plainCold), fastest(withCold)
	warmPlain, warmWith := median(plainWarm), median(withWarm)
	row("go vet, cold (the faster of 2)", coldPlain)
	row("go vet -vettool=vet-workqueuedone, cold", coldWith)
	fmt.Fprintf(&b, "  warm, over the %d of them with no report (a green run):\n", len(green))
	row("go vet, warm (the median of 9)", warmPlain)
	row("go vet -vettool=vet-workqueuedone, warm", warmWith)
	row("workqueuedone, the command on its own", alone)
	row("... over "+sampleController+" alone", small)
	fmt.Fprintf(&b, "  %-44s %8s\n", "cold ratio", ratioOf(coldWith.wall, coldPlain.wall))
	fmt.Fprintf(&b, "  %-44s %8s\n", "warm ratio", ratioOf(warmWith.wall, warmPlain.wall))
	fmt.Fprintf(&b, "The analysis alone, on the packages loaded, the median of 5 runs each:\n")
	fmt.Fprintf(&b, "  %-44s %8s\n", "workqueuedone", ours.Round(time.Millisecond))
	fmt.Fprintf(&b, "  %-44s %8s\n", fmt.Sprintf("go vet's %d analyzers", len(vetsuite.Analyzers)), vet.Round(time.Millisecond))
	fmt.Fprintf(&b, "  %-44s %8s\n", "analysis ratio", ratioOf(ours, vet))
	b.WriteString(golangci)
	return b.String(), nil
}

// golangciRun is golangci-lint built with the plugin, and the config that
// enables workqueuedone in it (chapter 10's .golangci.yml).
type golangciRun struct{ bin, config string }

// measureGolangci measures golangci-lint over dirs, run in dir, as a team
// already on it pays for the plugin: the chapter's config with govet
// enabled beside workqueuedone, against the same with govet alone (the
// linter of golangci-lint's that is closest to go vet). Cold is an empty
// lint cache (golangci-lint caches each package's results in
// GOLANGCI_LINT_CACHE) with every compile cached, the faster of 2 runs each
// in alternating order; warm is the same command again with its cache,
// the median of 5 each, alternating. Reports do not fail a run
// (--issues-exit-code=0): a cached report costs what a cached pass does.
func measureGolangci(dir, tools string, g golangciRun, dirs []string) (string, error) {
	text, err := os.ReadFile(g.config)
	if err != nil {
		return "", err
	}
	const enabled = "  enable:\n    - workqueuedone\n"
	if !strings.Contains(string(text), enabled) {
		return "", fmt.Errorf("%s: no %q to add govet beside", g.config, enabled)
	}
	with := strings.Replace(string(text), enabled, "  enable:\n    - govet\n    - workqueuedone\n", 1)
	plain := strings.Replace(string(text), enabled, "  enable:\n    - govet\n", 1)
	configs := map[string]string{"plain": plain, "with": with}
	for name, text := range configs {
		if err := os.WriteFile(filepath.Join(tools, name+".golangci.yml"), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	lint := func(config, cache string) []string {
		return append([]string{"env", "GOLANGCI_LINT_CACHE=" + filepath.Join(tools, cache), g.bin, "run",
			"-c", filepath.Join(tools, config+".golangci.yml"), "--issues-exit-code=0"}, dirs...)
	}
	// Every compile golangci-lint's package loading needs, done once.
	if _, err := runMeasured(dir, lint("plain", "warm-up-cache")); err != nil {
		return "", fmt.Errorf("the warm-up golangci-lint run: %w", err)
	}
	var plainCold, withCold, plainWarm, withWarm []measurement
	for round := range 2 {
		order := []struct {
			config string
			runs   *[]measurement
		}{{"plain", &plainCold}, {"with", &withCold}}
		if round == 1 {
			slices.Reverse(order)
		}
		for _, r := range order {
			run, err := runMeasured(dir, lint(r.config, fmt.Sprintf("%s-cache-%d", r.config, round)))
			if err != nil {
				return "", fmt.Errorf("golangci-lint, cold: %w", err)
			}
			*r.runs = append(*r.runs, run)
		}
	}
	for round := range 5 {
		order := []struct {
			config string
			runs   *[]measurement
		}{{"plain", &plainWarm}, {"with", &withWarm}}
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, r := range order {
			run, err := runMeasured(dir, lint(r.config, r.config+"-cache-1"))
			if err != nil {
				return "", fmt.Errorf("golangci-lint, warm: %w", err)
			}
			*r.runs = append(*r.runs, run)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "golangci-lint with the plugin, over the same %d packages (.golangci.yml):\n", len(dirs))
	row := func(what string, r measurement) {
		fmt.Fprintf(&b, "  %-44s %8s %13d MB\n", what, r.wall.Round(100*time.Millisecond), r.peakMB)
	}
	coldPlain, coldWith := fastest(plainCold), fastest(withCold)
	warmPlain, warmWith := median(plainWarm), median(withWarm)
	row("govet, cold (the faster of 2)", coldPlain)
	row("govet and workqueuedone, cold", coldWith)
	row("govet, warm (the median of 5)", warmPlain)
	row("govet and workqueuedone, warm", warmWith)
	fmt.Fprintf(&b, "  %-44s %8s\n", "golangci-lint cold ratio", ratioOf(coldWith.wall, coldPlain.wall))
	fmt.Fprintf(&b, "  %-44s %8s\n", "golangci-lint warm ratio", ratioOf(warmWith.wall, warmPlain.wall))
	return b.String(), nil
}

// sampleController is the package the standalone command is also
// measured on: one controller, the size of a reader's.
const sampleController = "k8s.io/sample-controller"

func ratioOf(a, b time.Duration) string {
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64)
}

// vetCommand is go vet over packages, with the vet tool given (go vet's own
// when empty) and one extra flag.
func vetCommand(vettool, flag string, packages []string) []string {
	args := []string{"go", "vet"}
	if vettool != "" {
		args = append(args, "-vettool="+vettool)
	}
	return append(append(args, flag), packages...)
}

type measurement struct {
	wall   time.Duration
	peakMB int64
	// The folders of the files go vet printed a report in.
	reportedDirs []string
}

func byWall(a, b measurement) int { return int(a.wall - b.wall) }

func fastest(runs []measurement) measurement { return slices.MinFunc(runs, byWall) }

func median(runs []measurement) measurement {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, byWall)
	return sorted[len(sorted)/2]
}

// runMeasured runs args in dir, through a child of its own (see
// measureChild), and returns the wall time and peak memory that child
// measured. A report is not a failure (go vet exits 1, the standalone
// command 3); anything else the command prints on failure is.
func runMeasured(dir string, args []string) (measurement, error) {
	self, err := os.Executable()
	if err != nil {
		return measurement{}, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return measurement{}, err
	}
	defer r.Close()
	cmd := exec.Command(self, append([]string{measureChildArg}, args...)...)
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{w} // fd 3 in the child
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	runErr := cmd.Run()
	w.Close()
	var got measurement
	var wallNs int64
	if _, err := fmt.Fscan(r, &wallNs, &got.peakMB); err != nil {
		return measurement{}, fmt.Errorf("%s: no measurement (%v)\n%s", shortCommand(args), runErr, tail(stderr.String()))
	}
	got.wall = time.Duration(wallNs)
	if runErr != nil && !reportsOnly(cmd.ProcessState.ExitCode(), stderr.String()) {
		return measurement{}, fmt.Errorf("%s: %v\n%s", shortCommand(args), runErr, tail(stderr.String()))
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		// file.go:line:col: message
		if file, _, ok := strings.Cut(line, ".go:"); ok {
			got.reportedDirs = append(got.reportedDirs, filepath.Dir(file+".go"))
		}
	}
	return got, nil
}

// measureChildArg, as a first argument, makes this program the measuring
// child: it runs the rest as a command and writes the command's wall time
// (ns) and peak resident set (MB) to file descriptor 3.
const measureChildArg = "-measure-child"

// measureChild is a small process between the corpus and a measured
// command, because Linux counts a process's peak memory from the moment
// it is forked: a command started by this process, which holds every
// corpus package in memory, would report at least this process's peak.
// Started from a fresh, small child, the command's ru_maxrss (the largest
// of it and every descendant it waited for) is its own.
func measureChild(args []string) int {
	out := os.NewFile(3, "measurement")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintf(os.Stderr, "no resource usage for %s\n", args[0])
		return 2
	}
	fmt.Fprintf(out, "%d %d\n", wall.Nanoseconds(), usage.Maxrss/1024) // Linux counts ru_maxrss in KB
	return cmd.ProcessState.ExitCode()
}

func shortCommand(args []string) string {
	return strings.Join(args[:min(len(args), 4)], " ")
}

// reportsOnly says whether a run that exited with code failed only because
// it reported: every line it printed is a package heading or a report.
func reportsOnly(code int, stderr string) bool {
	if code != 1 && code != 3 {
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(line, "# ") || strings.Contains(line, ".go:") {
			continue
		}
		return false
	}
	return stderr != ""
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// analysisOnly times the analyzer, and go vet's own analyzers, over m's
// packages already loaded and type-checked in this process.
func analysisOnly(m *module) (ours, vet time.Duration, err error) {
	medianOf5 := func(analyzers []*analysis.Analyzer) (time.Duration, error) {
		var runs []time.Duration
		for range 5 {
			start := time.Now()
			if _, err := checker.Analyze(analyzers, m.loaded, nil); err != nil {
				return 0, err
			}
			runs = append(runs, time.Since(start))
		}
		slices.Sort(runs)
		return runs[len(runs)/2], nil
	}
	if ours, err = medianOf5([]*analysis.Analyzer{workqueuedone.Analyzer}); err != nil {
		return 0, 0, err
	}
	vet, err = medianOf5(vetsuite.Analyzers)
	return ours, vet, err
}
