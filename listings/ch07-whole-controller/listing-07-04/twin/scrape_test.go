// Listing 7-4, Go twin: the same short run on the real controller-runtime
// controller, and what its scrape has that the Rust listing's has not.
//
// A controller named "demo", built with controller.NewTypedUnmanaged and
// default options (the priority queue, one worker), sees "ok" and "fail";
// "fail" fails once and then succeeds, and the twin stops the controller
// from inside that second reconcile, as the listing does. It runs in a
// testing/synctest bubble, so no virtual time passes during a reconcile and
// every duration is zero, as on the listing's paused clock.
//
// Then it renders controller-runtime's registry, metrics.Registry, the way
// the manager's metrics server renders it for a plain GET /metrics (the
// Prometheus text format 0.0.4: controller-runtime does not turn
// OpenMetrics on), reads the Rust listing's scrape from its committed
// output.txt (which the test suite checks against a fresh run of the
// listing; it prints the scrape family by family, and exposition puts the
// text back together), and prints every way in which the two differ,
// computed line by line. The two scrapes differ by nature, so this twin commits its own
// output.txt. Run from listings/:
//
//	go test -c -o /tmp/listing-07-04.test ./ch07-whole-controller/listing-07-04/twin && (cd ch07-whole-controller/listing-07-04/twin && /tmp/listing-07-04.test)
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/prometheus/common/expfmt"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/drive"
	"forget-is-not-delete/listings/internal/twin"
)

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) {
	twin.QuietLogs() // the controller logs the reconcile error
	twin.RunListing(m)
}

