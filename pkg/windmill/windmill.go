// Package windmill runs crawl levels on the Windmill flow through its
// webhook (docs/crawling.md): the distributed crawl loop, one of the two
// crawl.Dispatcher implementations beside the embedded runner.
package windmill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Dispatcher runs levels on the Windmill flow through its webhook
// (docs/crawling.md): one POST per level, Bearer token, snake_case body.
type Dispatcher struct {
	// URL is CAPTURE_LEDGER_CRAWL_WEBHOOK_URL; Token its bearer token.
	URL   string
	Token string
	// Timeout bounds one call (CAPTURE_LEDGER_CRAWL_WEBHOOK_TIMEOUT_MS;
	// 10 s when zero).
	Timeout time.Duration
	// Client is the HTTP client (http.DefaultClient when nil).
	Client *http.Client
}

var _ crawl.Dispatcher = (*Dispatcher)(nil)

// WebhookPayload is the body the flow receives. Keys are snake_case: a
// camelCase key would reach the Windmill script as "not passed".
type WebhookPayload struct {
	CrawlID         string               `json:"crawl_id"`
	Depth           int                  `json:"depth"`
	Frontier        []crawl.FrontierPage `json:"frontier"`
	PerHostDelayMs  int                  `json:"per_host_delay_ms"`
	HostParallelism int                  `json:"host_parallelism"`
	CaptureFormats  crawl.Formats        `json:"capture_formats"`
	Signing         bool                 `json:"signing"`
	// Scripts is always sent, and always empty: the flow requires the
	// input, and this ledger pins no page scripts.
	Scripts []any `json:"scripts"`
}

// Payload builds the webhook body of a level.
func (d *Dispatcher) Payload(l crawl.Level) WebhookPayload {
	return WebhookPayload{
		CrawlID: l.CrawlID, Depth: l.Depth, Frontier: l.Frontier,
		PerHostDelayMs: l.PerHostDelayMs, HostParallelism: l.HostParallelism,
		CaptureFormats: l.CaptureFormats, Signing: l.Signing, Scripts: []any{},
	}
}

// Dispatch posts the level. A non-2xx answer is an error reading
// "crawl webhook → <status> <first 200 characters of the body>"; a 2xx body
// that is a UUID (trimmed, surrounding quotes removed) is the job id.
// Neither the token nor the URL's query appear in errors.
func (d *Dispatcher) Dispatch(ctx context.Context, l crawl.Level) (string, error) {
	body, err := json.Marshal(d.Payload(l))
	if err != nil {
		return "", err
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("crawl webhook: the URL is not usable")
	}
	req.Header.Set("Authorization", "Bearer "+d.Token)
	req.Header.Set("Content-Type", "application/json")
	client := d.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// Nothing answered: the runner is unreachable (the message keeps the
		// transport's description, without the URL's token).
		return "", &webhookUnreachable{msg: "crawl webhook: " + describeTransportError(ctx, err, timeout)}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", fmt.Errorf("crawl webhook → %d %s", resp.StatusCode, firstChars(string(data), 200))
	}
	job := strings.Trim(strings.TrimSpace(string(data)), `"`)
	if !ledger.IsUUID(job) {
		return "", nil
	}
	return strings.ToLower(job), nil
}

func firstChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// describeTransportError says why a call failed without quoting the URL
// (whose query could carry a secret).
func describeTransportError(ctx context.Context, err error, timeout time.Duration) string {
	if ctx.Err() == context.DeadlineExceeded {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	if ue, ok := err.(interface{ Unwrap() error }); ok && ue.Unwrap() != nil {
		return ue.Unwrap().Error()
	}
	return err.Error()
}

// webhookUnreachable is a dispatch nothing answered; it matches
// ledger.ErrUnreachable.
type webhookUnreachable struct{ msg string }

func (e *webhookUnreachable) Error() string        { return e.msg }
func (e *webhookUnreachable) Is(target error) bool { return target == ledger.ErrUnreachable }
