// Listing 9-5, Go twin only: what the Manager decides about a panic. A real
// Manager, with default options except that it serves /metrics on
// 127.0.0.1 and caches only the listing's namespace, runs a controller whose
// reconciler panics the first time it reconciles cm-panic (a nil owner
// dereferenced) and works after that, so that the counts stay fixed. Nothing
// sets RecoverPanic: the listing prints the unset value the manager hands
// the controller, then shows what the controller does with it: the panic is
// recovered, logged, counted, returned as an error and retried, and the
// manager goes on to reconcile an object created afterwards.
//
// The manager's logger is a logr sink that keeps what it is given; the
// listing prints the log entries about cm-panic without what varies (the
// namespace, the reconcile ID, the stack trace). With SCRAPES_DIR set, the
// scrape of /metrics is also written there whole, for `promtool check
// metrics` (the suite does that).
//
// There is no Rust listing: kube-rs has no Manager and no such default
// (chapter 8 shows what a panic does to a kube-runtime controller).
//
// Run from listings/, with a control plane up (`cargo xtask cluster up`):
//
//	KUBECONFIG=../target/cluster/kubeconfig go run ./ch09-real-api-server/listing-09-05/twin
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/apiserver"
	"forget-is-not-delete/listings/internal/scrape"
	"forget-is-not-delete/listings/internal/twin"
)

func main() {
	apiserver.Listing = "listing-09-05 (Go twin)"
	twin.QuietLogs() // controller-runtime's global logger and klog; the manager gets its own below
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := apiserver.Config()
	cs := apiserver.Clientset(cfg)
	ns := apiserver.Namespace(ctx, cs, "listing-09-05")
	apiserver.ConfigMap(ctx, cs, ns, "cm-panic", "step", "0")

	logs := newCapture()
	// ANCHOR: manager
	address := apiserver.FreeAddress()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics: metricsserver.Options{BindAddress: address},
		Logger:  logr.New(logs), // keeps every entry, for the listing to print
		// Controller (config.Controller) left unset: RecoverPanic is nil
	})
	// ANCHOR_END: manager
	if err != nil {
		apiserver.Fail("manager: %v", err)
	}
	reconciled := make(chan string, 10)
	var firstTime atomic.Bool
	firstTime.Store(true)
	// ANCHOR: reconciler
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Build(reconcile.Func(func(
			ctx context.Context, req reconcile.Request,
		) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm)
			if err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			// nil: nothing owns these ConfigMaps
			owner := metav1.GetControllerOf(&cm)
			if req.Name == "cm-panic" && firstTime.CompareAndSwap(true, false) {
				_ = owner.Kind // the bug, once: a nil dereference
			}
			reconciled <- req.Name
			return reconcile.Result{}, nil
		}))
	// ANCHOR_END: reconciler
	if err != nil {
		apiserver.Fail("controller: %v", err)
	}

	// ANCHOR: defaults
	fmt.Printf("%-44s %s\n", "mgr.GetControllerOptions().RecoverPanic",
		show(mgr.GetControllerOptions().RecoverPanic))
	// The controller Build returns is controller-runtime's internal
	// Controller; its RecoverPanic field is exported, reflection reads it.
	field := reflect.ValueOf(c).Elem().FieldByName("RecoverPanic")
	seen := field.Interface().(*bool)
	fmt.Printf("%-44s %s\n", "the controller's RecoverPanic", show(seen))
	// ANCHOR_END: defaults

	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()

	// ANCHOR: behaviour
	apiserver.Until(logs.changed, func() bool { return len(logs.about("cm-panic", "Reconciler error")) > 0 },
		"the reconcile error of cm-panic in the log")
	fmt.Println()
	fmt.Println("cm-panic: the reconciler panicked; the controller recovered it")
	waitFor(reconciled, "cm-panic")
	fmt.Println("cm-panic: retried after the error, reconciled")
	apiserver.ConfigMap(ctx, cs, ns, "cm-after", "step", "0")
	waitFor(reconciled, "cm-after")
	fmt.Println("cm-after: created after the panic, reconciled")
	select {
	case err := <-stopped:
		apiserver.Fail("the manager stopped: %v", err)
	default:
		fmt.Println("the manager is still running")
	}
	// ANCHOR_END: behaviour

	fmt.Println()
	fmt.Println("the log, about cm-panic (namespace, reconcileID and stacktrace left out):")
	for _, e := range logs.about("cm-panic", "") {
		fmt.Println(e)
	}

	// ANCHOR: scrape
	get := func() string { return apiserver.HTTPGet("http://" + address + "/metrics") }
	s := scrape.Until(get, func(s string) bool {
		return scrape.Value(s, "controller_runtime_reconcile_total", "configmap", `result="success"`) == 2
	}, "both successful reconciles counted")
	// ANCHOR_END: scrape
	save(s)
	fmt.Println()
	fmt.Println(`GET /metrics (controller="configmap"):`)
	for _, m := range []struct{ name, matcher string }{
		{"controller_runtime_reconcile_panics_total", ""},
		{"controller_runtime_reconcile_errors_total", ""},
		{"controller_runtime_reconcile_total", `result="error"`},
		{"controller_runtime_reconcile_total", `result="success"`},
	} {
		label, matchers := m.name, []string(nil)
		if m.matcher != "" {
			label += "{" + m.matcher + "}"
			matchers = append(matchers, m.matcher)
		}
		fmt.Printf("%-56s %g\n", label, scrape.Value(s, m.name, "configmap", matchers...))
	}
}

