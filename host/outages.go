package host

import (
	"github.com/adminkernel/kernel/host/cache/rediscache"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/internal/outage"
	"github.com/adminkernel/kernel/host/logging"
)

// outages are the kernel's availability trackers of its network
// dependencies (host/outage): the cache layer and the database layer report
// to them, the central error handler counts the requests they refuse.
type outages struct {
	cache *outage.Tracker // Redis (unused with the in-process cache)
	db    *outage.Tracker
}

func newOutages(logs *logging.Logs) outages {
	return outages{
		cache: rediscache.NewTracker(logs.For("AdminKernel.Cache")),
		db:    database.NewTracker(logs.For("AdminKernel.Database")),
	}
}
