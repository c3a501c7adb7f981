package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// A mutant is one function broken one way.
type mutant struct {
	kind   string // remove, undefer, branch, double, handoff
	expect string // the report that must catch it: stall, panic or double
	file   string // the file's path (a handoff's is the receiver's)
	src    []byte // the file, broken
	where  string // file:line of the Done it breaks, module-relative
}

// mutantScore is the mutation score, gathered module by module: per kind
// of mutant and report expected, how many were made and caught; every
// mutant missed; every hand-out that had nothing to break.
type mutantScore struct {
	scores    map[string]*score
	missed    []string
	unmutated []string
	fixes     fixChecks
}

type score struct{ made, caught int }

func (s *mutantScore) add(m *module, results map[*packages.Package]*result) error {
	if s.scores == nil {
		s.scores = map[string]*score{}
	}
	for _, p := range m.loaded {
		r := results[p]
		dones := newPackageDones(p)
		// The unbroken code's reports: a fix any of them suggests is
		// applied and checked as a mutant's is.
		checked := map[string]bool{}
		for _, rep := range r.reports {
			if checked[rep.path] {
				continue
			}
			checked[rep.path] = true
			src, err := os.ReadFile(rep.path)
			if err != nil {
				return err
			}
			s.fixes.check(p, rep.path, src, "the unbroken "+m.path+"@"+m.version+" "+filepath.Base(rep.path))
		}
		for _, h := range r.handouts {
			if h.Reports > 0 {
				continue // already reported: nothing to break
			}
			ms, err := mutate(p, dones, h, m.dir)
			if err != nil {
				return err
			}
			if len(ms) == 0 {
				pos := p.Fset.Position(h.Get)
				rel, _ := filepath.Rel(m.dir, pos.Filename)
				s.unmutated = append(s.unmutated, fmt.Sprintf("%s@%s (%s)\n    %s:%d", m.path, m.version, h.Func, filepath.ToSlash(rel), pos.Line))
			}
			for _, mu := range ms {
				after, err := analyzeMutant(p, mu)
				if err != nil {
					return fmt.Errorf("%s mutant of %s: %v", mu.kind, mu.where, err)
				}
				s.fixes.check(p, mu.file, mu.src, mu.kind+" "+m.path+"@"+m.version+" "+mu.where)
				// The original's reports in the same file, counted the
				// same way: the mutant is caught by one more.
				var same []report
				for _, rep := range r.reports {
					if rep.path == mu.file {
						same = append(same, rep)
					}
				}
				before := countKinds(same)
				k := mu.kind + " (" + mu.expect + ")"
				if s.scores[k] == nil {
					s.scores[k] = &score{}
				}
				s.scores[k].made++
				if after[mu.expect] > before[mu.expect] {
					s.scores[k].caught++
				} else {
					if dir := os.Getenv("CORPUS_DUMP_MISSED"); dir != "" {
						os.WriteFile(filepath.Join(dir, mu.kind+"-"+filepath.Base(mu.file)), mu.src, 0o644)
					}
					s.missed = append(s.missed, fmt.Sprintf("%s %s@%s\n    %s", k, m.path, m.version, mu.where))
				}
			}
		}
	}
	return nil
}

