package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/persuarena/persuarena/scenario"
)

// OpenAPIVersion is the OpenAPI revision of GET /openapi.json: 3.1, whose
// schema dialect is JSON Schema draft 2020-12, that of /schema.
const OpenAPIVersion = "3.1.0"

// OpenEnvAPIVersion is info.version of GET /openapi.json: the OpenEnv HTTP
// API revision the endpoints implement. `openenv validate` reads
// info.version as the standard version and reports the profile
// "openenv-http/1.x" for "1." versions (huggingface/OpenEnv 385de5e,
// src/openenv/cli/_validation.py:70-74, :157-158, :191-192); OpenEnv's own
// servers send "1.0.0" (src/openenv/core/env_server/http_server.py:1645).
//
// Choice: info.version names the API revision, as OpenAPI defines it and
// OpenEnv uses it; the server's release goes in info.x-server-version
// (also /metadata's version).
const OpenEnvAPIVersion = "1.0.0"

// resetOptionsSchema is the JSON Schema of ResetOptions: POST /reset's
// body and the MCP reset tool's arguments (TestOpenAPIRequestSchemas keeps
// its properties equal to ResetOptions' fields).
func resetOptionsSchema() map[string]any {
	splits := []string{}
	for _, sp := range scenario.Splits {
		splits = append(splits, string(sp))
	}
	return map[string]any{
		"type":        "object",
		"description": "Reset options, all optional; unknown fields are a VALIDATION_ERROR (docs/server.md, Reset options).",
		"properties": map[string]any{
			"scenario_id": map[string]any{"type": "string", "description": "Play this scenario; it must be in the chosen set and split."},
			"set":         map[string]any{"type": "string", "description": "One of the server's scenario sets (see /metadata scenario_sets); default the first."},
			"split":       map[string]any{"enum": append(splits, "all"), "description": "Default the server's split."},
			"seed":        map[string]any{"type": "integer", "minimum": 0, "description": "Run seed; without it the server's seed sequence gives one (not reproducible)."},
			"rollout":     map[string]any{"type": "integer", "minimum": 0, "description": "Rollout index mixed into the episode seed; default 0."},
			"reward":      map[string]any{"enum": RewardModes, "description": "Reward mode for this episode; default the server's."},
			"episode_id":  map[string]any{"type": "string", "pattern": episodeIDRe.String(), "description": "Name the episode; default a random id."},
		},
		"additionalProperties": false,
	}
}

// openAPISchemas returns components.schemas: /schema's action,
// observation and state under their titles, each $defs entry lifted to
// TITLE_NAME with its references rewritten (in OpenAPI a "#/..." reference
// resolves against the whole document), and the request, response and
// error bodies.
func openAPISchemas() map[string]any {
	var served map[string]map[string]any
	if err := json.Unmarshal(SchemaJSON(), &served); err != nil {
		panic("server: schema.json: " + err.Error()) // embedded; tested
	}
	out := map[string]any{}
	for _, key := range []string{"action", "observation", "state"} {
		sch := served[key]
		title := sch["title"].(string)
		defs, _ := sch["$defs"].(map[string]any)
		delete(sch, "$defs")
		delete(sch, "$schema")
		rename := func(name string) string { return title + "_" + name }
		for name, d := range defs {
			out[rename(name)] = rewriteRefs(d, rename)
		}
		out[title] = rewriteRefs(sch, rename)
	}
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	out["ResetRequest"] = resetOptionsSchema()
	out["StepRequest"] = map[string]any{
		"type":        "object",
		"description": "OpenEnv's StepRequest plus episode_id, the id /reset returned in observation.metadata.episode_id.",
		"properties": map[string]any{
			"action":     ref("PersuArenaAction"),
			"episode_id": map[string]any{"type": "string"},
			"timeout_s":  map[string]any{"type": "number", "exclusiveMinimum": 0, "description": "Bound on the step in seconds."},
			"request_id": map[string]any{"type": "string"},
		},
		"required":             []string{"action", "episode_id"},
		"additionalProperties": false,
	}
	out["CloseRequest"] = map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"episode_id": map[string]any{"type": "string"}},
		"required":             []string{"episode_id"},
		"additionalProperties": false,
	}
	out["StepResponse"] = map[string]any{
		"type":        "object",
		"description": "OpenEnv's ResetResponse / StepResponse: the observation (its metadata inside), the step's reward (null after a reset) and done.",
		"properties": map[string]any{
			"observation": ref("PersuArenaObservation"),
			"reward":      map[string]any{"type": []string{"number", "null"}},
			"done":        map[string]any{"type": "boolean"},
			"metadata":    ref("PersuArenaObservation_metadata"),
		},
		"required": []string{"observation", "reward", "done"},
	}
	codes := []string{}
	for _, c := range []Code{InvalidJSON, UnknownType, ValidationError, ExecutionError, CapacityReached, SessionError} {
		codes = append(codes, string(c))
	}
	out["Error"] = map[string]any{
		"type":        "object",
		"description": "FastAPI's error body plus the OpenEnv error code (docs/server.md, Errors).",
		"properties":  map[string]any{"detail": map[string]any{"type": "string"}, "code": map[string]any{"enum": codes}},
		"required":    []string{"detail", "code"},
	}
	out["JSONRPCRequest"] = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"jsonrpc": map[string]any{"const": "2.0"}, "method": map[string]any{"type": "string"},
			"params": map[string]any{"type": "object"}, "id": map[string]any{"type": []string{"string", "number", "null"}},
		},
		"required": []string{"jsonrpc", "method"},
	}
	out["JSONRPCResponse"] = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"jsonrpc": map[string]any{"const": "2.0"}, "id": map[string]any{"type": []string{"string", "number", "null"}},
			"result": map[string]any{}, "error": map[string]any{"type": "object", "properties": map[string]any{
				"code": map[string]any{"type": "integer"}, "message": map[string]any{"type": "string"}}, "required": []string{"code", "message"}},
		},
		"required": []string{"jsonrpc", "id"},
	}
	return out
}

