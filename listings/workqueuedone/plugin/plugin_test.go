package plugin

import (
	"strings"
	"testing"

	"github.com/golangci/plugin-module-register/register"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// The settings reach the analyzer's flags; one left out keeps its default.
func TestSettingsSetTheFlags(t *testing.T) {
	newPlugin, err := register.GetPlugin("workqueuedone")
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlugin(map[string]any{"panic": false, "strict": true})
	if err != nil {
		t.Fatal(err)
	}
	analyzers, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatal(err)
	}
	if len(analyzers) != 1 || analyzers[0] != workqueuedone.Analyzer {
		t.Fatalf("BuildAnalyzers() = %v, want workqueuedone's analyzer alone", analyzers)
	}
	flags := workqueuedone.Analyzer.Flags
	t.Cleanup(func() {
		for _, name := range []string{"panic", "tests", "strict"} {
			f := flags.Lookup(name)
			_ = f.Value.Set(f.DefValue)
		}
	})
	for name, want := range map[string]string{"panic": "false", "tests": "false", "strict": "true"} {
		if got := flags.Lookup(name).Value.String(); got != want {
			t.Errorf("-%s = %s after the settings, want %s", name, got, want)
		}
	}
	if p.GetLoadMode() != register.LoadModeTypesInfo {
		t.Errorf("GetLoadMode() = %q, want %q", p.GetLoadMode(), register.LoadModeTypesInfo)
	}
}

// A setting the plugin does not know is an error that names it, and no
// settings at all is fine.
func TestUnknownSettingIsNamed(t *testing.T) {
	_, err := New(map[string]any{"pnic": false})
	if err == nil || !strings.Contains(err.Error(), `unknown field "pnic"`) {
		t.Errorf("New with a misspelt setting: %v; want an error naming \"pnic\"", err)
	}
	if _, err := New(nil); err != nil {
		t.Errorf("New with no settings: %v", err)
	}
}
