package authz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	openfga "github.com/openfga/go-sdk"
	"github.com/openfga/go-sdk/credentials"
	"google.golang.org/protobuf/encoding/protojson"
)

// RemoteOptions configure a client of an OpenFGA HTTP API.
type RemoteOptions struct {
	Options
	// URL is the API's base URL, e.g. http://localhost:8090.
	URL string
	// Token is the preshared key, sent as a Bearer token when set.
	Token string
	// HTTPClient replaces the default client (e.g. to set timeouts).
	HTTPClient *http.Client
}

// Remote talks to an OpenFGA cluster over its HTTP API with the go-sdk.
type Remote struct {
	target
	api      *openfga.APIClient
	url      string
	maxBatch int
}

var _ Client = (*Remote)(nil)

// NewRemote returns a client of the OpenFGA HTTP API at opts.URL. It does not
// connect until the first call.
func NewRemote(opts RemoteOptions) (*Remote, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OpenFGA API URL %q is not an http(s) URL", opts.URL)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	cfg := openfga.Configuration{
		ApiUrl:      strings.TrimRight(opts.URL, "/"),
		HTTPClient:  hc,
		RetryParams: &openfga.RetryParams{MaxRetry: 2, MinWaitInMs: 50},
	}
	if opts.Token != "" {
		cfg.Credentials = &credentials.Credentials{Method: credentials.CredentialsMethodApiToken, Config: &credentials.Config{ApiToken: opts.Token}}
	}
	conf, err := openfga.NewConfiguration(cfg)
	if err != nil {
		return nil, fmt.Errorf("OpenFGA client: %w", err)
	}
	r := &Remote{api: openfga.NewAPIClient(conf), url: cfg.ApiUrl, maxBatch: opts.maxBatch()}
	r.storeID, r.modelID = opts.StoreID, opts.ModelID
	return r, nil
}

// URL is the API's base URL.
func (r *Remote) URL() string { return r.url }

// Close does nothing: the HTTP client keeps no state worth releasing.
func (r *Remote) Close() error { return nil }

// fail turns a go-sdk error into an *Error (by the HTTP status and the code
// the server sent) or an *UnreachableError naming the URL.
func (r *Remote) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var (
		validation openfga.FgaApiValidationError
		notFound   openfga.FgaApiNotFoundError
		auth       openfga.FgaApiAuthenticationError
		internal   openfga.FgaApiInternalError
		rate       openfga.FgaApiRateLimitExceededError
		generic    openfga.FgaApiError
	)
	switch {
	case errors.As(err, &validation):
		code := string(validation.ResponseCode())
		kind := kindOfCode(code)
		if kind == KindOther {
			kind = KindInvalid
		}
		return &Error{Op: op, Kind: kind, Code: code, Err: errors.New(apiMessage(validation.Body(), err))}
	case errors.As(err, &notFound):
		return &Error{Op: op, Kind: KindNotFound, Code: string(notFound.ResponseCode()), Err: errors.New(apiMessage(notFound.Body(), err))}
	case errors.As(err, &auth):
		return &Error{Op: op, Code: auth.ResponseCode(), Err: fmt.Errorf("OpenFGA at %s refused the credentials (HTTP %d): check CAPTURE_LEDGER_FGA_API_TOKEN", r.url, auth.ResponseStatusCode())}
	case errors.As(err, &internal):
		return &Error{Op: op, Code: string(internal.ResponseCode()), Err: errors.New(apiMessage(internal.Body(), err))}
	case errors.As(err, &rate):
		return &Error{Op: op, Code: "rate_limit_exceeded", Err: err}
	case errors.As(err, &generic):
		e := &Error{Op: op, Code: generic.ResponseCode(), Kind: kindOfCode(generic.ResponseCode()), Err: errors.New(apiMessage(generic.Body(), err))}
		if generic.ResponseStatusCode() == http.StatusConflict {
			e.Kind = KindConflict
		}
		return e
	case errors.Is(err, context.Canceled):
		return err
	case isNetworkError(err):
		return &UnreachableError{What: "OpenFGA", Where: r.url, Err: netDetail(err)}
	}
	return &Error{Op: op, Err: err}
}

// apiMessage is the "message" of an OpenFGA error body, else err's text.
func apiMessage(body []byte, err error) string {
	var b struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &b) == nil && b.Message != "" {
		return b.Message
	}
	return err.Error()
}

func isNetworkError(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	var ue *url.Error
	switch {
	case errors.As(err, &op), errors.As(err, &dns):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return true
	case errors.As(err, &ue):
		return ue.Timeout() || errors.Is(err, context.DeadlineExceeded)
	}
	return false
}