func (s *mutantScore) print() {
	kinds := make([]string, 0, len(s.scores))
	for k := range s.scores {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Printf("%-18s %7s %7s\n", "mutant", "made", "caught")
	for _, k := range kinds {
		fmt.Printf("%-18s %7d %7d\n", k, s.scores[k].made, s.scores[k].caught)
	}
	sort.Strings(s.missed)
	fmt.Printf("\n%d missed:\n", len(s.missed))
	for _, l := range s.missed {
		fmt.Println("  " + l)
	}
	fmt.Printf("\n%d mutants carried a suggested fix; applied, analyzed again, %d made the code worse\n", s.fixes.applied, len(s.fixes.worse))
	for _, l := range s.fixes.worse {
		fmt.Println("  " + l)
	}
	sort.Strings(s.unmutated)
	fmt.Printf("\n%d hand-outs with no Done to break, in their function or at a receiver\n(they return the item, or a helper or another goroutine releases it):\n", len(s.unmutated))
	for _, l := range s.unmutated {
		fmt.Println("  " + l)
	}
}

// countKinds counts reports by their first word: stall (with forget,
// which is a stall too), panic and double.
func countKinds(reports []report) map[string]int {
	n := map[string]int{}
	for _, r := range reports {
		switch {
		case strings.HasPrefix(r.message, "stall:"), strings.HasPrefix(r.message, "forget:"):
			n["stall"]++
		case strings.HasPrefix(r.message, "panic:"):
			n["panic"]++
		case strings.HasPrefix(r.message, "double:"):
			n["double"]++
		}
	}
	return n
}

// mutate breaks the function that holds h in each way it can:
//
//   - remove: every Done statement in it removed (stall);
//   - undefer: a deferred Done made a call at the end of the function,
//     before a final return or after the last statement (panic, or stall
//     where a path leaves before it);
//   - branch: a Done moved into the next if's then-branch (stall);
//   - double: a second Done of the item, where the function has one: a
//     call right after a deferred Done, or a deferred Done right after
//     the shutdown check where the function calls Done itself (double);
//   - handoff: where the function hands the item on (sends or stores it),
//     each Done elsewhere in the package on the same queue, of a value
//     received, ranged over or read by index, removed (stall, at the
//     receiver).
//
// Done statements are those of a block, as written: not those of a case
// or select clause's list.
func mutate(p *packages.Package, dones *packageDones, h workqueuedone.Handout, dir string) ([]mutant, error) {
	file := fileOf(p, h.Get)
	if file == nil {
		return nil, nil
	}
	fn, body := enclosingFunc(file, h.Get)
	if fn == nil || body == nil {
		return nil, nil
	}
	fm, err := newFileMutator(p, file, dir)
	if err != nil {
		return nil, err
	}
	var out []mutant
	// Each statement that calls Done, and the block it is a statement of.
	ast.Inspect(body, func(n ast.Node) bool {
		block, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		for i, s := range block.List {
			call, deferred := doneCall(p.TypesInfo, s)
			if call == nil {
				continue
			}
			text := fm.text(s)
			out = append(out, fm.mutant("remove", "stall", s, edit{fm.off(s.Pos()), fm.off(s.End()), ""}))
			if deferred && block == body && len(body.List) > 0 {
				last := body.List[len(body.List)-1]
				callText := fm.text(call)
				expect := "panic"
				if exitsEarly(body, s.End(), last, shutdownCheck(body, h.Get)) {
					expect = "stall"
				}
				at := fm.off(last.Pos())
				if _, isReturn := last.(*ast.ReturnStmt); !isReturn {
					at = fm.off(last.End())
					callText = "\n" + callText
				} else {
					callText += "\n"
				}
				// Where no path leaves early, only a panic can skip the
				// call, and only a call can panic: with none in between,
				// the mutant is correct code, not a bug to catch.
				if expect == "panic" && !callsBetween(p.TypesInfo, body, s.End(), last.End()) {
					continue
				}
				if last != s {
					out = append(out, fm.mutant("undefer", expect, s,
						edit{fm.off(s.Pos()), fm.off(s.End()), ""}, edit{at, at, callText}))
				}
			}
			for _, next := range block.List[i+1:] {
				if ifs, ok := next.(*ast.IfStmt); ok {
					at := fm.off(ifs.Body.Lbrace) + 1
					out = append(out, fm.mutant("branch", "stall", s,
						edit{fm.off(s.Pos()), fm.off(s.End()), ""}, edit{at, at, "\n" + text}))
					break
				}
			}
		}
		return true
	})
	out = append(out, doubles(p, fm, body, h)...)
	handoffs, err := handoffs(p, dones, fn, body, h, dir)
	if err != nil {
		return nil, err
	}
	return append(out, handoffs...), nil
}

// callsBetween reports whether body, between from and to, calls anything
// that can panic: any call but a conversion, a builtin that cannot, a
// method of the queue packages, or a mutex's Lock and Unlock (the
// analyzer's panic: kind reads calls the same way).
func callsBetween(info *types.Info, body *ast.BlockStmt, from, to token.Pos) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if found || !ok || call.Pos() < from || call.End() > to {
			return !found
		}
		if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
			return true // a conversion
		}
		if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
			if b, ok := info.Uses[id].(*types.Builtin); ok {
				switch b.Name() {
				case "len", "cap", "append", "copy", "delete", "min", "max", "new", "clear", "complex", "real", "imag", "print", "println":
					return true
				}
			}
		}
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
			if fn, ok := info.Uses[sel.Sel].(*types.Func); ok && fn.Pkg() != nil {
				switch path := fn.Pkg().Path(); {
				case path == "k8s.io/client-go/util/workqueue", path == "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue":
					return true
				case path == "sync" && (fn.Name() == "Lock" || fn.Name() == "Unlock" || fn.Name() == "RLock" || fn.Name() == "RUnlock"):
					return true
				}
			}
		}
		found = true
		return false
	})
	return found
}

