package sqlstore

import "github.com/blobshare/blobshare/meta/sqlmeta"

// schemaPart is the store's schema for the engine's migration runner
// (sqlmeta.OpenStore), its version the file's user_version. Version 1 is
// schema and claimSchema; migration 1 adopts a file from before versions:
// tables it lacks are created, and the columns added since — the age of a
// staged block (bs_staged.staged_at, 0: unknown) and the owner of a commit
// intent (bs_intents.owner, "": an owner that is never alive) — are added
// where missing. A build from before versions still opens the result.
var schemaPart = sqlmeta.Part{
	Name:    "blob",
	Marker:  "bs_containers",
	Version: 1,
	DDL:     schema + claimSchema,
	Migrations: []sqlmeta.Migration{{To: 1, DDL: schema + claimSchema, Apply: sqlmeta.AddColumns(
		sqlmeta.Column{Table: "bs_staged", Name: "staged_at", Decl: "INTEGER NOT NULL DEFAULT 0"},
		sqlmeta.Column{Table: "bs_intents", Name: "owner", Decl: "TEXT NOT NULL DEFAULT ''"},
	)}},
}
