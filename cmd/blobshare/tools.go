//go:build tools

// This file pins modules the project's packages are being built on, so that
// go.mod lists them before every package imports them.
package main

import (
	_ "github.com/Azure/azure-sdk-for-go/sdk/azcore"
	_ "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	_ "github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	_ "github.com/google/uuid"
	_ "github.com/hanwen/go-fuse/v2/fs"
	_ "github.com/hanwen/go-fuse/v2/posixtest"
	_ "modernc.org/sqlite"
)
