// Package twin holds the plumbing every Go twin needs and no reader needs
// to see: quiet loggers, a logger that hands on only the controller's
// "Reconciler error" lines, and the TestMain of a twin that is a test.
//
// A twin prints its listing on stdout and nothing else, because the test
// suite compares stdout byte for byte with the listing's committed output.
// Two things would get in the way: the logs of controller-runtime and klog,
// which report every reconcile error and recovered panic, and the lines the
// testing package writes to stdout (=== RUN, PASS).
package twin

import (
	"os"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Stdout is the process's standard output as it was when the program
// started. A twin that is a test writes its listing here: RunListing points
// os.Stdout at stderr, so that only the listing is left on the real stdout.
var Stdout = os.Stdout

// QuietLogs discards controller-runtime's log (the controller logs every
// reconcile error and every recovered panic) and klog's (the panic handler
// logs through it), so that they cannot mix with the listing.
func QuietLogs() {
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
}

// RunListing is the whole body of the TestMain of a twin that is a test
// (it needs testing/synctest's virtual clock, and so a *testing.T). It sends
// the testing package's own output to stderr from here on, runs the tests
// and exits with their status. The listing itself writes to Stdout.
//
// m is the *testing.M TestMain receives; taking only its Run method keeps
// the testing package out of the twins that are programs.
func RunListing(m interface{ Run() int }) {
	os.Stdout = os.Stderr
	os.Exit(m.Run())
}

// ReconcilerErrors is a logger for controller.TypedOptions.LogConstructor
// that calls each with the error of every "Reconciler error" the
// controller logs (the error of a failed reconcile, a recovered panic
// included) and drops everything else.
func ReconcilerErrors(each func(error)) logr.Logger {
	return logr.New(reconcilerErrors{each})
}

type reconcilerErrors struct{ each func(error) }

func (reconcilerErrors) Init(logr.RuntimeInfo)            {}
func (reconcilerErrors) Enabled(int) bool                 { return false }
func (reconcilerErrors) Info(int, string, ...any)         {}
func (s reconcilerErrors) WithValues(...any) logr.LogSink { return s }
func (s reconcilerErrors) WithName(string) logr.LogSink   { return s }
func (s reconcilerErrors) Error(err error, msg string, _ ...any) {
	if msg == "Reconciler error" {
		s.each(err)
	}
}
