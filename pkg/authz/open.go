package authz

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// ErrNoDatastore says embedded mode has nowhere to keep its tuples.
var ErrNoDatastore = errors.New("OpenFGA runs embedded (CAPTURE_LEDGER_FGA_API_URL is unset) and needs a PostgreSQL datastore: set CAPTURE_LEDGER_FGA_DATASTORE_URI, or DATABASE_URL to use a database named <ledger db>_fga next to it")

// OpenOptions tune Open.
type OpenOptions struct {
	// Prepare creates the embedded datastore's database when it is missing
	// and runs OpenFGA's migrations (what `ledgerctl fga deploy` does).
	Prepare bool
	// Unbound ignores the configured store and model ids (deploy finds the
	// store by name instead).
	Unbound bool
}

// Open is the one place a Client is built from configuration:
// CAPTURE_LEDGER_FGA_API_URL set → Remote (with the preshared key in
// CAPTURE_LEDGER_FGA_API_TOKEN); unset → Embedded on the PostgreSQL
// datastore at CAPTURE_LEDGER_FGA_DATASTORE_URI. The client is bound to
// CAPTURE_LEDGER_FGA_STORE_ID and _MODEL_ID unless o.Unbound.
func Open(ctx context.Context, s config.Settings, o OpenOptions) (Client, error) {
	opts := Options{StoreID: s.FGAStoreID, ModelID: s.FGAModelID}
	if o.Unbound {
		opts = Options{}
	}
	if s.FGAAPIURL != "" {
		return NewRemote(RemoteOptions{Options: opts, URL: s.FGAAPIURL, Token: s.FGAAPIToken})
	}
	if s.FGADatastoreURI == "" {
		return nil, ErrNoDatastore
	}
	if o.Prepare {
		if err := PreparePostgres(ctx, s.FGADatastoreURI); err != nil {
			return nil, err
		}
	}
	return NewPostgres(ctx, s.FGADatastoreURI, opts)
}

// Where says, for messages, which OpenFGA the settings point at.
func Where(s config.Settings) string {
	if s.FGAAPIURL != "" {
		return "OpenFGA at " + s.FGAAPIURL
	}
	if s.FGADatastoreURI == "" {
		return "embedded OpenFGA"
	}
	return "embedded OpenFGA (datastore at " + pgHost(s.FGADatastoreURI) + ")"
}

// Deployment is what Deploy did.
type Deployment struct {
	StoreName string `json:"storeName"`
	StoreID   string `json:"storeId"`
	ModelID   string `json:"modelId"`
	// Reused says the store's latest model already was this model, so no
	// new model was written and the pinned id stays valid.
	Reused bool `json:"reused"`
}

// SameModel says whether two DSL texts define the same model (comments and
// layout aside).
func SameModel(a, b string) bool {
	ma, errA := ParseModel(a)
	mb, errB := ParseModel(b)
	if errA != nil || errB != nil {
		return false
	}
	ma.Id, mb.Id = "", ""
	return proto.Equal(ma, mb)
}

// Deploy binds c to the store named storeName (creating it when missing) and
// writes the model dsl there. Models are immutable and every write makes a
// new id, which callers pin; when the store's latest model already is dsl,
// its id is returned and nothing is written, so deploying twice is a no-op.
func Deploy(ctx context.Context, c Client, storeName, dsl string) (Deployment, error) {
	if _, err := ParseModel(dsl); err != nil {
		return Deployment{}, err
	}
	storeID, err := c.FindOrCreateStore(ctx, storeName)
	if err != nil {
		return Deployment{}, err
	}
	if latest, err := c.ReadModel(ctx); err == nil && SameModel(latest.DSL, dsl) {
		return Deployment{StoreName: storeName, StoreID: storeID, ModelID: latest.ID, Reused: true}, nil
	}
	modelID, err := c.WriteModel(ctx, dsl)
	if err != nil {
		return Deployment{}, err
	}
	return Deployment{StoreName: storeName, StoreID: storeID, ModelID: modelID}, nil
}
