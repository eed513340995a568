# make test installs what the tests need on a fresh machine (Go modules, the
# npm tools under integration/js) and runs the whole suite.

GO        ?= go
NPM_DIR   := integration/js
GOTEST    := $(GO) test -count=1 -timeout 14m

FUZZTIME  ?= 5s
# Fuzz targets of the REST parsers; go test -fuzz takes one target at a time.
REST_FUZZ := FuzzParseRange FuzzParsePath FuzzSharedKey FuzzParseAttributes \
             FuzzParseSMBTime FuzzParseMetadata FuzzDecodeXMLBody
# Fuzz targets of the other packages (the SMB server, the Queue, Blob and
# Table services, structured bodies, secdesc): package:target.
PKG_FUZZ  := smb:FuzzHeader smb:FuzzFrame smb:FuzzMatchPattern smb/ntlm:FuzzUnwrap smb/ntlm:FuzzNTLM \
             queue:FuzzMessageBody queue:FuzzQueueRequest secdesc:FuzzPermission \
             blob:FuzzParseBlockList blob:FuzzRangeHeader blobsvc:FuzzMatchTags storagehttp:FuzzReadBatch \
             storagehttp:FuzzStructuredMessage \
             table:FuzzParsePath table:FuzzDecodeEntity table:FuzzReadBatch table:FuzzTableRequest \
             tablesvc:FuzzParseFilter tablesvc:FuzzDecodeProps tablesvc:FuzzValidateKey

# Debian packages the tests drive: rsync (the mount's timestamp tests),
# smbclient and impacket (real SMB clients), samba and samba-testsuite
# (smbtorture, and smbd as the oracle for its test list), smbnetfs (a FUSE
# file system over the SMB endpoint), qemu-system-x86 (boots the guest
# whose kernel SMB client `make cifs` tests), xz-utils (unpacks the guest's
# kernel so it boots in seconds under TCG), postgresql (the PostgreSQL
# stores' tests start a throwaway cluster of their own with its binaries),
# fuse3 (fusermount3, through which rclone's mount, bazil.org/fuse, mounts in
# the peer benchmarks; it replaces Debian's fuse and keeps fusermount as a
# link to fusermount3).
DEB_PKGS  := rsync smbclient python3-impacket samba samba-testsuite smbnetfs qemu-system-x86 xz-utils postgresql fuse3

# CIFS_ROOT holds the Debian kernel (linux-image-amd64, with cifs.ko) and
# busybox-static that TestLinuxCIFSClient boots in QEMU: downloaded and
# extracted with dpkg-deb -x, never installed, so nothing runs on the host
# (no bootloader or initramfs hooks) and the host's own busybox is left
# alone. The test finds it through BLOBSHARE_CIFS_ROOT or, by default,
# this same directory.
CIFS_ROOT ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/blobshare/cifs-guest

# The packages whose goroutines share state; their tests also run under the
# race detector (about 4 minutes on a 2-core machine).
RACE_PKGS := ./locks ./fs ./internal/endpoint ./msgqueue/... ./blob ./blobsvc/... ./table ./tablesvc/... ./internal/pgdb

# RCLONE_DIR is a module of its own (rclone's dependencies stay out of
# go.mod): rclone's azurefiles backend, as a library, against blobshare.
RCLONE_DIR := integration/rclone

.PHONY: test deps npm node debs vet unit race fuzz bench build rclone cifs cifs-guest sdktests

# test runs the main module's tests and the rclone module's through
# internal/testsummary (go test's usual output, counts of the test
# functions), then race and fuzz, and always ends with one line CI reads:
# "N passed, M failed, K skipped" (the test functions of the two go test
# runs). A failure anywhere still fails make test, after that line.
SUMMARY := $(CURDIR)/bin/testsummary
COUNTS  := $(CURDIR)/bin/test-counts.json

test: deps vet
	@$(GO) build -o $(SUMMARY) ./internal/testsummary
	@rm -f $(COUNTS); failed=; \
	$(SUMMARY) -state $(COUNTS) -- $(GOTEST) -json ./... || failed="$$failed test"; \
	(cd $(RCLONE_DIR) && $(SUMMARY) -state $(COUNTS) -- $(GO) test -count=1 -timeout 5m -json ./...) || failed="$$failed rclone"; \
	$(MAKE) --no-print-directory sdktests || failed="$$failed sdktests"; \
	$(MAKE) --no-print-directory race || failed="$$failed race"; \
	$(MAKE) --no-print-directory fuzz || failed="$$failed fuzz"; \
	if [ -n "$$failed" ]; then echo "make test: failed:$$failed (output above)"; fi; \
	$(SUMMARY) -state $(COUNTS) -print; \
	[ -z "$$failed" ]

# rclone runs the nested module's tests (a real Azure Files sync client).
rclone: npm
	cd $(RCLONE_DIR) && $(GO) test -count=1 -timeout 5m ./...

# sdktests runs the Azure SDK for Go storage modules' own live tests
# (azblob, azfile, azqueue, aztables) against blobshare over TLS;
# integration/sdklive/exclusions.txt lists the tests that do not run, each
# with its reason.
sdktests:
	BLOBSHARE_SDKTESTS=1 $(GO) test -count=1 -timeout 20m -v -run TestSDKSuites ./integration/sdklive

