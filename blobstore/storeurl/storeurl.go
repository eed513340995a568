package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/blobshare/blobshare/blobstore"
	"github.com/blobshare/blobshare/blobstore/azure"
	"github.com/blobshare/blobshare/blobstore/local"
)

// ErrBadURL: the backend URL cannot be understood.
var ErrBadURL = errors.New("bad blob backend URL")

// Environment variables read by Open.
const (
	EnvKey              = "AZURE_STORAGE_KEY"
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
)

// Open opens the store rawURL names (see the package doc), with dataDir
// for the default.
func Open(ctx context.Context, rawURL, dataDir string) (blobstore.Store, error) {
	return OpenEnv(ctx, rawURL, dataDir, os.Getenv)
}

// OpenEnv is Open with the environment looked up through getenv.
func OpenEnv(ctx context.Context, rawURL, dataDir string, getenv func(string) string) (blobstore.Store, error) {
	if rawURL == "" {
		if dataDir == "" {
			return nil, fmt.Errorf("no blob backend URL and no data directory: %w", ErrBadURL)
		}
		abs, err := filepath.Abs(dataDir)
		if err != nil {
			return nil, fmt.Errorf("data directory %q: %w", dataDir, err)
		}
		return local.New(filepath.Join(abs, "blobs"))
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
	}
	switch u.Scheme {
	case "file":
		return openFile(u, rawURL)
	case "azure":
		cfg, err := AzureConfig(u, getenv)
		if err != nil {
			return nil, err
		}
		return azure.New(ctx, cfg)
	default:
		return nil, fmt.Errorf("%q: scheme must be file or azure: %w", redact(u), ErrBadURL)
	}
}

func openFile(u *url.URL, raw string) (blobstore.Store, error) {
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("%q: file URLs take an absolute path, file:///dir (host %q given): %w", raw, u.Host, ErrBadURL)
	}
	if u.Opaque != "" || !filepath.IsAbs(u.Path) {
		return nil, fmt.Errorf("%q: file URLs take an absolute path, file:///dir: %w", raw, ErrBadURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q: file URLs take no query or fragment: %w", raw, ErrBadURL)
	}
	return local.New(filepath.Clean(u.Path))
}

// AzureConfig builds the azure backend's Config from an azure:// URL.
func AzureConfig(u *url.URL, getenv func(string) string) (azure.Config, error) {
	var cfg azure.Config
	cfg.Account = u.Host
	cfg.Container = strings.Trim(u.Path, "/")
	if cfg.Account == "" || cfg.Container == "" || strings.Contains(cfg.Container, "/") {
		return cfg, fmt.Errorf("%q: want azure://<account>/<container>: %w", redact(u), ErrBadURL)
	}
	if u.User != nil || u.Fragment != "" {
		return cfg, fmt.Errorf("%q: no user info or fragment allowed: %w", redact(u), ErrBadURL)
	}
	q := u.Query()
	for k, v := range q {
		if (k != "endpoint" && k != "key") || len(v) != 1 {
			return cfg, fmt.Errorf("%q: unknown or repeated query parameter %q (endpoint and key allowed): %w", redact(u), k, ErrBadURL)
		}
	}
	if ep := q.Get("endpoint"); ep != "" {
		eu, err := url.Parse(ep)
		if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" {
			return cfg, fmt.Errorf("%q: endpoint %q must be an http(s) URL: %w", redact(u), ep, ErrBadURL)
		}
		cfg.Endpoint = strings.TrimRight(ep, "/")
	}
	switch {
	case q.Get("key") != "":
		cfg.Key = q.Get("key")
	case getenv(EnvKey) != "":
		cfg.Key = getenv(EnvKey)
	case getenv(EnvConnectionString) != "":
		cs := getenv(EnvConnectionString)
		if name := connStringField(cs, "AccountName"); name != "" && name != cfg.Account {
			return cfg, fmt.Errorf("%q: account %q differs from %s's AccountName %q: %w", redact(u), cfg.Account, EnvConnectionString, name, ErrBadURL)
		}
		cfg.ConnectionString = cs
		if cfg.Endpoint != "" && connStringField(cs, "BlobEndpoint") == "" {
			cfg.ConnectionString = strings.TrimRight(cs, ";") + ";BlobEndpoint=" + cfg.Endpoint
		}
	default:
		return cfg, fmt.Errorf("%q: no credentials: give key=, or set %s or %s: %w", redact(u), EnvKey, EnvConnectionString, ErrBadURL)
	}
	return cfg, nil
}

func connStringField(cs, name string) string {
	for part := range strings.SplitSeq(cs, ";") {
		k, v, ok := strings.Cut(part, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// redact hides the key query parameter in error messages.
func redact(u *url.URL) string {
	c := *u
	q := c.Query()
	if q.Has("key") {
		q.Set("key", "REDACTED")
		c.RawQuery = q.Encode()
	}
	return c.String()
}
