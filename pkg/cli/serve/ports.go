package serve

import (
	"errors"
	"net"
	"strconv"
	"syscall"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
)

// checkPortOnly is serve --check-port: it loads the configuration (no
// setting is required: a fresh clone has none yet) and checks the API port.
func checkPortOnly(f *cmdutil.Factory) error {
	s, err := f.Settings()
	if err != nil {
		return err
	}
	return CheckAPIPort(s.APIHost, s.APIPort)
}

// CheckAPIPort binds host:port for a moment and lets it go: serve and dev
// demo call it before they open any dependency, so a port another program
// holds stops them at once with a sentence naming the setting and a free
// port (exit 2) rather than after the stack started. Port 0 (any free
// port) is not checked. Any other listen error is left to serve, which
// refuses unsafe addresses first and reports the rest when it listens.
func CheckAPIPort(host string, port int) error {
	if port == 0 {
		return nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return portError(host, port, err)
	}
	return ln.Close()
}

// portError is the usage error (exit 2) for a listen error that says the
// port is taken, naming CAPTURE_LEDGER_API_PORT and a free port near it;
// nil for any other error.
func portError(host string, port int, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return nil
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	free := freePortNear(host, port)
	if free == 0 {
		return cmdutil.Usagef("CAPTURE_LEDGER_API_PORT=%d is taken: another program listens on %s. Set CAPTURE_LEDGER_API_PORT to a free port (make run CAPTURE_LEDGER_API_PORT=<port>, or in .env.local)", port, addr)
	}
	return cmdutil.Usagef("CAPTURE_LEDGER_API_PORT=%d is taken: another program listens on %s. Use a free port, e.g. make run CAPTURE_LEDGER_API_PORT=%d (or CAPTURE_LEDGER_API_PORT=%d in .env.local)", port, addr, free, free)
}

// freePortNear is the first port above port (within 100) that host lets
// this process bind, 0 when none is.
func freePortNear(host string, port int) int {
	for p := port + 1; p <= port+100 && p <= 65535; p++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			_ = ln.Close()
			return p
		}
	}
	return 0
}
