// Package errcode holds the kernel's error-code type, the catalog of known
// codes (kernel and consumer enumerations) and the business error that
// carries a code to the central error handler.
package errcode

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
)

// Code is an error code of the envelope. 0 is success.
type Code int32

// Member is one code of an enumeration.
type Member struct {
	Code   Code
	Name   string
	MsgKey string
}

// Enum is a named enumeration of codes: the kernel's own ("ErrorCode") or a
// consumer's. A consumer declares its codes as errcode.Code constants
// (60000 and up by convention) and registers an Enum listing them.
type Enum struct {
	Name    string
	Members []Member
}

// Entry is one row of the published catalog.
type Entry struct {
	Code   Code   `json:"code"`
	Name   string `json:"name"`
	MsgKey string `json:"msgKey"`
	Source string `json:"source"`
}

// Catalog maps codes to names and msgKeys. It is immutable once built and
// safe for concurrent use.
type Catalog struct {
	byCode  map[Code]Entry
	entries []Entry
}

// DuplicateError reports two enumerations claiming one number.
type DuplicateError struct {
	Code          Code
	First, Second string // "Enum.Member"
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("error code %d is claimed by both %s and %s", e.Code, e.First, e.Second)
}

// NewCatalog builds the catalog from the kernel enumeration followed by the
// consumer enumerations. Two members claiming one number fail composition
// with a *DuplicateError naming both.
func NewCatalog(consumer ...Enum) (*Catalog, error) {
	c := &Catalog{byCode: make(map[Code]Entry, len(Kernel.Members))}
	var errs []error
	for _, enum := range append([]Enum{Kernel}, consumer...) {
		if enum.Name == "" {
			errs = append(errs, errors.New("error-code enumeration without a name"))
			continue
		}
		for _, m := range enum.Members {
			if prev, ok := c.byCode[m.Code]; ok {
				errs = append(errs, &DuplicateError{Code: m.Code, First: prev.Source + "." + prev.Name, Second: enum.Name + "." + m.Name})
				continue
			}
			if m.Name == "" || m.MsgKey == "" {
				errs = append(errs, fmt.Errorf("error code %d of %s needs a name and a msgKey", m.Code, enum.Name))
				continue
			}
			e := Entry{Code: m.Code, Name: m.Name, MsgKey: m.MsgKey, Source: enum.Name}
			c.byCode[m.Code] = e
			c.entries = append(c.entries, e)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].Code < c.entries[j].Code })
	return c, nil
}

// Entries returns the catalog sorted by code. The slice must not be modified.
func (c *Catalog) Entries() []Entry { return c.entries }

// Lookup returns the entry of a code.
func (c *Catalog) Lookup(code Code) (Entry, bool) {
	e, ok := c.byCode[code]
	return e, ok
}

// MsgKey returns the msgKey of a code; an unregistered code gets
// "error.code.<code>".
func (c *Catalog) MsgKey(code Code) string {
	if e, ok := c.byCode[code]; ok {
		return e.MsgKey
	}
	return "error.code." + strconv.Itoa(int(code))
}

// Error is a business error: an expected failure that ends as an envelope
// with its code (never as an exception-log row).
type Error struct {
	Code Code
	// Args are interpolation arguments for the frontend text.
	Args map[string]any
	// Status overrides the HTTP status derived from the code (0 = derive).
	Status int
	cause  error
}

// New returns a business error with the given code. Only a Code is accepted:
// consumers convert their own constants, which are declared as errcode.Code.
func New(code Code) *Error { return &Error{Code: code} }

// With adds an interpolation argument.
func (e *Error) With(key string, value any) *Error {
	if e.Args == nil {
		e.Args = make(map[string]any, 2)
	}
	e.Args[key] = value
	return e
}

// Wrap records the underlying cause (for logs; never sent to clients).
func (e *Error) Wrap(cause error) *Error {
	e.cause = cause
	return e
}

func (e *Error) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("error code %d: %v", e.Code, e.cause)
	}
	return fmt.Sprintf("error code %d", e.Code)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.cause }

// Is matches another *Error with the same code, so errors.Is(err,
// errcode.New(errcode.PasswordWrong)) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// HTTPStatus is the status a code is answered with (wire contract §1.4):
// business failures are 200 with the envelope; authentication, permission,
// rate-limit and request-shape failures get their own status.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return StatusOf(e.Code)
}

// StatusOf maps a code to its HTTP status.
func StatusOf(code Code) int {
	switch code {
	case TokenInvalid:
		return http.StatusUnauthorized
	case NoPermission, ReauthRequired, CsrfInvalid, PasswordChangeRequired:
		return http.StatusForbidden
	case TooManyRequests:
		return http.StatusTooManyRequests
	case RequestInvalid:
		return http.StatusBadRequest
	case RouteNotFound:
		return http.StatusNotFound
	case MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case BodyTooLarge:
		return http.StatusRequestEntityTooLarge
	case UnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case SystemError:
		return http.StatusInternalServerError
	case StorageFull, CacheUnavailable, DatabaseUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusOK
	}
}

// As extracts a business error from err.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
