// Package table is blobshare's Azure Table service endpoint: the HTTP
// front end over package tablesvc, as package queue is over msgqueue.
package table
