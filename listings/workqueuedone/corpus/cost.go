package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// measureCost times the analyzer beside go vet's own analyzers over m's
// packages, already loaded, and says the ratio.
func measureCost(m *module) (string, error) {
	median := func(analyzers []*analysis.Analyzer) (time.Duration, error) {
		var runs []time.Duration
		for range 5 {
			start := time.Now()
			if _, err := checker.Analyze(analyzers, m.loaded, nil); err != nil {
				return 0, err
			}
			runs = append(runs, time.Since(start))
		}
		sort.Slice(runs, func(i, j int) bool { return runs[i] < runs[j] })
		return runs[len(runs)/2], nil
	}
	ours, err := median([]*analysis.Analyzer{workqueuedone.Analyzer})
	if err != nil {
		return "", err
	}
	vet, err := median(vetAnalyzers)
	if err != nil {
		return "", err
	}
	// The first line names what was measured and is compared byte for byte
	// by the xtask; the times below it vary from run to run.
	var b strings.Builder
	fmt.Fprintf(&b, "%d packages of %s@%s, the median of 5 runs each:\n", len(m.loaded), m.path, m.version)
	fmt.Fprintf(&b, "  %-24s %8s\n", "workqueuedone", ours.Round(time.Millisecond))
	fmt.Fprintf(&b, "  %-24s %8s\n", fmt.Sprintf("go vet's %d analyzers", len(vetAnalyzers)), vet.Round(time.Millisecond))
	fmt.Fprintf(&b, "  %-24s %8s\n", "ratio", strconv.FormatFloat(float64(ours)/float64(vet), 'f', 2, 64))
	return b.String(), nil
}
