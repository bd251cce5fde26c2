package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// mcpCall posts one MCP tools/call and returns its structured result.
func mcpCall(t *testing.T, url, tool string, args map[string]any) (int, Result, bool) {
	t.Helper()
	status, body := httpDo(t, "POST", url+"/mcp", mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args}}))
	var resp struct {
		Result struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("mcp %s: %d %s: %v", tool, status, body, err)
	}
	var r Result
	if !resp.Result.IsError {
		if err := json.Unmarshal(resp.Result.StructuredContent, &r); err != nil {
			t.Fatalf("mcp %s: %s: %v", tool, body, err)
		}
	}
	return status, r, resp.Result.IsError
}

// The lock-out drill: 64 clients each reset and step once,
// then go quiet, over HTTP and over MCP (reset, then say), with the
// shipped defaults (64 slots, 10-minute idle timeout). Before the idle
// lease a stepped episode held its slot for the idle timeout (a new
// client got CAPACITY_REACHED for 10 minutes); now a new client is
// served once the quiet episodes are past the 30 s lease. "mcp-session"
// holds the slots with MCP sessions (openenv/session/create, then reset and
// say in the session), which the lease takes back the same way.
func TestLockoutResetStepFreedAfterLease(t *testing.T) {
	for _, transport := range []string{"http", "mcp", "mcp-session"} {
		t.Run(transport, func(t *testing.T) {
			s, ts := start(t, fakeConfig(t, &fake{}))
			advance := clock(s)
			for i := range 64 {
				if transport == "http" {
					_, body := httpDo(t, "POST", ts.URL+"/reset", `{}`)
					id := resetID(t, body)
					step := mustJSON(t, map[string]any{"episode_id": id, "action": map[string]any{"message": "Hi."}})
					if status, body := httpDo(t, "POST", ts.URL+"/step", step); status != 200 {
						t.Fatalf("step %d: %d %s", i, status, body)
					}
					continue
				}
				if transport == "mcp-session" {
					res, e := rpcCall(t, ts.URL, "openenv/session/create", map[string]any{})
					if e != nil {
						t.Fatalf("session %d refused: %v", i, e)
					}
					for _, c := range []struct {
						tool string
						args map[string]any
					}{{"reset", map[string]any{}}, {"say", map[string]any{"message": "Hi."}}} {
						if _, e := rpcCall(t, ts.URL, "tools/call", map[string]any{"name": c.tool, "arguments": c.args, "session_id": res["session_id"]}); e != nil {
							t.Fatalf("session %d %s: %v", i, c.tool, e)
						}
					}
					continue
				}
				_, r, isErr := mcpCall(t, ts.URL, "reset", map[string]any{})
				if isErr {
					t.Fatalf("mcp reset %d refused", i)
				}
				if _, _, isErr := mcpCall(t, ts.URL, "say", map[string]any{"episode_id": r.Metadata.EpisodeID, "message": "Hi."}); isErr {
					t.Fatalf("mcp say %d refused", i)
				}
			}
			status, body := httpDo(t, "POST", ts.URL+"/reset", `{}`)
			wantHTTPError(t, status, body, 503, CapacityReached)
			advance(29 * time.Second)
			status, body = httpDo(t, "POST", ts.URL+"/reset", `{}`)
			wantHTTPError(t, status, body, 503, CapacityReached) // within the lease
			advance(2 * time.Second)                             // 31 s after the last step: past the 30 s lease
			if status, body := httpDo(t, "POST", ts.URL+"/reset", `{}`); status != 200 {
				t.Fatalf("new client 31 s after the drill: %d %s", status, body)
			}
			if _, _, isErr := mcpCall(t, ts.URL, "reset", map[string]any{}); isErr {
				t.Fatal("new MCP client 31 s after the drill refused")
			}
		})
	}
}

// The same drill from four other machines (per-client share 16 of 64):
// four addresses can fill the server, but not hold it past the lease; and
// one host cannot spread over the addresses of its IPv6 /64.
func TestLockoutFromFourAddressesFreedAfterLease(t *testing.T) {
	s, _ := start(t, fakeConfig(t, &fake{}))
	advance := clock(s)
	ctx := context.Background()
	for a := range 4 {
		for i := range 16 {
			obs, err := s.resetHTTP(ctx, fmt.Sprintf("203.0.113.%d", a+1), ResetOptions{})
			if err != nil {
				t.Fatalf("address %d reset %d: %v", a, i, err)
			}
			if _, err := s.stepHTTP(ctx, obs.Metadata.EpisodeID, Action{Message: "Hi."}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.resetHTTP(ctx, "198.51.100.7", ResetOptions{}); asError(err).Code != CapacityReached {
		t.Fatalf("a fifth address while full: %v", err)
	}
	advance(31 * time.Second)
	if _, err := s.resetHTTP(ctx, "198.51.100.7", ResetOptions{}); err != nil {
		t.Fatalf("a fifth address after the lease: %v", err)
	}
	// 16 sessions from one IPv6 /64 fill its share, whatever the addresses.
	for i := range 16 {
		if _, err := s.resetHTTP(ctx, clientKey(fmt.Sprintf("2001:db8:1:2::%x", i+1)), ResetOptions{}); err != nil {
			t.Fatalf("IPv6 reset %d: %v", i, err)
		}
	}
	if _, err := s.resetHTTP(ctx, clientKey("2001:db8:1:2:ffff::1"), ResetOptions{}); asError(err).Code != CapacityReached ||
		!strings.Contains(err.Error(), "2001:db8:1:2::/64 holds 16 of its 16") {
		t.Fatalf("a 17th session from the same /64: %v", err)
	}
}
