package sqlstore

import "github.com/blobshare/blobshare/meta/sqlmeta"

// schemaPart is the store's schema for the engine's migration runner
// (sqlmeta.OpenStore), its version the file's user_version. Version 1 is
// schema; migration 1 adopts a file from before versions (its tables are
// those of schema: the ones it lacks are created). A build from before
// versions still opens the result.
var schemaPart = sqlmeta.Part{
	Name:       "table",
	Marker:     "tb_tables",
	Version:    1,
	DDL:        schema,
	Migrations: []sqlmeta.Migration{{To: 1, DDL: schema}},
}
