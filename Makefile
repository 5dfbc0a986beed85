# capture-ledger (ledgerctl). `make test` and `make run` set everything up
# themselves on a fresh Debian machine with Go: PostgreSQL binaries (apt, only
# when missing), versitygw and gotestsum (go install, cached in TOOLS).
SHELL      := /bin/bash
# STATE is the stack `make run` / `make stack-up` use; TEST_STATE is the one
# `make test` starts and stops. They must differ: tests never touch the stack
# `make run` is serving from.
STATE      ?= .state
TEST_STATE ?= $(STATE)/test
TOOLS      ?= $(HOME)/.cache/ledgerctl/bin
VERSITYGW  := $(TOOLS)/versitygw
GOTESTSUM  := $(TOOLS)/gotestsum
BIN        := bin/ledgerctl
TESTFLAGS  ?= -count=1 -timeout 40m
PKGS       ?= ./...

.PHONY: all build vet test run stack-up stack-down tools postgres chromium completions generate clean replay-viewer replay-key

all: build

# The version, commit and commit date of the checkout go into the binary
# (`ledgerctl version`); outside a git checkout they stay "dev" and empty.
CLIPKG     := github.com/capture-ledger/ledgerctl/pkg/cli
GIT_VER    := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GIT_COMMIT := $(shell git rev-parse HEAD 2>/dev/null)
GIT_DATE   := $(shell git log -1 --format=%cI 2>/dev/null)
LDFLAGS    := -X $(CLIPKG)/cmdutil.Version=$(GIT_VER) -X $(CLIPKG)/cmdutil.Commit=$(GIT_COMMIT) -X $(CLIPKG)/cmdutil.Date=$(GIT_DATE)

build:
	go build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ledgerctl

vet:
	go vet ./...
	go test -count=1 -run 'TestImportDirection|TestCheckCatchesWrongArrows' ./pkg/archtest
	@test -z "$$(gofmt -l cmd pkg migrations fga)" || { echo "gofmt needed:"; gofmt -l cmd pkg migrations fga; exit 1; }

tools: $(VERSITYGW) $(GOTESTSUM)

$(VERSITYGW):
	@echo "installing versitygw v1.8.0 into $(TOOLS) (once; takes a few minutes)"
	GOBIN=$(TOOLS) go install github.com/versity/versitygw/cmd/versitygw@v1.8.0

$(GOTESTSUM):
	GOBIN=$(TOOLS) go install gotest.tools/gotestsum@v1.13.0

# apt-get waits up to 10 minutes for the locks another apt holds (an
# unattended upgrade, say) rather than failing at once: install through
# DPkg::Lock::Timeout; update, which that option does not make wait for the
# package lists' lock, is retried every 5 s while its error is that lock.
APT_LOCK   := -o DPkg::Lock::Timeout=600
APT_UPDATE := for i in $$(seq 120); do \
		if out="$$(apt-get $(APT_LOCK) update -qq 2>&1)"; then break; fi; \
		if ! grep -q 'Could not get lock' <<<"$$out" || [ "$$i" = 120 ]; then echo "$$out" >&2; exit 1; fi; \
		if [ "$$i" = 1 ]; then echo "waiting for the apt lock another apt-get holds (up to 10 minutes)"; fi; \
		sleep 5; \
	done

# PostgreSQL 15 server binaries; installed from Debian only when missing.
postgres:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing PostgreSQL (apt-get)"; \
		$(APT_UPDATE); DEBIAN_FRONTEND=noninteractive apt-get $(APT_LOCK) install -y -qq postgresql >/dev/null; \
	else echo "PostgreSQL server binaries are missing: sudo apt-get install -y postgresql" >&2; exit 1; fi

# Chromium (the browser capture engine, the replay tests) and CJK fonts
# (screenshots of Japanese pages); installed from Debian only when missing.
# CAPTURE_LEDGER_CHROMIUM_PATH points at another browser instead.
chromium:
	@if { [ -n "$${CAPTURE_LEDGER_CHROMIUM_PATH:-}" ] || command -v chromium >/dev/null 2>&1; } && \
		dpkg -s fonts-noto-cjk >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Chromium and CJK fonts (apt-get)"; \
		$(APT_UPDATE); DEBIAN_FRONTEND=noninteractive apt-get $(APT_LOCK) install -y -qq chromium fonts-noto-cjk >/dev/null; \
	else echo "Chromium is missing: sudo apt-get install -y chromium fonts-noto-cjk (or set CAPTURE_LEDGER_CHROMIUM_PATH)" >&2; exit 1; fi

