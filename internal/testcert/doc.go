// Package testcert is a test helper: a throwaway CA, a server and a client
// certificate in memory and, on request, as PEM files, for tests of TLS
// listeners (mutual TLS included) and of clients that take file paths.
// Nothing here is for production use.
package testcert
