package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// module is the module path; the tables below name packages relative to it.
const module = "github.com/capture-ledger/ledgerctl"

// A layer is a set of packages with the same rights. Every package of the
// module is in exactly one layer; a package in none fails the test.
type layer struct {
	name string
	pkgs []string
	// stdOnly: the layer's packages may import nothing outside the module
	// but the standard library.
	stdOnly bool
}

// layers, from the outside in (docs/architecture.md, "Layers and import
// arrows", shows the same table).
var layers = []layer{
	{name: "entry", pkgs: []string{"cmd/ledgerctl"}},
	{name: "command tree", pkgs: []string{"pkg/cli"}},
	// One package per command group; one group imports another only where
	// packageArrows says.
	{name: "commands", pkgs: []string{"pkg/cli/archives", "pkg/cli/capture", "pkg/cli/crawl", "pkg/cli/dev", "pkg/cli/doctor",
		"pkg/cli/drain", "pkg/cli/fga", "pkg/cli/hosts", "pkg/cli/migrate", "pkg/cli/reconcile", "pkg/cli/rules", "pkg/cli/search",
		"pkg/cli/serve", "pkg/cli/share", "pkg/cli/version"}},
	{name: "command helpers", pkgs: []string{"pkg/cli/cmdutil"}},
	{name: "wiring", pkgs: []string{"pkg/app", "pkg/health"}},
	{name: "http", pkgs: []string{"pkg/api", "pkg/web"}},
	// What a replay session's origin answers, where archived pages run: it
	// may not import the identity adapter, so no caller's identity is read
	// or held there.
	{name: "replay origin", pkgs: []string{"pkg/replay/viewer"}},
	{name: "use-cases", pkgs: []string{"pkg/archive", "pkg/crawl", "pkg/crawl/runner", "pkg/crawl/politeness", "pkg/replay", "pkg/search", "pkg/outbox", "pkg/visible"}},
	{name: "pure", pkgs: []string{"pkg/crawl/rules", "pkg/manifest", "pkg/wacz", "pkg/i18n", "pkg/pgaddr", "pkg/strictjson"}},
	{name: "centre", pkgs: []string{"pkg/ledger"}, stdOnly: true},
	{name: "adapters", pkgs: []string{"pkg/store/postgres", "pkg/blob", "pkg/authz", "pkg/browserhive", "pkg/windmill", "pkg/capture", "pkg/identity"}},
	{name: "settings", pkgs: []string{"pkg/config"}},
	{name: "tooling", pkgs: []string{"pkg/ui", "pkg/devstack"}},
	{name: "data", pkgs: []string{"fga", "migrations"}},
	{name: "test support", pkgs: []string{"pkg/apptest", "pkg/cli/clitest", "pkg/testenv", "pkg/authz/authztest", "pkg/browserhive/browserhivetest", "pkg/archtest"}},
}

// arrows are the allowed imports, written once: a layer may import its own
// packages only where an arrow names the package, and the layers or single
// packages listed here. Use-cases never import adapters, and adapters never
// import adapters: a use-case declares the port it needs (or the centre
// holds the type), an adapter implements it, and the wiring plugs one into
// the other.
var arrows = map[string][]string{
	"entry": {"command tree", "command helpers"},
	// The root command adds each group's command.
	"command tree": {"commands", "command helpers", "settings"},
	"commands":     {"command helpers", "wiring", "http", "use-cases", "pure", "centre", "adapters", "settings", "tooling", "data"},
	// What every command shares: the factory, streams, exit codes and errors,
	// --as/--org, delivering the outbox, logs, the build's version.
	"command helpers": {"wiring", "use-cases", "pure", "centre", "adapters", "settings", "tooling"},
	"wiring":          {"http", "use-cases", "pure", "centre", "adapters", "settings", "data"},
	// The HTTP layer resolves callers with the identity adapter.
	"http": {"replay origin", "use-cases", "pure", "centre", "pkg/identity"},
	// A replay origin reads with tokens only: no identity adapter.
	"replay origin": {"use-cases", "pure", "centre"},
	// A sub-use-case of crawl reads the crawl types and ports it serves.
	"use-cases": {"pure", "centre"},
	"pure":      {"centre"},
	"centre":    {},
	// An adapter may import the use-case whose port it implements (windmill
	// is a crawl.Dispatcher), never another adapter.
	"adapters":     {"use-cases", "pure", "centre", "settings", "data"},
	"settings":     {},
	"tooling":      {"pure", "centre"},
	"data":         {},
	"test support": {"entry", "command tree", "commands", "command helpers", "wiring", "http", "replay origin", "use-cases", "pure", "centre", "adapters", "settings", "tooling", "data", "test support"},
}

