// Listing 7-3, Go twin: a panicking reconciler, with RecoverPanic on and off.
//
// A real controller-runtime controller (one worker, default priority queue
// and rate limiter) reconciles one key, "boom", whose first attempt panics
// with panic("boom") and whose second attempt succeeds. As in listing 1-1
// the queue is wrapped so that each call the controller makes on it after a
// reconcile is printed.
//
//   - RecoverPanic on (the default, when the option is left nil): the
//     controller recovers the panic, turns it into an error and requeues the
//     key rate-limited, like any other error. 5ms later the key comes back.
//   - RecoverPanic off: the controller re-panics. The worker's deferred Done
//     still runs while the panic unwinds, then the panic leaves the worker
//     goroutine, and an unrecovered panic in any goroutine ends a Go
//     process. So this part runs in a child process: the twin starts itself
//     again with LISTING_07_03_CHILD=1, prints the child's stdout, and reads
//     the child's stderr to say how it died.
//
// Run from listings/: go run ./ch07-whole-controller/listing-07-03/twin
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/drive"
	"forget-is-not-delete/listings/internal/trace"
	"forget-is-not-delete/listings/internal/twin"
)

const childEnv = "LISTING_07_03_CHILD"

func main() {
	// Keep stdout for the trace: the controller logs the panic and the
	// error, and the panic handler logs through klog.
	twin.QuietLogs()

	if os.Getenv(childEnv) == "1" {
		recoverOff()
		return
	}

	fmt.Println("RecoverPanic on (the default):")
	recoverOn()

	fmt.Println("\nRecoverPanic off:")
	runChild()
}

// recoverOn runs the controller with RecoverPanic left at its default until
// both attempts have finished and their Done ran, then stops it.
func recoverOn() {
	allDone := make(chan struct{})
	stop := runController("recover-on", nil, 2, allDone)
	drive.Wait(allDone, "timed out waiting for the reconciles")
	stop()
}

// recoverOff is the child: RecoverPanic false. The first attempt's panic
// should end this process; if it does not, say so and exit normally.
func recoverOff() {
	off := false
	allDone := make(chan struct{})
	stop := runController("recover-off", &off, 2, allDone)
	select {
	case <-allDone:
		fmt.Println("the worker survived the panic")
	case <-time.After(10 * time.Second):
		fmt.Println("the child was still alive after 10s")
	}
	stop()
}

// runChild starts this program again as the child, prints the child's
// stdout (its trace) and then what its stderr says about how it ended.
func runChild() {
	// ANCHOR: propagated
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()

	fmt.Print(out.String())
	fmt.Println(howItEnded(runErr, errOut.String()))
	// ANCHOR_END: propagated
}

// howItEnded reads the child's exit status and stderr. A Go program killed
// by an unrecovered panic exits with status 2 and prints "panic: VALUE",
// possibly followed by " [recovered, repanicked]" (the controller recovered
// it, logged it and panicked again with the same value), then the stack of
// the goroutine that panicked: here, the controller's worker.
func howItEnded(runErr error, stderr string) string {
	var exitErr *exec.ExitError
	if !errors.As(runErr, &exitErr) {
		return fmt.Sprintf("the child did not die of a panic (run error: %v)", runErr)
	}
	value, found := "", false
	for _, line := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(line, "panic: "); ok {
			value, _, _ = strings.Cut(rest, " [recovered")
			found = true
			break
		}
	}
	inWorker := strings.Contains(stderr, "processNextWorkItem")
	if exitErr.ExitCode() != 2 || !found || !inWorker {
		first, _, _ := strings.Cut(stderr, "\n")
		return fmt.Sprintf("the child exited with status %d (panic found: %t, in the worker: %t): %s",
			exitErr.ExitCode(), found, inWorker, first)
	}
	return "the panic left the worker: " + value
}

// runController builds and starts a controller named name whose reconciler
// panics on the first attempt of "boom". It closes allDone after stopAfter
// Done calls. The returned stop cancels the controller and waits for Start
// to return.
func runController(name string, recoverPanic *bool, stopAfter int, allDone chan struct{}) (stop func()) {
	attempts := 0 // one key, one worker: no lock needed
	reconciler := reconcile.TypedFunc[string](func(_ context.Context, key string) (reconcile.Result, error) {
		attempts++
		say := func(outcome string) { fmt.Printf("reconcile %q #%d -> %s\n", key, attempts, outcome) }
		if attempts == 1 {
			say("panic")
			panic("boom")
		}
		say("success")
		return reconcile.Result{}, nil
	})

	// Same queue as the default one, wrapped to print the calls. Done runs
	// from the worker's defer, so it is printed even while a panic that
	// RecoverPanic did not stop is unwinding the worker.
	queue := &trace.Queue{
		OnCall: trace.Print,
		OnDone: func(_ string, doneCalls int) {
			if doneCalls == stopAfter {
				close(allDone)
			}
		},
	}
	// ANCHOR: controller
	c, err := controller.NewTypedUnmanaged(name, controller.TypedOptions[string]{
		Reconciler:   reconciler,
		RecoverPanic: recoverPanic, // nil means the default, which is on
		NewQueue:     queue.NewQueue,
	})
	// ANCHOR_END: controller
	if err != nil {
		panic(err)
	}
	if err := drive.Keys(c, "boom"); err != nil {
		panic(err)
	}
	return drive.Start(c)
}
