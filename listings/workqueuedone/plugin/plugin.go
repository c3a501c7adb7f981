// Package plugin registers workqueuedone with golangci-lint as a module
// plugin named "workqueuedone".
//
// golangci-lint builds module plugins into its own binary: list this
// package in a .custom-gcl.yml and run golangci-lint custom, or add a blank
// import of it to golangci-lint's cmd/golangci-lint/plugins.go and build
// that (golangci-lint's "manual way"). Then enable it in .golangci.yml:
//
//	linters:
//	  enable:
//	    - workqueuedone
//	  settings:
//	    custom:
//	      workqueuedone:
//	        type: module
//	        settings:
//	          panic: true   # the analyzer's -panic
//	          tests: false  # -tests
//	          strict: false # -strict
//
// Each setting is the analyzer's flag of the same name, with its default
// when left out; a setting the plugin does not know is an error that names
// it. golangci-lint's //nolint:workqueuedone works as for any linter;
// the analyzer's own //workqueuedone:accept does too, and is also seen by
// go vet and the standalone command.
package plugin

import (
	"fmt"
	"strconv"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

func init() {
	register.Plugin("workqueuedone", New)
}

// Settings are the analyzer's flags, as .golangci.yml spells them. A nil
// field leaves the flag at its default.
type Settings struct {
	Panic  *bool `json:"panic"`
	Tests  *bool `json:"tests"`
	Strict *bool `json:"strict"`
}

// New is golangci-lint's constructor: settings is the settings map of
// linters.settings.custom.workqueuedone in .golangci.yml.
func New(settings any) (register.LinterPlugin, error) {
	s, err := register.DecodeSettings[Settings](settings)
	if err != nil {
		return nil, fmt.Errorf("workqueuedone: linters.settings.custom.workqueuedone.settings: %w (it knows panic, tests and strict)", err)
	}
	return &linter{settings: s}, nil
}

type linter struct{ settings Settings }

// BuildAnalyzers sets the analyzer's flags from the settings and returns it.
func (l *linter) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	for name, value := range map[string]*bool{
		"panic":  l.settings.Panic,
		"tests":  l.settings.Tests,
		"strict": l.settings.Strict,
	} {
		if value == nil {
			continue
		}
		if err := workqueuedone.Analyzer.Flags.Set(name, strconv.FormatBool(*value)); err != nil {
			return nil, fmt.Errorf("workqueuedone: setting %s: %w", name, err)
		}
	}
	return []*analysis.Analyzer{workqueuedone.Analyzer}, nil
}

// GetLoadMode asks golangci-lint for type information: the analyzer reads
// types and facts, not syntax alone.
func (l *linter) GetLoadMode() string { return register.LoadModeTypesInfo }
