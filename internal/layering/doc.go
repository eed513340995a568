// Package layering holds no code: its test checks the import graph of the
// module against the layering the project keeps (which packages may reach
// a database driver).
package layering
