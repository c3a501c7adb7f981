package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/token"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// acceptPrefix begins a directive. Like //go: and //nolint: directives it
// has no space after the slashes.
const acceptPrefix = "//workqueuedone:accept"

// directives are the //workqueuedone:accept comments of one package.
//
// A directive is how a team accepts a report it has read:
//
//	//workqueuedone:accept <reason>
//
// written with no space after the slashes, as //go: and //nolint:
// directives are (// workqueuedone:accept is prose). It covers the
// reports at
//
//   - its own line, when it follows code there (a trailing comment);
//   - the line directly below, when it stands on a line of its own, or
//     below the comment lines that continue it (a blank line between
//     leaves it covering nothing);
//   - any position in a function, function literals included, when it is
//     in the function's doc comment.
//
// The reason is the text after the directive, and may be written as
// golangci-lint's //nolint:name // reason writes it. A directive without
// a reason covers nothing, so that it is no quicker a way out than
// fixing the code; it is reported instead. A directive that covered no
// report is reported too, so that one left behind when the code was
// fixed does not stay to hide the next stall there.
//
// When a report is covered both by a line's directive and by its
// function's, only the line's directive counts as used, so a function
// directive made redundant by line directives is reported.
type directives struct {
	fset *token.FileSet

	// lines holds the directives with a reason that cover a line.
	lines map[fileLine][]*directive

	// funcs holds, for each file, the functions whose doc comment holds a
	// directive with a reason, in the order of their positions. Function
	// declarations do not nest, so at most one covers a position.
	funcs map[*token.File][]funcDirectives

	// all holds every directive, in the order of the files and comments,
	// for problems.
	all []*directive
}

// A directive is one //workqueuedone:accept comment.
type directive struct {
	comment   *ast.Comment
	reason    string // "" when it has none
	used      bool   // it covered a report
	malformed bool   // meant as a directive, but not one (it covers nothing)
}

// A fileLine is a line of a file, as token.File.Line counts it (not
// adjusted by //line comments, so a report and a directive in one parsed
// file always agree).
type fileLine struct {
	file *token.File
	line int
}

// funcDirectives are the directives in the doc comment of the function
// declaration that spans [pos, end).
type funcDirectives struct {
	pos, end token.Pos
	dirs     []*directive
}

// findDirectives collects the directives in the package's files. A file
// for which skip(file) is true (a _test.go file when -tests is off) is
// not read.
func findDirectives(pass *analysis.Pass, skip func(*ast.File) bool) *directives {
	d := &directives{
		fset:  pass.Fset,
		lines: map[fileLine][]*directive{},
		funcs: map[*token.File][]funcDirectives{},
	}
	for _, file := range pass.Files {
		if skip != nil && skip(file) {
			continue
		}
		d.addFile(file)
	}
	return d
}

// addFile collects the directives of one file.
func (d *directives) addFile(file *ast.File) {
	tf := d.fset.File(file.Pos())
	if tf == nil {
		return
	}

	// The directives, by the comment group they are in. Most files have
	// none, and then nothing else is done for them.
	type found struct {
		group *ast.CommentGroup
		dir   *directive
	}
	var dirs []found
	for _, group := range file.Comments {
		for _, c := range group.List {
			if reason, ok := parseDirective(c.Text); ok {
				dirs = append(dirs, found{group, &directive{comment: c, reason: reason}})
			} else if malformed(c.Text) {
				d.all = append(d.all, &directive{comment: c, malformed: true})
			}
		}
	}
	if len(dirs) == 0 {
		return
	}

	docOf := map[*ast.CommentGroup]*ast.FuncDecl{}
	for _, decl := range file.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok && fd.Doc != nil {
			docOf[fd.Doc] = fd
		}
	}

	// A directive trails code when a token comes before it on its line.
	// Every token begins or ends some node, so the lines on which a node
	// begins or ends are the lines with code. codeOn holds the lines of
	// the directives only.
	codeOn := map[int]bool{}
	for _, f := range dirs {
		codeOn[tf.Line(f.dir.comment.Slash)] = false
	}
	markLine := func(p token.Pos) {
		if tf.Base() <= int(p) && int(p) <= tf.Base()+tf.Size() {
			line := tf.Line(p)
			if code, ok := codeOn[line]; ok && !code {
				codeOn[line] = true
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n.(type) {
		case nil, *ast.CommentGroup, *ast.Comment:
			return false
		}
		markLine(n.Pos())
		markLine(n.End() - 1)
		return true
	})

	byFunc := map[*ast.FuncDecl]int{} // index in d.funcs[tf]
	for _, f := range dirs {
		d.all = append(d.all, f.dir)
		if f.dir.reason == "" {
			continue // reported by problems; covers nothing
		}
		if fd := docOf[f.group]; fd != nil {
			i, ok := byFunc[fd]
			if !ok {
				i = len(d.funcs[tf])
				byFunc[fd] = i
				d.funcs[tf] = append(d.funcs[tf], funcDirectives{pos: fd.Pos(), end: fd.End()})
			}
			d.funcs[tf][i].dirs = append(d.funcs[tf][i].dirs, f.dir)
			continue
		}
		line := tf.Line(f.dir.comment.Slash)
		if !codeOn[line] {
			line = tf.Line(f.group.End()) + 1
		}
		key := fileLine{tf, line}
		d.lines[key] = append(d.lines[key], f.dir)
	}
	// Declarations come in order of position, and so do their comments:
	// d.funcs[tf] is sorted already.
}