race:
	$(GO) test -count=1 -race -timeout 10m $(RACE_PKGS)

# fuzz runs each fuzz target briefly (FUZZTIME each); seed corpora live in
# testdata/fuzz and also run in plain go test. A run that fails only with
# "context deadline exceeded" and writes no failing input is Go's race at
# the -fuzztime deadline (golang/go#51484), not a finding: it runs once
# more, and fails if it fails again.
fuzz:
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for pf in $(addprefix filerest:,$(REST_FUZZ)) $(PKG_FUZZ); do \
		p=$${pf%%:*}; f=$${pf#*:}; \
		for try in 1 2; do \
			if $(GO) test ./$$p -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) > $$log 2>&1; then \
				echo "fuzz $$p $$f ($(FUZZTIME)): $$(tail -n 1 $$log)"; break; \
			fi; \
			if [ $$try = 1 ] && grep -qx '    context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log; then \
				echo "fuzz $$p $$f: stopped by the -fuzztime deadline race, no failing input; once more"; continue; \
			fi; \
			cat $$log; exit 1; \
		done; \
	done

deps: npm debs cifs-guest
	$(GO) mod download
	cd $(RCLONE_DIR) && $(GO) mod download

# debs installs the Debian packages of DEB_PKGS that are missing: one line
# naming them, apt's output only if it fails (quick and silent when all
# are there).
debs:
	@missing=$$(for p in $(DEB_PKGS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:" $$missing; \
		log=$$(mktemp); trap 'rm -f $$log' EXIT; \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; } > $$log 2>&1 || { cat $$log; exit 1; }; \
	fi

# cifs runs the Linux kernel's SMB client against blobshare in a QEMU
# guest (TestLinuxCIFSClient, which go test ./... also runs once
# cifs-guest has been made).
cifs: debs cifs-guest
	BLOBSHARE_CIFS_ROOT=$(CIFS_ROOT) $(GO) test -count=1 -timeout 5m ./integration -run '^TestLinuxCIFSClient$$'

# cifs-guest extracts the guest's packages into CIFS_ROOT once (the
# kernel package's real name is what the linux-image-amd64 metapackage
# depends on).
cifs-guest:
	@if ! ls $(CIFS_ROOT)/boot/vmlinuz-* >/dev/null 2>&1 || [ ! -x $(CIFS_ROOT)/bin/busybox ]; then \
		set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; chown _apt $$tmp 2>/dev/null || true; \
		kernel=$$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $$2; exit}'); \
		if [ -z "$$kernel" ]; then apt-get update -qq; kernel=$$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $$2; exit}'); fi; \
		echo "extracting $$kernel busybox-static into $(CIFS_ROOT)"; \
		(cd $$tmp && apt-get download -qq $$kernel busybox-static || { apt-get update -qq && apt-get download -qq $$kernel busybox-static; }); \
		mkdir -p $$tmp/root; for d in $$tmp/*.deb; do dpkg-deb -x $$d $$tmp/root; done; \
		mkdir -p $$(dirname $(CIFS_ROOT)); rm -rf $(CIFS_ROOT); mv $$tmp/root $(CIFS_ROOT); \
	fi

# Azurite (blob backend tests) and the Azure Files JS SDK (REST smoke test),
# pinned to versions whose engines accept Node 20. An EBADENGINE warning
# from npm ci means a pin drifted: it fails the install. npm's output is
# shown only then or when npm ci fails.
NODE_MAJOR_MIN := 20

npm: node $(NPM_DIR)/node_modules/.installed

node:
	@v=$$(node --version 2>/dev/null | sed 's/^v\([0-9]*\).*/\1/'); \
	if [ -z "$$v" ] || [ "$$v" -lt $(NODE_MAJOR_MIN) ]; then \
		echo "make: Node $(NODE_MAJOR_MIN) or newer is needed (found: $$(node --version 2>/dev/null || echo none))"; exit 1; fi

$(NPM_DIR)/node_modules/.installed: $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	echo "installing the npm tools of $(NPM_DIR)"; \
	(cd $(NPM_DIR) && npm ci --no-audit --no-fund) > $$log 2>&1 || { cat $$log; exit 1; }; \
	if grep -q EBADENGINE $$log; then cat $$log; echo "make: npm ci warned about engines (above): pin versions that support this Node"; exit 1; fi
	touch $@

vet:
	@out=$$(gofmt -l $$($(GO) list -f '{{.Dir}}' ./...) $$(cd $(RCLONE_DIR) && $(GO) list -f '{{.Dir}}' ./...)); \
	if [ -n "$$out" ]; then echo "gofmt: these files need formatting:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd $(RCLONE_DIR) && $(GO) vet ./...

# unit: the fast tests, no FUSE mount or Azurite needed to pass.
unit:
	$(GOTEST) -short ./...

build:
	$(GO) build -o bin/blobshare ./cmd/blobshare

# bench runs every benchmark of the project and prints the ratios.
bench: deps
	$(GO) run ./bench
