package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// CaptureConfig reads the built-in capturer's limits and switches
// (CAPTURE_LEDGER_CAPTURE_*, CAPTURE_LEDGER_CHROMIUM_PATH); a bad value is
// an error naming its variable.
func (a *App) CaptureConfig() (capture.Config, error) {
	get := a.Settings.Lookup
	if get == nil {
		get = os.Getenv
	}
	return capture.FromEnv(get)
}

// CaptureEngine starts the built-in capturer's engine (browser, http or auto;
// "" is the configured one). The caller closes it.
func (a *App) CaptureEngine(name string) (capture.Engine, error) {
	cfg, err := a.CaptureConfig()
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = a.Settings.CaptureEngine
	}
	return capture.New(name, cfg)
}

// Captures is the "capture these pages" use-case over eng, writing into
// the configured bucket and registering through the ledger's admission.
func (a *App) Captures(ctx context.Context, eng capture.Engine, software string) (*archive.Captures, error) {
	if err := a.DirectCapturesRefused(); err != nil {
		return nil, err
	}
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	az, err := a.Authz(ctx)
	if err != nil {
		return nil, err
	}
	up := blob.Uploader{Client: a.Blob(), Bucket: a.Settings.S3Bucket}
	return &archive.Captures{
		Capturer:    BuiltinCapturer{Engine: eng, Uploader: up, Software: software},
		Adder:       &archive.Adder{Store: st, Objects: a.Blob(), Bucket: a.Settings.S3Bucket, Log: a.Log, Concurrency: 1},
		Permissions: Permissions{Client: az},
		Quota:       a.CaptureQuota(),
		Log:         a.Log,
		Hosts:       st, HostAtOnce: a.Settings.HostAtOnce, HostDelay: a.Settings.HostDelay, HostTTL: a.Settings.HostLeaseTTL,
	}, nil
}

// DirectCapturesRefused says why direct captures (POST /api/captures,
// ledgerctl capture) cannot run here, nil when they can: they use the
// built-in capturer, which signs nothing, so with
// CAPTURE_LEDGER_CAPTURE_SIGNING=1 they are refused rather than written
// unsigned (a *config.InvalidError naming the variable).
func (a *App) DirectCapturesRefused() error {
	if !a.Settings.CaptureSigning {
		return nil
	}
	return &config.InvalidError{Name: "CAPTURE_LEDGER_CAPTURE_SIGNING", Reason: config.ErrBuiltinUnsigned.Error() +
		": direct captures (POST /api/captures, ledgerctl capture) use it; unset CAPTURE_LEDGER_CAPTURE_SIGNING to capture unsigned"}
}

// CaptureQuota is the process's one capture quota (created on first use
// from CAPTURE_LEDGER_CAPTURE_CONCURRENCY_* and _URLS_PER_MINUTE_*): the
// direct captures and the embedded crawl runner's pages draw from it, so
// an organization's crawls and captures share its capacity.
func (a *App) CaptureQuota() *archive.CaptureQuota {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.quota == nil {
		s := a.Settings
		a.quota = archive.NewCaptureQuota(archive.CaptureBounds{
			PerCaller: s.CapturePerCaller, PerOrg: s.CapturePerOrg,
			URLsPerCaller: s.CaptureURLsPerCaller, URLsPerOrg: s.CaptureURLsPerOrg,
		}, nil)
	}
	return a.quota
}

// BuiltinCapturer is archive.Capturer over the built-in capturer: it
// captures with Engine and writes the WACZ, links file and manifest
// through Uploader in BrowserHive's layout (capture.Run).
type BuiltinCapturer struct {
	Engine   capture.Engine
	Uploader blob.Uploader
	Software string
}

// EngineName is the engine's name (http or browser).
func (b BuiltinCapturer) EngineName() string { return b.Engine.Name() }

// CaptureURL captures job and says where its manifest went.
func (b BuiltinCapturer) CaptureURL(ctx context.Context, job archive.CaptureJob) (archive.CaptureDone, error) {
	cj := capture.Job{TaskID: job.TaskID, CorrelationID: job.CorrelationID, URL: job.URL}
	out, err := capture.Run(ctx, b.Engine, cj, b.Uploader, b.Software)
	if err != nil {
		return archive.CaptureDone{}, fmt.Errorf("capture %s: %w", job.URL, err)
	}
	// The key as written: Run names objects after the job it checked (task
	// id in lower case).
	done := archive.CaptureDone{ManifestKey: b.Uploader.Prefix + out.Job.ManifestName(), Complete: out.Complete}
	if out.Failure != nil {
		done.Failure, done.FailureDetail = out.Failure.Coarse(), out.Failure.Message
	}
	return done, nil
}

// serveCaptures serves POST /api/captures with the configured engine. A
// browser engine without Chromium leaves the route unserved with a
// warning (the http engine needs nothing); a bad capture setting stops
// serve. The engine closes with the App.
func (a *App) serveCaptures(ctx context.Context, apiSrv *api.Server, software string) error {
	if err := a.DirectCapturesRefused(); err != nil {
		a.Log.Warn("POST /api/captures is not served: " + err.Error())
		return nil
	}
	eng, err := a.CaptureEngine("")
	var missing *capture.ChromiumError
	switch {
	case errors.As(err, &missing):
		a.Log.Warn("POST /api/captures is not served: "+err.Error(), "engine", a.Settings.CaptureEngine)
		return nil
	case err != nil:
		return err
	}
	svc, err := a.Captures(ctx, eng, software)
	if err != nil {
		_ = eng.Close()
		return err
	}
	svc.Log = a.Log
	a.mu.Lock()
	a.closers = append(a.closers, func() { _ = eng.Close() })
	a.mu.Unlock()
	// A request may name the other engine too, when it can run here (the
	// browser engine starts Chromium only when first used).
	base := svc.Capturer.(BuiltinCapturer)
	svc.Engines = map[string]archive.Capturer{eng.Name(): base}
	for _, name := range archive.EngineNames {
		if name == eng.Name() {
			continue
		}
		other, err := a.CaptureEngine(name)
		if err != nil {
			a.Log.Info("captures cannot choose the "+name+" engine here: "+err.Error(), "engine", name)
			continue
		}
		a.mu.Lock()
		a.closers = append(a.closers, func() { _ = other.Close() })
		a.mu.Unlock()
		svc.Engines[name] = BuiltinCapturer{Engine: other, Uploader: base.Uploader, Software: base.Software}
	}
	apiSrv.Captures = svc
	return nil
}
