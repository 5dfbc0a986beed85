package authz

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/pgaddr"
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
	return "embedded OpenFGA (datastore at " + pgaddr.Host(s.FGADatastoreURI, "CAPTURE_LEDGER_FGA_DATASTORE_URI") + ")"
}

// Deployment is what Deploy did.
type Deployment struct {
	StoreName string `json:"storeName"`
	StoreID   string `json:"storeId"`
	ModelID   string `json:"modelId"`
	// Reused says the store's latest model already was this model, so no
	// new model was written and the pinned id stays valid.
	Reused bool `json:"reused"`
	// MigratedFrom is the legacy store whose tuples were copied into this
	// one (left as it was), nil when nothing was migrated.
	MigratedFrom *StoreRef `json:"migratedFrom,omitempty"`
	// MigratedTuples is how many tuples were copied from MigratedFrom (all
	// of its tuples, also when the copy resumed an earlier one).
	MigratedTuples int `json:"migratedTuples"`
}

// StoreRef names an OpenFGA store.
type StoreRef struct {
	Name string `json:"name"`
	ID   string `json:"id"`
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
//
// When storeName is DefaultStoreName, no store has that name and a store
// named LegacyStoreName exists, Deploy creates the new store, writes the
// model and copies every tuple of the legacy store into it (see
// copyLegacyTuples); the legacy store is only read. A copy that stopped (a
// *MigrationError) is resumed by the next Deploy; a finished one is never
// repeated.
func Deploy(ctx context.Context, c Client, storeName, dsl string) (Deployment, error) {
	if _, err := ParseModel(dsl); err != nil {
		return Deployment{}, err
	}
	legacy, err := pendingMigration(ctx, c, storeName)
	if err != nil {
		return Deployment{}, err
	}
	storeID, err := c.FindOrCreateStore(ctx, storeName)
	if err != nil {
		return Deployment{}, err
	}
	d := Deployment{StoreName: storeName, StoreID: storeID}
	if latest, err := c.ReadModel(ctx); err == nil && SameModel(latest.DSL, dsl) {
		d.ModelID, d.Reused = latest.ID, true
	} else {
		if d.ModelID, err = c.WriteModel(ctx, dsl); err != nil {
			return Deployment{}, err
		}
	}
	if legacy != nil {
		n, err := copyLegacyTuples(ctx, c, *legacy, StoreRef{Name: storeName, ID: storeID}, d.ModelID)
		if err != nil {
			return Deployment{}, err
		}
		d.MigratedFrom, d.MigratedTuples = legacy, n
	}
	return d, nil
}
