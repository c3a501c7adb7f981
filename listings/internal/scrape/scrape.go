// Package scrape reads values out of a Prometheus text exposition, waits
// for a scrape that shows a condition, and prints how two scrapes of one
// controller compare, for listing 9-4's twin. The Rust listing does the
// same in its own file; both print only what holds on every run (which
// gauges grew), never the values, which depend on timing.
package scrape

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"forget-is-not-delete/listings/internal/apiserver"
)

// Value is the sum of the samples of metric whose labels include
// controller="<controller>" and every one of matchers (such as
// `result="success"`); 0 when there is none.
func Value(scrape, metric, controller string, matchers ...string) float64 {
	var sum float64
	for _, line := range strings.Split(scrape, "\n") {
		rest, ok := strings.CutPrefix(line, metric+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok || !hasLabel(labels, `controller="`+controller+`"`) {
			continue
		}
		all := true
		for _, m := range matchers {
			all = all && hasLabel(labels, m)
		}
		if v, err := strconv.ParseFloat(strings.Fields(value)[0], 64); all && err == nil {
			sum += v
		}
	}
	return sum
}

// ByLabel is, for each value of label among the samples of metric whose
// labels include controller="<controller>", the sample's value.
func ByLabel(scrape, metric, controller, label string) map[string]float64 {
	values := map[string]float64{}
	for _, line := range strings.Split(scrape, "\n") {
		rest, ok := strings.CutPrefix(line, metric+"{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok || !hasLabel(labels, `controller="`+controller+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(labels, ",") {
			if quoted, ok := strings.CutPrefix(l, label+"="); ok {
				values[strings.Trim(quoted, `"`)] = v
			}
		}
	}
	return values
}

func hasLabel(labels, label string) bool {
	for _, l := range strings.Split(labels, ",") {
		if l == label {
			return true
		}
	}
	return false
}

// Until scrapes with get every 100ms until cond holds, for at most
// apiserver.Bound, and returns that scrape.
func Until(get func() string, cond func(string) bool, what string) string {
	deadline := time.Now().Add(apiserver.Bound)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if s := get(); s != "" && cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			apiserver.Fail("scraped /metrics for %s without seeing %s", apiserver.Bound, what)
		}
		<-tick.C
	}
}

// Compare prints, for the metrics the chapter discusses, how the second
// scrape compares with the first.
func Compare(first, second, controller string) {
	fmt.Printf("GET /metrics twice while a reconcile has not returned (controller=%q):\n", controller)
	fmt.Printf("%-52s %s\n", "metric", "second scrape")
	for _, m := range []string{"workqueue_longest_running_processor_seconds", "workqueue_unfinished_work_seconds"} {
		a, b := Value(first, m, controller), Value(second, m, controller)
		verdict := "the same"
		if b > a {
			verdict = "higher"
		} else if b < a {
			verdict = "lower"
		}
		fmt.Printf("%-52s %s\n", m, verdict)
	}
	for _, m := range []struct{ name, matcher string }{
		{"controller_runtime_reconcile_total", `result="success"`},
		{"controller_runtime_active_workers", ""},
		{"workqueue_depth", ""},
	} {
		var matchers []string
		label := m.name
		if m.matcher != "" {
			matchers = append(matchers, m.matcher)
			label += "{" + m.matcher + "}"
		}
		fmt.Printf("%-52s %g, as in the first\n", label, Value(second, m.name, controller, matchers...))
		if Value(first, m.name, controller, matchers...) != Value(second, m.name, controller, matchers...) {
			apiserver.Fail("%s changed between the scrapes", label)
		}
	}
}
