// Command pvcleak runs Kubernetes's own PVC protection controller, the
// package k8s.io/kubernetes/pkg/controller/volume/pvcprotection at v1.37.2
// (not a copy), against a real kube-apiserver, and shows the one leak that
// workqueuedone found in Kubernetes: a key that does not split into a
// namespace and a name is handed out by the controller's queue and never
// released, because the worker returns without Done.
//
// It builds the controller as kube-controller-manager does (one namespace
// worker, informers from a real client, the queue metrics of component-base's
// Prometheus provider, which kube-controller-manager registers), creates a
// pod whose volume claims "a/b" in a namespace of its own, and prints what
// it observes, in words: whether the worker took the key, whether the queue
// still holds it, whether a second event for the pod reaches the worker,
// whether another claim in the same namespace is still processed, and
// whether the stall alert of chapters 7 and 9 would fire, as promtool
// evaluates it over the gauge's climb. It prints nothing that varies.
//
//	KUBECONFIG=... PROMTOOL=... go run ./pvcleak
//
// The fix is fix.patch, one line. With -fixed the same steps run against
// the controller with that line added: the program builds itself again in a
// scratch module whose k8s.io/kubernetes is a patched copy, and runs that.
//
//	KUBECONFIG=... PROMTOOL=... go run ./pvcleak -fixed
//
// fix.patch also adds a unit test to the package's own test file, in its
// style (a fake clientset and informers, no API server). With -unit the
// program runs that test with go test twice, in scratch copies of
// k8s.io/kubernetes: with the test alone, on v1.37.2 as released, where it
// must fail, and with the whole patch, where it must pass. It prints both
// runs without their timings and the controller's klog lines.
//
//	go run ./pvcleak -unit
//
// Every wait is bounded and ends on observed state. The controller is
// stopped and the pod, the claim and the namespace are deleted on every
// path, failure included.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/metrics/legacyregistry"
	// kube-controller-manager imports this for its /metrics: the workqueue
	// metrics provider, set in its init, before any queue exists.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/volume/pvcprotection"
	"k8s.io/kubernetes/pkg/features"
)

// bound is how long any one wait may take: generous, for a busy machine.
const bound = 60 * time.Second

// The queue's gauges are set every 500ms (client-go's
// unfinishedWorkUpdatePeriod); a change is looked for over ten of those.
const settle = 5 * time.Second

//go:embed fix.patch
var fixPatch string

func main() {
	fixed := flag.Bool("fixed", false, "run the same steps against the controller with fix.patch applied, built\nin a scratch module whose k8s.io/kubernetes is a patched copy")
	unit := flag.Bool("unit", false, "run fix.patch's unit test with go test, on v1.37.2 as released (it must\nfail) and with the fix (it must pass); needs no API server")
	work := flag.String("work", "", "with -fixed or -unit, build in `DIR` and keep it (default: a temporary folder)")
	rules := flag.String("rules", filepath.Join("..", "..", "alerts", "workqueue-stall.rules.yml"), "the stall alert's rule `FILE`")
	flag.Parse()
	var err error
	switch {
	case *fixed && *unit:
		err = errors.New("-fixed and -unit are two runs: pass one")
	case *unit:
		err = runUnit(*work)
	case *fixed:
		err = runFixed(*work, *rules)
	default:
		err = run(*rules)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pvcleak:", err)
		os.Exit(1)
	}
}

func run(rules string) error {
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		return errors.New("KUBECONFIG is not set: start a control plane with `cargo xtask cluster up` and use the kubeconfig it prints")
	}
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		return errors.New("PROMTOOL is not set: `cargo xtask cluster up` prints the promtool it built")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return fmt.Errorf("reading KUBECONFIG=%s (`cargo xtask cluster up` writes one and prints its path): %w", path, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// envtest runs no namespace controller, so a deleted namespace stays
	// Terminating: each run gets a fresh one, whose name is never printed.
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "pvcleak-"},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("cannot create a namespace at %s (is the control plane up? `cargo xtask cluster up` starts one): %w", cfg.Host, err)
	}
	defer cleanUp(cs, ns.Name)
	return show(ctx, cs, ns.Name, promtool, rules)
}

// cleanUp deletes what the run created, with a context of its own so that
// it runs after a timeout too.
func cleanUp(cs kubernetes.Interface, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zero := int64(0)
	_ = cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	_ = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
}

