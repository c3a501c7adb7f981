package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
)

// In these sources each call report(want) stands for a report at the
// call: want says whether a directive must accept it. A directive that
// must be reported has a comment "problem: reason" or "problem: unused"
// on the line after it (a comment on its own line cannot carry one).
const directivesSrc = `package p

//workqueuedone:accept the item goes to a goroutine that releases it
func wholeFunction() {
	report(true)
	go func() {
		report(true) // in a function literal inside the function
	}()
}

func lines() {
	report(false)
	report(true) //workqueuedone:accept trailing the code it accepts
	//workqueuedone:accept on its own line, for the line below
	report(true)
	report(false)
	//workqueuedone:accept a reason that runs on
	// over a second comment line
	report(true)
	report(true) //workqueuedone:accept // written as nolint writes its reason
	for report(true) { //workqueuedone:accept trailing a block's opening brace
		report(false)
	}
	report(true); report(true) //workqueuedone:accept every report on the line
}

func withoutReason() {
	//workqueuedone:accept
	report(false) // problem: reason
	report(false) //workqueuedone:accept
	// problem: reason
	report(false) //workqueuedone:accept //
	// problem: reason
}

func unused() {
	//workqueuedone:accept a blank line below, so it covers nothing
	// problem: unused

	report(false)
	report(false)
	//workqueuedone:accept left behind after the code was fixed
	// problem: unused
}

// Meant as directives, written wrong: each accepts nothing, and is
// reported, so that it does not sit there looking like one.
func malformedDirectives() {
	//workqueuedone:acceptable is another word
	// problem: malformed
	report(false)
	// workqueuedone:accept has a space after the slashes
	// problem: malformed
	report(false)
	//workqueuedone: accept a space after the colon
	// problem: malformed
	report(false)
	//workqueue-done:accept a dash
	// problem: malformed
	report(false)
	/* workqueuedone:accept in a block comment */ report(false)
	// The workqueuedone analyzer's accept directive, in prose, is no directive.
	report(false)
}

//workqueuedone:accept nothing in the function is reported
// problem: unused
func clean() {}

// redundant has a function directive, but a line directive covers its
// only report, and the narrower one is the one used.
//
//workqueuedone:accept made redundant by the line's own directive
// problem: unused
func redundant() {
	report(true) //workqueuedone:accept the narrower
}

//workqueuedone:accept one reason
//workqueuedone:accept and another, both used
func twoInOneDoc() {
	report(true)
}

func after() {
	report(false) // on no function with a directive
}
`

// A second file of the package: a line number the first file accepts
// says nothing here.
const directivesSrc2 = `package p

func second() {
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(false)
	report(true) //workqueuedone:accept in the second file
}
`

// A test file, skipped as when -tests is off: its directives are not read.
const directivesTestSrc = `package p

//workqueuedone:accept
func TestSkipped() {
	report(false) //workqueuedone:accept not read
}
`

func TestDirectives(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, src := range []struct{ name, text string }{
		{"a.go", directivesSrc},
		{"b.go", directivesSrc2},
		{"a_test.go", directivesTestSrc},
	} {
		f, err := parser.ParseFile(fset, src.name, src.text, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	pass := &analysis.Pass{Fset: fset, Files: files}
	isTest := func(f *ast.File) bool {
		return strings.HasSuffix(fset.File(f.Pos()).Name(), "_test.go")
	}

	d := findDirectives(pass, isTest)

	// Every report goes through accepts, as the analyzer sends them.
	var reports int
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "report" {
				return true
			}
			want, err := strconv.ParseBool(call.Args[0].(*ast.Ident).Name)
			if err != nil {
				t.Fatal(err)
			}
			reports++
			if got := d.accepts(call.Pos()); got != want {
				t.Errorf("%s: accepts = %t, want %t", fset.Position(call.Pos()), got, want)
			}
			return true
		})
	}
	if reports < 30 {
		t.Fatalf("only %d reports found in the sources", reports)
	}

	var got []string
	for _, p := range d.problems() {
		got = append(got, fmt.Sprintf("%s: %s", fset.Position(p.Pos), p.Message))
	}
	var want []string
	for _, f := range files {
		for _, group := range f.Comments {
			for _, c := range group.List {
				kind, ok := strings.CutPrefix(c.Text, "// problem: ")
				if !ok {
					continue
				}
				// The directive is the last one on this line or the one above.
				pos := fset.Position(c.Slash)
				near, text := directivePositionNear(t, fset, f, pos)
				msg := map[string]string{
					"reason":    "directive: //workqueuedone:accept needs a reason after it",
					"unused":    "directive: //workqueuedone:accept silences no report here",
					"malformed": fmt.Sprintf("directive: %q is not a directive, and accepts nothing: write //workqueuedone:accept <reason>, with no space after the slashes", text),
				}[kind]
				want = append(want, fmt.Sprintf("%s: %s", near, msg))
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// directivePositionNear returns the position of the directive on the line
// of pos or the line above, as a diagnostic prints it.
func directivePositionNear(t *testing.T, fset *token.FileSet, f *ast.File, pos token.Position) (token.Position, string) {
	t.Helper()
	for _, line := range []int{pos.Line, pos.Line - 1} {
		for _, group := range f.Comments {
			for _, c := range group.List {
				p := fset.Position(c.Slash)
				if p.Line == line && (strings.HasPrefix(c.Text, acceptPrefix) || malformed(c.Text)) {
					return p, c.Text
				}
			}
		}
	}
	t.Fatalf("%s: no directive on this line or the one above", pos)
	return token.Position{}, ""
}

func TestParseDirective(t *testing.T) {
	for _, test := range []struct {
		text, reason string
		ok           bool
	}{
		{"//workqueuedone:accept the reason", "the reason", true},
		{"//workqueuedone:accept\tthe reason ", "the reason", true},
		{"//workqueuedone:accept // the reason", "the reason", true},
		{"//workqueuedone:accept", "", true},
		{"//workqueuedone:accept   ", "", true},
		{"//workqueuedone:accept //", "", true},
		{"//workqueuedone:acceptable", "", false},
		{"// workqueuedone:accept the reason", "", false},
		{"/*workqueuedone:accept the reason*/", "", false},
		{"//nolint:workqueuedone // the reason", "", false},
	} {
		if test.ok == malformed(test.text) && test.ok {
			t.Errorf("malformed(%q) = true for a directive", test.text)
		}
		reason, ok := parseDirective(test.text)
		if reason != test.reason || ok != test.ok {
			t.Errorf("parseDirective(%q) = %q, %t; want %q, %t", test.text, reason, ok, test.reason, test.ok)
		}
	}
}
