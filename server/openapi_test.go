package server

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validateCriterion is one check of `openenv validate --url`.
type validateCriterion struct {
	ID     string
	Passed bool
	Actual any
}

// openenvValidate performs the checks of `openenv validate --url URL`
// exactly as huggingface/OpenEnv 385de5ebb8d08d51d000d7dfc19de5f3c6a9c215,
// src/openenv/cli/_validation.py, validate_running_environment
// (:103-428) does, in its order, with its pass conditions:
//   - openapi_version_available (:129-189): GET /openapi.json is 200, a
//     JSON object whose "info" is an object with a string "version"; its
//     "paths" feed the mode check;
//   - health_endpoint (:194-233): GET /health is 200 with status "healthy";
//   - metadata_endpoint (:235-282): GET /metadata is 200 with string name
//     and description;
//   - schema_endpoint (:284-341): GET /schema is 200 with object action,
//     observation and state;
//   - mcp_endpoint (:343-382): POST /mcp with the JSON body {} is 200 with
//     "jsonrpc": "2.0";
//   - mode_endpoint_consistency (:384-422): with /reset among the OpenAPI
//     paths the mode is "simulation" and /step and /state must be there
//     too; without it "production", and neither may be; no paths fails.
//
// The report passes when every (required) criterion passes (:424-426);
// the profile is "openenv-http/1.x" for an info.version starting "1."
// (:70-74).
func openenvValidate(t *testing.T, base string) (criteria []validateCriterion, mode, profile string) {
	t.Helper()
	getJSON := func(method, path, body string) (int, any) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil // requests.RequestException: the criterion fails
		}
		defer resp.Body.Close()
		var v any
		if json.NewDecoder(resp.Body).Decode(&v) != nil {
			v = nil
		}
		return resp.StatusCode, v
	}
	obj := func(v any) map[string]any { m, _ := v.(map[string]any); return m }
	isStr := func(v any) bool { _, ok := v.(string); return ok }
	isObj := func(v any) bool { _, ok := v.(map[string]any); return ok }

	version := "unknown"
	var paths map[string]any
	st, v := getJSON("GET", "/openapi.json", "")
	info := obj(obj(v)["info"])
	ok := st == 200 && obj(v) != nil && info != nil && isStr(info["version"])
	if ok {
		version = info["version"].(string)
		paths = obj(obj(v)["paths"])
	}
	criteria = append(criteria, validateCriterion{"openapi_version_available", ok, version})
	profile = "openenv-http/unknown"
	if strings.HasPrefix(version, "1.") {
		profile = "openenv-http/1.x"
	}

	st, v = getJSON("GET", "/health", "")
	criteria = append(criteria, validateCriterion{"health_endpoint", st == 200 && obj(v) != nil && obj(v)["status"] == "healthy", obj(v)["status"]})

	st, v = getJSON("GET", "/metadata", "")
	criteria = append(criteria, validateCriterion{"metadata_endpoint", st == 200 && obj(v) != nil && isStr(obj(v)["name"]) && isStr(obj(v)["description"]), obj(v)["name"]})

	st, v = getJSON("GET", "/schema", "")
	m := obj(v)
	criteria = append(criteria, validateCriterion{"schema_endpoint", st == 200 && m != nil && isObj(m["action"]) && isObj(m["observation"]) && isObj(m["state"]), st})

	st, v = getJSON("POST", "/mcp", "{}") // requests.post(..., json={})
	criteria = append(criteria, validateCriterion{"mcp_endpoint", st == 200 && obj(v) != nil && obj(v)["jsonrpc"] == "2.0", v})

	mode = "unknown"
	if len(paths) > 0 {
		_, hasReset := paths["/reset"]
		_, hasStep := paths["/step"]
		_, hasState := paths["/state"]
		var mok bool
		if hasReset {
			mode, mok = "simulation", hasStep && hasState
		} else {
			mode, mok = "production", !hasStep && !hasState
		}
		criteria = append(criteria, validateCriterion{"mode_endpoint_consistency", mok, []bool{hasReset, hasStep, hasState}})
	} else {
		criteria = append(criteria, validateCriterion{"mode_endpoint_consistency", false, "openapi.paths missing"})
	}
	return criteria, mode, profile
}

func failedCriteria(cs []validateCriterion) []string {
	var out []string
	for _, c := range cs {
		if !c.Passed {
			out = append(out, c.ID)
		}
	}
	return out
}

// `openenv validate --url` passes against the server: all six criteria,
// mode simulation, profile openenv-http/1.x. Without /openapi.json and
// /mcp (the server before them) the same replay fails the OpenAPI, MCP and
// mode checks, so the replay can tell.
func TestOpenEnvValidate(t *testing.T) {
	s, ts := start(t, simConfig(t))
	cs, mode, profile := openenvValidate(t, ts.URL)
	if len(cs) != 6 || failedCriteria(cs) != nil || mode != "simulation" || profile != "openenv-http/1.x" {
		t.Fatalf("openenv validate: failed %v of %+v; mode %s, profile %s", failedCriteria(cs), cs, mode, profile)
	}

	h := s.Handler()
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/openapi.json" || r.URL.Path == "/mcp" {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer old.Close()
	cs, mode, _ = openenvValidate(t, old.URL)
	if got := strings.Join(failedCriteria(cs), ","); got != "openapi_version_available,mcp_endpoint,mode_endpoint_consistency" || mode != "unknown" {
		t.Fatalf("without /openapi.json and /mcp: failed %s, mode %s", got, mode)
	}
}