# ReplayWeb.page, the archive viewer `serve` offers at /replay/: the
# replaywebpage npm package, pinned and checked against its registry
# integrity, unpacked (never committed) into REPLAY_VIEWER — the default of
# CAPTURE_LEDGER_REPLAY_VIEWER_DIR. Only its prebuilt ui.js and sw.js are
# served, unmodified; it is AGPL-3.0 (docs/replay.md). `npm pack` fetches
# the one package without its build dependencies, which the viewer does
# not need.
REPLAY_VERSION   := 2.5.3
REPLAY_INTEGRITY := sha512-nCj2PSON3BxeSJKE8AsYPyULv0XPZKJWfy4l9PyQre9SqwLZ+WKZVs/sfLqPOQ4GrH+0YkjbwOhr8cSTH08gsQ==
REPLAY_VIEWER    := .state/replay/replaywebpage-$(REPLAY_VERSION)

replay-viewer: $(REPLAY_VIEWER)/sw.js

$(REPLAY_VIEWER)/sw.js:
	@command -v npm >/dev/null || { echo "npm is needed to fetch ReplayWeb.page (apt-get install -y npm)" >&2; exit 1; }
	@echo "fetching ReplayWeb.page $(REPLAY_VERSION) (npm replaywebpage, AGPL-3.0) into $(REPLAY_VIEWER)"
	@set -euo pipefail; tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	npm pack --silent --pack-destination "$$tmp" replaywebpage@$(REPLAY_VERSION) >/dev/null; \
	got="sha512-$$(openssl dgst -sha512 -binary "$$tmp/replaywebpage-$(REPLAY_VERSION).tgz" | base64 -w0)"; \
	if [ "$$got" != "$(REPLAY_INTEGRITY)" ]; then echo "replaywebpage-$(REPLAY_VERSION).tgz: integrity $$got, want $(REPLAY_INTEGRITY)" >&2; exit 1; fi; \
	tar -xzf "$$tmp/replaywebpage-$(REPLAY_VERSION).tgz" -C "$$tmp"; \
	mkdir -p "$(dir $(REPLAY_VIEWER))"; rm -rf "$(REPLAY_VIEWER)"; mv "$$tmp/package" "$(REPLAY_VIEWER)"
	@test -s $(REPLAY_VIEWER)/ui.js && test -s $(REPLAY_VIEWER)/sw.js

# A random CAPTURE_LEDGER_REPLAY_KEY in .env.local, unless one is set already
# (shell, .env or .env.local): replay links must outlive a restart of serve
# and be signed alike by `ledgerctl archives open`.
replay-key:
	@if [ -n "$${CAPTURE_LEDGER_REPLAY_KEY:-}" ] || grep -qs '^[[:space:]]*\(export[[:space:]]\+\)\?CAPTURE_LEDGER_REPLAY_KEY=[^[:space:]]' .env .env.local; then :; else \
		( umask 077; printf 'CAPTURE_LEDGER_REPLAY_KEY=%s\n' "$$(openssl rand -base64 48 | tr -d '\n')" >> .env.local ); \
		echo "wrote a random CAPTURE_LEDGER_REPLAY_KEY to .env.local"; fi

# Restarts the `make run` stack on the ports it had (.env.local is rewritten
# should a port have to change).
stack-up: build tools postgres
	./$(BIN) dev stack up --dir $(STATE) --versitygw $(VERSITYGW) --env-local

stack-down: build
	./$(BIN) dev stack down --dir $(STATE)

# Starts the test stack (under TEST_STATE, never the `make run` one), runs
# every test against it (unit, integration, fuzz seed corpora), and stops that
# stack whatever the outcome. A line per package appears as each package
# finishes (two run at once on two cores); the slowest packages take minutes
# on their own, so the end of the run is quiet while they finish. Every test
# event goes to $(TEST_STATE)/test-events.json, and the slowest packages are
# listed at the end (`$(GOTESTSUM) tool slowest --jsonfile …` lists tests).
test: build tools postgres chromium vet replay-viewer
	@if [ "$(abspath $(TEST_STATE))" = "$(abspath $(STATE))" ]; then \
		echo "TEST_STATE must differ from STATE ($(STATE)): make test would stop the make run stack" >&2; exit 2; fi
	@set -euo pipefail; \
	trap './$(BIN) dev stack down --dir $(TEST_STATE) >/dev/null 2>&1 || true' EXIT; \
	eval "$$(./$(BIN) dev stack up --dir $(TEST_STATE) --versitygw $(VERSITYGW) --shell)"; \
	echo "running the tests: a line per package as it finishes; the slowest take minutes alone"; \
	status=0; $(GOTESTSUM) --format pkgname-and-test-fails --format-hide-empty-pkg --jsonfile $(TEST_STATE)/test-events.json -- $(TESTFLAGS) $(PKGS) || status=$$?; \
	echo "slowest packages (seconds):"; \
	grep -E '"Action":"(pass|fail)","Package":"[^"]*","Elapsed"' $(TEST_STATE)/test-events.json | \
		sed -E 's/.*"Package":"([^"]*)","Elapsed":([0-9.]+).*/  \2 \1/' | sort -rn | head -5 || true; \
	exit $$status