// doubles makes the double mutants of the function body holds h in: for
// each deferred Done, the same call made again right after it; for a Done
// called without defer, the same call deferred right after the shutdown
// check (once for the function), or, where there is no such check or the
// call's variables are not there yet, the call made again right after
// itself. Done statements in nested function literals are left alone: a
// literal's Done may be the release of another item.
func doubles(p *packages.Package, fm *fileMutator, body *ast.BlockStmt, h workqueuedone.Handout) []mutant {
	var out []mutant
	check := shutdownCheck(body, h.Get)
	deferredAfterCheck := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BlockStmt:
			for _, s := range n.List {
				call, deferred := doneCall(p.TypesInfo, s)
				if call == nil {
					continue
				}
				after := edit{fm.off(s.End()), fm.off(s.End()), "\n" + fm.indent(s) + fm.text(call)}
				switch {
				case deferred:
					out = append(out, fm.mutant("double", "double", s, after))
				case check != nil && inScopeAt(p.TypesInfo, call, check.End()):
					if !deferredAfterCheck {
						at := fm.off(check.End())
						out = append(out, fm.mutant("double", "double", s, edit{at, at, "\n" + fm.indent(check) + "defer " + fm.text(call)}))
						deferredAfterCheck = true
					}
				default:
					out = append(out, fm.mutant("double", "double", s, after))
				}
			}
		}
		return true
	})
	return out
}

// inScopeAt reports whether every local variable call uses is declared
// before pos, in a scope that holds pos: whether a copy of call at pos
// still type-checks.
func inScopeAt(info *types.Info, call *ast.CallExpr, pos token.Pos) bool {
	ok := true
	ast.Inspect(call, func(n ast.Node) bool {
		id, isIdent := n.(*ast.Ident)
		if !isIdent || !ok {
			return ok
		}
		v, isVar := info.Uses[id].(*types.Var)
		if !isVar || v.IsField() || v.Parent() == nil || v.Parent() == v.Pkg().Scope() {
			return true
		}
		if v.Pos() >= pos || !v.Parent().Contains(pos) {
			ok = false
		}
		return ok
	})
	return ok
}

// handoffs makes the handoff mutants of h: where the function fn hands
// the item on, each receiver's Done on the same queue, outside fn, removed.
func handoffs(p *packages.Package, dones *packageDones, fn ast.Node, body *ast.BlockStmt, h workqueuedone.Handout, dir string) ([]mutant, error) {
	queue, item := getOf(p.TypesInfo, body, h.Get)
	if queue == nil || item == nil || !handsOn(p.TypesInfo, body, item) {
		return nil, nil
	}
	var out []mutant
	for _, d := range dones.dones {
		if d.queue != queue || !dones.received[d.item] || (fn.Pos() <= d.stmt.Pos() && d.stmt.End() <= fn.End()) {
			continue
		}
		fm, err := newFileMutator(p, d.file, dir)
		if err != nil {
			return nil, err
		}
		out = append(out, fm.mutant("handoff", "stall", d.stmt, edit{fm.off(d.stmt.Pos()), fm.off(d.stmt.End()), ""}))
	}
	return out, nil
}

// getOf is the queue a Get at pos in body is called on (the field or
// variable its selector names) and the variable the item is assigned to;
// nil for a wrapper's hand-out, or an item not put in a variable.
func getOf(info *types.Info, body *ast.BlockStmt, pos token.Pos) (queue, item *types.Var) {
	ast.Inspect(body, func(n ast.Node) bool {
		assign, ok := n.(*ast.AssignStmt)
		if !ok || queue != nil {
			return queue == nil
		}
		for _, r := range assign.Rhs {
			call, ok := ast.Unparen(r).(*ast.CallExpr)
			if !ok || call.Pos() != pos {
				continue
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			if id, ok := assign.Lhs[0].(*ast.Ident); ok {
				item = varOf(info, id)
			}
			queue = queueVar(info, sel.X)
			return false
		}
		return true
	})
	return queue, item
}

// queueVar is the field or variable a queue expression names: c.queue's
// field queue, or the variable q.
func queueVar(info *types.Info, e ast.Expr) *types.Var {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := info.Uses[e].(*types.Var)
		return v
	case *ast.SelectorExpr:
		if s := info.Selections[e]; s != nil && s.Kind() == types.FieldVal {
			v, _ := s.Obj().(*types.Var)
			return v
		}
		v, _ := info.Uses[e.Sel].(*types.Var) // a package's variable
		return v
	}
	return nil
}

