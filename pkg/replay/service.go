package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Permissions answers whether a person may view an archive (one fully
// consistent OpenFGA Check).
type Permissions interface {
	CanView(ctx context.Context, subject string, orgs []string, archiveID string) (bool, error)
}

// Catalog finds where an archive's object is.
type Catalog interface {
	ArchiveLocation(ctx context.Context, id string) (bucket, key string, err error)
}

// Objects reads objects and ranges of them from S3, streaming.
type Objects interface {
	Stat(ctx context.Context, bucket, key string) (blob.ObjectInfo, error)
	Open(ctx context.Context, bucket, key string, r *blob.Range) (*blob.Part, error)
}

// DefaultCheckCache is how long a read's answer (may this person view this
// archive, and where is it) is reused by the next reads of the same token
// identity: a viewer makes dozens of range reads to open one page, and
// each would otherwise be a Check and a query. It is also the longest a
// revocation waits before reads stop.
const DefaultCheckCache = 2 * time.Second

// maxCached bounds the answers kept; past it expired ones are dropped, and
// if none are, all are.
const maxCached = 10_000

// Service mints replay tokens and authorizes the reads made with them.
type Service struct {
	Perms   Permissions
	Catalog Catalog
	Objects Objects
	Signer  *Signer
	Log     *slog.Logger
	// CheckCache overrides DefaultCheckCache; negative asks OpenFGA on
	// every read.
	CheckCache time.Duration
	// Now is the clock tokens are minted and checked by (nil: time.Now).
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]cached
	// standIn is what an absent archive's Mint check asks about instead.
	standIn ledger.StandIn
}

type cached struct {
	allowed     bool
	bucket, key string
	until       time.Time
}

// Minted is a token and when it stops working.
type Minted struct {
	Token     string
	ExpiresAt time.Time
}