// rewriteRefs returns v with every "$ref": "#/$defs/NAME" replaced by the
// component reference of rename(NAME).
func rewriteRefs(v any, rename func(string) string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" && strings.HasPrefix(s, "#/$defs/") {
				out[k] = "#/components/schemas/" + rename(strings.TrimPrefix(s, "#/$defs/"))
				continue
			}
			out[k] = rewriteRefs(e, rename)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = rewriteRefs(e, rename)
		}
		return out
	}
	return v
}

// OpenAPI returns the body of GET /openapi.json: an OpenAPI 3.1 document
// of every HTTP endpoint (the WebSocket channel /ws has no OpenAPI
// description, as in FastAPI's), whose schemas are those /schema serves.
// info.version is OpenEnvAPIVersion, info.x-server-version the server's
// Config.Version.
func (s *Server) OpenAPI() map[string]any {
	ref := func(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	body := func(name string) map[string]any {
		return map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": ref(name)}}}
	}
	answer := func(desc string, schema map[string]any) map[string]any {
		return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": schema}}}
	}
	errs := func(statuses ...string) map[string]any {
		m := map[string]any{}
		for _, st := range statuses {
			m[st] = answer("An error (code and detail)", ref("Error"))
		}
		return m
	}
	op := func(id, summary string, req map[string]any, ok map[string]any, errStatuses ...string) map[string]any {
		o := map[string]any{"operationId": id, "summary": summary, "responses": errs(errStatuses...)}
		o["responses"].(map[string]any)["200"] = ok
		if req != nil {
			o["requestBody"] = req
		}
		return o
	}
	anyObject := map[string]any{"type": "object"}
	paths := map[string]any{
		"/health": map[string]any{"get": op("health", "Liveness", nil,
			answer("Healthy", map[string]any{"type": "object", "properties": map[string]any{"status": map[string]any{"const": "healthy"}}, "required": []string{"status"}}))},
		"/metadata": map[string]any{"get": op("metadata", "Environment metadata (OpenEnv's EnvironmentMetadata plus sets, reward modes, probes, limits)", nil,
			answer("Metadata", map[string]any{"type": "object", "required": []string{"name", "description", "version"}}))},
		"/schema": map[string]any{"get": op("schema", "JSON Schemas of action, observation and state", nil,
			answer("Schemas", map[string]any{"type": "object", "properties": map[string]any{"action": ref("PersuArenaAction"), "observation": ref("PersuArenaObservation"), "state": ref("PersuArenaState")}, "required": []string{"action", "observation", "state"}}))},
		"/reset": map[string]any{"post": op("reset", "Start a server-held episode", body("ResetRequest"),
			answer("The initial observation", ref("StepResponse")), "400", "413", "422", "500", "503")},
		"/step": map[string]any{"post": op("step", "One persuader turn in an episode", body("StepRequest"),
			answer("The observation, reward and done", ref("StepResponse")), "400", "404", "409", "413", "422", "500")},
		"/state": map[string]any{"get": func() map[string]any {
			o := op("state", "An episode's bookkeeping", nil, answer("The state", ref("PersuArenaState")), "404", "422")
			o["parameters"] = []any{map[string]any{"name": "episode_id", "in": "query", "required": true, "schema": map[string]any{"type": "string"}}}
			return o
		}()},
		"/close": map[string]any{"post": op("close", "Forget an HTTP episode and free its slot", body("CloseRequest"),
			answer("Closed", map[string]any{"type": "object", "properties": map[string]any{"episode_id": map[string]any{"type": "string"}, "closed": map[string]any{"const": true}}}), "404", "422")},
		"/mcp": map[string]any{"post": func() map[string]any {
			o := op("mcp", "MCP over JSON-RPC 2.0: initialize, ping, tools/list, tools/call (reset, say)", body("JSONRPCRequest"),
				answer("A JSON-RPC response (errors too answer 200)", ref("JSONRPCResponse")))
			o["responses"].(map[string]any)["202"] = map[string]any{"description": "A notification (no id): accepted, no body"}
			return o
		}()},
		"/openapi.json": map[string]any{"get": op("openapi", "This document", nil, answer("OpenAPI 3.1", anyObject))},
	}
	return map[string]any{
		"openapi":           OpenAPIVersion,
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"info": map[string]any{
			"title":                "PersuArena environment server",
			"version":              OpenEnvAPIVersion,
			"x-server-version":     s.cfg.Version,
			"description":          s.Info().Description,
			"x-websocket-channels": []string{"/ws"},
		},
		"paths":      paths,
		"components": map[string]any{"schemas": openAPISchemas()},
	}
}

// handleOpenAPI is GET /openapi.json.
func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.OpenAPI())
}
