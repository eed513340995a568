package blobsvc

import (
	"context"
	"errors"
	"fmt"
)

// LogsContainer is the system container every Azure account has: Storage
// Analytics writes its logs there ("All logs are stored in block blobs
// in a container named $logs ... This container cannot be deleted once
// Storage Analytics has been enabled, though its contents can be
// deleted"; azblob's TestListContainersSystem: "every account will
// always have one system container, i.e. '$logs'"). blobshare writes no
// analytics logs; the container exists, empty, and can be read like any
// other.
const LogsContainer = "$logs"

// ErrSystemContainer: an operation users may not do on a system
// container (Delete Container on $logs).
var ErrSystemContainer = errors.New("operation not allowed on a system container")

// IsSystemContainer reports whether name is a system container, listed
// by List Containers only with include=system.
func IsSystemContainer(name string) bool { return name == LogsContainer }

// EnsureSystemContainers creates the system containers the store lacks
// (a new data directory). Run it before serving, as Recover.
func (s *Service) EnsureSystemContainers(ctx context.Context) error {
	_, err := s.CreateContainer(ctx, LogsContainer, nil, AccessPrivate)
	if err != nil && !errors.Is(err, ErrContainerExists) {
		return fmt.Errorf("create %s: %w", LogsContainer, err)
	}
	return nil
}