// Grant is a verified token with the archive's location: what a read may
// open.
type Grant struct {
	Claims
	Bucket, Key string
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Mint checks, with full consistency, that the caller may view archiveID
// and that it is in the ledger, then signs a token for it lasting ttl
// (DefaultTTL when zero; MinTTL..MaxTTL otherwise). Refusal and absence
// are both ledger.ErrNotFound.
func (s *Service) Mint(ctx context.Context, subject string, orgs []string, archiveID string, ttl time.Duration) (Minted, error) {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if ttl < MinTTL || ttl > MaxTTL {
		return Minted{}, fmt.Errorf("replay link lifetime %s: must be between %s and %s", ttl, MinTTL, MaxTTL)
	}
	// "Not allowed" and "absent" take one path: the ledger is read and
	// OpenFGA asked whatever the other answers.
	_, _, lerr := s.Catalog.ArchiveLocation(ctx, archiveID)
	if lerr != nil && !errors.Is(lerr, ledger.ErrNotFound) {
		return Minted{}, lerr
	}
	// An absent id is asked about as a stand-in (ledger.StandIn).
	ok, err := s.Perms.CanView(ctx, subject, orgs, s.standIn.For(archiveID, lerr == nil))
	if err != nil {
		return Minted{}, fmt.Errorf("check can_view: %w", err)
	}
	if !ok || lerr != nil {
		s.logger().Info("Denied", "archiveId", archiveID)
		return Minted{}, ledger.ErrNotFound
	}
	exp := s.now().Add(ttl).Truncate(time.Second)
	tok, err := s.Signer.Sign(Claims{ArchiveID: archiveID, Subject: subject, Organizations: orgs, Expires: exp})
	if err != nil {
		return Minted{}, err
	}
	s.logger().Info("Replay link issued", "archiveId", archiveID, "expiresAt", exp.UTC().Format(time.RFC3339))
	return Minted{Token: tok, ExpiresAt: exp}, nil
}

// Authorize verifies token for archiveID and asks again whether its
// subject, with its organizations, may view the archive (an answer at most
// CheckCache old). Every refusal — a bad, altered or expired token, one for
// another archive, access removed, an archive gone from the ledger — is
// ledger.ErrNotFound.
func (s *Service) Authorize(ctx context.Context, token, archiveID string) (Grant, error) {
	c, err := s.Signer.Verify(token, archiveID, s.now())
	if err != nil {
		s.logger().Debug("Replay token refused", "archiveId", archiveID, "reason", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
		return Grant{}, ledger.ErrNotFound
	}
	ans, err := s.check(ctx, c)
	if err != nil {
		return Grant{}, err
	}
	if !ans.allowed {
		return Grant{}, ledger.ErrNotFound
	}
	return Grant{Claims: c, Bucket: ans.bucket, Key: ans.key}, nil
}

// check is can_view and the location for c, from the cache when fresh.
func (s *Service) check(ctx context.Context, c Claims) (cached, error) {
	ttl := s.CheckCache
	if ttl == 0 {
		ttl = DefaultCheckCache
	}
	// NUL cannot be in a subject or an organization (identity.CheckIdentity).
	k := c.ArchiveID + "\x00" + c.Subject + "\x00" + strings.Join(c.Organizations, "\x00")
	now := time.Now()
	if ttl > 0 {
		s.mu.Lock()
		hit, ok := s.cache[k]
		s.mu.Unlock()
		if ok && now.Before(hit.until) {
			return hit, nil
		}
	}
	ans := cached{until: now.Add(ttl)}
	ok, err := s.Perms.CanView(ctx, c.Subject, c.Organizations, c.ArchiveID)
	if err != nil {
		return cached{}, fmt.Errorf("check can_view: %w", err)
	}
	if ok {
		ans.bucket, ans.key, err = s.Catalog.ArchiveLocation(ctx, c.ArchiveID)
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			s.logger().Warn("Check allowed an archive that is not in the ledger", "archiveId", c.ArchiveID)
		case err != nil:
			return cached{}, err
		default:
			ans.allowed = true
		}
	} else {
		s.logger().Info("Replay read denied: can_view is false", "archiveId", c.ArchiveID)
	}
	if ttl > 0 {
		s.mu.Lock()
		if s.cache == nil {
			s.cache = map[string]cached{}
		}
		if len(s.cache) >= maxCached {
			for key, v := range s.cache {
				if !now.Before(v.until) {
					delete(s.cache, key)
				}
			}
			if len(s.cache) >= maxCached {
				clear(s.cache)
			}
		}
		s.cache[k] = ans
		s.mu.Unlock()
	}
	return ans, nil
}

// Stat is the archive's object's size, ETag and Last-Modified.
func (s *Service) Stat(ctx context.Context, g Grant) (blob.ObjectInfo, error) {
	return s.Objects.Stat(ctx, g.Bucket, g.Key)
}

// Open starts reading the archive's object, or the range r of it.
func (s *Service) Open(ctx context.Context, g Grant, r *blob.Range) (*blob.Part, error) {
	return s.Objects.Open(ctx, g.Bucket, g.Key, r)
}

// SourcePath is the path (and query) a viewer reads the archive from with
// token, on the API's origin.
func SourcePath(archiveID, token string) string {
	return "/api/archives/" + url.PathEscape(archiveID) + "/wacz?t=" + url.QueryEscape(token)
}

// ViewerURL is where a person opens archiveID with token, at page (an
// archived URL; "" is the archive's first page). apiBase is the API's
// origin as browsers reach it (scheme://host[:port], no trailing slash).
// With no viewerOrigin it is serve's own viewer, /replay/, whose source is
// the path on the same origin; otherwise the ReplayWeb.page deployment at
// viewerOrigin, whose source is the full URL of the API (which answers its
// CORS requests).
func ViewerURL(apiBase, viewerOrigin, archiveID, token, page string) string {
	src := SourcePath(archiveID, token)
	if viewerOrigin == "" {
		u := apiBase + "/replay/?source=" + url.QueryEscape(src)
		if page != "" {
			u += "&url=" + url.QueryEscape(page)
		}
		return u
	}
	if page == "" {
		page = "page:0"
	}
	return viewerOrigin + "/?source=" + url.QueryEscape(apiBase+src) + "#view=pages&url=" + url.QueryEscape(page)
}

// MaxPageBytes bounds the page a link may name.
const MaxPageBytes = 8192

// CheckPage says what is wrong with page as the page a link opens: it
// must be an absolute http(s) URL of at most MaxPageBytes, in printable
// UTF-8. It only chooses what the viewer shows first, among what the
// archive holds.
func CheckPage(page string) error {
	if len(page) > MaxPageBytes {
		return fmt.Errorf("is longer than %d bytes", MaxPageBytes)
	}
	if !utf8.ValidString(page) || strings.ContainsFunc(page, unicode.IsControl) {
		return errors.New("must be printable UTF-8")
	}
	u, err := url.Parse(page)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http(s) URL")
	}
	return nil
}

// Link is a replay URL and when its token expires: the body of POST
// /api/archives/{id}/replay and what `ledgerctl archives open --json`
// prints.
type Link struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}
