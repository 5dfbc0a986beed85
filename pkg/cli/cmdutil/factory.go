package cmdutil

import (
	"fmt"
	"os"
	"sync"

	"github.com/spf13/pflag"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// Factory builds what commands need, lazily, so help and completion never
// read configuration or open a connection.
type Factory struct {
	Streams Streams
	// Dir is where .env and .env.local are read and .env.local is written.
	Dir string

	// Flags are the executing command's flags, the top layer of the
	// configuration (the root command sets them).
	Flags *pflag.FlagSet
	// JSONErrors (--json-errors) prints errors on stderr as one JSON object.
	JSONErrors bool
	// Verbose prints which env files were read (names only) on stderr;
	// serve always does, in its startup notes.
	Verbose bool
	// Env, when set, is the environment the commands read instead of the
	// process's (tests give each run its own); nil reads os.LookupEnv.
	Env func(name string) (string, bool)
	// Confirm, when set, answers the questions commands ask on a terminal
	// (tests); nil asks on stdin when stdin and stderr are a terminal.
	Confirm func(question string) (asked, yes bool)

	cfgOnce sync.Once
	cfg     *config.Config
	cfgErr  error

	closers []func()
}

// App builds the application from settings that must include require.
func (f *Factory) App(require ...string) (*app.App, error) {
	s, err := f.Settings(require...)
	if err != nil {
		return nil, err
	}
	a := app.New(s, nil)
	f.OnClose(a.Close)
	return a, nil
}

// NewFactory returns a Factory reading env files from the working directory.
func NewFactory(s Streams) *Factory {
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	return &Factory{Streams: s, Dir: dir}
}

// Config loads the configuration once. With --verbose it prints, on stderr,
// which env files were read (names only, never values).
func (f *Factory) Config() (*config.Config, error) {
	f.cfgOnce.Do(func() {
		f.cfg, f.cfgErr = config.LoadEnv(f.Dir, f.Flags, f.LookupEnv)
		if f.cfgErr == nil && f.Verbose {
			fmt.Fprintln(f.Streams.Err, f.cfg.Note())
		}
	})
	return f.cfg, f.cfgErr
}

// Settings loads, checks that every name in require is set (naming all that
// are missing at once), and validates every value.
func (f *Factory) Settings(require ...string) (config.Settings, error) {
	c, err := f.Config()
	if err != nil {
		return config.Settings{}, err
	}
	if err := c.Require(require...); err != nil {
		if !f.Verbose { // where the values were looked for helps here
			fmt.Fprintln(f.Streams.Err, c.Note())
		}
		return config.Settings{}, err
	}
	return c.Settings()
}

// OnClose registers cleanup run after the command returns.
func (f *Factory) OnClose(fn func()) { f.closers = append(f.closers, fn) }

func (f *Factory) Close() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
	f.closers = nil
}

// LookupEnv reads one environment variable through Env, else the process.
func (f *Factory) LookupEnv(name string) (string, bool) {
	if f.Env != nil {
		return f.Env(name)
	}
	return os.LookupEnv(name)
}
