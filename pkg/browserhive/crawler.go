package browserhive

import (
	"context"
	"errors"
	"fmt"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// CrawlCapturer is the embedded crawl runner's runner.Capturer over
// BrowserHive endpoints (CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS): POST
// /captures with all six formats and the crawl id as correlationId;
// BrowserHive writes the artefacts and the manifest into its bucket and
// answers where (the level's admission reads them from there).
type CrawlCapturer struct {
	Client *Client
}

var (
	_ runner.Capturer = CrawlCapturer{}
	_ runner.Slotted  = CrawlCapturer{}
)

// Slots is the number of endpoints: each runs one capture at a time.
func (b CrawlCapturer) Slots() int { return b.Client.Slots() }

// Capture asks BrowserHive for one capture and turns its answer into the
// page's outcome, as the capture-scheduler's Windmill flow does:
//   - a 200 is a capture: its task id and manifest outcome are reported
//     whatever its status; a success is captured (links file and final
//     URL from the report); anything else failed with
//     "<status>: <message>", cancelled included (no archive);
//   - a refusal (400, 500) or a deadline is a failed page with no task id;
//   - no endpoint answering at all is the error (the backend is down).
func (b CrawlCapturer) Capture(ctx context.Context, req runner.CaptureRequest) (runner.CaptureOutcome, error) {
	f := req.Formats
	resp, err := b.Client.Capture(ctx, Request{
		URL: req.URL, CorrelationID: req.CorrelationID, Signing: req.Signing,
		CaptureFormats: Formats{PNG: f.PNG, WebP: f.WebP, HTML: f.HTML, Links: f.Links, MHTML: f.MHTML, WACZ: f.WACZ},
	})
	var (
		refused  *RefusedError
		deadline *DeadlineError
		protocol *ProtocolError
	)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return runner.CaptureOutcome{}, ctx.Err()
	case errors.Is(err, ErrUnavailable):
		return runner.CaptureOutcome{}, err
	case errors.As(err, &refused):
		// A 500 is BrowserHive's own failure: worth one more try.
		return runner.CaptureOutcome{Failure: "BrowserHive refused the capture: " + refused.Error(), Transient: refused.Status >= 500}, nil
	case errors.As(err, &deadline):
		return runner.CaptureOutcome{Failure: deadline.Error()}, nil
	case errors.As(err, &protocol):
		return runner.CaptureOutcome{Failure: protocol.Error()}, nil
	default:
		return runner.CaptureOutcome{Failure: "BrowserHive: " + err.Error()}, nil
	}
	rep := resp.Report
	out := runner.CaptureOutcome{
		TaskID: resp.TaskID, ManifestLocation: resp.Manifest.Location, ManifestError: resp.Manifest.Error,
		HTTPStatus: rep.HTTPStatusCode,
	}
	if rep.Status == StatusSuccess {
		out.Captured = true
		out.LinksLocation = rep.Artifacts.Links
		out.FinalURL = rep.DocumentURL
		return out, nil
	}
	msg := ""
	if rep.Error != nil {
		msg = rep.Error.Message
		switch rep.Error.Type {
		case "connection", "timeout", "internal":
			out.Transient = true
		}
	}
	if msg == "" {
		msg = "no error details"
	}
	out.Failure = fmt.Sprintf("%s: %s", rep.Status, msg)
	return out, nil
}