func show(ctx context.Context, cs kubernetes.Interface, ns, promtool, rules string) error {
	heldKey := ns + "/a/b"
	// The worker's only trace of a key it cannot split is this error, sent
	// to apimachinery's error handlers: count the ones for our key.
	var taken atomic.Int32
	utilruntime.ErrorHandlers = append(utilruntime.ErrorHandlers,
		func(_ context.Context, err error, _ string, _ ...any) {
			if strings.Contains(err.Error(), fmt.Sprintf("error parsing PVC key %q", heldKey)) {
				taken.Add(1)
			}
		})

	logger := klog.Background()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	ctrl, err := pvcprotection.NewPVCProtectionController(logger,
		factory.Core().V1().PersistentVolumeClaims(), factory.Core().V1().Pods(), cs)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(klog.NewContext(ctx, logger))
	var running sync.WaitGroup
	defer func() {
		stop()
		running.Wait()
		factory.Shutdown()
	}()
	factory.Start(runCtx.Done())
	// One namespace worker, as kube-controller-manager starts it.
	running.Go(func() { ctrl.Run(runCtx, 1) })

	fmt.Println("pvcprotection from k8s.io/kubernetes v1.37.2, one worker, against a real")
	fmt.Println("kube-apiserver, with kube-controller-manager's workqueue metrics")
	fmt.Printf("feature gate PersistentVolumeClaimUnusedSinceTime: %s\n",
		onOff(utilfeature.DefaultFeatureGate.Enabled(features.PersistentVolumeClaimUnusedSinceTime)))
	fmt.Println()

	// The default service account, which the admission plugin requires
	// and which no controller creates here.
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
	}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the default service account: %w", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "a/b"},
			}}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating pod held (claimName a/b): %w", err)
	}
	fmt.Println(`pod "held" created, its volume claiming "a/b": accepted by the API server`)
	if err := waitFor(func() bool { return taken.Load() == 1 }, "the worker to take the key <namespace>/a/b"); err != nil {
		return err
	}
	created, err := cs.CoreV1().Pods(ns).Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("  scheduled to a node: %s\n", yesNo(created.Spec.NodeName != ""))
	fmt.Println(`  the worker took key "<namespace>/a/b", could not split it: 1 time`)

	// The queue sets its two stall gauges every 500ms: a held key shows in
	// them within one period, and they grow between two scrapes.
	held := waitFor(func() bool {
		unfinished, longest, _, err := heldGauges()
		return err == nil && unfinished > 0 && longest > 0
	}, "") == nil
	unfinished0, longest0, at0, err := heldGauges()
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	unfinished1, longest1, at1, err := heldGauges()
	if err != nil {
		return err
	}
	fmt.Printf("  unfinished work and longest running processor above zero: %s\n", yesNo(held))
	fmt.Printf("  both, scraped again two seconds later: grown: %s\n",
		yesNo(unfinished1 > unfinished0 && longest1 > longest0))

	// A second event for the same pod: a label. The pod handler queues the
	// same key; the queue counts the add.
	adds, err := queueMetric("workqueue_adds_total")
	if err != nil {
		return err
	}
	created.Labels = map[string]string{"touched": "yes"}
	if _, err := cs.CoreV1().Pods(ns).Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("labelling pod held: %w", err)
	}
	fmt.Println(`pod "held" labelled: a second event for the same key`)
	if err := waitFor(func() bool {
		now, err := queueMetric("workqueue_adds_total")
		return err == nil && now > adds
	}, "the queue to count the second add"); err != nil {
		return err
	}
	fmt.Println("  queued again (workqueue_adds_total rose): yes")
	again := waitFor(func() bool { return taken.Load() > 1 }, "") == nil
	depth, err := queueMetric("workqueue_depth")
	if err != nil {
		return err
	}
	fmt.Printf("  the worker took the key again: %s\n", yesNo(again))
	fmt.Printf("  workqueue_depth: %.0f\n", depth)

	// Another claim in the same namespace: one being deleted, which only
	// this controller can finish, by removing its finalizer.
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "other", Finalizers: []string{"kubernetes.io/pvc-protection"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi"),
			}},
		},
	}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating claim other: %w", err)
	}
	if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "other", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("deleting claim other: %w", err)
	}
	fmt.Println(`claim "other", in the same namespace, deleted`)
	if err := waitFor(func() bool {
		_, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "other", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, "the controller to remove claim other's finalizer"); err != nil {
		return err
	}
	fmt.Println("  the controller removed its finalizer, and it is gone: yes")
	fmt.Printf("  the worker has taken \"<namespace>/a/b\" %d time%s in all\n", taken.Load(), plural(taken.Load()))

	// The alert of chapters 7 and 9, by promtool, over the held gauge
	// extended for thirty minutes at the rate it climbed between scrapes.
	perSecond := 0.0
	if at1.After(at0) {
		perSecond = (longest1 - longest0) / at1.Sub(at0).Seconds()
	}
	firing, err := alertFires(promtool, rules, longest0, perSecond)
	if err != nil {
		return err
	}
	fmt.Println("the stall alert (listings/alerts) over the longest-running gauge,")
	fmt.Printf("extended 30 minutes at the rate it climbed: %s\n", map[bool]string{true: "firing", false: "silent"}[firing])
	return nil
}