// parseDirective reports whether text is a //workqueuedone:accept comment,
// and returns its reason ("" when it has none). A reason may start with
// "//", as in golangci-lint's //nolint:name // reason.
func parseDirective(text string) (reason string, ok bool) {
	rest, ok := strings.CutPrefix(text, acceptPrefix)
	if !ok {
		return "", false
	}
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false // //workqueuedone:acceptance, say: some other word
	}
	rest = strings.TrimSpace(rest)
	rest = strings.TrimSpace(strings.TrimPrefix(rest, "//"))
	return rest, true
}

// malformedRE is a comment meant as a directive: the analyzer's name, a
// colon and a word, however spaced or spelled (// workqueuedone:accept,
// //workqueuedone: accept, //workqueue-done:accept, //workqueuedone:acept).
var malformedRE = regexp.MustCompile(`(?i)^//\s*workqueue[-_ ]?done\s*:\s*\w`)

// malformed reports whether a comment that is not a directive was meant
// as one: it would silently cover nothing.
func malformed(text string) bool {
	_, ok := parseDirective(text)
	return !ok && malformedRE.MatchString(text)
}

// accepts reports whether a directive covers a report at pos, and marks
// that directive used.
func (d *directives) accepts(pos token.Pos) bool {
	tf := d.fset.File(pos)
	if tf == nil {
		return false
	}
	// A line's directives first: they are the narrower.
	if dirs := d.lines[fileLine{tf, tf.Line(pos)}]; len(dirs) > 0 {
		for _, dir := range dirs {
			dir.used = true
		}
		return true
	}
	fds := d.funcs[tf]
	// The last function that starts at or before pos is the only one that
	// can hold it.
	i, _ := slices.BinarySearchFunc(fds, pos, func(fd funcDirectives, p token.Pos) int {
		if fd.pos <= p {
			return -1
		}
		return +1
	})
	if i > 0 && pos < fds[i-1].end {
		for _, dir := range fds[i-1].dirs {
			dir.used = true
		}
		return true
	}
	return false
}

// problems returns the diagnostics for directives without a reason and for
// directives that silenced nothing; call it after every report of the
// package has gone through accepts.
func (d *directives) problems() []analysis.Diagnostic {
	var out []analysis.Diagnostic
	for _, dir := range d.all {
		var msg string
		switch {
		case dir.malformed:
			msg = fmt.Sprintf("directive: %q is not a directive, and accepts nothing: write %s <reason>, with no space after the slashes", dir.comment.Text, acceptPrefix)
		case dir.reason == "":
			msg = "directive: " + acceptPrefix + " needs a reason after it"
		case !dir.used:
			msg = "directive: " + acceptPrefix + " silences no report here"
		default:
			continue
		}
		out = append(out, analysis.Diagnostic{Pos: dir.comment.Slash, End: dir.comment.End(), Message: msg})
	}
	return out
}
