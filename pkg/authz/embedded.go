package authz

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"github.com/openfga/openfga/pkg/server"
	serverconfig "github.com/openfga/openfga/pkg/server/config"
	"github.com/openfga/openfga/pkg/storage"
	"github.com/openfga/openfga/pkg/storage/memory"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// ErrNoStore is returned by calls that need a store before one is bound.
var ErrNoStore = errors.New("no OpenFGA store is configured (CAPTURE_LEDGER_FGA_STORE_ID): run `ledgerctl fga deploy`")

// Options bind a client to a store and model and size its batches.
type Options struct {
	StoreID, ModelID string
	// MaxChecksPerBatch is the server's limit on one BatchCheck call
	// (OpenFGA's default, 50, when zero).
	MaxChecksPerBatch int
}

func (o Options) maxBatch() int {
	if o.MaxChecksPerBatch > 0 {
		return o.MaxChecksPerBatch
	}
	return serverconfig.DefaultMaxChecksPerBatchCheck
}

// target is the store/model binding both implementations share.
type target struct {
	mu               sync.RWMutex
	storeID, modelID string
}

func (t *target) Target() (string, string) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.storeID, t.modelID
}

func (t *target) store() (string, error) {
	s, _ := t.Target()
	if s == "" {
		return "", ErrNoStore
	}
	return s, nil
}

func (t *target) setStore(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.storeID != id {
		t.storeID, t.modelID = id, ""
	}
}

// UseStore binds the client to storeID and modelID.
func (t *target) UseStore(storeID, modelID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.storeID, t.modelID = storeID, modelID
}

func (t *target) setModel(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.modelID = id
}

// Embedded runs OpenFGA in-process: the same server code as OpenFGA's
// standalone binary, called directly instead of over the network.
type Embedded struct {
	target
	srv      *server.Server
	maxBatch int
	// ds is the datastore; where names it (host:port) when it is a
	// PostgreSQL database that can be down, "" for the memory datastore.
	ds    storage.OpenFGADatastore
	where string
}

var _ Client = (*Embedded)(nil)

// NewMemory starts an embedded OpenFGA on a fresh in-memory datastore (for
// tests and `ledgerctl fga test`; everything is lost on Close).
func NewMemory(opts Options) (*Embedded, error) {
	return newEmbedded(memory.New(), opts)
}

func newEmbedded(ds storage.OpenFGADatastore, opts Options) (*Embedded, error) {
	srv, err := server.NewServerWithOpts(
		server.WithDatastore(ds),
		server.WithMaxChecksPerBatchCheck(uint32(opts.maxBatch())),
	)
	if err != nil {
		ds.Close()
		return nil, fmt.Errorf("start embedded OpenFGA: %w", err)
	}
	e := &Embedded{srv: srv, maxBatch: opts.maxBatch(), ds: ds}
	e.storeID, e.modelID = opts.StoreID, opts.ModelID
	return e, nil
}

// Close stops the server and closes its datastore.
func (e *Embedded) Close() error {
	e.srv.Close()
	return nil
}

func (e *Embedded) Check(ctx context.Context, r CheckRequest) (bool, error) {
	store, err := e.store()
	if err != nil {
		return false, err
	}
	tk, contextual, cctx, err := toCheckParts(r)
	if err != nil {
		return false, err
	}
	_, model := e.Target()
	res, err := e.srv.Check(ctx, &openfgav1.CheckRequest{
		StoreId:              store,
		AuthorizationModelId: model,
		TupleKey:             tk,
		ContextualTuples:     contextual,
		Context:              cctx,
		Consistency:          openfgav1.ConsistencyPreference_HIGHER_CONSISTENCY,
	})
	if err != nil {
		return false, e.fail(ctx, "check", err)
	}
	return res.GetAllowed(), nil
}

