package azure

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/blobshare/blobshare/blobstore"
)

// Config says which container to use and how to authenticate. Give either
// ConnectionString, or Endpoint with Account and Key.
type Config struct {
	// ConnectionString is a storage connection string
	// ("DefaultEndpointsProtocol=...;AccountName=...;AccountKey=...;
	// BlobEndpoint=..."). When set, Endpoint, Account and Key are ignored.
	ConnectionString string
	// Endpoint is the blob service URL, e.g.
	// https://<account>.blob.core.windows.net or, for Azurite,
	// http://127.0.0.1:10000/devstoreaccount1. Empty: the public Azure
	// endpoint of Account.
	Endpoint string
	// Account and Key are the shared-key credentials.
	Account, Key string
	// Container is the container holding the blobs; created if missing.
	Container string
	// MemBlockLimit is how much of one staged block StageBlock holds in
	// memory (the SDK needs a seekable body of known length); larger
	// blocks are spooled to a temp file. 0: 16 MiB.
	MemBlockLimit int
	// HTTPClient, if set, sends the requests (tests, proxies).
	HTTPClient *http.Client
}

// Store is the Azure Blob Storage backend. Create it with New.
type Store struct {
	c        *container.Client
	name     string // container
	memLimit int
	bufs     sync.Pool // *[]byte of memLimit
	kept     keptBlocks
}

var _ blobstore.Store = (*Store)(nil)

// New connects to the container cfg names, creating it if missing.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := validContainer(cfg.Container); err != nil {
		return nil, err
	}
	opts := &container.ClientOptions{}
	if cfg.HTTPClient != nil {
		opts.Transport = cfg.HTTPClient
	}
	var c *container.Client
	var err error
	switch {
	case cfg.ConnectionString != "":
		c, err = container.NewClientFromConnectionString(cfg.ConnectionString, cfg.Container, opts)
	case cfg.Account != "" && cfg.Key != "":
		endpoint := cfg.Endpoint
		if endpoint == "" {
			endpoint = "https://" + cfg.Account + ".blob.core.windows.net"
		}
		var cred *container.SharedKeyCredential
		cred, err = container.NewSharedKeyCredential(cfg.Account, cfg.Key)
		if err == nil {
			c, err = container.NewClientWithSharedKeyCredential(strings.TrimRight(endpoint, "/")+"/"+cfg.Container, cred, opts)
		}
	default:
		return nil, fmt.Errorf("azure blobstore: need a connection string or account name and key: %w", ErrBadConfig)
	}
	if err != nil {
		return nil, fmt.Errorf("azure blobstore container %q: %w", cfg.Container, err)
	}
	s := &Store{c: c, name: cfg.Container, memLimit: cfg.MemBlockLimit}
	if s.memLimit <= 0 {
		s.memLimit = 16 << 20
	}
	s.bufs.New = func() any { b := make([]byte, s.memLimit); return &b }
	if _, err := c.Create(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return nil, fmt.Errorf("azure blobstore: create container %q: %w", cfg.Container, convert(err))
	}
	return s, nil
}

// ErrBadConfig marks configuration errors.
var ErrBadConfig = errors.New("invalid azure blobstore configuration")

// Container returns the container's name.
func (s *Store) Container() string { return s.name }

func (s *Store) blob(key string) *blockblob.Client { return s.c.NewBlockBlobClient(key) }

// idPad fills block ids up to MaxBlockIDLen before base64: Azure needs all
// block ids of a blob to have one length. '.' is not a valid id byte, so
// decoding just trims it.
const idPad = "................................................................"

func encodeID(id string) string {
	return base64.StdEncoding.EncodeToString([]byte(id + idPad[:blobstore.MaxBlockIDLen-len(id)]))
}

func decodeID(b64 string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", fmt.Errorf("block id %q is not base64: %w", b64, err)
	}
	id := strings.TrimRight(string(raw), ".")
	if err := blobstore.ValidBlockID(id); err != nil {
		return "", fmt.Errorf("block id %q not written by blobshare: %w", b64, err)
	}
	return id, nil
}

// convert turns an SDK error into one matching the blobstore sentinels
// (wrapping both, so the *azcore.ResponseError stays reachable with
// errors.As). It is the only place that looks at Azure error codes.
func convert(err error) error {
	if err == nil {
		return nil
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		return err
	}
	var sentinel error
	switch bloberror.Code(re.ErrorCode) {
	case bloberror.BlobNotFound, bloberror.ContainerNotFound, bloberror.InvalidBlockList:
		sentinel = blobstore.ErrNotFound
	case bloberror.ConditionNotMet, bloberror.BlobAlreadyExists, bloberror.TargetConditionNotMet:
		sentinel = blobstore.ErrPreconditionFailed
	case bloberror.InvalidBlobOrBlock, bloberror.InvalidBlockID, bloberror.InvalidResourceName,
		bloberror.OutOfRangeInput, bloberror.InvalidURI:
		sentinel = blobstore.ErrInvalidKey
	case bloberror.InvalidRange:
		sentinel = blobstore.ErrInvalidRange
	default:
		switch re.StatusCode {
		case http.StatusNotFound:
			sentinel = blobstore.ErrNotFound
		case http.StatusPreconditionFailed:
			sentinel = blobstore.ErrPreconditionFailed
		default:
			return err
		}
	}
	return fmt.Errorf("%w: %w", sentinel, err)
}

func etagPtr(s string) *azcore.ETag {
	if s == "" {
		return nil
	}
	e := azcore.ETag(s)
	return &e
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// validContainer checks Azure's container naming rules: 3 to 63 lowercase
// letters, digits and single hyphens, starting and ending with a letter or
// digit.
func validContainer(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("azure blobstore: container name %q: %s: %w", name, why, ErrBadConfig)
	}
	if len(name) < 3 || len(name) > 63 {
		return bad("length not in 3..63")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && i > 0 && i < len(name)-1 && name[i-1] != '-':
		default:
			return bad("only lowercase letters, digits and single inner hyphens")
		}
	}
	return nil
}
