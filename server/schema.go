package server

import (
	_ "embed"
	"slices"
)

//go:embed schema.json
var schemaJSON []byte

// SchemaJSON returns a copy of the body of GET /schema: the JSON Schemas
// (draft 2020-12) of the action, the observation and the state,
// {"action": {...}, "observation": {...}, "state": {...}}, as OpenEnv's
// SchemaResponse. Every object sets additionalProperties to false; tests
// validate real observations and states against them.
func SchemaJSON() []byte { return slices.Clone(schemaJSON) }