// /openapi.json: OpenAPI 3.1, info.version the OpenEnv API revision and
// the server's own version beside it, one path per HTTP endpoint, and
// components that are /schema's schemas: every reference resolves, and
// real reset and step responses validate against StepResponse.
func TestOpenAPI(t *testing.T) {
	cfg := simConfig(t)
	cfg.Version = "9.9.9-test"
	_, ts := start(t, cfg)
	status, body := httpDo(t, "GET", ts.URL+"/openapi.json", "")
	if status != 200 {
		t.Fatalf("/openapi.json: %d %s", status, body)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	info := doc["info"].(map[string]any)
	if doc["openapi"] != "3.1.0" || info["version"] != "1.0.0" || info["x-server-version"] != "9.9.9-test" {
		t.Fatalf("openapi %v, info %v", doc["openapi"], info)
	}
	paths := slices.Sorted(maps.Keys(doc["paths"].(map[string]any)))
	if want := "/close,/health,/mcp,/metadata,/openapi.json,/reset,/schema,/state,/step"; strings.Join(paths, ",") != want {
		t.Fatalf("paths %v, want %s", paths, want)
	}
	// POST /mcp documents the notification's 202 beside the 200 answer.
	mcpResp := doc["paths"].(map[string]any)["/mcp"].(map[string]any)["post"].(map[string]any)["responses"].(map[string]any)
	if mcpResp["200"] == nil || mcpResp["202"] == nil {
		t.Fatalf("/mcp responses %v, want 200 and 202", mcpResp)
	}
	// The components hold /schema's schemas, with $defs lifted.
	var served map[string]map[string]any
	json.Unmarshal(SchemaJSON(), &served)
	comps := doc["components"].(map[string]any)["schemas"].(map[string]any)
	obsComp := comps["PersuArenaObservation"].(map[string]any)
	if !reflect.DeepEqual(obsComp["required"], served["observation"]["required"]) || obsComp["$defs"] != nil {
		t.Fatalf("observation component %v", obsComp)
	}
	if got := obsComp["properties"].(map[string]any)["scenario"].(map[string]any)["$ref"]; got != "#/components/schemas/PersuArenaObservation_public" {
		t.Fatalf("scenario $ref %v", got)
	}
	if bytes.Contains(body, []byte(`"#/$defs/`)) {
		t.Fatal("a $defs reference was left: it would resolve against the OpenAPI document")
	}

	// Compile the document as a JSON Schema resource: every $ref must
	// resolve; then validate real bodies.
	c := jsonschema.NewCompiler()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("https://persuarena.test/openapi.json", v); err != nil {
		t.Fatal(err)
	}
	compile := func(name string) *jsonschema.Schema {
		sch, err := c.Compile("https://persuarena.test/openapi.json#/components/schemas/" + name)
		if err != nil {
			t.Fatalf("component %s: %v", name, err)
		}
		return sch
	}
	for name := range comps {
		compile(name)
	}
	resp := compile("StepResponse")
	status, body = httpDo(t, "POST", ts.URL+"/reset", `{"seed": 7, "scenario_id": "arena-train-0029"}`)
	if status != 200 {
		t.Fatalf("reset: %d %s", status, body)
	}
	if err := validate(t, resp, body); err != nil {
		t.Fatalf("reset response %s: %v", body, err)
	}
	var r Result
	json.Unmarshal(body, &r)
	status, body = httpDo(t, "POST", ts.URL+"/step", mustJSON(t, map[string]any{"episode_id": r.Observation.Metadata.EpisodeID, "action": map[string]any{"message": scriptLines[0]}}))
	if err := validate(t, resp, body); status != 200 || err != nil {
		t.Fatalf("step response %d %s: %v", status, body, err)
	}
	step := compile("StepRequest")
	for raw, ok := range map[string]bool{
		`{"episode_id":"e","action":{"message":"Hi"}}`:                 true,
		`{"episode_id":"e","action":{"message":"Hi"},"timeout_s":0}`:   false,
		`{"episode_id":"e","action":{"message":"Hi"},"tone":"warm"}`:   false,
		`{"action":{"message":"Hi"}}`:                                  false,
		`{"episode_id":"e","action":{"message":"Hi"},"timeout_s":0.5}`: true,
	} {
		if err := validate(t, step, []byte(raw)); (err == nil) != ok {
			t.Fatalf("StepRequest %s: %v", raw, err)
		}
	}
	reset := compile("ResetRequest")
	for raw, ok := range map[string]bool{
		`{}`: true, `{"seed": 3, "split": "all", "reward": "both", "episode_id": "run-1:a"}`: true,
		`{"seed": -1}`: false, `{"split": "test"}`: false, `{"episode_id": "a b"}`: false, `{"sead": 1}`: false,
	} {
		if err := validate(t, reset, []byte(raw)); (err == nil) != ok {
			t.Fatalf("ResetRequest %s: %v", raw, err)
		}
	}
}

// The hand-written request schemas name exactly the fields the server
// decodes: ResetOptions (POST /reset, the MCP reset tool) and stepRequest.
func TestOpenAPIRequestSchemas(t *testing.T) {
	tags := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			out = append(out, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
		}
		slices.Sort(out)
		return out
	}
	props := func(name string) []string {
		m := openAPISchemas()[name].(map[string]any)["properties"].(map[string]any)
		return slices.Sorted(maps.Keys(m))
	}
	if got, want := props("ResetRequest"), tags(ResetOptions{}); !slices.Equal(got, want) {
		t.Fatalf("ResetRequest properties %v, ResetOptions fields %v", got, want)
	}
	if got, want := props("StepRequest"), tags(stepRequest{}); !slices.Equal(got, want) {
		t.Fatalf("StepRequest properties %v, stepRequest fields %v", got, want)
	}
	if got, want := props("CloseRequest"), tags(closeRequest{}); !slices.Equal(got, want) {
		t.Fatalf("CloseRequest properties %v, closeRequest fields %v", got, want)
	}
}
