# Provider plugin protocol (kernel.provider.v1): regenerate the Go code in
# pluginsdk/internal/proto from the .proto files. Included by the Makefile.
#
# protoc is Debian's protobuf-compiler (apt-get install -y protobuf-compiler,
# libprotoc 3.21.12 on bookworm); the Go plugins are pinned below and
# installed into bin/tools by `make proto-tools`. The generated files record
# both versions in their headers, so a different protoc or plugin version
# shows up as drift in `make verify`.

PROTOC                  ?= protoc
PROTOC_VERSION          := 3.21.12
# Keep PROTOC_GEN_GO_VERSION equal to google.golang.org/protobuf in go.mod.
PROTOC_GEN_GO_VERSION   := v1.36.12
PROTOC_GEN_GRPC_VERSION := v1.6.2
PROTO_TOOLS             := $(CURDIR)/bin/tools
PROTOC_GEN_GO           := $(PROTO_TOOLS)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION)/protoc-gen-go
PROTOC_GEN_GO_GRPC      := $(PROTO_TOOLS)/protoc-gen-go-grpc-$(PROTOC_GEN_GRPC_VERSION)/protoc-gen-go-grpc
PROTO_ROOT              := pluginsdk/internal/proto
PROTO_FILES             = $(shell cd $(PROTO_ROOT) && find . -name '*.proto' | sed 's|^\./||' | sort)

.PHONY: proto proto-tools proto-verify

proto-tools: $(PROTOC_GEN_GO) $(PROTOC_GEN_GO_GRPC) ## install the pinned protoc-gen-go and protoc-gen-go-grpc into bin/tools

$(PROTOC_GEN_GO):
	GOBIN=$(dir $@) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)

$(PROTOC_GEN_GO_GRPC):
	GOBIN=$(dir $@) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GRPC_VERSION)

proto: proto-tools ## regenerate pluginsdk/internal/proto/**/*.pb.go with protoc
	@command -v $(PROTOC) >/dev/null 2>&1 || { echo "protoc not found: apt-get install -y protobuf-compiler"; exit 1; }
	@v="$$($(PROTOC) --version | awk '{print $$2}')"; [ "$$v" = "$(PROTOC_VERSION)" ] || \
		echo "warning: protoc $$v is not $(PROTOC_VERSION); the generated headers will differ from the committed ones"
	cd $(PROTO_ROOT) && $(PROTOC) -I . \
		--plugin=protoc-gen-go=$(PROTOC_GEN_GO) \
		--plugin=protoc-gen-go-grpc=$(PROTOC_GEN_GO_GRPC) \
		--go_out=. --go_opt=paths=source_relative \
		--go-grpc_out=. --go-grpc_opt=paths=source_relative \
		$(PROTO_FILES)

proto-verify: proto ## regenerate the protocol code; fail if it drifted from the committed files
	@if [ -n "$$(git status --porcelain -- $(PROTO_ROOT))" ]; then \
		echo "generated protocol code drifted from the committed state (run make proto):"; \
		git status --porcelain -- $(PROTO_ROOT); git --no-pager diff --stat -- $(PROTO_ROOT); exit 1; fi
