// Command coredns is CoreDNS with only the plugins the local cluster's Corefile (hack/cluster/up.sh) uses. CoreDNS's
// own main imports every plugin, with their cloud SDKs; a main that imports coremain and a chosen set of plugins
// is how CoreDNS documents building a smaller server, and it compiles about a third less.
package main

import (
	"github.com/coredns/coredns/coremain"

	// The Corefile's plugins; a directive whose plugin is not imported here fails at start-up, naming it.
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
)

func main() { coremain.Run() }
