package crawl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Capture targets are the operator's list a fromTargets crawl starts from,
// per organization. These are operator commands (`ledgerctl targets …`):
// they ask no permission, and the organization is always explicit.

// Target is one capture target.
type Target = ledger.Target

// Targets holds the capture-target operations; it needs only the database.
type Targets struct {
	Store TargetStore
}

// ErrNoOrg is returned when a target command names no organization.
var ErrNoOrg = errors.New("an organization is required (--org)")

// checkOrg refuses an organization that cannot be one (OpenFGA's id
// rules, ledger.CheckOrganization) before any statement: a NUL or bytes
// that are not UTF-8 would otherwise reach PostgreSQL as its error.
func checkOrg(org string) error {
	if org == "" {
		return ErrNoOrg
	}
	if err := ledger.CheckOrganization(org); err != nil {
		return badRequest(err.Error())
	}
	return nil
}

// MaxLabelBytes bounds a capture target's label.
const MaxLabelBytes = 200

// CheckLabel refuses a label that is empty, has surrounding spaces, is not
// UTF-8, holds a control character (U+0000 among them) or is longer than
// MaxLabelBytes.
func CheckLabel(l string) error {
	switch {
	case l == "" || strings.TrimSpace(l) != l:
		return badRequest("a label must not be empty or start or end with spaces: " + quoteJoin([]string{l}))
	case !utf8.ValidString(l):
		return badRequest(fmt.Sprintf("a label must be valid UTF-8: %q", l))
	case strings.ContainsFunc(l, unicode.IsControl):
		return badRequest(fmt.Sprintf("a label must not hold a control character: %q", l))
	case len(l) > MaxLabelBytes:
		return badRequest(fmt.Sprintf("a label must be at most %d bytes: %.40q…", MaxLabelBytes, l))
	}
	return nil
}

// AddedTarget is one target AddTargets wrote.
type AddedTarget struct {
	Target
	// Added: the URL is new to the organization; Reenabled: it was there,
	// disabled, and is enabled again. Neither: it was already enabled (it
	// may have gained labels).
	Added     bool `json:"added"`
	Reenabled bool `json:"reenabled"`
}

// AddTargets adds urls to org's capture targets with labels. It is
// all-or-nothing: when any URL is not an absolute http(s) URL, nothing is
// added and the *BadTargetsError names every bad one. URLs are stored
// normalised (the crawl parser); duplicates collapse. A URL org already has
// is enabled again and gains the labels it lacks; its labels are kept.
// Labels must not be empty or carry surrounding spaces (CheckLabel); org
// must be an organization (checkOrg).
func (t *Targets) AddTargets(ctx context.Context, org string, urls, labels []string) ([]AddedTarget, error) {
	if err := checkOrg(org); err != nil {
		return nil, err
	}
	var bad []BadURL
	var norm []string
	seen := map[string]bool{}
	for _, raw := range urls {
		u, err := rules.ParseURL(raw)
		if err != nil {
			reason := err.Error()
			var ue *rules.URLError
			if errors.As(err, &ue) {
				reason = ue.Reason
			}
			bad = append(bad, BadURL{Input: raw, Reason: reason})
			continue
		}
		if !seen[u.Normalized] {
			seen[u.Normalized] = true
			norm = append(norm, u.Normalized)
		}
	}
	if len(bad) > 0 {
		return nil, &BadTargetsError{URLs: bad}
	}
	if len(norm) == 0 {
		return nil, badRequest("no URL to add")
	}
	var ls []string
	seenLabel := map[string]bool{}
	for _, l := range labels {
		if err := CheckLabel(l); err != nil {
			return nil, err
		}
		if !seenLabel[l] {
			seenLabel[l] = true
			ls = append(ls, l)
		}
	}
	rows, err := t.Store.UpsertTargets(ctx, org, norm, ls)
	if err != nil {
		return nil, err
	}
	out := make([]AddedTarget, len(rows))
	for i, r := range rows {
		out[i] = AddedTarget{Target: r.Target, Added: r.Inserted, Reenabled: r.Reenabled}
	}
	return out, nil
}

// ListTargets returns org's targets, enabled or not, in the order they were
// added.
func (t *Targets) ListTargets(ctx context.Context, org string) ([]Target, error) {
	if err := checkOrg(org); err != nil {
		return nil, err
	}
	ts, err := t.Store.ListTargets(ctx, org)
	if ts == nil && err == nil {
		ts = []Target{}
	}
	return ts, err
}

// SetTargetEnabled enables or disables org's target id; another
// organization's target, or none, is ledger.ErrNotFound.
func (t *Targets) SetTargetEnabled(ctx context.Context, org string, id int64, enabled bool) (Target, error) {
	if err := checkOrg(org); err != nil {
		return Target{}, err
	}
	return t.Store.SetTargetEnabled(ctx, org, id, enabled)
}

// RemoveTarget deletes org's target id; another organization's target, or
// none, is ledger.ErrNotFound.
func (t *Targets) RemoveTarget(ctx context.Context, org string, id int64) error {
	if err := checkOrg(org); err != nil {
		return err
	}
	return t.Store.DeleteTarget(ctx, org, id)
}
