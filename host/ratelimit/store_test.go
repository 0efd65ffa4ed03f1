package ratelimit

import "github.com/adminkernel/kernel/host/cache/cachetest"

func newFakeStore() *cachetest.Fake { return cachetest.NewFake() }
