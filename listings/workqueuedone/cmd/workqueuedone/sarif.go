package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// SARIF output, for code-scanning dashboards: -sarif=FILE writes the
// reports to FILE as SARIF 2.1.0, one rule a kind of report, and still
// prints them as text and exits as a plain run does (3 when it reports).
// The run itself is the command's own -json run, as a child.

// rules are the kinds of report, each a SARIF rule with its help.
var rules = []struct{ id, short, help string }{
	{"stall", "A work-queue item is handed out and never Done on this path.",
		"Until Done is called on an item, the queue never hands that key out again: every later Add is absorbed and the object is never reconciled. Call Done on every path, best with defer right after the shutdown check."},
	{"forget", "Forget is called where Done was needed.",
		"Forget resets the rate limiter's failure count and leaves the key in the processing set. Call Done as well: Forget is not Done."},
	{"double", "Done is called twice on one item on this path.",
		"If the key was added again while it was processed, each Done queues it, and two workers are handed the same key at once. Call Done once a path."},
	{"panic", "Done is called on every path, but not deferred.",
		"A panic between the hand-out and Done, recovered above, leaves the key held for good. Defer Done after the shutdown check, or move the work into a function that defers it."},
	{"directive", "A //workqueuedone:accept directive is malformed or accepts nothing.",
		"Write //workqueuedone:accept <reason>, with no space after the slashes, on the report's line, the line above, or the function's doc comment; remove one that accepts nothing."},
}

// sarifArgs reports whether args ask for SARIF, and returns the file and
// args without the -sarif flag.
func sarifArgs(args []string) (file string, rest []string, ok bool) {
	for i, arg := range args {
		if arg == "--" || len(arg) < 2 || arg[0] != '-' {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		if name != "sarif" {
			continue
		}
		rest = append(append(rest, args[:i]...), args[i+1:]...)
		if !hasValue {
			if i+1 >= len(args) {
				return "", nil, false
			}
			value = args[i+1]
			rest = append(append([]string{}, args[:i]...), args[i+2:]...)
		}
		return value, rest, true
	}
	return "", nil, false
}

// A jsonDiag is one report as the -json output of a go/analysis driver
// writes it.
type jsonDiag struct {
	Posn    string `json:"posn"`
	Message string `json:"message"`
}

// writeSARIF runs this command with -json and args, writes the SARIF to
// file, prints every report as text on stderr, and returns the status a
// plain run would: 3 when there are reports, 1 on errors, 0 otherwise.
func writeSARIF(file string, args []string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "workqueuedone: %v\n", err)
		return 1
	}
	out, status := runChildOutput(self, append([]string{"-json"}, args...))
	if status != 0 {
		return status
	}
	// {"package": {"workqueuedone": [diagnostics] or {"error": "..."}}}
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal(out, &tree); err != nil {
		fmt.Fprintf(os.Stderr, "workqueuedone: reading the -json output: %v\n", err)
		return 1
	}
	var diags []jsonDiag
	var errs []string
	for pkg, byAnalyzer := range tree {
		raw, ok := byAnalyzer[workqueuedone.Analyzer.Name]
		if !ok {
			continue
		}
		var ds []jsonDiag
		if err := json.Unmarshal(raw, &ds); err != nil {
			var e struct{ Error string }
			if json.Unmarshal(raw, &e) == nil && e.Error != "" {
				errs = append(errs, pkg+": "+e.Error)
				continue
			}
			fmt.Fprintf(os.Stderr, "workqueuedone: reading the -json output for %s: %v\n", pkg, err)
			return 1
		}
		diags = append(diags, ds...)
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		fmt.Fprintln(os.Stderr, strings.Join(errs, "\n"))
		return 1
	}
	sort.Slice(diags, func(i, j int) bool { return diags[i].Posn < diags[j].Posn })
	doc, err := sarifDocument(diags)
	if err != nil {
		fmt.Fprintf(os.Stderr, "workqueuedone: %v\n", err)
		return 1
	}
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "workqueuedone: writing the SARIF: %v\n", err)
		return 1
	}
	for _, d := range diags {
		fmt.Fprintf(os.Stderr, "%s: %s\n", d.Posn, d.Message)
	}
	if len(diags) > 0 {
		return 3
	}
	return 0
}

// sarifDocument is the SARIF 2.1.0 log of diags.
func sarifDocument(diags []jsonDiag) ([]byte, error) {
	type text struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID               string `json:"id"`
		ShortDescription text   `json:"shortDescription"`
		Help             text   `json:"help"`
		HelpURI          string `json:"helpUri"`
	}
	type region struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
	type location struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
			Region region `json:"region"`
		} `json:"physicalLocation"`
	}
	type result struct {
		RuleID    string     `json:"ruleId"`
		Level     string     `json:"level"`
		Message   text       `json:"message"`
		Locations []location `json:"locations"`
	}
	var rs []rule
	for _, r := range rules {
		rs = append(rs, rule{ID: r.id, ShortDescription: text{r.short}, Help: text{r.help}, HelpURI: workqueuedone.Analyzer.URL})
	}
	wd, _ := os.Getwd()
	results := []result{}
	for _, d := range diags {
		kind, _, _ := strings.Cut(d.Message, ":")
		level := "error"
		if kind == "panic" || kind == "directive" {
			level = "warning"
		}
		var loc location
		file, line, col := splitPosn(d.Posn)
		if rel, err := filepath.Rel(wd, file); err == nil && !strings.HasPrefix(rel, "..") {
			file = rel
		}
		loc.PhysicalLocation.ArtifactLocation.URI = filepath.ToSlash(file)
		loc.PhysicalLocation.Region = region{StartLine: line, StartColumn: col}
		results = append(results, result{RuleID: kind, Level: level, Message: text{d.Message}, Locations: []location{loc}})
	}
	doc := map[string]any{
		"version": "2.1.0",
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"runs": []any{map[string]any{
			"tool": map[string]any{"driver": map[string]any{
				"name": workqueuedone.Analyzer.Name, "informationUri": workqueuedone.Analyzer.URL, "rules": rs,
			}},
			"results": results,
		}},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// splitPosn splits file:line:col.
func splitPosn(posn string) (string, int, int) {
	parts := strings.Split(posn, ":")
	if len(parts) < 3 {
		return posn, 1, 0
	}
	line, _ := strconv.Atoi(parts[len(parts)-2])
	col, _ := strconv.Atoi(parts[len(parts)-1])
	return strings.Join(parts[:len(parts)-2], ":"), line, col
}