func show(b *bool) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprint(*b)
}

// waitFor waits for the reconcile of name, skipping others.
func waitFor(reconciled <-chan string, name string) {
	for apiserver.Receive(reconciled, "a reconcile of "+name) != name {
	}
}

// save writes the scrape into SCRAPES_DIR, when it is set.
func save(s string) {
	dir := os.Getenv("SCRAPES_DIR")
	if dir == "" {
		return
	}
	path := filepath.Join(dir, "listing-09-05-go-1.txt")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		apiserver.Fail("writing %s: %v", path, err)
	}
}

// entry is one log call: its level, message, error and key/value pairs
// (those the logger was given with WithValues first).
type entry struct {
	level, msg string
	err        error
	values     []any
}

// varies are the keys whose values differ from run to run.
var varies = map[string]bool{"namespace": true, "reconcileID": true, "stacktrace": true, "ConfigMap": true}

// width is the page's: a value too long for its column goes under its key.
const width = 80

func (e entry) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s: %s\n", e.level, e.msg)
	field := func(key, value string) {
		if line := fmt.Sprintf("    %-16s %s", key, value); len(line) <= width {
			b.WriteString(line + "\n")
			return
		}
		// Under the key, split between words where one line is not enough.
		fmt.Fprintf(&b, "    %s\n", key)
		line := ""
		for _, word := range strings.Fields(value) {
			if line != "" && 6+len(line)+1+len(word) > width {
				fmt.Fprintf(&b, "      %s\n", line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += word
		}
		fmt.Fprintf(&b, "      %s\n", line)
	}
	if e.err != nil {
		field("(error)", e.err.Error())
	}
	for i := 0; i+1 < len(e.values); i += 2 {
		key, value := fmt.Sprint(e.values[i]), fmt.Sprint(e.values[i+1])
		if varies[key] {
			value = "(left out)"
		} else if value == "" {
			value = `""`
		}
		field(key, value)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (e entry) value(key string) any {
	for i := 0; i+1 < len(e.values); i += 2 {
		if e.values[i] == key {
			return e.values[i+1]
		}
	}
	return nil
}

// capture is a logr.LogSink that keeps every entry logged at the default
// verbosity, and signals each one on changed.
type capture struct {
	mu      *sync.Mutex
	entries *[]entry
	changed chan struct{}
	values  []any
}

func newCapture() *capture {
	return &capture{mu: &sync.Mutex{}, entries: &[]entry{}, changed: make(chan struct{}, 1)}
}

func (c *capture) add(e entry) {
	c.mu.Lock()
	*c.entries = append(*c.entries, e)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// about returns the entries whose name is name (and whose message is msg,
// unless msg is empty), in the order they were logged.
func (c *capture) about(name, msg string) []entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []entry
	for _, e := range *c.entries {
		if e.value("name") == name && (msg == "" || e.msg == msg) {
			out = append(out, e)
		}
	}
	return out
}

func (c *capture) Init(logr.RuntimeInfo)        {}
func (c *capture) Enabled(level int) bool       { return level == 0 }
func (c *capture) WithName(string) logr.LogSink { return c }
func (c *capture) Info(_ int, msg string, kv ...any) {
	c.add(entry{level: "info", msg: msg, values: append(append([]any{}, c.values...), kv...)})
}
func (c *capture) Error(err error, msg string, kv ...any) {
	c.add(entry{level: "error", msg: msg, err: err, values: append(append([]any{}, c.values...), kv...)})
}
func (c *capture) WithValues(kv ...any) logr.LogSink {
	d := *c
	d.values = append(append([]any{}, c.values...), kv...)
	return &d
}