func varOf(info *types.Info, id *ast.Ident) *types.Var {
	if v, ok := info.Defs[id].(*types.Var); ok {
		return v
	}
	v, _ := info.Uses[id].(*types.Var)
	return v
}

// handsOn reports whether body sends item on a channel or stores it in a
// map, slice or field (in a nested literal too: a goroutine may send it).
func handsOn(info *types.Info, body *ast.BlockStmt, item *types.Var) bool {
	mentions := func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && info.Uses[id] == item {
				found = true
			}
			return !found
		})
		return found
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SendStmt:
			found = found || mentions(n.Value)
		case *ast.AssignStmt:
			if len(n.Lhs) != len(n.Rhs) {
				break
			}
			for i, l := range n.Lhs {
				switch ast.Unparen(l).(type) {
				case *ast.IndexExpr, *ast.SelectorExpr, *ast.StarExpr:
					found = found || mentions(n.Rhs[i])
				case *ast.Ident:
					// s = append(s, item)
					if call, ok := ast.Unparen(n.Rhs[i]).(*ast.CallExpr); ok {
						if b, ok := info.Uses[identOf(call.Fun)].(*types.Builtin); ok && b.Name() == "append" {
							found = found || mentions(call)
						}
					}
				}
			}
		}
		return !found
	})
	return found
}

func identOf(e ast.Expr) *ast.Ident {
	id, _ := ast.Unparen(e).(*ast.Ident)
	return id
}

// packageDones is what the handoff mutants need to know of a package: its
// Done statements, in any statement list, and the variables that hold a
// value received from a channel, ranged over, or read by index.
type packageDones struct {
	dones    []doneStmt
	received map[*types.Var]bool
}

// A doneStmt is a statement that calls Done on a queue of the two packages.
type doneStmt struct {
	stmt  ast.Stmt
	file  *ast.File
	queue *types.Var // the field or variable the queue is reached through
	item  *types.Var // the variable Done is called on, if it is one
}

func newPackageDones(p *packages.Package) *packageDones {
	info := p.TypesInfo
	pd := &packageDones{received: map[*types.Var]bool{}}
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			var list []ast.Stmt
			switch n := n.(type) {
			case *ast.BlockStmt:
				list = n.List
			case *ast.CaseClause:
				list = n.Body
			case *ast.CommClause:
				list = n.Body
			case *ast.AssignStmt:
				// v := <-ch, v, ok := <-ch, v := m[k], v := s[i]
				if len(n.Rhs) == 1 {
					switch r := ast.Unparen(n.Rhs[0]).(type) {
					case *ast.UnaryExpr:
						if r.Op == token.ARROW {
							pd.receive(info, n.Lhs[0])
						}
					case *ast.IndexExpr:
						pd.receive(info, n.Lhs[0])
					}
				}
			case *ast.RangeStmt:
				if t := info.TypeOf(n.X); t != nil {
					switch t.Underlying().(type) {
					case *types.Chan:
						pd.receive(info, n.Key)
					case *types.Map, *types.Slice, *types.Array, *types.Pointer:
						pd.receive(info, n.Value)
						if _, isMap := t.Underlying().(*types.Map); isMap {
							pd.receive(info, n.Key)
						}
					}
				}
			}
			for _, s := range list {
				call, _ := doneCall(info, s)
				if call == nil || len(call.Args) != 1 {
					continue
				}
				d := doneStmt{stmt: s, file: f, queue: queueVar(info, call.Fun.(*ast.SelectorExpr).X)}
				if id := identOf(call.Args[0]); id != nil {
					d.item, _ = info.Uses[id].(*types.Var)
				}
				if d.queue != nil && d.item != nil {
					pd.dones = append(pd.dones, d)
				}
			}
			return true
		})
	}
	return pd
}

func (pd *packageDones) receive(info *types.Info, e ast.Expr) {
	if id := identOf(e); id != nil && id.Name != "_" {
		if v := varOf(info, id); v != nil {
			pd.received[v] = true
		}
	}
}

