package cmdutil

import (
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// Lang is the language of the sentences a command prints for people:
// English, or Japanese when the terminal's locale prefers it (LC_ALL, else
// LC_MESSAGES, else LANG; see i18n.FromLocale). It is read from the process
// environment, as settings are, but never from .env files: the locale is the
// reader's, not the deployment's. --json output never depends on it.
func (f *Factory) Lang() i18n.Lang {
	return i18n.FromLocale(func(name string) string { v, _ := f.LookupEnv(name); return v })
}
