// etcd's own main (the etcd repository's root main.go), built from the published server module:
// the root module go.etcd.io/etcd/v3 replaces its siblings with local paths, so it cannot be
// built from the module proxy itself. etcdctl and etcdutl are main packages of their published
// modules and are built by path (tools.go keeps them in go.mod and go.sum).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
