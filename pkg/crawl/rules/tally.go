package rules

import (
	"cmp"
	"slices"
)

// MaxSamples is how many sample URLs a decision row keeps.
const MaxSamples = 5

// DecisionRow is one crawl_decisions row of a level: how many distinct URLs
// one rule decided on one hostname (port stripped), with the first
// MaxSamples of them in the order they were seen.
type DecisionRow struct {
	Rule     int      `json:"rule"`
	Action   Action   `json:"action"`
	Hostname string   `json:"hostname"`
	Links    int      `json:"links"`
	Samples  []string `json:"samples"`
}

type tallyKey struct {
	rule     int
	action   Action
	hostname string
}

type tallyRow struct {
	seen    map[string]bool
	samples []string
}

// Tally aggregates the link decisions of one level. The zero value is ready
// to use; a Tally is not safe for concurrent use.
type Tally struct {
	rows map[tallyKey]*tallyRow
}

// Add counts one decided URL. A URL already counted under the same rule,
// action and hostname is not counted again.
func (t *Tally) Add(d Decision, u URL) {
	if t.rows == nil {
		t.rows = make(map[tallyKey]*tallyRow)
	}
	k := tallyKey{rule: d.Rule, action: d.Action, hostname: u.Hostname}
	r := t.rows[k]
	if r == nil {
		r = &tallyRow{seen: make(map[string]bool)}
		t.rows[k] = r
	}
	if r.seen[u.Normalized] {
		return
	}
	r.seen[u.Normalized] = true
	if len(r.samples) < MaxSamples {
		r.samples = append(r.samples, u.Normalized)
	}
}

// AddAll counts the decisions FilterLinks returned.
func (t *Tally) AddAll(ds []LinkDecision) {
	for _, d := range ds {
		t.Add(d.Decision, d.URL)
	}
}

// Rows returns the rows sorted by rule, then action, then hostname.
func (t *Tally) Rows() []DecisionRow {
	out := make([]DecisionRow, 0, len(t.rows))
	for k, r := range t.rows {
		out = append(out, DecisionRow{
			Rule: k.rule, Action: k.action, Hostname: k.hostname,
			Links: len(r.seen), Samples: append([]string(nil), r.samples...),
		})
	}
	slices.SortFunc(out, func(a, b DecisionRow) int {
		return cmp.Or(
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Action, b.Action),
			cmp.Compare(a.Hostname, b.Hostname),
		)
	})
	return out
}