// packageArrows are single allowed imports that no layer arrow covers.
var packageArrows = [][2]string{
	{"pkg/crawl/runner", "pkg/crawl"},
	{"pkg/crawl/politeness", "pkg/crawl"},
	// The list and search page through one permission-filtered engine.
	{"pkg/archive", "pkg/visible"},
	{"pkg/search", "pkg/visible"},
	// Archive reads are bounded by the same kind of gate.
	{"pkg/replay", "pkg/visible"},
	// /readyz and doctor's checks are built beside the adapters they ask.
	{"pkg/app", "pkg/health"},
	// `ledgerctl dev demo` deploys the model, starts a crawl and serves, with
	// those commands' own code and their messages.
	{"pkg/cli/dev", "pkg/cli/crawl"},
	{"pkg/cli/dev", "pkg/cli/fga"},
	{"pkg/cli/dev", "pkg/cli/serve"},
}

// exceptions are wrong-way imports that still exist, each with what will
// remove it. An exception that no longer happens fails the test, so the list
// only shrinks.
type exception struct{ from, to, why string }

var exceptions = []exception{}

// pkgInfo is what the test reads of `go list -deps -json`.
type pkgInfo struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Module     *struct{ Path string }
}

// graph maps each package of the module (relative path) to its non-test
// imports: module packages relative, the others by their full path, with
// std marking standard-library imports.
type graph struct {
	imports map[string][]string
	std     map[string]bool
}

// load runs `go list -deps -json ./...` at the module root.
func load(t *testing.T) graph {
	t.Helper()
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Dir = strings.TrimSpace(string(root))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -json ./...: %v\n%s", err, stderr.String())
	}
	g := graph{imports: map[string][]string{}, std: map[string]bool{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list: %v", err)
		}
		if p.Standard {
			g.std[p.ImportPath] = true
			continue
		}
		rel, ok := relative(p.ImportPath)
		if !ok {
			continue
		}
		var imps []string
		for _, imp := range p.Imports {
			if r, ok := relative(imp); ok {
				imp = r
			}
			imps = append(imps, imp)
		}
		g.imports[rel] = imps
	}
	if len(g.imports) < 10 {
		t.Fatalf("go list found %d packages of %s; expected the whole module", len(g.imports), module)
	}
	return g
}

func relative(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(path, module+"/"); ok {
		return rest, true
	}
	return "", false
}

// check returns one message per import that breaks the tables, per package
// in no layer, and per exception that no longer happens.
func check(g graph, exceptions []exception) []string {
	layerOf := map[string]*layer{}
	for i := range layers {
		for _, p := range layers[i].pkgs {
			layerOf[p] = &layers[i]
		}
	}
	allowed := func(from, to string) bool {
		for _, a := range packageArrows {
			if a[0] == from && a[1] == to {
				return true
			}
		}
		lt := layerOf[to]
		for _, target := range arrows[layerOf[from].name] {
			if target == to || (lt != nil && target == lt.name) {
				return true
			}
		}
		return false
	}
	used := map[[2]string]bool{}
	excepted := func(from, to string) bool {
		for _, e := range exceptions {
			if e.from == from && e.to == to {
				used[[2]string{from, to}] = true
				return true
			}
		}
		return false
	}
	var bad []string
	pkgs := make([]string, 0, len(g.imports))
	for p := range g.imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, from := range pkgs {
		lf := layerOf[from]
		if lf == nil {
			bad = append(bad, fmt.Sprintf("%s is in no layer: add it to layers in pkg/archtest (and to docs/architecture.md)", from))
			continue
		}
		for _, to := range g.imports[from] {
			if g.std[to] {
				continue
			}
			if _, ours := g.imports[to]; !ours {
				if lf.stdOnly {
					bad = append(bad, fmt.Sprintf("%s (%s) imports %s: the %s takes the standard library only", from, lf.name, to, lf.name))
				}
				continue
			}
			if allowed(from, to) || excepted(from, to) {
				continue
			}
			lt := layerOf[to]
			toLayer := "no layer"
			if lt != nil {
				toLayer = lt.name
			}
			bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s): %s may import only %s",
				from, lf.name, to, toLayer, lf.name, strings.Join(arrowTargets(lf.name), ", ")))
		}
	}
	for _, e := range exceptions {
		if !used[[2]string{e.from, e.to}] {
			bad = append(bad, fmt.Sprintf("exception %s → %s no longer happens: delete it from exceptions in pkg/archtest", e.from, e.to))
		}
	}
	return bad
}

