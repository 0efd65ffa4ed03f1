// Package bind turns service calls into fiber handlers: the steps every
// route repeats (who is calling, the {id} path parameter, the JSON body,
// the service call, the success envelope) written once, in that order, so
// a route reads as the service method it binds:
//
//	g.Put("/{id}", route.Permission, bind.Change(bind.UserID, svc.Update))
//
// Every failure is returned to the central error handler unchanged.
package bind

import (
	"context"

	"github.com/gofiber/fiber/v3"

	"github.com/adminkernel/kernel/host/authn"
	"github.com/adminkernel/kernel/host/envelope"
	"github.com/adminkernel/kernel/host/request"
)

// Caller reads who is calling from the request: the authenticated user's
// id (UserID), a data-scope caller, ... . It runs before anything else is
// read from the request.
type Caller[C any] func(fiber.Ctx) (C, error)

// UserID is the Caller of a route that needs only the authenticated user's
// id (40006 TokenInvalid without one).
func UserID(c fiber.Ctx) (int64, error) {
	p, err := authn.Require(c)
	if err != nil {
		return 0, err
	}
	return p.UserID, nil
}

// Read binds a read without parameters: fn's result is the data.
func Read[Out any](fn func(ctx context.Context) (Out, error)) fiber.Handler {
	return func(c fiber.Ctx) error {
		out, err := fn(c.Context())
		if err != nil {
			return err
		}
		return envelope.OK(c, out)
	}
}

// ReadAs binds a read for the caller: fn's result is the data.
func ReadAs[C, Out any](who Caller[C], fn func(ctx context.Context, caller C) (Out, error)) fiber.Handler {
	return func(c fiber.Ctx) error {
		caller, err := who(c)
		if err != nil {
			return err
		}
		out, err := fn(c.Context(), caller)
		if err != nil {
			return err
		}
		return envelope.OK(c, out)
	}
}

// Page binds a paged list: the paging parameters (at most maxPageSize rows
// a page), then the filter (filter reads it from the query string), then
// fn, which returns one page and the total; the data is the paged list.
func Page[F, T any](maxPageSize int, filter func(fiber.Ctx) (F, error), fn func(ctx context.Context, f F, p request.Page) ([]T, int, error)) fiber.Handler {
	return PageAs(nobody, maxPageSize, filter, func(ctx context.Context, _ struct{}, f F, p request.Page) ([]T, int, error) {
		return fn(ctx, f, p)
	})
}

// PageAs binds a paged list for the caller: the caller, then the paging
// parameters, then the filter, then fn; the data is the paged list.
func PageAs[C, F, T any](who Caller[C], maxPageSize int, filter func(fiber.Ctx) (F, error), fn func(ctx context.Context, caller C, f F, p request.Page) ([]T, int, error)) fiber.Handler {
	return func(c fiber.Ctx) error {
		caller, err := who(c)
		if err != nil {
			return err
		}
		p, err := request.Paging(c, maxPageSize)
		if err != nil {
			return err
		}
		f, err := filter(c)
		if err != nil {
			return err
		}
		items, total, err := fn(c.Context(), caller, f, p)
		if err != nil {
			return err
		}
		return envelope.OK(c, request.NewPagedList(p, total, items))
	}
}

// nobody is the Caller of a route that does not ask who is calling.
func nobody(fiber.Ctx) (struct{}, error) { return struct{}{}, nil }

// Query returns a filter reader for Page that reads one query parameter
// (name matched case-insensitively, as request.Query does).
func Query(name string) func(fiber.Ctx) (string, error) {
	return func(c fiber.Ctx) (string, error) { return request.Query(c, name), nil }
}

// ReadID binds a read of the {id} path parameter: fn's result is the data.
func ReadID[Out any](fn func(ctx context.Context, id int64) (Out, error)) fiber.Handler {
	return ReadIDAs(nobody, func(ctx context.Context, _ struct{}, id int64) (Out, error) { return fn(ctx, id) })
}

// ReadIDAs binds caller, then the {id} path parameter: fn's result is the
// data.
func ReadIDAs[C, Out any](who Caller[C], fn func(ctx context.Context, caller C, id int64) (Out, error)) fiber.Handler {
	return func(c fiber.Ctx) error {
		caller, err := who(c)
		if err != nil {
			return err
		}
		id, err := request.ParamInt64(c, "id")
		if err != nil {
			return err
		}
		out, err := fn(c.Context(), caller, id)
		if err != nil {
			return err
		}
		return envelope.OK(c, out)
	}
}

// Create binds caller, then JSON body: fn's result (the new id, say) is
// the data.
func Create[C, In, Out any](who Caller[C], fn func(ctx context.Context, caller C, in In) (Out, error)) fiber.Handler {
	return func(c fiber.Ctx) error {
		caller, err := who(c)
		if err != nil {
			return err
		}
		var in In
		if err := request.JSON(c, &in); err != nil {
			return err
		}
		out, err := fn(c.Context(), caller, in)
		if err != nil {
			return err
		}
		return envelope.OK(c, out)
	}
}

// Apply binds caller, then JSON body: the data is true once fn succeeds
// (a batch save or delete, say).
func Apply[C, In any](who Caller[C], fn func(ctx context.Context, caller C, in In) error) fiber.Handler {
	return func(c fiber.Ctx) error {
		caller, err := who(c)
		if err != nil {
			return err
		}
		var in In
		if err := request.JSON(c, &in); err != nil {
			return err
		}
		if err := fn(c.Context(), caller, in); err != nil {
			return err
		}
		return envelope.OK(c, true)
	}
}

// Change binds caller, then the {id} path parameter, then JSON body: the
// data is true once fn succeeds.
func Change[C, In any](who Caller[C], fn func(ctx context.Context, caller C, id int64, in In) error) fiber.Handler {
	return change(who, false, func(ctx context.Context, caller C, id int64, in In) (bool, error) {
		return true, fn(ctx, caller, id, in)
	})
}

// ChangeOptional binds caller, then the {id} path parameter, then a JSON
// body that may be absent (an empty body leaves in its zero value): fn's
// result is the data.
func ChangeOptional[C, In, Out any](who Caller[C], fn func(ctx context.Context, caller C, id int64, in In) (Out, error)) fiber.Handler {
	return change(who, true, fn)
}

// change is Change and ChangeOptional: optional lets an empty body through.
func change[C, In, Out any](who Caller[C], optional bool, fn func(ctx context.Context, caller C, id int64, in In) (Out, error)) fiber.Handler {
	return func(c fiber.Ctx) error {
		caller, err := who(c)
		if err != nil {
			return err
		}
		id, err := request.ParamInt64(c, "id")
		if err != nil {
			return err
		}
		var in In
		if !optional || len(c.Body()) > 0 {
			if err := request.JSON(c, &in); err != nil {
				return err
			}
		}
		out, err := fn(c.Context(), caller, id, in)
		if err != nil {
			return err
		}
		return envelope.OK(c, out)
	}
}

// Remove binds caller, then the {id} path parameter: the data is true once
// fn succeeds.
func Remove[C any](who Caller[C], fn func(ctx context.Context, caller C, id int64) error) fiber.Handler {
	return func(c fiber.Ctx) error {
		caller, err := who(c)
		if err != nil {
			return err
		}
		id, err := request.ParamInt64(c, "id")
		if err != nil {
			return err
		}
		if err := fn(c.Context(), caller, id); err != nil {
			return err
		}
		return envelope.OK(c, true)
	}
}