// doneCall returns the Done call s makes, as a statement or deferred.
func doneCall(info *types.Info, s ast.Stmt) (*ast.CallExpr, bool) {
	var call *ast.CallExpr
	deferred := false
	switch s := s.(type) {
	case *ast.ExprStmt:
		call, _ = s.X.(*ast.CallExpr)
	case *ast.DeferStmt:
		call, deferred = s.Call, true
	}
	if call == nil {
		return nil, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Done" {
		return nil, false
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return nil, false
	}
	switch fn.Pkg().Path() {
	case "k8s.io/client-go/util/workqueue", "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue":
		return call, deferred
	}
	return nil, false
}

// shutdownCheck is the first if statement after the Get in body that tests
// the Get's last result, the queue's shutdown (nothing was handed out on
// its exits).
func shutdownCheck(body *ast.BlockStmt, get token.Pos) ast.Node {
	name := ""
	for _, s := range body.List {
		if assign, ok := s.(*ast.AssignStmt); ok && s.Pos() <= get && get < s.End() {
			if id, ok := assign.Lhs[len(assign.Lhs)-1].(*ast.Ident); ok {
				name = id.Name
			}
			continue
		}
		ifs, ok := s.(*ast.IfStmt)
		if name == "" || !ok || s.Pos() < get {
			continue
		}
		cond := ifs.Cond
		if u, ok := cond.(*ast.UnaryExpr); ok && u.Op == token.NOT {
			cond = u.X
		}
		if id, ok := cond.(*ast.Ident); ok && id.Name == name {
			return ifs
		}
		return nil
	}
	return nil
}

// exitsEarly reports whether body leaves (return, continue, break or
// goto, outside nested function literals and the shutdown check) between
// after and last.
func exitsEarly(body *ast.BlockStmt, after token.Pos, last ast.Stmt, check ast.Node) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if check != nil && n == check {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt, *ast.BranchStmt:
			if n.Pos() > after && n != ast.Node(last) {
				found = true
			}
		}
		return !found
	})
	return found
}

// A fileMutator makes mutants of one file: its source, and edits of it.
type fileMutator struct {
	tf   *token.File
	src  []byte
	fset *token.FileSet
	rel  string // module-relative, with slashes
}

// An edit replaces the bytes from from to to with text.
type edit struct {
	from, to int
	text     string
}

func newFileMutator(p *packages.Package, file *ast.File, dir string) (*fileMutator, error) {
	tf := p.Fset.File(file.Pos())
	src, err := os.ReadFile(tf.Name())
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(dir, tf.Name())
	return &fileMutator{tf: tf, src: src, fset: p.Fset, rel: filepath.ToSlash(rel)}, nil
}

func (fm *fileMutator) off(pos token.Pos) int { return fm.tf.Offset(pos) }

func (fm *fileMutator) text(n ast.Node) string {
	return string(fm.src[fm.off(n.Pos()):fm.off(n.End())])
}

// indent is the white space n's line starts with, so that a statement
// inserted beside n reads as the function's own.
func (fm *fileMutator) indent(n ast.Node) string {
	start := fm.off(fm.tf.LineStart(fm.tf.Line(n.Pos())))
	line := fm.src[start:fm.off(n.Pos())]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}

// mutant is the file with edits made, which break the Done statement at.
func (fm *fileMutator) mutant(kind, expect string, at ast.Node, edits ...edit) mutant {
	out := append([]byte(nil), fm.src...)
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	for _, e := range edits {
		out = append(out[:e.from], append([]byte(e.text), out[e.to:]...)...)
	}
	where := fmt.Sprintf("%s:%d", fm.rel, fm.fset.Position(at.Pos()).Line)
	return mutant{kind: kind, expect: expect, file: fm.tf.Name(), src: out, where: where}
}

// analyzeMutant type-checks p with one file replaced by the mutant (the
// imports come from the original's export data, so nothing is reloaded)
// and counts the reports in that file by kind.
func analyzeMutant(p *packages.Package, mu mutant) (map[string]int, error) {
	counts, _, _, err := analyzeSource(p, mu.file, mu.src)
	return counts, err
}

