package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
)

// Permissions answers whether a person may view archives (fully
// consistent OpenFGA Checks; many at once in one BatchCheck).
type Permissions interface {
	CanView(ctx context.Context, subject string, orgs []string, archiveID string) (bool, error)
	CanViewMany(ctx context.Context, subject string, orgs []string, archiveIDs []string) ([]bool, error)
}

// Catalog finds where an archive's object is, and which archives a crawl
// admitted.
type Catalog interface {
	ArchiveLocation(ctx context.Context, id string) (bucket, key string, err error)
	// CrawlArchives is the ids of up to limit archives admitted from the
	// crawl's pages, oldest capture first; none (not an error) for a crawl
	// that does not exist.
	CrawlArchives(ctx context.Context, crawlID string, limit int) ([]string, error)
}

// Objects reads objects and ranges of them from S3, streaming.
type Objects interface {
	Stat(ctx context.Context, bucket, key string) (ledger.ObjectInfo, error)
	Open(ctx context.Context, bucket, key string, r *ledger.Range) (*ledger.Part, error)
}

// MaxCollection is how many archives a crawl's collection lists (its
// first MaxCollection captures) unless Service.CollectionLimit says.
const MaxCollection = 1000

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
	// Reads bounds the object reads in flight (a replay's range reads, a
	// download): per person, per organization and in all; values below 1
	// take DefaultReadBounds.
	Reads ReadBounds
	// CollectionLimit is how many of a crawl's captures its collection
	// lists (CAPTURE_LEDGER_REPLAY_COLLECTION_LIMIT); MaxCollection when
	// below 1.
	CollectionLimit int

	gateOnce sync.Once
	gate     *visible.Gate

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

// Caller is who asks for a replay session: a subject, its organizations,
// and when the credential that said so stops being accepted (a JWT's exp;
// zero for a credential without one, the dev identity). A session never
// outlives its caller's credential.
type Caller struct {
	Subject       string
	Organizations []string
	Expires       time.Time
}

// Session is a replay session just minted: its label (its origin is
// Origins.Origin(Label)), its token, when both stop working, and, for a
// collection, how many archives it opened with.
type Session struct {
	Label     string
	Token     string
	ExpiresAt time.Time
	Archives  int
	// Limit, for a crawl's collection, is set when the crawl has more
	// captures than a collection lists: the collection holds those of its
	// first Limit captures the caller may view.
	Limit int
}

// Grant is a verified read token with the archive's location: what a read
// may open.
type Grant struct {
	Claims
	Bucket, Key string
}

// Entry is one archive of a collection and the read token of the same
// session for it.
type Entry struct {
	ArchiveID, Token string
	// Name is the archive's file name in the collection: its object's name
	// (the last part of its key, `<taskId>_<crawlId>.wacz` for a crawl's
	// capture), which revisit records of the crawl's other WACZs name their
	// original by (WARC-Refers-To-Container); `<archive id>.wacz` when the
	// catalog cannot say, or when that name is not a plain, unique .wacz
	// file name.
	Name string
}

// ObjectNamer is a Catalog that can name the objects of archives: the last
// part of each one's object key, by archive id (absent ids left out).
type ObjectNamer interface {
	ArchiveObjectNames(ctx context.Context, ids []string) (map[string]string, error)
}

// collectionNames names each archive of a collection (Entry.Name).
func (s *Service) collectionNames(ctx context.Context, ids []string) (map[string]string, error) {
	names := make(map[string]string, len(ids))
	for _, id := range ids {
		names[id] = id + ".wacz"
	}
	n, ok := s.Catalog.(ObjectNamer)
	if !ok {
		return names, nil
	}
	objects, err := n.ArchiveObjectNames(ctx, ids)
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, id := range ids {
		count[objects[id]]++
	}
	for _, id := range ids {
		if o := objects[id]; o != "" && count[o] == 1 && plainWACZName(o) {
			names[id] = o
		}
	}
	return names, nil
}