func netDetail(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

func sdkTupleKey(t Tuple) openfga.TupleKey {
	tk := openfga.TupleKey{User: t.User, Relation: t.Relation, Object: t.Object}
	if t.Condition != nil {
		tk.Condition = &openfga.RelationshipCondition{Name: t.Condition.Name}
		if len(t.Condition.Context) > 0 {
			c := t.Condition.Context
			tk.Condition.Context = &c
		}
	}
	return tk
}

func sdkCheckParts(r CheckRequest) (openfga.CheckRequestTupleKey, *openfga.ContextualTupleKeys, *map[string]any) {
	tk := openfga.CheckRequestTupleKey{User: r.User, Relation: r.Relation, Object: r.Object}
	var contextual *openfga.ContextualTupleKeys
	if len(r.Contextual) > 0 {
		contextual = &openfga.ContextualTupleKeys{}
		for _, t := range r.Contextual {
			contextual.TupleKeys = append(contextual.TupleKeys, sdkTupleKey(t))
		}
	}
	var cctx *map[string]any
	if len(r.Context) > 0 {
		c := r.Context
		cctx = &c
	}
	return tk, contextual, cctx
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (r *Remote) Check(ctx context.Context, req CheckRequest) (bool, error) {
	store, err := r.store()
	if err != nil {
		return false, err
	}
	_, model := r.Target()
	tk, contextual, cctx := sdkCheckParts(req)
	consistency := openfga.CONSISTENCYPREFERENCE_HIGHER_CONSISTENCY
	res, _, err := r.api.OpenFgaApi.Check(ctx, store).Body(openfga.CheckRequest{
		TupleKey:             tk,
		ContextualTuples:     contextual,
		Context:              cctx,
		AuthorizationModelId: optional(model),
		Consistency:          &consistency,
	}).Execute()
	if err != nil {
		return false, r.fail("check", err)
	}
	return res.GetAllowed(), nil
}

func (r *Remote) BatchCheck(ctx context.Context, reqs []CheckRequest) ([]bool, error) {
	store, err := r.store()
	if err != nil {
		return nil, err
	}
	_, model := r.Target()
	return batchInChunks(ctx, reqs, r.maxBatch, func(ctx context.Context, chunk []CheckRequest) ([]bool, error) {
		items := make([]openfga.BatchCheckItem, len(chunk))
		for i, c := range chunk {
			tk, contextual, cctx := sdkCheckParts(c)
			items[i] = openfga.BatchCheckItem{TupleKey: tk, ContextualTuples: contextual, Context: cctx, CorrelationId: strconv.Itoa(i)}
		}
		res, _, err := r.api.OpenFgaApi.BatchCheck(ctx, store).Body(openfga.BatchCheckRequest{Checks: items, AuthorizationModelId: optional(model)}).Execute()
		if err != nil {
			return nil, r.fail("batch check", err)
		}
		results := res.GetResult()
		out := make([]bool, len(chunk))
		for i := range chunk {
			one, ok := results[strconv.Itoa(i)]
			if !ok {
				return nil, &Error{Op: "batch check", Err: fmt.Errorf("no answer for check %d", i)}
			}
			if ce := one.Error; ce != nil {
				code := ""
				if ce.InputError != nil {
					code = string(*ce.InputError)
				} else if ce.InternalError != nil {
					code = string(*ce.InternalError)
				}
				return nil, &Error{Op: "batch check", Kind: kindOfCode(code), Code: code, Err: fmt.Errorf("%s: %s", chunk[i].describe(), ce.GetMessage())}
			}
			out[i] = one.GetAllowed()
		}
		return out, nil
	})
}

func (r *Remote) Write(ctx context.Context, writes, deletes []Tuple) error {
	return r.write(ctx, writes, deletes, false)
}

func (r *Remote) WriteIdempotent(ctx context.Context, writes, deletes []Tuple) error {
	return writeIdempotent(ctx, r, writes, deletes)
}

func (r *Remote) write(ctx context.Context, writes, deletes []Tuple, ignore bool) error {
	if len(writes) == 0 && len(deletes) == 0 {
		return nil
	}
	store, err := r.store()
	if err != nil {
		return err
	}
	_, model := r.Target()
	body := openfga.WriteRequest{AuthorizationModelId: optional(model)}
	if len(writes) > 0 {
		body.Writes = &openfga.WriteRequestWrites{}
		for _, t := range writes {
			body.Writes.TupleKeys = append(body.Writes.TupleKeys, sdkTupleKey(t))
		}
		if ignore {
			body.Writes.OnDuplicate = optional("ignore")
		}
	}
	if len(deletes) > 0 {
		body.Deletes = &openfga.WriteRequestDeletes{}
		for _, t := range deletes {
			body.Deletes.TupleKeys = append(body.Deletes.TupleKeys, openfga.TupleKeyWithoutCondition{User: t.User, Relation: t.Relation, Object: t.Object})
		}
		if ignore {
			body.Deletes.OnMissing = optional("ignore")
		}
	}
	_, _, err = r.api.OpenFgaApi.Write(ctx, store).Body(body).Execute()
	return r.fail("write", err)
}

func (r *Remote) ReadTuple(ctx context.Context, t Tuple) (bool, error) {
	store, err := r.store()
	if err != nil {
		return false, err
	}
	consistency := openfga.CONSISTENCYPREFERENCE_HIGHER_CONSISTENCY
	pageSize := int32(1)
	res, _, err := r.api.OpenFgaApi.Read(ctx, store).Body(openfga.ReadRequest{
		TupleKey:    &openfga.ReadRequestTupleKey{User: &t.User, Relation: &t.Relation, Object: &t.Object},
		PageSize:    &pageSize,
		Consistency: &consistency,
	}).Execute()
	if err != nil {
		return false, r.fail("read", err)
	}
	return len(res.GetTuples()) > 0, nil
}

func (r *Remote) WriteModel(ctx context.Context, dsl string) (string, error) {
	store, err := r.store()
	if err != nil {
		return "", err
	}
	m, err := ParseModel(dsl)
	if err != nil {
		return "", err
	}
	// The SDK's request type mirrors the API's JSON, which protojson writes.
	raw, err := protojson.Marshal(writeModelRequest(store, m))
	if err != nil {
		return "", err
	}
	var body openfga.WriteAuthorizationModelRequest
	if err := json.Unmarshal(raw, &body); err != nil {
		return "", fmt.Errorf("model: %w", err)
	}
	res, _, err := r.api.OpenFgaApi.WriteAuthorizationModel(ctx, store).Body(body).Execute()
	if err != nil {
		return "", r.fail("write model", err)
	}
	r.setModel(res.GetAuthorizationModelId())
	return res.GetAuthorizationModelId(), nil
}

func (r *Remote) ReadModel(ctx context.Context) (Model, error) {
	store, err := r.store()
	if err != nil {
		return Model{}, err
	}
	var m *openfga.AuthorizationModel
	if _, id := r.Target(); id != "" {
		res, _, err := r.api.OpenFgaApi.ReadAuthorizationModel(ctx, store, id).Execute()
		if err != nil {
			return Model{}, r.fail("read model", err)
		}
		m = res.AuthorizationModel
	} else {
		res, _, err := r.api.OpenFgaApi.ReadAuthorizationModels(ctx, store).PageSize(1).Execute()
		if err != nil {
			return Model{}, r.fail("read model", err)
		}
		if len(res.AuthorizationModels) > 0 {
			m = &res.AuthorizationModels[0]
		}
	}
	if m == nil {
		return Model{}, &Error{Op: "read model", Kind: KindNotFound, Code: "latest_authorization_model_not_found", Err: errors.New("the store has no model: run `ledgerctl fga deploy`")}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return Model{}, err
	}
	var pm openfgav1.AuthorizationModel
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, &pm); err != nil {
		return Model{}, fmt.Errorf("model %s: %w", m.Id, err)
	}
	dsl, err := modelDSL(&pm)
	if err != nil {
		return Model{}, err
	}
	return Model{ID: m.Id, DSL: dsl}, nil
}

func (r *Remote) ReadTuples(ctx context.Context, continuation string) ([]Tuple, string, error) {
	store, err := r.store()
	if err != nil {
		return nil, "", err
	}
	consistency := openfga.CONSISTENCYPREFERENCE_HIGHER_CONSISTENCY
	pageSize := int32(readPageSize)
	res, _, err := r.api.OpenFgaApi.Read(ctx, store).Body(openfga.ReadRequest{
		PageSize:          &pageSize,
		ContinuationToken: optional(continuation),
		Consistency:       &consistency,
	}).Execute()
	if err != nil {
		return nil, "", r.fail("read", err)
	}
	out := make([]Tuple, 0, len(res.Tuples))
	for _, t := range res.Tuples {
		k := t.Key
		tu := Tuple{User: k.User, Relation: k.Relation, Object: k.Object}
		if k.Condition != nil && k.Condition.Name != "" {
			tu.Condition = &Condition{Name: k.Condition.Name}
			if k.Condition.Context != nil && len(*k.Condition.Context) > 0 {
				tu.Condition.Context = *k.Condition.Context
			}
		}
		out = append(out, tu)
	}
	return out, res.ContinuationToken, nil
}

func (r *Remote) FindStore(ctx context.Context, name string) (string, error) {
	token := ""
	for {
		req := r.api.OpenFgaApi.ListStores(ctx).Name(name).PageSize(100)
		if token != "" {
			req = req.ContinuationToken(token)
		}
		res, _, err := req.Execute()
		if err != nil {
			return "", r.fail("list stores", err)
		}
		for _, s := range res.Stores {
			if s.Name == name {
				return s.Id, nil
			}
		}
		if token = res.ContinuationToken; token == "" {
			return "", nil
		}
	}
}

func (r *Remote) FindOrCreateStore(ctx context.Context, name string) (string, error) {
	id, err := r.FindStore(ctx, name)
	if err != nil {
		return "", err
	}
	if id != "" {
		r.setStore(id)
		return id, nil
	}
	res, _, err := r.api.OpenFgaApi.CreateStore(ctx).Body(openfga.CreateStoreRequest{Name: name}).Execute()
	if err != nil {
		return "", r.fail("create store", err)
	}
	r.setStore(res.Id)
	return res.Id, nil
}