func (e *Embedded) BatchCheck(ctx context.Context, reqs []CheckRequest) ([]bool, error) {
	store, err := e.store()
	if err != nil {
		return nil, err
	}
	_, model := e.Target()
	return batchInChunks(ctx, reqs, e.maxBatch, func(ctx context.Context, chunk []CheckRequest) ([]bool, error) {
		items := make([]*openfgav1.BatchCheckItem, len(chunk))
		for i, r := range chunk {
			tk, contextual, cctx, err := toCheckParts(r)
			if err != nil {
				return nil, err
			}
			items[i] = &openfgav1.BatchCheckItem{TupleKey: tk, ContextualTuples: contextual, Context: cctx, CorrelationId: strconv.Itoa(i)}
		}
		res, err := e.srv.BatchCheck(ctx, &openfgav1.BatchCheckRequest{StoreId: store, AuthorizationModelId: model, Checks: items})
		if err != nil {
			return nil, e.fail(ctx, "batch check", err)
		}
		out := make([]bool, len(chunk))
		for i := range chunk {
			one, ok := res.GetResult()[strconv.Itoa(i)]
			if !ok {
				return nil, &Error{Op: "batch check", Err: fmt.Errorf("no answer for check %d", i)}
			}
			if ce := one.GetError(); ce != nil {
				code := ce.GetInputError().String()
				if ce.GetInputError() == 0 {
					code = ce.GetInternalError().String()
				}
				err := &Error{Op: "batch check", Kind: kindOfCode(code), Code: code, Err: fmt.Errorf("%s: %s", chunk[i].describe(), ce.GetMessage())}
				if ce.GetInputError() == 0 {
					return nil, e.outage(ctx, err) // an item's internal error carries no cause but its message
				}
				return nil, err
			}
			out[i] = one.GetAllowed()
		}
		return out, nil
	})
}

func (e *Embedded) Write(ctx context.Context, writes, deletes []Tuple) error {
	return e.write(ctx, writes, deletes, false)
}

func (e *Embedded) WriteIdempotent(ctx context.Context, writes, deletes []Tuple) error {
	return writeIdempotent(ctx, e, writes, deletes)
}

func (e *Embedded) write(ctx context.Context, writes, deletes []Tuple, ignore bool) error {
	if len(writes) == 0 && len(deletes) == 0 {
		return nil
	}
	store, err := e.store()
	if err != nil {
		return err
	}
	_, model := e.Target()
	req := &openfgav1.WriteRequest{StoreId: store, AuthorizationModelId: model}
	if len(writes) > 0 {
		keys, err := toTupleKeys(writes)
		if err != nil {
			return err
		}
		req.Writes = &openfgav1.WriteRequestWrites{TupleKeys: keys}
		if ignore {
			req.Writes.OnDuplicate = "ignore"
		}
	}
	if len(deletes) > 0 {
		req.Deletes = &openfgav1.WriteRequestDeletes{}
		for _, t := range deletes {
			req.Deletes.TupleKeys = append(req.Deletes.TupleKeys, &openfgav1.TupleKeyWithoutCondition{User: t.User, Relation: t.Relation, Object: t.Object})
		}
		if ignore {
			req.Deletes.OnMissing = "ignore"
		}
	}
	_, err = e.srv.Write(ctx, req)
	return e.fail(ctx, "write", err)
}

func (e *Embedded) ReadTuple(ctx context.Context, t Tuple) (bool, error) {
	store, err := e.store()
	if err != nil {
		return false, err
	}
	res, err := e.srv.Read(ctx, &openfgav1.ReadRequest{
		StoreId:     store,
		TupleKey:    &openfgav1.ReadRequestTupleKey{User: t.User, Relation: t.Relation, Object: t.Object},
		PageSize:    wrapperspb.Int32(1),
		Consistency: openfgav1.ConsistencyPreference_HIGHER_CONSISTENCY,
	})
	if err != nil {
		return false, e.fail(ctx, "read", err)
	}
	return len(res.GetTuples()) > 0, nil
}

