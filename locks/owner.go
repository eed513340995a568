package locks

import "github.com/blobshare/blobshare/meta/sqlmeta"

// Owner liveness: the flock files <db>.owners/<owner> are the engine's
// (meta/sqlmeta/owner.go); these name them in the lock table's terms.

func ownersDir(dbPath string) string { return sqlmeta.OwnersDir(dbPath) }

func validOwnerID(o OwnerID) bool { return sqlmeta.ValidOwnerID(string(o)) }

func lockOwnerFile(dir string, o OwnerID) (*sqlmeta.OwnerLock, error) {
	return sqlmeta.LockOwnerFile(dir, string(o))
}

func ownerAlive(dir string, o OwnerID) (bool, error) { return sqlmeta.OwnerAlive(dir, string(o)) }

func removeOwnerFile(dir string, o OwnerID) error { return sqlmeta.RemoveOwnerFile(dir, string(o)) }