func arrowTargets(name string) []string {
	ts := arrows[name]
	if len(ts) == 0 {
		return []string{"nothing of the module"}
	}
	return ts
}

// TestImportDirection fails on any import of the module that no arrow
// allows: a use-case importing an adapter, an adapter importing another,
// the centre importing anything but the standard library.
func TestImportDirection(t *testing.T) {
	t.Parallel()
	g := load(t)
	for _, msg := range check(g, exceptions) {
		t.Error(msg)
	}
}

// TestCheckCatchesWrongArrows runs check on a made-up module, so the test
// above is known to fail when it should.
func TestCheckCatchesWrongArrows(t *testing.T) {
	t.Parallel()
	g := graph{
		imports: map[string][]string{
			"pkg/ledger":         {"fmt", "github.com/google/uuid"},
			"pkg/archive":        {"pkg/ledger", "pkg/store/postgres"},
			"pkg/blob":           {"pkg/ledger", "pkg/authz"},
			"pkg/authz":          {"pkg/ledger", "pkg/config"},
			"pkg/windmill":       {"pkg/crawl"},
			"pkg/crawl":          {"pkg/crawl/rules"},
			"pkg/crawl/rules":    {"pkg/ledger"},
			"pkg/config":         {},
			"pkg/store/postgres": {"pkg/ledger"},
			"pkg/nowhere":        {},
			"pkg/app":            {"pkg/testenv"},
			"pkg/testenv":        {"pkg/app", "pkg/blob"},
			"pkg/api":            {"pkg/replay/viewer", "pkg/identity"},
			"pkg/replay/viewer":  {"pkg/replay", "pkg/identity"},
			"pkg/replay":         {"pkg/ledger"},
			"pkg/identity":       {"pkg/ledger"},
			"pkg/cli/share":      {"pkg/cli/archives", "pkg/cli/cmdutil"},
			"pkg/cli/archives":   {"pkg/cli/cmdutil"},
			"pkg/cli/cmdutil":    {"pkg/cli"},
			"pkg/cli":            {"pkg/cli/share"},
		},
		std: map[string]bool{"fmt": true},
	}
	got := strings.Join(check(g, []exception{{"pkg/outbox", "pkg/store/postgres", "made up"}}), "\n")
	for _, want := range []string{
		"pkg/ledger (centre) imports github.com/google/uuid: the centre takes the standard library only",
		"pkg/archive (use-cases) imports pkg/store/postgres (adapters): use-cases may import only pure, centre",
		"pkg/blob (adapters) imports pkg/authz (adapters)",
		"pkg/app (wiring) imports pkg/testenv (test support)",
		"pkg/nowhere is in no layer",
		"pkg/replay/viewer (replay origin) imports pkg/identity (adapters): replay origin may import only use-cases, pure, centre",
		"exception pkg/outbox → pkg/store/postgres no longer happens",
		"pkg/cli/share (commands) imports pkg/cli/archives (commands)",
		"pkg/cli/cmdutil (command helpers) imports pkg/cli (command tree)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("check missed %q; it said:\n%s", want, got)
		}
	}
	for _, ok := range []string{
		"pkg/authz (adapters) imports pkg/config",
		"pkg/windmill (adapters) imports pkg/crawl",
		"pkg/crawl (use-cases) imports pkg/crawl/rules",
		"pkg/testenv (test support) imports",
		"pkg/api (http) imports",
		"pkg/replay/viewer (replay origin) imports pkg/replay ",
		"pkg/cli (command tree) imports pkg/cli/share",
		"pkg/cli/share (commands) imports pkg/cli/cmdutil",
	} {
		if strings.Contains(got, ok) {
			t.Errorf("check refused an allowed import %q:\n%s", ok, got)
		}
	}
}
