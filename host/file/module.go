// Package file is the kernel's file area (wire contract §4.11 "Files",
// module Upload): uploads streamed into a storage (host/file/storage),
// resumable chunked uploads, downloads and signed view links
// (host/file/link) with Range and conditional requests. docs/developers/files.md.
package file

import (
	"context"
	"fmt"
	"time"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/file/link"
	"github.com/adminkernel/kernel/host/file/storage"
	"github.com/adminkernel/kernel/host/module"
	"github.com/adminkernel/kernel/host/route"
)

// Name is the module name Api:DisabledModules refers to.
const Name = "Upload"

// HandlerAbandonedUploads is the compiled job handler that removes the
// abandoned chunked uploads (docs/developers/files.md, docs/developers/jobs.md).
const HandlerAbandonedUploads = "files.abandonedUploads"

// Module returns the area as a kernel module. Its menus (600-615) are
// kernel seed rows (host/seed). It offers the job scheduler the
// abandoned-upload cleanup as a compiled handler and the recycle bin its
// "file" type.
func Module() module.Module {
	var svc *Service // set by Routes; JobHandlers runs after it
	return module.Module{
		Name: Name,
		Routes: func(d *module.Deps, api *route.Group) error {
			s, err := routes(d, api)
			svc = s
			return err
		},
		JobHandlers: func(*module.Deps) []module.JobHandler {
			if svc == nil {
				return nil
			}
			return []module.JobHandler{{
				Name: HandlerAbandonedUploads,
				Description: "Removes the chunked uploads that received nothing for Service:Upload:ChunkExpiryHours, with their chunks " +
					"(at most 1 000 per run; chunk/init also does it every 10 minutes)",
				Run: func(ctx context.Context, _ module.JobRun) (string, error) {
					n, err := svc.Sweep(ctx)
					return fmt.Sprintf("removed %d abandoned uploads", n), err
				},
			}}
		},
		// The purge of a file removes its content from the store Routes
		// opened (one store for the area).
		Recycle: func(d *module.Deps) []module.RecycleKind {
			if svc == nil {
				return nil
			}
			return recycleKinds(d, svc.store)
		},
	}
}

func routes(d *module.Deps, api *route.Group) (*Service, error) {
	cfg := d.Config
	log := d.Logger("AdminKernel.File")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	store, err := storage.New(ctx, cfg.Service.Upload, cfg.DataPath())
	if err != nil {
		return nil, err
	}
	ring, err := link.FromConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("file links: %w", err)
	}
	if !ring.Ready() {
		log.Warn("Service:Upload:SigningKeys is not set: no signed file link (/sys/file/{id}/view, avatars) is issued or accepted until a key is set")
	}
	if store.Kind() == config.StorageLocal && cfg.Service.Cache.Provider == config.CacheRedis {
		log.Warn("files are stored on this replica's disk (Service:Upload:Storage Local) while the cache is shared (Redis): with several replicas each sees only its own files; use Storage S3 (docs/operators/files.md)")
	}
	s := NewService(Options{
		Client: d.Client, Settings: d.Settings, Store: store, Ring: ring, Scopes: d.Scopes(),
		Log: log, Expiry: time.Duration(cfg.Service.Upload.ChunkExpiryHours) * time.Hour,
		PendingMax: int64(cfg.Service.Upload.PendingMaxMb) << 20,
	})
	// Abandoned chunked uploads: removed now, then by chunk/init at most
	// every sweepEvery, and by any job naming HandlerAbandonedUploads.
	s.maybeSweep(ctx)
	log.Info("file storage", "kind", store.Kind(), "signed_link_ttl_minutes", cfg.Service.Upload.SignedURLTTLMinutes)
	mount(api, s, cfg.API.MaxPageSize)
	return s, nil
}