func TestScrape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		failed := false
		c, err := controller.NewTypedUnmanaged("demo", controller.TypedOptions[string]{
			Reconciler: reconcile.TypedFunc[string](func(_ context.Context, key string) (reconcile.Result, error) {
				if key == "fail" && !failed {
					failed = true
					return reconcile.Result{}, errors.New("connection refused")
				}
				if key == "fail" {
					cancel() // the retry succeeded: the run is over
				}
				return reconcile.Result{}, nil
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := drive.Keys(c, "ok", "fail"); err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
	})

	// ANCHOR: scrape
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	enc := expfmt.NewEncoder(&text, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	rust, err := os.ReadFile("../output.txt")
	if err != nil {
		t.Fatal(err)
	}
	compare(parse(text.String()), parse(exposition(string(rust))))
	// ANCHOR_END: scrape
}

// family is one metric family of a scrape.
type family struct {
	name, help, typ string
	declared        string   // the name on its # TYPE line
	samples         []sample // in the order written
}

type sample struct {
	name   string
	labels [][2]string // in the order written
	value  string
	bucket int // a histogram bucket's place among its series' buckets
}

// series is a sample's identity: its name and its labels sorted by name.
func (s sample) series() string {
	labels := append([][2]string(nil), s.labels...)
	sort.Slice(labels, func(i, j int) bool { return labels[i][0] < labels[j][0] })
	var parts []string
	for _, l := range labels {
		v := l[1]
		if l[0] == "le" { // buckets are matched by their place; their bounds are compared
			v = "#" + strconv.Itoa(s.bucket)
		}
		parts = append(parts, l[0]+"="+v)
	}
	return s.name + "{" + strings.Join(parts, ",") + "}"
}

type scrape struct {
	families map[string]*family // by the name its samples carry (counters with _total)
	order    []string
	last     string // the last line
}

func parse(text string) scrape {
	s := scrape{families: map[string]*family{}}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	s.last = lines[len(lines)-1]
	var help string
	buckets := map[string]int{}
	for _, line := range lines {
		switch {
		case strings.HasPrefix(line, "# HELP "):
			_, help, _ = strings.Cut(strings.TrimPrefix(line, "# HELP "), " ")
		case strings.HasPrefix(line, "# TYPE "):
			declared, typ, _ := strings.Cut(strings.TrimPrefix(line, "# TYPE "), " ")
			name := declared
			if typ == "counter" && !strings.HasSuffix(name, "_total") {
				name += "_total" // OpenMetrics declares a counter without it
			}
			s.families[name] = &family{name: name, help: help, typ: typ, declared: declared}
			s.order = append(s.order, name)
		case strings.HasPrefix(line, "#"):
		default:
			f := s.families[s.order[len(s.order)-1]]
			sm := parseSample(line)
			if strings.HasSuffix(sm.name, "_bucket") {
				key := sm.series() // with every bucket at #0
				sm.bucket = buckets[key]
				buckets[key]++
			}
			f.samples = append(f.samples, sm)
		}
	}
	return s
}

// exposition is the scrape that the Rust listing prints family by family:
// a family's name and type on a line of their own, its help text on "  # "
// lines, then each sample without the family's name, its value after the
// padding. A line outside a family (# EOF) is the scrape's own.
func exposition(table string) string {
	var text strings.Builder
	var family, typ string
	var help []string
	flush := func() { // the family's # HELP and # TYPE, once its help is read
		if family != "" && help != nil {
			fmt.Fprintf(&text, "# HELP %s %s\n# TYPE %s %s\n",
				family, strings.Join(help, " "), family, typ)
			help = nil
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(table, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "  # "):
			help = append(help, strings.TrimPrefix(line, "  # "))
		case strings.HasPrefix(line, "  "):
			flush()
			// The value is after the last space; the padding before it
			// is the table's.
			body := strings.TrimSpace(line)
			cut := strings.LastIndex(body, " ")
			series, value := strings.TrimRight(body[:cut], " "), body[cut+1:]
			fmt.Fprintf(&text, "%s%s %s\n", family, series, value)
		case strings.HasPrefix(line, "#"):
			flush()
			family = ""
			text.WriteString(line + "\n")
		default:
			flush()
			family, typ, _ = strings.Cut(line, " ")
		}
	}
	flush()
	return text.String()
}

func parseSample(line string) sample {
	head, value, _ := strings.Cut(line, " ")
	name, rest, _ := strings.Cut(head, "{")
	var labels [][2]string
	for _, pair := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
		if k, v, ok := strings.Cut(pair, "="); ok {
			labels = append(labels, [2]string{k, strings.Trim(v, `"`)})
		}
	}
	return sample{name: name, labels: labels, value: value}
}

// tally counts the shared families or lines that differ in one way, and
// keeps the first example: what Go has, and what Rust has.
type tally struct {
	n, of   int
	example [2]string
}

func (t *tally) see(differs bool, inGo, inRust string) {
	t.of++
	if differs {
		if t.n == 0 {
			t.example = [2]string{inGo, inRust}
		}
		t.n++
	}
}

func compare(goScrape, rustScrape scrape) {
	out := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
	out("Go: controller-runtime's registry in the text format 0.0.4")
	out("Rust: listing 7-4's scrape, prometheus-client's OpenMetrics text")
	out("")

	// Families only in one scrape. The Go runtime and process collectors'
	// families are shown as a group: how many there are depends on the Go
	// release and the operating system.
	collectors := map[string]string{
		"go_":      "go_*: the Go runtime collector's, one family per runtime metric",
		"process_": "process_*: the process collector's (CPU, memory, file descriptors, network)",
	}
	only := func(who string, a, b scrape) {
		var names []string
		seen := map[string]bool{}
		for _, name := range a.order {
			if _, ok := b.families[name]; ok {
				continue
			}
			for prefix, group := range collectors {
				if strings.HasPrefix(name, prefix) {
					name = group
				}
			}
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			out("families only in %s: none", who)
			return
		}
		out("families only in %s:", who)
		for _, n := range names {
			out("  %s", n)
		}
	}
	only("Go", goScrape, rustScrape)
	only("Rust", rustScrape, goScrape)

	var shared []string
	for _, name := range goScrape.order {
		if _, ok := rustScrape.families[name]; ok {
			shared = append(shared, name)
		}
	}
	sort.Strings(shared)
	out("families in both:      %d", len(shared))
	out("")

	var help, helpOther, doubled, declared, typ, seriesOnly, values, bounds, spelling, labelOrder, lineOrder tally
	for _, name := range shared {
		g, r := goScrape.families[name], rustScrape.families[name]
		gh, rh := strconv.Quote(g.help), strconv.Quote(r.help)
		help.see(r.help == g.help+".", gh, rh)
		helpOther.see(g.help != r.help && r.help != g.help+".", gh, rh)
		doubled.see(strings.HasSuffix(r.help, ".."), gh, rh)
		declared.see(g.declared != r.declared, "# TYPE "+g.declared, "# TYPE "+r.declared)
		typ.see(g.typ != r.typ, g.typ, r.typ)

		goSamples, rustSamples := map[string]sample{}, map[string]sample{}
		var goOrder, rustOrder []string
		for _, s := range g.samples {
			goSamples[s.series()] = s
			goOrder = append(goOrder, s.series())
		}
		for _, s := range r.samples {
			rustSamples[s.series()] = s
			rustOrder = append(rustOrder, s.series())
		}
		for _, key := range goOrder {
			_, inRust := rustSamples[key]
			seriesOnly.see(!inRust, key, "-")
		}
		for _, key := range rustOrder {
			if _, inGo := goSamples[key]; !inGo {
				seriesOnly.see(true, "-", key)
			}
		}
		for _, key := range goOrder {
			gs, rs := goSamples[key], rustSamples[key]
			if _, ok := rustSamples[key]; !ok {
				continue
			}
			gv, _ := strconv.ParseFloat(gs.value, 64)
			rv, _ := strconv.ParseFloat(rs.value, 64)
			values.see(gv != rv, key+": "+gs.value, key+": "+rs.value)
			// The same number written differently, in the value or in le.
			sp := gs.value != rs.value && gv == rv
			example := [2]string{gs.value, rs.value}
			for _, l := range gs.labels {
				for _, m := range rs.labels {
					if l[0] != "le" || m[0] != "le" {
						continue
					}
					gb, _ := strconv.ParseFloat(l[1], 64)
					rb, _ := strconv.ParseFloat(m[1], 64)
					gl, rl := fmt.Sprintf("le=%q", l[1]), fmt.Sprintf("le=%q", m[1])
					bounds.see(gb != rb, gl, rl)
					if gb == rb && l[1] != m[1] {
						sp = true
						example = [2]string{gl, rl}
					}
				}
			}
			spelling.see(sp, example[0], example[1])
			labelOrder.see(!sameOrder(gs.labels, rs.labels), labelsText(gs), labelsText(rs))
		}
		lineOrder.see(strings.Join(goOrder, "\n") != strings.Join(rustOrder, "\n"),
			g.samples[0].name+" first", r.samples[0].name+" first")
	}
	// A row per way, and under it the first example, Go's and Rust's.
	row := func(what string, t tally, unit string) {
		if t.n == 0 {
			out("%-34s none of %d %s", what+":", t.of, unit)
			return
		}
		out("%-34s %d of %d %s, for example", what+":", t.n, t.of, unit)
		out("  Go:   %s", t.example[0])
		out("  Rust: %s", t.example[1])
	}
	row("series in one scrape only", seriesOnly, "series")
	row("values", values, "samples")
	row("bucket bounds", bounds, "buckets")
	row("metric types", typ, "families")
	row("help: Rust's has a full stop more", help, "families")
	row("help: Rust's ends in \"..\"", doubled, "families")
	row("help: otherwise different", helpOther, "families")
	row("names on # TYPE lines", declared, "families")
	row("the same number written otherwise", spelling, "samples")
	row("label order", labelOrder, "samples")
	row("order of a family's lines", lineOrder, "families")
	out("last line:")
	out("  Go:   %s", goScrape.last)
	out("  Rust: %s", rustScrape.last)
}

func sameOrder(a, b [][2]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i][0] != b[i][0] {
			return false
		}
	}
	return true
}

func labelsText(s sample) string {
	var names []string
	for _, l := range s.labels {
		names = append(names, l[0])
	}
	return "{" + strings.Join(names, ",") + "}"
}
