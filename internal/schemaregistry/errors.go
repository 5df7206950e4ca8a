package schemaregistry

import (
	"fmt"
	"net/http"
)

// Confluent's error codes: the HTTP status times 100 plus a detail, or the
// bare status where Confluent has no finer code.
const (
	codeForbidden             = 40301
	codeSubjectNotFound       = 40401
	codeVersionNotFound       = 40402
	codeSchemaNotFound        = 40403
	codeSubjectSoftDeleted    = 40404
	codeSubjectNotSoftDeleted = 40405
	codeVersionSoftDeleted    = 40406
	codeVersionNotSoftDeleted = 40407
	codeSubjectCompatNotSet   = 40408
	codeSubjectModeNotSet     = 40409
	codeIncompatible          = 409
	codeInvalidSchema         = 42201
	codeInvalidVersion        = 42202
	codeInvalidCompatLevel    = 42203
	codeInvalidMode           = 42204
	codeOperationNotPermitted = 42205
	codeReferenceExists       = 42206
	codeInvalidSubject        = 42208
	codeSchemaTooLarge        = 42209
	codeStoreError            = 50001
	codeBadRequest            = 400
	codeNotFound              = 404
	codeUnsupportedMediaType  = 415
	codeUnprocessableEntity   = 422
)

// Error is an answer the registry gives as Confluent's error JSON,
// {"error_code":40401,"message":"..."}, with its HTTP status.
type Error struct {
	Status  int    `json:"-"`
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return fmt.Sprintf("schema registry: %d: %s", e.Code, e.Message) }

// errorf makes an Error whose HTTP status follows from its code.
func errorf(code int, format string, args ...any) *Error {
	status := code
	for status >= 1000 {
		status /= 10
	}
	if status < 100 || status > 599 {
		status = http.StatusInternalServerError
	}
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

func errSubjectNotFound(s string) *Error {
	return errorf(codeSubjectNotFound, "Subject '%s' not found.", s)
}

func errVersionNotFound(v int) *Error {
	return errorf(codeVersionNotFound, "Version %d not found.", v)
}

func errSchemaNotFound() *Error { return errorf(codeSchemaNotFound, "Schema not found") }

func errInvalidVersion(v string) *Error {
	return errorf(codeInvalidVersion, "The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", v)
}

func errInvalidSchema(format string, args ...any) *Error {
	return errorf(codeInvalidSchema, "Invalid schema: "+format, args...)
}
