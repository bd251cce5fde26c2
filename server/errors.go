package server

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is an OpenEnv error code (openenv.core.env_server.types.WSErrorCode).
// The WebSocket channel sends it in {"type":"error","data":{"message",
// "code"}}; the HTTP endpoints send it in {"detail", "code"} next to an
// HTTP status.
type Code string

// The error codes this server sends. OpenEnv's FACTORY_ERROR is not used:
// creating an environment here cannot fail apart from the persuadee's
// Start, which is an EXECUTION_ERROR of the reset.
const (
	// InvalidJSON: a WebSocket frame or HTTP body that is not JSON (HTTP 400).
	InvalidJSON Code = "INVALID_JSON"
	// UnknownType: a WebSocket message whose "type" is missing or not one
	// of reset, step, state, close.
	UnknownType Code = "UNKNOWN_TYPE"
	// ValidationError: well-formed JSON with the wrong shape or values:
	// unknown fields, an empty or oversized message, unknown scenario, set
	// or split, a step before any reset (HTTP 422).
	ValidationError Code = "VALIDATION_ERROR"
	// ExecutionError: the request was valid but could not be carried out:
	// stepping a finished episode (HTTP 409), or the persuadee failed
	// (HTTP 500).
	ExecutionError Code = "EXECUTION_ERROR"
	// CapacityReached: all MaxSessions session slots are taken (HTTP 503).
	CapacityReached Code = "CAPACITY_REACHED"
	// SessionError: the session is gone: closed after IdleTimeout without
	// a message, an unknown or expired HTTP episode_id (HTTP 404), or the
	// server is shutting down.
	SessionError Code = "SESSION_ERROR"
)

// Error is a protocol error: an OpenEnv code, a message for the client and
// the HTTP status the HTTP endpoints answer with.
type Error struct {
	// Code is the OpenEnv error code.
	Code Code
	// Message says what went wrong, for a human.
	Message string
	// Status is the HTTP status code; 0 means the code's default.
	Status int
}

// Error renders "CODE: message".
func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// HTTPStatus returns the HTTP status the error is answered with.
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	switch e.Code {
	case InvalidJSON:
		return http.StatusBadRequest
	case UnknownType, ValidationError:
		return http.StatusUnprocessableEntity
	case CapacityReached:
		return http.StatusServiceUnavailable
	case SessionError:
		return http.StatusNotFound
	case ExecutionError:
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

func errf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// asError maps any error to an *Error: protocol errors keep their code,
// anything else is an EXECUTION_ERROR with HTTP status 500.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: ExecutionError, Message: err.Error(), Status: http.StatusInternalServerError}
}
