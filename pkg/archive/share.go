package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// MaxShareDuration caps how long one share lasts: 90 days. A share is
// evidence handed to someone outside the organization; a longer need is a
// new share when this one ends, and the audit trail then shows both.
const MaxShareDuration = 90 * 24 * time.Hour

// ParseShareDuration reads how long a share lasts: whole numbers of days,
// hours, minutes and seconds, largest first, each at most once ("72h",
// "90m", "1h30m", "7d", "7d12h", "3600s"). It must be positive and at most
// max. The error is the reason alone; it never repeats the value.
func ParseShareDuration(s string, max time.Duration) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("is required: how long the share lasts, e.g. 72h or 7d (at most %s)", FormatDays(max))
	}
	if s[0] == '-' {
		return 0, errors.New("must be positive")
	}
	form := errors.New("is not a duration: write whole days, hours, minutes or seconds, like 72h, 90m, 1h30m or 7d")
	tooLong := fmt.Errorf("is longer than the maximum of %s", FormatDays(max))
	units := []struct {
		name byte
		size time.Duration
	}{{'d', 24 * time.Hour}, {'h', time.Hour}, {'m', time.Minute}, {'s', time.Second}}
	var d time.Duration
	next := 0 // the units before this one are used up
	for rest := s; rest != ""; {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, form
		}
		u := next
		for u < len(units) && units[u].name != rest[i] {
			u++
		}
		if u == len(units) {
			return 0, form
		}
		n, err := strconv.ParseUint(rest[:i], 10, 63)
		if err != nil || n > uint64(max/units[u].size) {
			return 0, tooLong // err is a number beyond int64
		}
		d += time.Duration(n) * units[u].size
		if d > max {
			return 0, tooLong
		}
		next, rest = u+1, rest[i+1:]
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	return d, nil
}

// FormatDays shows a cap in days ("90 days").
func FormatDays(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", d/(24*time.Hour))
	}
	return FormatDuration(d)
}

// FormatDuration shows a share's duration the way it is written: hours,
// minutes and seconds, zero parts left out ("72h", "1h30m", "45s").
func FormatDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}

// ShareRequest is a grant as asked: exactly one of User and Organization
// (nil when not given), and the duration as written.
type ShareRequest struct {
	User         *string
	Organization *string
	Duration     string
}

// Parse checks the request (identity rules for the grantee, see
// ledger.CheckSubject and CheckOrganization; ParseShareDuration for the
// duration) and returns whom it is to and for how long. Every error is a
// *ledger.FieldError naming user, organization or duration.
func (r ShareRequest) Parse(max time.Duration) (ledger.Grantee, time.Duration, error) {
	var g ledger.Grantee
	switch {
	case r.User != nil && r.Organization != nil:
		return g, 0, &ledger.FieldError{Field: "user", Reason: "and organization are both given: a share is to one user or to one organization's members"}
	case r.User != nil:
		if err := ledger.CheckSubject(*r.User); err != nil {
			return g, 0, &ledger.FieldError{Field: "user", Reason: idReason(err)}
		}
		g = ledger.Grantee{Type: ledger.GranteeUser, ID: *r.User}
	case r.Organization != nil:
		if err := ledger.CheckOrganization(*r.Organization); err != nil {
			return g, 0, &ledger.FieldError{Field: "organization", Reason: idReason(err)}
		}
		g = ledger.Grantee{Type: ledger.GranteeOrganization, ID: *r.Organization}
	default:
		return g, 0, &ledger.FieldError{Field: "user", Reason: "is required: whom to share with (or an organization, whose members it is shared with)"}
	}
	d, err := ParseShareDuration(r.Duration, max)
	if err != nil {
		return g, 0, &ledger.FieldError{Field: "duration", Reason: err.Error()}
	}
	return g, d, nil
}

// idReason is why an identity string was refused, without repeating it
// (it may be anything a caller sent).
func idReason(err error) string {
	var ie *ledger.IDError
	if errors.As(err, &ie) {
		return ie.Reason
	}
	return "is not valid"
}

// ShareChecker answers can_share: the archive's owner and the admins of its
// organization may share it and see its shares.
type ShareChecker interface {
	// CanShare is one fully consistent check.
	CanShare(ctx context.Context, subject, archiveID string) (bool, error)
	// CanShareMany answers for every id, in order.
	CanShareMany(ctx context.Context, subject string, archiveIDs []string) ([]bool, error)
	// AdminOf answers whether subject is an admin of each of orgs, in order.
	AdminOf(ctx context.Context, subject string, orgs []string) ([]bool, error)
}