// plainWACZName: letters, digits, '.', '_', '-', at most 255 bytes, not
// starting with a dot, ending in ".wacz".
func plainWACZName(name string) bool {
	if len(name) <= len(".wacz") || len(name) > 255 || name[0] == '.' || !strings.HasSuffix(name, ".wacz") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
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

// session checks ttl (DefaultTTL when zero; MinTTL..MaxTTL otherwise) and
// returns claims for a new session of who, with a fresh label, expiring at
// the earlier of now+ttl and the caller's credential's expiry.
func (s *Service) session(who Caller, ttl time.Duration) (Claims, error) {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if ttl < MinTTL || ttl > MaxTTL {
		return Claims{}, fmt.Errorf("replay link lifetime %s: must be between %s and %s", ttl, MinTTL, MaxTTL)
	}
	exp := s.now().Add(ttl)
	if !who.Expires.IsZero() && who.Expires.Before(exp) {
		exp = who.Expires
	}
	exp = exp.Truncate(time.Second)
	if !exp.After(s.now()) {
		// The credential has (all but) expired: nothing to mint.
		return Claims{}, ledger.ErrNotFound
	}
	label, err := NewLabel()
	if err != nil {
		return Claims{}, err
	}
	return Claims{Label: label, Subject: who.Subject, Organizations: who.Organizations, Expires: exp}, nil
}

func (s *Service) sign(c Claims, archives int) (Session, error) {
	tok, err := s.Signer.Sign(c)
	if err != nil {
		return Session{}, err
	}
	return Session{Label: c.Label, Token: tok, ExpiresAt: c.Expires, Archives: archives}, nil
}

// Mint checks, with full consistency, that the caller may view archiveID
// and that it is in the ledger, then opens a session reading it, lasting
// ttl (see Service.session). Refusal and absence are both
// ledger.ErrNotFound.
func (s *Service) Mint(ctx context.Context, who Caller, archiveID string, ttl time.Duration) (Session, error) {
	return s.mint(ctx, who, archiveID, ttl, false)
}

// MintDownload is Mint for a download link: its token reads the archive
// on the API's download route (AuthorizeDownload) and opens no replay
// session, as a session's tokens open no download.
func (s *Service) MintDownload(ctx context.Context, who Caller, archiveID string, ttl time.Duration) (Session, error) {
	return s.mint(ctx, who, archiveID, ttl, true)
}

func (s *Service) mint(ctx context.Context, who Caller, archiveID string, ttl time.Duration, download bool) (Session, error) {
	c, err := s.session(who, ttl)
	if err != nil {
		return Session{}, err
	}
	// "Not allowed" and "absent" take one path: the ledger is read and
	// OpenFGA asked whatever the other answers.
	_, _, lerr := s.Catalog.ArchiveLocation(ctx, archiveID)
	if lerr != nil && !errors.Is(lerr, ledger.ErrNotFound) {
		return Session{}, lerr
	}
	// An absent id is asked about as a stand-in (ledger.StandIn).
	ok, err := s.Perms.CanView(ctx, who.Subject, who.Organizations, s.standIn.For(archiveID, lerr == nil))
	if err != nil {
		return Session{}, fmt.Errorf("check can_view: %w", err)
	}
	if !ok || lerr != nil {
		s.logger().Info("Denied", "archiveId", archiveID)
		return Session{}, ledger.ErrNotFound
	}
	c.ArchiveID, c.Download = archiveID, download
	m, err := s.sign(c, 1)
	if err == nil {
		s.logger().Info("Replay link issued", "archiveId", archiveID, "expiresAt", m.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return m, err
}

// MintCrawl opens a session replaying, as one collection, the archives of
// crawlID that the caller may view (the first MaxCollection). A crawl that
// does not exist, or of which the caller may view nothing, is
// ledger.ErrNotFound alike: the same queries run either way.
//
// The session's Limit says the crawl has more captures than the
// collection lists only to a caller who may view the first capture past
// them (asked in the same BatchCheck): that the crawl goes on is said only
// of archives the caller may see.
func (s *Service) MintCrawl(ctx context.Context, who Caller, crawlID string, ttl time.Duration) (Session, error) {
	limit, more := s.collectionLimit(), false
	m, err := s.mintCollection(ctx, who, ttl, func(c *Claims, _ []string) { c.CrawlID = crawlID }, "crawlId", crawlID,
		func() ([]string, error) { return s.Catalog.CrawlArchives(ctx, crawlID, limit+1) },
		func(ids, visible []string) []string {
			// The capture past the collection was asked about with the
			// others; it is not in the collection.
			if len(ids) > limit && len(visible) > 0 && visible[len(visible)-1] == ids[limit] {
				more, visible = true, visible[:len(visible)-1]
			}
			return visible
		})
	if err == nil && more {
		m.Limit = limit
	}
	return m, err
}

// collectionLimit is how many of a crawl's captures its collection lists.
func (s *Service) collectionLimit() int {
	if s.CollectionLimit > 0 {
		return s.CollectionLimit
	}
	return MaxCollection
}

// MintCrawlDownload is MintCrawl for a download link of the crawl as one
// WACZ: its token exports the crawl on the API's download route
// (AuthorizeCrawlDownload) and opens no replay session. Whether the caller
// may view anything of the crawl is asked of its first MaxCollection
// captures, whatever the collections' limit (the download holds every
// capture the caller may view).
func (s *Service) MintCrawlDownload(ctx context.Context, who Caller, crawlID string, ttl time.Duration) (Session, error) {
	return s.mintCollection(ctx, who, ttl, func(c *Claims, _ []string) { c.CrawlID, c.Download = crawlID, true }, "crawlId", crawlID,
		func() ([]string, error) { return s.Catalog.CrawlArchives(ctx, crawlID, MaxCollection) }, nil)
}

// MintSet opens a session replaying, as one collection, those of ids (at
// most MaxSet, no repeats) the caller may view; none is
// ledger.ErrNotFound.
func (s *Service) MintSet(ctx context.Context, who Caller, ids []string, ttl time.Duration) (Session, error) {
	if len(ids) == 0 || len(ids) > MaxSet {
		return Session{}, fmt.Errorf("a collection holds 1 to %d archives, not %d", MaxSet, len(ids))
	}
	return s.mintCollection(ctx, who, ttl, func(c *Claims, visible []string) { c.ArchiveIDs = visible }, "archives", len(ids),
		func() ([]string, error) { return ids, nil }, nil)
}

// mintCollection opens a collection session of who over the archives
// candidates lists, of which the caller may view at least one (else
// ledger.ErrNotFound); scope names what the token opens, given those
// visible. logKey and logValue say what was asked, in the log. keep, when
// set, narrows the visible candidates to those the collection holds.
func (s *Service) mintCollection(ctx context.Context, who Caller, ttl time.Duration, scope func(c *Claims, visible []string), logKey string, logValue any, candidates func() ([]string, error), keep func(ids, visible []string) []string) (Session, error) {
	c, err := s.session(who, ttl)
	if err != nil {
		return Session{}, err
	}
	ids, err := candidates()
	if err != nil {
		return Session{}, err
	}
	visible, err := s.visible(ctx, c, ids)
	if err != nil {
		return Session{}, err
	}
	if keep != nil {
		visible = keep(ids, visible)
	}
	if len(visible) == 0 {
		s.logger().Info("Denied", logKey, logValue)
		return Session{}, ledger.ErrNotFound
	}
	scope(&c, visible)
	m, err := s.sign(c, len(visible))
	if err == nil {
		s.logger().Info("Replay link issued", logKey, logValue, "archives", len(visible), "expiresAt", m.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return m, err
}

// visible is those of ids c's subject may view now, in order (one
// BatchCheck).
func (s *Service) visible(ctx context.Context, c Claims, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ok, err := s.Perms.CanViewMany(ctx, c.Subject, c.Organizations, ids)
	if err != nil {
		return nil, fmt.Errorf("check can_view: %w", err)
	}
	var out []string
	for i, id := range ids {
		if ok[i] {
			out = append(out, id)
		}
	}
	return out, nil
}

// verify checks token on the origin labelled label: every refusal is
// ledger.ErrNotFound.
func (s *Service) verify(token, label string) (Claims, error) {
	c, err := s.Signer.Verify(token, s.now())
	if err == nil && c.Label != label {
		err = fmt.Errorf("%w: for another origin", ErrInvalid)
	}
	if err != nil {
		s.logger().Debug("Replay token refused", "reason", strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "))
		return Claims{}, ledger.ErrNotFound
	}
	return c, nil
}

// Verify checks token on the origin labelled label (signature, expiry,
// label) without asking anyone anything: what a page of the origin may
// name as its source. Every refusal is ledger.ErrNotFound.
func (s *Service) Verify(token, label string) (Claims, error) { return s.verify(token, label) }

// Collection verifies a collection token on the origin labelled label and
// lists the archives of its crawl or set that its subject may view now,
// each with a read token of the same session. A token that is not a
// collection's, or a collection of which nothing is visible any more, is
// ledger.ErrNotFound.
func (s *Service) Collection(ctx context.Context, token, label string) ([]Entry, error) {
	c, err := s.verify(token, label)
	if err != nil {
		return nil, err
	}
	if !c.Collection() {
		return nil, ledger.ErrNotFound
	}
	ids := c.ArchiveIDs
	if c.CrawlID != "" {
		if ids, err = s.Catalog.CrawlArchives(ctx, c.CrawlID, s.collectionLimit()); err != nil {
			return nil, err
		}
	}
	visible, err := s.visible(ctx, c, ids)
	if err != nil {
		return nil, err
	}
	if len(visible) == 0 {
		return nil, ledger.ErrNotFound
	}
	names, err := s.collectionNames(ctx, visible)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(visible))
	for _, id := range visible {
		read := c
		read.CrawlID, read.ArchiveIDs, read.ArchiveID = "", nil, id
		tok, err := s.Signer.Sign(read)
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{ArchiveID: id, Token: tok, Name: names[id]})
	}
	return out, nil
}

// Authorize verifies a read token for archiveID on the origin labelled
// label and asks again whether its subject, with its organizations, may
// view the archive (an answer at most CheckCache old). Every refusal — a
// bad, altered or expired token, one for another archive or another
// origin, a collection's token, access removed, an archive gone from the
// ledger — is ledger.ErrNotFound.
func (s *Service) Authorize(ctx context.Context, token, archiveID, label string) (Grant, error) {
	return s.authorize(ctx, token, archiveID, label, false)
}

// AuthorizeDownload is Authorize on the API's download route: only a
// download link's token (MintDownload) reads there.
func (s *Service) AuthorizeDownload(ctx context.Context, token, archiveID, label string) (Grant, error) {
	return s.authorize(ctx, token, archiveID, label, true)
}

// AuthorizeCrawlDownload verifies a crawl's download token (one of
// MintCrawlDownload) for crawlID on the API's download route and returns
// its claims: who exports the crawl. It asks no one: the export asks
// OpenFGA again about every archive it reads. Every refusal is
// ledger.ErrNotFound.
func (s *Service) AuthorizeCrawlDownload(token, crawlID, label string) (Claims, error) {
	c, err := s.verify(token, label)
	if err != nil {
		return Claims{}, err
	}
	if c.CrawlID != crawlID || !c.Download {
		s.logger().Debug("Replay token refused", "crawlId", crawlID, "reason", "not this crawl's download token")
		return Claims{}, ledger.ErrNotFound
	}
	return c, nil
}

func (s *Service) authorize(ctx context.Context, token, archiveID, label string, download bool) (Grant, error) {
	c, err := s.verify(token, label)
	if err != nil {
		return Grant{}, err
	}
	if c.ArchiveID != archiveID {
		s.logger().Debug("Replay token refused", "archiveId", archiveID, "reason", "for another archive")
		return Grant{}, ledger.ErrNotFound
	}
	if c.Download != download {
		s.logger().Debug("Replay token refused", "archiveId", archiveID, "reason", "a download token off the download route, or a session's on it")
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
func (s *Service) Stat(ctx context.Context, g Grant) (ledger.ObjectInfo, error) {
	return s.Objects.Stat(ctx, g.Bucket, g.Key)
}

// ReadBounds bound the object reads in flight: each holds an S3 stream and
// a buffer for as long as its reader takes the bytes.
type ReadBounds struct {
	// PerCaller is how many reads of one person stream at once
	// (CAPTURE_LEDGER_REPLAY_READS_PER_CALLER), PerOrg how many of the
	// people of one organization together (…_PER_ORG), Total how many in
	// all (CAPTURE_LEDGER_REPLAY_READS).
	PerCaller, PerOrg, Total int
}

// DefaultReadBounds: far above what a browser opening a collection makes
// at once (ReplayWeb.page reads ranges a few at a time per origin), low
// enough that one person's script cannot hold every stream.
var DefaultReadBounds = ReadBounds{PerCaller: 64, PerOrg: 128, Total: 512}

// ReadRetry is the Retry-After of a read refused by a bound: a range read
// lasts milliseconds.
const ReadRetry = time.Second

// gateBounds are the read bounds as a gate's.
func (b ReadBounds) gateBounds() visible.GateBounds {
	return visible.GateBounds{Lists: b.Total, PerCaller: b.PerCaller, PerOrg: b.PerOrg}
}

// readGate is the bound's gate, made on first use.
func (s *Service) readGate() *visible.Gate {
	s.gateOnce.Do(func() {
		s.gate = visible.NewGate(s.Reads.gateBounds().Or(DefaultReadBounds.gateBounds()))
	})
	return s.gate
}

// Open starts reading the archive's object, or the range r of it, once
// the reads in flight leave a place for the grant's person and each of its
// organizations (a *visible.BusyError, answered 429 or 503 with
// Retry-After, when they do not). The place is held until the part's Body
// is closed.
func (s *Service) Open(ctx context.Context, g Grant, r *ledger.Range) (*ledger.Part, error) {
	leave, busy := s.readGate().Enter(g.Subject, g.Organizations)
	if busy != nil {
		busy.What, busy.RetryAfter = "replay reads", ReadRetry
		return nil, busy
	}
	part, err := s.Objects.Open(ctx, g.Bucket, g.Key, r)
	if err != nil {
		leave()
		return nil, err
	}
	part.Body = &heldBody{ReadCloser: part.Body, leave: leave}
	return part, nil
}

// heldBody gives the read's place back when it is closed.
type heldBody struct {
	io.ReadCloser
	leave func()
}

func (b *heldBody) Close() error {
	err := b.ReadCloser.Close()
	b.leave()
	return err
}

// ReadPath is the path (and query) on a session's origin that reads
// archiveID with a read token.
func ReadPath(archiveID, token string) string {
	return "/wacz/" + url.PathEscape(archiveID) + ".wacz?t=" + url.QueryEscape(token)
}

// CollectionPath is the path (and query) on a session's origin that lists
// a collection, in ReplayWeb.page's multi-WACZ JSON, with its token.
func CollectionPath(token string) string {
	return "/collection.json?t=" + url.QueryEscape(token)
}

// Source is what the viewer of session m opens: the read of its archive,
// or its collection's listing, as a full URL on the session's origin
// (ReplayWeb.page tells a listing from its name, which must end in
// ".json").
func Source(o Origins, m Session, archiveID string) string {
	if archiveID != "" {
		return o.Origin(m.Label) + ReadPath(archiveID, m.Token)
	}
	return o.Origin(m.Label) + CollectionPath(m.Token)
}

// ViewerURL is where a person opens session m: the viewer at the root of
// the session's origin, opening source (Source) at page (an archived URL;
// "" is the first page).
func ViewerURL(o Origins, m Session, source, page string) string {
	u := o.Origin(m.Label) + "/?source=" + url.QueryEscape(source)
	if page != "" {
		u += "&url=" + url.QueryEscape(page)
	}
	return u
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

// Link is a replay URL and when its token expires: the body of the replay
// routes and what `ledgerctl archives open --json` prints. Archives is how
// many archives a collection opened with (absent for one archive).
type Link struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
	Archives  int       `json:"archives,omitempty"`
	// Limit is Session.Limit: set when a crawl has more captures than its
	// collection lists (its first Limit).
	Limit int `json:"limit,omitempty"`
}