// waitFor polls cond until it holds, at most bound. With no what, it waits
// only settle and reports a miss without an error message.
func waitFor(cond func() bool, what string) error {
	limit := bound
	if what == "" {
		limit = settle
	}
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// queueMetric reads one series of the pvcprotection queue from the registry
// kube-controller-manager serves on /metrics.
func queueMetric(name string) (float64, error) {
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return 0, fmt.Errorf("gathering metrics: %w", err)
	}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, m := range family.GetMetric() {
			for _, label := range m.GetLabel() {
				if label.GetName() == "name" && label.GetValue() == "pvcprotection" {
					if c := m.GetCounter(); c != nil {
						return c.GetValue(), nil
					}
					return m.GetGauge().GetValue(), nil
				}
			}
		}
	}
	return 0, fmt.Errorf("no series %s{name=\"pvcprotection\"} in the registry", name)
}

// heldGauges reads the two stall gauges, and when.
func heldGauges() (unfinished, longest float64, at time.Time, err error) {
	at = time.Now()
	if unfinished, err = queueMetric("workqueue_unfinished_work_seconds"); err != nil {
		return
	}
	longest, err = queueMetric("workqueue_longest_running_processor_seconds")
	return
}

// alertFires runs the book's rule file under promtool's rule tests, with
// the gauge starting at start and climbing perSecond, scraped every minute
// for thirty minutes. The test it writes expects no alert; promtool failing
// it with the alert for pvcprotection is the alert firing.
func alertFires(promtool, rules string, start, perSecond float64) (bool, error) {
	rules, err := filepath.Abs(rules)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(rules); err != nil {
		return false, fmt.Errorf("the alert rule: %w (run from listings/workqueuedone/corpus, or give -rules)", err)
	}
	dir, err := os.MkdirTemp("", "pvcleak-alert-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	test := fmt.Sprintf(`rule_files:
  - %s
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'workqueue_longest_running_processor_seconds{name="pvcprotection"}'
        values: '%.0f+%.0fx30'
    alert_rule_test:
      - eval_time: 30m
        alertname: WorkqueueKeyHeldTooLong
        exp_alerts: []
`, rules, start, perSecond*60)
	file := filepath.Join(dir, "pvcleak.test.yml")
	if err := os.WriteFile(file, []byte(test), 0o644); err != nil {
		return false, err
	}
	out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput()
	if err == nil {
		return false, nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && strings.Contains(string(out), `alertname="WorkqueueKeyHeldTooLong"`) &&
		strings.Contains(string(out), `name="pvcprotection"`) {
		return true, nil
	}
	return false, fmt.Errorf("%s test rules %s: %v\n%s", promtool, file, err, out)
}

// runFixed builds this program again in a scratch module under work whose
// k8s.io/kubernetes is the module cache's copy with fix.patch applied (go
// build cannot overlay files in the module cache), and runs it with the
// same environment. The scratch module is this one's go.mod and go.sum with
// one more replace.
func runFixed(work, rules string) error {
	rules, err := filepath.Abs(rules)
	if err != nil {
		return err
	}
	return withScratch(work, func(string) bool { return true }, func(scratch string) error {
		binary := filepath.Join(scratch, "pvcleak-fixed")
		if _, err := goOutput(scratch, "build", "-o", binary, "./pvcleak"); err != nil {
			return err
		}
		cmd := exec.Command(binary, "-rules", rules)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("the fixed build: %w", err)
		}
		return nil
	})
}

// unitTest is the test fix.patch adds, and the package it is in.
const (
	unitTest    = "TestProcessNextWorkItemReleasesAKeyThatDoesNotSplit"
	unitPackage = "k8s.io/kubernetes/pkg/controller/volume/pvcprotection"
)

// runUnit runs fix.patch's unit test twice, each in a scratch copy: with
// only the patch's test files applied (the controller as released), where
// it must fail, and with the whole patch, where it must pass.
func runUnit(work string) error {
	runs := []struct {
		title string
		apply func(file string) bool
		pass  bool
	}{
		{"on k8s.io/kubernetes v1.37.2 as released, with the new test only:", isTestFile, false},
		{"with the whole patch, the fix and the test:", func(string) bool { return true }, true},
	}
	for i, r := range runs {
		dir := work
		if dir != "" {
			dir = filepath.Join(work, fmt.Sprint(i))
		}
		err := withScratch(dir, r.apply, func(scratch string) error {
			cmd := exec.Command("go", "test", "-count=1", "-v", "-run", "^"+unitTest+"$", unitPackage)
			cmd.Dir = scratch
			out, err := cmd.CombinedOutput()
			passed := err == nil
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				return fmt.Errorf("go test: %w", err)
			}
			fmt.Println(r.title)
			fmt.Print(withoutTimings(string(out)))
			if passed != r.pass {
				return fmt.Errorf("%s go test %s: passed=%v, want %v", r.title, unitTest, passed, r.pass)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func isTestFile(file string) bool { return strings.HasSuffix(file, "_test.go") }

// isKlogHeader says whether text starts as klog starts a line: a severity
// letter and the date, "I1207 20:10:30.273594".
func isKlogHeader(text string) bool {
	return len(text) > 6 && strings.ContainsRune("IWEF", rune(text[0])) &&
		strings.Trim(text[1:5], "0123456789") == "" && text[5] == ' '
}

// withoutTimings is go test's output without what varies from run to run:
// the durations on its result lines, and the log lines, which carry the
// time (klog's own, where utilruntime.HandleError logs the key it cannot
// split, and the test logger's, which ktesting writes through t.Log).
func withoutTimings(out string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		text := strings.TrimSpace(line)
		if isKlogHeader(text) {
			continue // "E1207 20:11:16.343994   19158 file.go:223] ..."
		}
		if _, logged, ok := strings.Cut(text, ".go:"); ok && isKlogHeader(strings.TrimLeft(logged, "0123456789: ")) {
			continue // "file.go:584: I1207 20:10:30.273594] ...", through t.Log
		}
		if at := strings.LastIndex(line, " ("); at >= 0 && strings.HasSuffix(line, "s)") && strings.HasPrefix(strings.TrimSpace(line), "--- ") {
			line = line[:at]
		}
		if at := strings.LastIndex(line, "\t"); at >= 0 && strings.HasSuffix(line, "s") && (strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "FAIL\t")) {
			line = line[:at]
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// withScratch makes a scratch module under work (a temporary folder when
// work is empty) whose k8s.io/kubernetes is the module cache's copy with
// the files of fix.patch that apply accepts patched (go cannot overlay
// files in the module cache), and calls do with its folder. The scratch
// module is this one's go.mod and go.sum with one more replace.
func withScratch(work string, apply func(file string) bool, do func(scratch string) error) error {
	files, err := parsePatch(fixPatch)
	if err != nil {
		return fmt.Errorf("fix.patch: %w", err)
	}
	self, err := goOutput(".", "list", "-m")
	if err != nil || self != "forget-is-not-delete/corpus" {
		return fmt.Errorf("-fixed and -unit run from listings/workqueuedone/corpus (go list -m says %q, %v)", self, err)
	}
	kube, err := goOutput(".", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes")
	if err != nil {
		return err
	}
	if work == "" {
		if work, err = os.MkdirTemp("", "pvcleak-scratch-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	} else if work, err = filepath.Abs(work); err != nil {
		return err
	}
	_ = os.RemoveAll(work)
	copied := filepath.Join(work, "kubernetes")
	if err := linkTree(kube, copied); err != nil {
		return fmt.Errorf("copying %s: %w", kube, err)
	}
	for _, f := range files {
		if !apply(f.target) {
			continue
		}
		file := filepath.Join(copied, filepath.FromSlash(f.target))
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		patched, err := applyHunks(string(src), f.hunks)
		if err != nil {
			return fmt.Errorf("fix.patch does not apply to %s: %w", filepath.Join(kube, f.target), err)
		}
		// The copy is a hard link to the read-only cache: replace, not write.
		if err := os.Remove(file); err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(patched), 0o644); err != nil {
			return err
		}
	}
	for _, name := range []string{"go.mod", "go.sum", "pvcleak/main.go", "pvcleak/fix.patch"} {
		if err := copyFile(name, filepath.Join(work, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	analyzer, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	if _, err := goOutput(work, "mod", "edit", "-replace", "k8s.io/kubernetes=./kubernetes",
		"-replace", "forget-is-not-delete/workqueuedone="+analyzer); err != nil {
		return err
	}
	return do(work)
}

// goOutput runs go in dir and returns its trimmed stdout, or an error with
// its stderr.
func goOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

// linkTree copies the tree at from to to, hard-linking files where it can.
func linkTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dest := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dest, 0o755)
		}
		if os.Link(path, dest) == nil {
			return nil
		}
		return copyFile(path, dest)
	})
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, 0o644)
}

type hunk struct {
	oldStart int      // 1-based line of the hunk's first old line
	old, new []string // the lines before and after
}

// filePatch is one file's part of a patch: its path and its hunks.
type filePatch struct {
	target string
	hunks  []hunk
}

// parsePatch reads a unified diff of one or more files: each file's path
// after "+++ b/", and its hunks. Lines before the first "---" are the
// patch's description.
func parsePatch(patch string) ([]filePatch, error) {
	var files []filePatch
	for _, line := range strings.Split(strings.TrimSuffix(patch, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "+++ b/"):
			files = append(files, filePatch{target: strings.TrimPrefix(line, "+++ b/")})
		case len(files) == 0 || strings.HasPrefix(line, "--- a/"):
			// the description, and each file's "---" line
		case strings.HasPrefix(line, "@@ "):
			var h hunk
			var oldLen, newStart, newLen int
			if _, err := fmt.Sscanf(line, "@@ -%d,%d +%d,%d @@", &h.oldStart, &oldLen, &newStart, &newLen); err != nil {
				return nil, fmt.Errorf("hunk header %q: %w", line, err)
			}
			f := &files[len(files)-1]
			f.hunks = append(f.hunks, h)
		case len(files[len(files)-1].hunks) == 0:
			return nil, fmt.Errorf("%q before the first hunk of %s", line, files[len(files)-1].target)
		default:
			f := &files[len(files)-1]
			h := &f.hunks[len(f.hunks)-1]
			text := line
			if text != "" {
				text = line[1:]
			}
			switch {
			case line == "" || line[0] == ' ':
				h.old, h.new = append(h.old, text), append(h.new, text)
			case line[0] == '-':
				h.old = append(h.old, text)
			case line[0] == '+':
				h.new = append(h.new, text)
			default:
				return nil, fmt.Errorf("unexpected line %q", line)
			}
		}
	}
	if len(files) == 0 {
		return nil, errors.New("no +++ b/ line")
	}
	for _, f := range files {
		if len(f.hunks) == 0 {
			return nil, fmt.Errorf("no hunk for %s", f.target)
		}
	}
	return files, nil
}

// applyHunks applies hunks, last first so that line numbers hold, each
// exactly at its line.
func applyHunks(src string, hunks []hunk) (string, error) {
	lines := strings.Split(src, "\n")
	for i := len(hunks) - 1; i >= 0; i-- {
		h := hunks[i]
		at := h.oldStart - 1
		if at < 0 || at+len(h.old) > len(lines) {
			return "", fmt.Errorf("hunk at line %d is outside the file", h.oldStart)
		}
		for j, want := range h.old {
			if lines[at+j] != want {
				return "", fmt.Errorf("line %d is %q, the patch expects %q", at+j+1, lines[at+j], want)
			}
		}
		lines = append(lines[:at], append(append([]string{}, h.new...), lines[at+len(h.old):]...)...)
	}
	return strings.Join(lines, "\n"), nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func onOff(b bool) string {
	if b {
		return "on (its default at v1.37)"
	}
	return "off"
}

func plural(n int32) string {
	if n == 1 {
		return ""
	}
	return "s"
}