// ShareStore records shares and queues their tuples (see the PostgreSQL
// store's methods of the same names).
type ShareStore interface {
	GrantShare(ctx context.Context, s ledger.NewShare, write, del ledger.OutboxPayload) (ledger.ShareRow, []ledger.ShareRow, error)
	RevokeShare(ctx context.Context, id, by string, at time.Time, del func(ledger.ShareRow) ledger.OutboxPayload) (ledger.ShareRow, bool, error)
	Share(ctx context.Context, id string) (ledger.ShareRow, error)
	Shares(ctx context.Context, archiveID string) ([]ledger.ShareRow, error)
	SharesWithin(ctx context.Context, orgs []string, owner string, cursor *ledger.ShareCursor, limit int) ([]ledger.ShareRow, error)
	ShareOrganizations(ctx context.Context) ([]string, error)
	ArchiveExists(ctx context.Context, id string) (bool, error)
}

// Shares grants, lists and revokes direct shares of archives: the one set
// of functions behind /api/archives/{id}/shares and `ledgerctl share`.
//
// A share is a row of the ledger's shares table (who granted which archive
// to whom, when, for how long, who ended it when) and the OpenFGA tuple
// grantee viewer archive with the non_expired_grant condition, queued in
// the outbox in the same transaction. OpenFGA decides by the condition when
// the share has expired (the current_time of each check); nobody sweeps.
type Shares struct {
	Perms ShareChecker
	Store ShareStore
	// Now is the server's clock: grant_time of a new share, and what
	// "active" means in a list (time.Now when nil). The checks that mint
	// URLs must read the same clock.
	Now func() time.Time
	// MaxDuration caps a share (MaxShareDuration when zero).
	MaxDuration time.Duration
	Log         *slog.Logger

	// standIn is what an absent archive's check asks about instead.
	standIn ledger.StandIn
}

// Status of a share at a moment.
const (
	ShareActive         = "active"
	ShareExpired        = "expired"
	ShareRevoked        = ledger.EndRevoked
	ShareReplaced       = ledger.EndReplaced
	ShareArchiveDeleted = ledger.EndArchiveDeleted
)

// Share is a share as the API and the CLI show it.
type Share struct {
	ID        string `json:"id"`
	ArchiveID string `json:"archiveId"`
	// User or Organization is whom it is to; the other is null.
	User         *string   `json:"user"`
	Organization *string   `json:"organization"`
	GrantedBy    string    `json:"grantedBy"`
	GrantedAt    time.Time `json:"grantedAt"`
	Duration     string    `json:"duration"`
	ExpiresAt    time.Time `json:"expiresAt"`
	// Status is active, expired, revoked, replaced (a newer share to the
	// same grantee) or archive-deleted.
	Status string `json:"status"`
	// RevokedAt and RevokedBy say when and by whom the share was ended
	// before it expired (revoke, replacement, deletion), null otherwise.
	RevokedAt  *time.Time `json:"revokedAt"`
	RevokedBy  *string    `json:"revokedBy"`
	ReplacedBy *string    `json:"replacedBy"`
}

// Active says whether the share lets its grantee view the archive.
func (s Share) Active() bool { return s.Status == ShareActive }

// ShareView shows row as it stands at now.
func ShareView(row ledger.ShareRow, now time.Time) Share {
	s := Share{
		ID: row.ID, ArchiveID: row.ArchiveID, GrantedBy: row.GrantedBy, GrantedAt: row.GrantedAt.UTC(),
		Duration: FormatDuration(row.Duration), ExpiresAt: row.ExpiresAt.UTC(), ReplacedBy: row.ReplacedBy,
	}
	id := row.Grantee.ID
	if row.Grantee.Type == ledger.GranteeOrganization {
		s.Organization = &id
	} else {
		s.User = &id
	}
	switch {
	case row.RevokedAt != nil && row.RevokedAt.Before(row.ExpiresAt):
		at := row.RevokedAt.UTC()
		s.RevokedAt, s.RevokedBy = &at, row.RevokedBy
		s.Status = ShareRevoked
		if row.RevokeReason != nil {
			s.Status = *row.RevokeReason
		}
	case !now.Before(row.ExpiresAt):
		s.Status = ShareExpired
	default:
		s.Status = ShareActive
	}
	return s
}

