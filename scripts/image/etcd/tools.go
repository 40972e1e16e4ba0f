//go:build tools

// The two command-line tools built beside etcd (`go build go.etcd.io/etcd/etcdctl/v3`, ...):
// imported here only so that `go mod tidy` keeps their requirements.
package tools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/etcdutl/v3"
)
