package authz

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// TestSuite is a store-test file in the OpenFGA CLI's format (what `fga
// model test --tests` reads): a model, stored tuples, and tests whose checks
// assert relations.
type TestSuite struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	ModelFile   string      `yaml:"model_file"`
	Model       string      `yaml:"model"`
	Tuples      []TestTuple `yaml:"tuples"`
	Tests       []TestCase  `yaml:"tests"`

	// File and ModelPath name the suite and its model in messages.
	File      string `yaml:"-"`
	ModelPath string `yaml:"-"`
}

// TestTuple is a stored tuple of a suite or of one test.
type TestTuple struct {
	User      string         `yaml:"user"`
	Relation  string         `yaml:"relation"`
	Object    string         `yaml:"object"`
	Condition *TestCondition `yaml:"condition"`
}

// TestCondition is a tuple's condition and its stored context.
type TestCondition struct {
	Name    string         `yaml:"name"`
	Context map[string]any `yaml:"context"`
}

// TestCase is one test: its own tuples (added to the suite's in a fresh
// store) and its checks.
type TestCase struct {
	Name        string      `yaml:"name"`
	Description string      `yaml:"description"`
	Tuples      []TestTuple `yaml:"tuples"`
	Check       []TestCheck `yaml:"check"`
}

// TestCheck asserts, for one user and object, the expected answer of each
// relation, in the order written.
type TestCheck struct {
	User       string         `yaml:"user"`
	Object     string         `yaml:"object"`
	Context    map[string]any `yaml:"context"`
	Assertions Assertions     `yaml:"assertions"`
}

// Assertion is one expected answer.
type Assertion struct {
	Relation string
	Expected bool
}

// Assertions keep the order of the YAML mapping.
type Assertions []Assertion

// UnmarshalYAML reads relation: bool pairs in order.
func (a *Assertions) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: assertions must map relations to true or false", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		var want bool
		if err := n.Content[i+1].Decode(&want); err != nil {
			return fmt.Errorf("line %d: assertion %q must be true or false", n.Content[i+1].Line, n.Content[i].Value)
		}
		*a = append(*a, Assertion{Relation: n.Content[i].Value, Expected: want})
	}
	return nil
}

func (t TestTuple) tuple() Tuple {
	out := Tuple{User: t.User, Relation: t.Relation, Object: t.Object}
	if t.Condition != nil {
		out.Condition = &Condition{Name: t.Condition.Name, Context: jsonable(t.Condition.Context)}
	}
	return out
}

// jsonable turns YAML-decoded values into what a protobuf Struct takes
// (ints become float64; nested maps keep string keys).
func jsonable(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonValue(v)
	}
	return out
}

func jsonValue(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case map[string]any:
		return jsonable(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	}
	return v
}

// ParseTestSuite reads a store-test file named file. readModel loads the
// model_file it names (resolved by the caller, e.g. relative to file).
func ParseTestSuite(data []byte, file string, readModel func(name string) (string, string, error)) (*TestSuite, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // an assertion kind we do not run must not pass silently
	var s TestSuite
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	s.File = file
	switch {
	case s.Model != "" && s.ModelFile != "":
		return nil, fmt.Errorf("%s: give either model or model_file, not both", file)
	case s.ModelFile != "":
		dsl, path, err := readModel(s.ModelFile)
		if err != nil {
			return nil, fmt.Errorf("%s: model_file %s: %w", file, s.ModelFile, err)
		}
		s.Model, s.ModelPath = dsl, path
	case s.Model != "":
		s.ModelPath = file + " (model)"
	default:
		return nil, fmt.Errorf("%s: no model_file or model", file)
	}
	if len(s.Tests) == 0 {
		return nil, fmt.Errorf("%s: no tests", file)
	}
	return &s, nil
}

// CheckResult is the outcome of one assertion.
type CheckResult struct {
	Test     string         `json:"test"`
	User     string         `json:"user"`
	Relation string         `json:"relation"`
	Object   string         `json:"object"`
	Context  map[string]any `json:"context,omitempty"`
	Expected bool           `json:"expected"`
	Got      bool           `json:"got"`
	Error    string         `json:"error,omitempty"`
	Pass     bool           `json:"pass"`
}

// RunTestSuite runs every assertion of s against an in-process OpenFGA on a
// memory datastore: each test gets a fresh store holding the model, the
// suite's tuples and its own. It fails only when the model does not parse
// (a *ModelError naming the line) or OpenFGA cannot start; everything else
// is a failed CheckResult.
func RunTestSuite(ctx context.Context, s *TestSuite) ([]CheckResult, error) {
	if _, err := ParseModel(s.Model); err != nil {
		var me *ModelError
		if errors.As(err, &me) {
			me.File = s.ModelPath
		}
		return nil, err
	}
	c, err := NewMemory(Options{})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var results []CheckResult
	for i, tc := range s.Tests {
		name := tc.Name
		if name == "" {
			name = fmt.Sprintf("test %d", i+1)
		}
		setupErr := setupTest(ctx, c, s, tc, i)
		for _, chk := range tc.Check {
			for _, a := range chk.Assertions {
				r := CheckResult{Test: name, User: chk.User, Relation: a.Relation, Object: chk.Object, Context: chk.Context, Expected: a.Expected}
				if setupErr != nil {
					r.Error = setupErr.Error()
				} else {
					r.Got, err = c.Check(ctx, CheckRequest{User: chk.User, Relation: a.Relation, Object: chk.Object, Context: jsonable(chk.Context)})
					if err != nil {
						r.Error = err.Error()
					}
				}
				r.Pass = r.Error == "" && r.Got == r.Expected
				results = append(results, r)
			}
		}
	}
	return results, nil
}

func setupTest(ctx context.Context, c *Embedded, s *TestSuite, tc TestCase, i int) error {
	if _, err := c.FindOrCreateStore(ctx, fmt.Sprintf("test-%d", i+1)); err != nil {
		return err
	}
	if _, err := c.WriteModel(ctx, s.Model); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	var all []Tuple
	for _, t := range append(append([]TestTuple{}, s.Tuples...), tc.Tuples...) {
		all = append(all, t.tuple())
	}
	const perWrite = 100 // OpenFGA's default limit per Write
	for start := 0; start < len(all); start += perWrite {
		if err := c.Write(ctx, all[start:min(start+perWrite, len(all))], nil); err != nil {
			return fmt.Errorf("tuples: %w", err)
		}
	}
	return nil
}

// Summary counts tests and checks and says whether all passed.
func Summary(results []CheckResult) (tests, checks, failed int) {
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.Test] {
			seen[r.Test] = true
			tests++
		}
		checks++
		if !r.Pass {
			failed++
		}
	}
	return tests, checks, failed
}

// FormatContext renders a check's context for a table cell.
func FormatContext(m map[string]any) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return strings.Join(parts, " ")
}
