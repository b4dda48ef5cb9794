package platformsim

import (
	"encoding/json"
	"net/http"
	"time"
)

// controlRoutes exposes the Go API for standalone use:
//
//	POST   /_sim/faults  {"endpoint":"create_user","fault":{"status":500,"times":1}}
//	DELETE /_sim/faults
//	POST   /_sim/latency {"endpoint":"","latency_ms":20}
//	POST   /_sim/clock   {"offset":"10m"}
//	GET    /_sim/calls
//	DELETE /_sim/calls
func (s *Server) controlRoutes(m *http.ServeMux) {
	m.HandleFunc("POST /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Endpoint string `json:"endpoint"`
			Fault    struct {
				Fault
				LatencyMS int `json:"latency_ms"`
			} `json:"fault"`
		}
		if err := decodeStrict(r, &in); err != nil || !knownEndpoint(in.Endpoint) {
			writeError(w, http.StatusBadRequest, "want {\"endpoint\": one of list_users, create_user, issue_token, exchange, \"fault\": {...}}")
			return
		}
		f := in.Fault.Fault
		f.Latency = time.Duration(in.Fault.LatencyMS) * time.Millisecond
		s.InjectFault(in.Endpoint, f)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	m.HandleFunc("DELETE /_sim/faults", func(w http.ResponseWriter, r *http.Request) {
		s.ClearFaults()
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	m.HandleFunc("POST /_sim/latency", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Endpoint  string `json:"endpoint"`
			LatencyMS int    `json:"latency_ms"`
		}
		if err := decodeStrict(r, &in); err != nil || (in.Endpoint != "" && !knownEndpoint(in.Endpoint)) || in.LatencyMS < 0 {
			writeError(w, http.StatusBadRequest, "want {\"endpoint\": \"\" or an endpoint name, \"latency_ms\": >= 0}")
			return
		}
		s.SetLatency(in.Endpoint, time.Duration(in.LatencyMS)*time.Millisecond)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	m.HandleFunc("POST /_sim/clock", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Offset string `json:"offset"`
		}
		d, err := time.Duration(0), decodeStrict(r, &in)
		if err == nil {
			d, err = time.ParseDuration(in.Offset)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "want {\"offset\": a Go duration such as \"10m\" or \"-90s\"}")
			return
		}
		s.SetClockOffset(d)
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	m.HandleFunc("GET /_sim/calls", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.CallCounts())
	})
	m.HandleFunc("DELETE /_sim/calls", func(w http.ResponseWriter, r *http.Request) {
		s.ResetCalls()
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
}

func knownEndpoint(e string) bool {
	switch e {
	case EndpointListUsers, EndpointCreateUser, EndpointIssueToken, EndpointExchange:
		return true
	}
	return false
}

func decodeStrict(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
