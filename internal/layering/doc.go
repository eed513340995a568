// Package layering holds no code: its test checks the import graph of the
// module against the layering the project keeps (which packages may reach
// a database driver, which one opens SQLite, which still import
// database/sql, and which reach net/http).
package layering