# Starts the single-machine stack (PostgreSQL + versitygw under .state),
# prepares the ledger database, bucket and OpenFGA model (settings go to
# .env.local), then runs `ledgerctl dev demo` with the dev identity headers
# (loopback only): it serves the bundled demo site on 127.0.0.1, grants the
# dev user submitter on the demo organization, starts a crawl of the site,
# prints the console URL and the `crawl status --watch` command, and runs
# serve. Captures may reach loopback (CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1)
# for that command only. DEMO=0 runs plain `ledgerctl serve` instead.
# CAPTURE_LEDGER_API_PORT (default 7070) is checked first: taken, make run
# stops before the stack starts and names a free port
# (make run CAPTURE_LEDGER_API_PORT=7071).
# DEV_IDENTITY=0 shows the console's OIDC sign-in instead of the names
# form: it starts `ledgerctl dev issuer` (127.0.0.1:9099) next to serve and
# points serve at it (CAPTURE_LEDGER_OIDC_ISSUER, CAPTURE_LEDGER_OIDC_CLIENT_ID);
# "Sign in" then leads to the issuer's page, where any subject and
# organizations may be typed.
# Ctrl-C stops serve; `make stack-down` stops the stack.
DEMO ?= 1
DEV_IDENTITY ?= 1
run: build tools postgres chromium replay-viewer
	@./$(BIN) serve --check-port
	./$(BIN) dev stack up --dir $(STATE) --versitygw $(VERSITYGW) --env-local
	@$(MAKE) --no-print-directory replay-key
	./$(BIN) migrate up
	./$(BIN) fga deploy >/dev/null
	@echo
	@echo "Stop serve with Ctrl-C, the stack with: make stack-down"
	@if [ "$(DEV_IDENTITY)" = 0 ]; then \
		issuer="http://127.0.0.1:$${CAPTURE_LEDGER_DEV_ISSUER_PORT:-9099}"; \
		echo "Sign-in: OIDC against the dev issuer at $$issuer (client capture-ledger-console): ./$(BIN) dev issuer"; \
		./$(BIN) dev issuer & issuer_pid=$$!; trap 'kill $$issuer_pid 2>/dev/null' EXIT INT TERM; \
		export CAPTURE_LEDGER_DEV_IDENTITY= CAPTURE_LEDGER_OIDC_ISSUER=$$issuer CAPTURE_LEDGER_OIDC_CLIENT_ID=capture-ledger-console; \
		if [ "$(DEMO)" = 0 ]; then \
			echo "Console: $$(./$(BIN) serve --print-url)  (Sign in, then type any subject and organization at the dev issuer)"; echo; \
			./$(BIN) serve; \
		else \
			CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1 ./$(BIN) dev demo; \
		fi; \
	elif [ "$(DEMO)" = 0 ]; then \
		echo "Console: $$(./$(BIN) serve --print-url)  (dev identity: type any subject and organization)"; echo; \
		echo "CAPTURE_LEDGER_DEV_IDENTITY=$${CAPTURE_LEDGER_DEV_IDENTITY:-1} ./$(BIN) serve"; \
		CAPTURE_LEDGER_DEV_IDENTITY=$${CAPTURE_LEDGER_DEV_IDENTITY:-1} exec ./$(BIN) serve; \
	else \
		echo "CAPTURE_LEDGER_DEV_IDENTITY=$${CAPTURE_LEDGER_DEV_IDENTITY:-1} CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1 ./$(BIN) dev demo"; \
		CAPTURE_LEDGER_DEV_IDENTITY=$${CAPTURE_LEDGER_DEV_IDENTITY:-1} CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1 exec ./$(BIN) dev demo; \
	fi

# Regenerates completions/, .env.example and docs/configuration.md.
generate: build
	./$(BIN) completion bash > completions/ledgerctl.bash
	./$(BIN) completion zsh > completions/_ledgerctl
	./$(BIN) completion fish > completions/ledgerctl.fish
	go test ./pkg/config ./pkg/cli -run 'Golden|Drift' -update >/dev/null

completions: generate

clean:
	-./$(BIN) dev stack down --dir $(TEST_STATE)
	-./$(BIN) dev stack down --dir $(STATE)
	rm -rf bin $(STATE)
