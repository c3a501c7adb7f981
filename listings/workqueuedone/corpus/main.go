// Command corpus runs workqueuedone over real controllers that nobody
// here wrote, at pinned versions from the Go module proxy, and prints per
// module how many functions and function literals hand out a work-queue
// item, how many of them the analyzer reports, and every report with its
// file and line.
//
//	go run . -table       the corpus table and every report
//	go run . -mutants     break every function that releases its item and
//	                      count how many broken versions are caught
//	go run . -cost        what the analyzer costs a CI job: go vet with and
//	                      without it, cold and warm, and the command alone
//	go run . -cost -golangci-lint BIN -golangci-config FILE
//	                      and golangci-lint with and without the plugin,
//	                      BIN being golangci-lint built with it and FILE
//	                      the config that enables it (chapter 10's)
//	go run . -imports     write imports.go (the packages, for go mod tidy)
//
// With no module named, the corpus is the book's (var corpus), loaded in
// one build from this directory's go.mod. With -modules FILE or
// module@version arguments, each module named is fetched from the module
// proxy and loaded as its own root, with its own go.mod, replaces and
// go.sum, as its team's CI sees it (load.go).
//
// With CORPUS_DUMP_MISSED=DIR in the environment, -mutants also writes
// each missed mutant's file into DIR, to analyze by hand.
//
// Only packages whose non-test files import client-go's workqueue or
// controller-runtime's priorityqueue are loaded: a hand-out needs one of
// those types. Test files are not read.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

const usage = `usage: go run . [-table] [-mutants] [-cost] [-imports]
                [-golangci-lint BIN -golangci-config FILE]
                [-modules FILE] [-work DIR] [module@version ...]

With no -modules and no module@version, the modules are the book's corpus,
at the versions go.mod pins. Otherwise each module named is fetched with
go mod download and loaded as its own root, from a scratch copy; a module
that does not load is named on stderr and the exit status is 1.

`

func main() {
	if len(os.Args) > 1 && os.Args[1] == measureChildArg {
		os.Exit(measureChild(os.Args[2:]))
	}
	table := flag.Bool("table", false, "print the corpus table and every report")
	mutants := flag.Bool("mutants", false, "print the mutation score")
	cost := flag.Bool("cost", false, "measure go vet with and without the analyzer, and the command alone")
	imports := flag.Bool("imports", false, "write imports.go (the book's corpus only)")
	modulesFile := flag.String("modules", "", "read the modules from `FILE`: one module@version a line, optionally\nfollowed by the folder to read; # starts a comment")
	golangciLint := flag.String("golangci-lint", "", "with -cost, also measure `BIN`, golangci-lint built with the plugin")
	golangciConfig := flag.String("golangci-config", "", "the golangci-lint config `FILE` that enables workqueuedone, for -golangci-lint")
	work := flag.String("work", "", "copy the modules into `DIR` and keep them (default: a temporary\nfolder, removed at exit)")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage)
		flag.PrintDefaults()
	}
	flag.Parse()
	opts := options{table: *table, mutants: *mutants, cost: *cost, imports: *imports, work: *work,
		golangci: golangciRun{bin: *golangciLint, config: *golangciConfig}}
	if (opts.golangci.bin == "") != (opts.golangci.config == "") || (opts.golangci.bin != "" && !opts.cost) {
		fmt.Fprintln(os.Stderr, "corpus: -golangci-lint BIN and -golangci-config FILE go together, with -cost")
		os.Exit(2)
	}
	if err := run(opts, *modulesFile, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
}

// options is what to print, and where -modules copies go.
type options struct {
	table, mutants, cost, imports bool
	work                          string
	golangci                      golangciRun // measured with -cost when its bin is set
}

func run(opts options, modulesFile string, args []string) error {
	specs, err := moduleSpecs(modulesFile, args)
	if err != nil {
		return err
	}
	if opts.imports {
		if len(specs) > 0 {
			return fmt.Errorf("-imports writes the book's corpus's imports.go, and takes no modules")
		}
		mods, err := corpusModules()
		if err != nil {
			return err
		}
		return writeImports(mods)
	}
	var out outputs
	if len(specs) == 0 {
		mods, err := corpusModules()
		if err != nil {
			return err
		}
		if err := loadTogether(mods); err != nil {
			return err
		}
		for _, m := range mods {
			if err := out.add(m, opts); err != nil {
				return err
			}
		}
		out.print(opts)
		return nil
	}

	work, cleanup, err := workDir(opts.work)
	if err != nil {
		return err
	}
	defer cleanup()
	var failed []string
	for _, s := range specs {
		m, err := loadAlone(s, work)
		if err == nil {
			err = out.add(m, opts)
		}
		if err != nil {
			// Named at once, and the rest still run: one module that does
			// not load hides nothing about the others, but fails the run.
			fmt.Fprintf(os.Stderr, "corpus: %v\n", err)
			failed = append(failed, s.String())
			continue
		}
		m.loaded = nil // one module's syntax and types in memory at a time
	}
	out.print(opts)
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d modules did not load, so their rows are missing: %s",
			len(failed), len(specs), strings.Join(failed, ", "))
	}
	return nil
}

// outputs gathers what each module adds to the table, the mutation score
// and the cost, to print once every module has been through.
type outputs struct {
	table   tableOutput
	mutants mutantScore
	cost    string // the first module's, measured while it is loaded
}

func (o *outputs) add(m *module, opts options) error {
	results, err := analyze(m.loaded, m.dir)
	if err != nil {
		return fmt.Errorf("%s@%s: %v", m.path, m.version, err)
	}
	if opts.table {
		o.table.add(m, results)
	}
	if opts.mutants {
		if err := o.mutants.add(m, results); err != nil {
			return fmt.Errorf("%s@%s: %v", m.path, m.version, err)
		}
	}
	if opts.cost && o.cost == "" {
		o.cost, err = measureCost(m, opts.golangci)
		if err != nil {
			return fmt.Errorf("%s@%s: %v", m.path, m.version, err)
		}
	}
	return nil
}

func (o *outputs) print(opts options) {
	if opts.table {
		o.table.print()
	}
	if opts.mutants {
		o.mutants.print()
	}
	if opts.cost {
		fmt.Print(o.cost)
	}
}
