package workqueuedone_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// testdata is a module of its own that requires the real client-go and
// controller-runtime, so the queues are the real types. Each package is
// one concept; each function in it one shape, right or wrong.
func TestShapes(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), workqueuedone.Analyzer,
		"./loops", "./release", "./limits", "./wrappers", "./handoffs", "./shutdown",
		"./double", "./precise", "./directives", "./testsoff", "./samevalue", "./unlisted", "./panics")
}

func TestSuggestedFix(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), workqueuedone.Analyzer, "./fix", "./fixsafe")
}

// set sets one of the analyzer's flags for the length of a test.
func set(t *testing.T, name, value string) {
	t.Helper()
	old := workqueuedone.Analyzer.Flags.Lookup(name).Value.String()
	if err := workqueuedone.Analyzer.Flags.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { workqueuedone.Analyzer.Flags.Set(name, old) })
}

func TestPanicFlagOff(t *testing.T) {
	set(t, "panic", "false")
	analysistest.Run(t, analysistest.TestData(), workqueuedone.Analyzer, "./nopanic")
}

// With -strict, a hand-off to an end the analyzer cannot see is reported.
func TestStrict(t *testing.T) {
	set(t, "strict", "true")
	analysistest.Run(t, analysistest.TestData(), workqueuedone.Analyzer, "./strict")
}

// With -tests, a test file's stall is reported (testsoff, the same test,
// is silent by default).
func TestTestsFlag(t *testing.T) {
	set(t, "tests", "true")
	analysistest.Run(t, analysistest.TestData(), workqueuedone.Analyzer, "./testson")
}