func (e *Embedded) WriteModel(ctx context.Context, dsl string) (string, error) {
	store, err := e.store()
	if err != nil {
		return "", err
	}
	m, err := ParseModel(dsl)
	if err != nil {
		return "", err
	}
	res, err := e.srv.WriteAuthorizationModel(ctx, writeModelRequest(store, m))
	if err != nil {
		return "", e.fail(ctx, "write model", err)
	}
	e.setModel(res.GetAuthorizationModelId())
	return res.GetAuthorizationModelId(), nil
}

func (e *Embedded) ReadModel(ctx context.Context) (Model, error) {
	store, err := e.store()
	if err != nil {
		return Model{}, err
	}
	var m *openfgav1.AuthorizationModel
	if _, id := e.Target(); id != "" {
		res, err := e.srv.ReadAuthorizationModel(ctx, &openfgav1.ReadAuthorizationModelRequest{StoreId: store, Id: id})
		if err != nil {
			return Model{}, e.fail(ctx, "read model", err)
		}
		m = res.GetAuthorizationModel()
	} else {
		res, err := e.srv.ReadAuthorizationModels(ctx, &openfgav1.ReadAuthorizationModelsRequest{StoreId: store, PageSize: wrapperspb.Int32(1)})
		if err != nil {
			return Model{}, e.fail(ctx, "read model", err)
		}
		if len(res.GetAuthorizationModels()) == 0 {
			return Model{}, &Error{Op: "read model", Kind: KindNotFound, Code: "latest_authorization_model_not_found", Err: errors.New("the store has no model: run `ledgerctl fga deploy`")}
		}
		m = res.GetAuthorizationModels()[0]
	}
	dsl, err := modelDSL(m)
	if err != nil {
		return Model{}, err
	}
	return Model{ID: m.GetId(), DSL: dsl}, nil
}

func (e *Embedded) ReadTuples(ctx context.Context, continuation string) ([]Tuple, string, error) {
	store, err := e.store()
	if err != nil {
		return nil, "", err
	}
	res, err := e.srv.Read(ctx, &openfgav1.ReadRequest{
		StoreId:           store,
		PageSize:          wrapperspb.Int32(readPageSize),
		ContinuationToken: continuation,
		Consistency:       openfgav1.ConsistencyPreference_HIGHER_CONSISTENCY,
	})
	if err != nil {
		return nil, "", e.fail(ctx, "read", err)
	}
	out := make([]Tuple, 0, len(res.GetTuples()))
	for _, t := range res.GetTuples() {
		out = append(out, fromTupleKey(t.GetKey()))
	}
	return out, res.GetContinuationToken(), nil
}

func (e *Embedded) FindStore(ctx context.Context, name string) (string, error) {
	token := ""
	for {
		res, err := e.srv.ListStores(ctx, &openfgav1.ListStoresRequest{Name: name, ContinuationToken: token, PageSize: wrapperspb.Int32(100)})
		if err != nil {
			return "", e.fail(ctx, "list stores", err)
		}
		for _, s := range res.GetStores() {
			if s.GetName() == name {
				return s.GetId(), nil
			}
		}
		if token = res.GetContinuationToken(); token == "" {
			return "", nil
		}
	}
}

func (e *Embedded) FindOrCreateStore(ctx context.Context, name string) (string, error) {
	id, err := e.FindStore(ctx, name)
	if err != nil {
		return "", err
	}
	if id != "" {
		e.setStore(id)
		return id, nil
	}
	res, err := e.srv.CreateStore(ctx, &openfgav1.CreateStoreRequest{Name: name})
	if err != nil {
		return "", e.fail(ctx, "create store", err)
	}
	e.setStore(res.GetId())
	return res.GetId(), nil
}

func (r CheckRequest) describe() string {
	return r.User + " " + r.Relation + " " + r.Object
}