// ShareList is a list of shares, active and past apart, newest grant first
// in each.
type ShareList struct {
	// ArchiveID is the archive listed, "" for a list across archives.
	ArchiveID string  `json:"archiveId,omitempty"`
	Active    []Share `json:"active"`
	Past      []Share `json:"past"`
	// Truncated says a list across archives stopped at its bound; older
	// shares were not examined.
	Truncated bool `json:"truncated"`
}

func (l *ShareList) add(s Share) {
	if s.Active() {
		l.Active = append(l.Active, s)
	} else {
		l.Past = append(l.Past, s)
	}
}

// Granted is the share a grant recorded, and the shares to the same
// grantee it ended (their tuple is replaced by the new one's).
type Granted struct {
	Share
	Replaced []Share `json:"replaced"`
}

func (s *Shares) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Shares) max() time.Duration {
	if s.MaxDuration > 0 {
		return s.MaxDuration
	}
	return MaxShareDuration
}

func (s *Shares) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Validate checks a grant's request against this service's cap (see
// ShareRequest.Parse).
func (s *Shares) Validate(req ShareRequest) (ledger.Grantee, time.Duration, error) {
	return req.Parse(s.max())
}

// allowed asks can_share; a refusal is ledger.ErrNotFound, like absence.
func (s *Shares) allowed(ctx context.Context, subject, archiveID string) error {
	ok, err := s.Perms.CanShare(ctx, subject, archiveID)
	if err != nil {
		return fmt.Errorf("check can_share: %w", err)
	}
	if !ok {
		s.logger().Info("Denied", "archiveId", archiveID, "relation", "can_share")
		return ledger.ErrNotFound
	}
	return nil
}

// Grant shares archiveID as req asks, on behalf of subject: the request is
// checked first (a *ledger.FieldError, nothing written), then can_share (a
// refusal, or an archive not in the ledger, is ledger.ErrNotFound), then the
// share row and its tuple (grant_time = the server's clock, whole seconds;
// grant_duration = the duration asked) are written in one transaction. A
// share to the same grantee still holding a tuple is replaced.
func (s *Shares) Grant(ctx context.Context, subject, archiveID string, req ShareRequest) (Granted, error) {
	g, d, err := s.Validate(req)
	if err != nil {
		return Granted{}, err
	}
	if err := s.allowed(ctx, subject, archiveID); err != nil {
		return Granted{}, err
	}
	now := s.now().UTC().Truncate(time.Second)
	row, replaced, err := s.Store.GrantShare(ctx, ledger.NewShare{ArchiveID: archiveID, Grantee: g, GrantedBy: subject, GrantedAt: now, Duration: d},
		ledger.OutboxPayload{Writes: []ledger.Tuple{ledger.ShareTuple(archiveID, g, now, d)}},
		ledger.OutboxPayload{Deletes: []ledger.Tuple{ledger.ShareTupleKey(archiveID, g)}})
	if err != nil {
		return Granted{}, err
	}
	s.logger().Info("Share granted", "archiveId", archiveID, "shareId", row.ID, "grantee", g.String(), "duration", FormatDuration(d))
	out := Granted{Share: ShareView(row, now), Replaced: []Share{}}
	for _, r := range replaced {
		out.Replaced = append(out.Replaced, ShareView(r, now))
	}
	return out, nil
}

// List returns every share of archiveID, active and past, if subject may
// share it (ledger.ErrNotFound otherwise, and for an archive not in the
// ledger).
func (s *Shares) List(ctx context.Context, subject, archiveID string) (ShareList, error) {
	// "Not allowed" and "absent" take one path: the ledger is read and
	// can_share asked whatever the other answers. (An archive just deleted
	// can still be allowed by tuples not yet removed.)
	// An absent id is asked about as a stand-in (ledger.StandIn).
	exists, err := s.Store.ArchiveExists(ctx, archiveID)
	if err != nil {
		return ShareList{}, err
	}
	ok, err := s.Perms.CanShare(ctx, subject, s.standIn.For(archiveID, exists))
	if err != nil {
		return ShareList{}, fmt.Errorf("check can_share: %w", err)
	}
	if !ok || !exists {
		s.logger().Info("Denied", "archiveId", archiveID, "relation", "can_share")
		return ShareList{}, ledger.ErrNotFound
	}
	rows, err := s.Store.Shares(ctx, archiveID)
	if err != nil {
		return ShareList{}, err
	}
	now := s.now()
	out := ShareList{ArchiveID: archiveID, Active: []Share{}, Past: []Share{}}
	for _, r := range rows {
		out.add(ShareView(r, now))
	}
	return out, nil
}

// listAllBatch and listAllBudget bound ListAll: shares are read newest
// first in batches, and at most listAllBudget of them are examined.
const (
	listAllBatch  = 200
	listAllBudget = 5000
)

// ListAll returns the shares of every archive subject may share, newest
// grant first, up to limit of them (examining at most 5,000 shares;
// Truncated says the list stopped before the oldest). It reads only the
// shares of archives the ledger recorded for an organization subject
// administers or as subject's own (the two ways to can_share), so other
// tenants' shares, however many, neither cost it work nor fill its budget;
// each archive's can_share is then confirmed. (An archive whose tuples were
// written to OpenFGA by hand, behind the ledger, is not found this way; its
// shares are listed by its id.)
func (s *Shares) ListAll(ctx context.Context, subject string, limit int) (ShareList, error) {
	out := ShareList{Active: []Share{}, Past: []Share{}}
	now := s.now()
	orgs, err := s.administered(ctx, subject)
	if err != nil {
		return ShareList{}, err
	}
	allowed := map[string]bool{}
	var cursor *ledger.ShareCursor
	for scanned := 0; ; {
		n := min(listAllBatch, listAllBudget-scanned)
		rows, err := s.Store.SharesWithin(ctx, orgs, subject, cursor, n)
		if err != nil {
			return ShareList{}, err
		}
		var ask []string
		for _, r := range rows {
			if _, known := allowed[r.ArchiveID]; !known {
				allowed[r.ArchiveID] = false
				ask = append(ask, r.ArchiveID)
			}
		}
		if len(ask) > 0 {
			ok, err := s.Perms.CanShareMany(ctx, subject, ask)
			if err != nil {
				return ShareList{}, fmt.Errorf("batch check can_share: %w", err)
			}
			for i, id := range ask {
				allowed[id] = ok[i]
			}
		}
		for i, r := range rows {
			scanned++
			if !allowed[r.ArchiveID] {
				continue
			}
			out.add(ShareView(r, now))
			if len(out.Active)+len(out.Past) == limit {
				// More rows follow in this batch, or may after a full one.
				out.Truncated = i < len(rows)-1 || len(rows) == n
				return out, nil
			}
		}
		if len(rows) < n {
			return out, nil
		}
		if scanned >= listAllBudget {
			out.Truncated = true
			return out, nil
		}
		last := rows[len(rows)-1]
		cursor = &ledger.ShareCursor{GrantedAt: last.GrantedAt, ID: last.ID}
	}
}

// administered is which of the ledger's organizations subject is an admin
// of.
func (s *Shares) administered(ctx context.Context, subject string) ([]string, error) {
	all, err := s.Store.ShareOrganizations(ctx)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	ok, err := s.Perms.AdminOf(ctx, subject, all)
	if err != nil {
		return nil, fmt.Errorf("batch check admin: %w", err)
	}
	var out []string
	for i, o := range all {
		if ok[i] {
			out = append(out, o)
		}
	}
	return out, nil
}

// Revoke ends share shareID on behalf of subject and queues the delete of
// its tuple; the share must be of archiveID when that is not "" (the API's
// path). An unknown share, another archive's, or a caller who may not share
// its archive is ledger.ErrNotFound. A share already ended is returned as it
// is, with changed false.
func (s *Shares) Revoke(ctx context.Context, subject, archiveID, shareID string) (Share, bool, error) {
	row, err := s.Store.Share(ctx, shareID)
	if err != nil {
		return Share{}, false, err
	}
	if archiveID != "" && row.ArchiveID != archiveID {
		return Share{}, false, ledger.ErrNotFound
	}
	if err := s.allowed(ctx, subject, row.ArchiveID); err != nil {
		return Share{}, false, err
	}
	now := s.now().UTC()
	row, changed, err := s.Store.RevokeShare(ctx, shareID, subject, now, func(r ledger.ShareRow) ledger.OutboxPayload {
		return ledger.OutboxPayload{Deletes: []ledger.Tuple{ledger.ShareTupleKey(r.ArchiveID, r.Grantee)}}
	})
	if err != nil {
		return Share{}, false, err
	}
	if changed {
		s.logger().Info("Share revoked", "archiveId", row.ArchiveID, "shareId", row.ID)
	}
	return ShareView(row, now), changed, nil
}