// analyzeSource is analyzeMutant for any source of one file of p: it also
// returns the reports in that file, and the file set they are in.
func analyzeSource(p *packages.Package, file string, src []byte) (map[string]int, []analysis.Diagnostic, *token.FileSet, error) {
	mu := mutant{file: file, src: src}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.CompiledGoFiles {
		var src any
		if name == mu.file {
			src = mu.src
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, nil, err
		}
		files = append(files, f)
	}
	imports := map[string]*types.Package{}
	for _, imp := range p.Types.Imports() {
		imports[imp.Path()] = imp
	}
	info := &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Instances:    map[*ast.Ident]types.Instance{},
		Scopes:       map[ast.Node]*types.Scope{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		FileVersions: map[*ast.File]string{},
	}
	var hard []string
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if pkg, ok := imports[path]; ok {
				return pkg, nil
			}
			return nil, fmt.Errorf("%s is not imported by the original", path)
		}),
		Sizes: p.TypesSizes,
		Error: func(err error) {
			// A removed Done can leave a variable unused: a soft error,
			// and the types are still complete.
			if te, ok := err.(types.Error); !ok || !te.Soft {
				hard = append(hard, err.Error())
			}
		},
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	tpkg, _ := conf.Check(p.PkgPath, fset, files, info)
	if len(hard) > 0 {
		return nil, nil, nil, fmt.Errorf("the mutant does not type-check: %s", strings.Join(hard, "; "))
	}
	mp := &packages.Package{
		ID: p.ID, Name: p.Name, PkgPath: p.PkgPath, Fset: fset,
		GoFiles: p.GoFiles, CompiledGoFiles: p.CompiledGoFiles,
		Syntax: files, Types: tpkg, TypesInfo: info, TypesSizes: p.TypesSizes,
		Module: p.Module, Imports: map[string]*packages.Package{},
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{workqueuedone.Analyzer}, []*packages.Package{mp}, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	var reports []report
	var diags []analysis.Diagnostic
	for act := range graph.All() {
		if act.Analyzer != workqueuedone.Analyzer || act.Package != mp {
			continue
		}
		if act.Err != nil {
			return nil, nil, nil, act.Err
		}
		for _, d := range act.Diagnostics {
			if fset.Position(d.Pos).Filename == mu.file {
				reports = append(reports, report{message: d.Message})
				diags = append(diags, d)
			}
		}
	}
	return countKinds(reports), diags, fset, nil
}

// fixChecks counts the suggested fixes applied to mutants, and lists any
// that made the code worse.
type fixChecks struct {
	applied int
	worse   []string
}

// checkFixes applies every fix suggested in one file of p (an identical
// edit once), analyzes the result again, and records whether it builds,
// adds no double:, and leaves none of the reports it was meant to end.
func (fc *fixChecks) check(p *packages.Package, file string, src []byte, where string) {
	counts, diags, fset, err := analyzeSource(p, file, src)
	if err != nil {
		return // a mutant that does not type-check is not this check's business
	}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	var meant []string
	for _, d := range diags {
		for _, f := range d.SuggestedFixes {
			for _, e := range f.TextEdits {
				tf := fset.File(e.Pos)
				ed := edit{tf.Offset(e.Pos), tf.Offset(e.End), string(e.NewText)}
				if !slices.Contains(edits, ed) {
					edits = append(edits, ed)
				}
			}
			meant = append(meant, handoutRE.FindString(d.Message))
		}
	}
	if len(edits) == 0 {
		return
	}
	fc.applied++
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	out := append([]byte(nil), src...)
	for _, e := range edits {
		out = append(out[:e.from], append([]byte(e.text), out[e.to:]...)...)
	}
	after, diags2, _, err := analyzeSource(p, file, out)
	switch {
	case err != nil:
		fc.worse = append(fc.worse, fmt.Sprintf("%s: the fixed code does not build: %v", where, err))
		return
	case after["double"] > counts["double"]:
		fc.worse = append(fc.worse, fmt.Sprintf("%s: the fix adds a double: report", where))
	}
	for _, d := range diags2 {
		if strings.HasPrefix(d.Message, "stall:") || strings.HasPrefix(d.Message, "forget:") {
			if slices.Contains(meant, handoutRE.FindString(d.Message)) {
				fc.worse = append(fc.worse, fmt.Sprintf("%s: the fix leaves %s", where, d.Message))
			}
		}
	}
}

// handoutRE finds the hand-out a stall: or forget: report is about.
var handoutRE = regexp.MustCompile(`\S+\(\) on line \d+ hand(s|ed) out \S+`)

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
