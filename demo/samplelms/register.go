package samplelms

import (
	"encoding/json"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// LTI Dynamic Registration, as a platform does it: its OpenID
// configuration, and a registration endpoint that takes a tool's
// registration (checked field by field) with the registration token it
// handed out, answers a new client id and deployment, and from then on
// launches the tool as registered.
const (
	ConfigurationPath = "/.well-known/openid-configuration"
	RegistrationPath  = "/register"
	RegisterToolPath  = "/register-tool"
)

// registrar is the platform's registration state.
type registrar struct {
	token         string // the registration token handed to the tool
	issuer        string // the issuer the configuration names ("": the platform's)
	refuse        bool   // the endpoint refuses
	registrations []map[string]any
	refusal       string
}

// RegistrationURL is what an LMS opens for the tool's registration URL:
// it with the platform's OpenID configuration and a fresh registration
// token.
func (l *LMS) RegistrationURL(toolURL string) string {
	l.mu.Lock()
	l.reg.token = "registration-token-" + strconv.Itoa(len(l.reg.registrations)+1)
	q := url.Values{"openid_configuration": {l.public + ConfigurationPath}, "registration_token": {l.reg.token}}
	l.mu.Unlock()
	sep := "?"
	if strings.Contains(toolURL, "?") {
		sep = "&"
	}
	return toolURL + sep + q.Encode()
}

// SetConfigurationIssuer makes the configuration name another issuer (a
// platform on another origin, which a tool must refuse); "": its own.
func (l *LMS) SetConfigurationIssuer(iss string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reg.issuer = iss
}

// SetRegistrationRefused makes the registration endpoint refuse.
func (l *LMS) SetRegistrationRefused(refuse bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reg.refuse = refuse
}

// Registrations are the tools' registrations the platform accepted, and
// why it refused the last one ("" if it did not).
func (l *LMS) Registrations() ([]map[string]any, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reg.registrations), l.reg.refusal
}

func (l *LMS) serveConfiguration(w http.ResponseWriter, _ *http.Request) {
	l.mu.Lock()
	iss := l.Issuer
	if l.reg.issuer != "" {
		iss = l.reg.issuer
	}
	pub := l.public
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer": iss, "authorization_endpoint": pub + AuthPath, "jwks_uri": pub + JWKSPath, "token_endpoint": pub + TokenPath,
		"registration_endpoint": pub + RegistrationPath, "response_types_supported": []string{"id_token"},
		"id_token_signing_alg_values_supported": []string{"RS256"}, "scopes_supported": []string{"openid", nrpsScope},
		"token_endpoint_auth_methods_supported": []string{"private_key_jwt"}, "claims_supported": []string{"sub", "email", "given_name", "family_name", "name"},
		"https://purl.imsglobal.org/spec/lti-platform-configuration": map[string]any{"product_family_code": "sample-lms", "version": "1.0",
			"messages_supported": []map[string]string{{"type": "LtiResourceLinkRequest"}, {"type": "LtiDeepLinkingRequest"}}},
	})
}

// serveRegistration takes a tool's registration: the registration token
// as bearer, and the fields LTI Dynamic Registration asks for.
func (l *LMS) serveRegistration(w http.ResponseWriter, r *http.Request) {
	var reg map[string]any
	refuse := func(why string) {
		l.mu.Lock()
		l.reg.refusal = why
		l.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client_metadata", "error_description": why})
	}
	l.mu.Lock()
	token, refused := l.reg.token, l.reg.refuse
	l.mu.Unlock()
	switch {
	case refused:
		refuse("this platform refuses new tools")
		return
	case token == "" || r.Header.Get("Authorization") != "Bearer "+token:
		refuse("the registration token is missing or not the one handed out")
		return
	case json.NewDecoder(r.Body).Decode(&reg) != nil:
		refuse("the registration is not JSON")
		return
	}
	str := func(k string) string { s, _ := reg[k].(string); return s }
	list := func(m map[string]any, k string) []string {
		var out []string
		items, _ := m[k].([]any)
		for _, it := range items {
			if s, ok := it.(string); ok {
				out = append(out, s)
			} else if mm, ok := it.(map[string]any); ok {
				if s, ok := mm["type"].(string); ok {
					out = append(out, s)
				}
			}
		}
		return out
	}
	tc, _ := reg["https://purl.imsglobal.org/spec/lti-tool-configuration"].(map[string]any)
	redirects := list(reg, "redirect_uris")
	switch {
	case str("application_type") != "web":
		refuse("application_type must be web")
	case !slices.Equal(list(reg, "response_types"), []string{"id_token"}):
		refuse("response_types must be [id_token]")
	case !slices.Contains(list(reg, "grant_types"), "implicit") || !slices.Contains(list(reg, "grant_types"), "client_credentials"):
		refuse("grant_types must hold implicit and client_credentials")
	case str("initiate_login_uri") == "" || len(redirects) == 0 || str("jwks_uri") == "":
		refuse("initiate_login_uri, redirect_uris and jwks_uri are required")
	case str("token_endpoint_auth_method") != "private_key_jwt":
		refuse("token_endpoint_auth_method must be private_key_jwt")
	case !strings.Contains(str("scope"), nrpsScope):
		refuse("the scope must hold NRPS's")
	case tc == nil || tc["domain"] == nil || tc["target_link_uri"] == nil:
		refuse("the lti-tool-configuration claim needs domain and target_link_uri")
	case !slices.Contains(list(tc, "claims"), "email"):
		refuse("the tool must ask for the email claim")
	case !slices.Contains(list(tc, "messages"), "LtiResourceLinkRequest") || !slices.Contains(list(tc, "messages"), "LtiDeepLinkingRequest"):
		refuse("messages must hold LtiResourceLinkRequest and LtiDeepLinkingRequest")
	default:
		l.mu.Lock()
		l.reg.registrations = append(l.reg.registrations, reg)
		l.reg.token, l.reg.refusal = "", "" // the token works once
		l.ClientID = "registered-client-" + strconv.Itoa(len(l.reg.registrations))
		l.DeploymentID = "registered-deployment"
		l.ToolLogin, l.ToolRedirect, l.Target = str("initiate_login_uri"), redirects[0], tc["target_link_uri"].(string)
		client := l.ClientID
		l.mu.Unlock()
		answer := maps.Clone(reg)
		answer["client_id"] = client
		tcOut := maps.Clone(tc)
		tcOut["deployment_id"] = "registered-deployment"
		answer["https://purl.imsglobal.org/spec/lti-tool-configuration"] = tcOut
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
	}
}

// serveRegisterTool is the platform's "add a tool by its registration
// URL" page: the tool's registration page in a frame, and a line that
// says when the tool's page told the platform it is done
// (org.imsglobal.lti.close).
func (l *LMS) serveRegisterTool(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = registerTool.Execute(w, map[string]string{"Src": l.RegistrationURL(r.URL.Query().Get("url"))})
}

var registerTool = template.Must(template.New("register").Parse(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Add a tool</title></head>
<body><h1>Add a tool by its registration URL</h1><p id="state">registering…</p>
<iframe id="registration" title="The tool's registration" src="{{.Src}}" width="800" height="400"></iframe>
<script>window.addEventListener("message", (e) => { if (e.data && e.data.subject === "org.imsglobal.lti.close") { document.getElementById("state").textContent = "closed by the tool"; document.getElementById("registration").remove(); } });</script>
</body></html>`))
