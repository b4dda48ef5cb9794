package lti

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/ssobridge/ssobridge/internal/outbound"
	"github.com/ssobridge/ssobridge/internal/outside"
	"github.com/ssobridge/ssobridge/internal/randid"
	"github.com/ssobridge/ssobridge/locale"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/views"
	"github.com/ssobridge/ssobridge/wayin"
)

// LTI Dynamic Registration 1.0: an LMS admin pastes the tool's
// registration URL (made in the console, holding a one-time code valid an
// hour) into the LMS, which opens it with its OpenID configuration's URL
// and a registration token; the tool reads the configuration, registers
// itself at the LMS's registration endpoint, and keeps the LMS (its
// client id and deployment) in the store for every instance.
const (
	// RegisterPath is the registration URL's path.
	RegisterPath = "/lti/register"
	// RegistrationTTL is how long a registration URL works.
	RegistrationTTL  = time.Hour
	registrationKind = "lti-registration"
	claimToolConfig  = "https://purl.imsglobal.org/spec/lti-tool-configuration"
	claimPlatConfig  = "https://purl.imsglobal.org/spec/lti-platform-configuration"
	maxConfigBytes   = 1 << 20
	// maxProductCode bounds the product code an LMS's name is made of
	// (the name, its origin added, is kept within store.MaxName).
	maxProductCode = 60
)

// Errors of a registration; each has its page, and none keeps anything.
var (
	// ErrRegistrationCode: the registration URL's code is missing, does
	// not open, has expired or was used.
	ErrRegistrationCode = wayin.NewRefusal(views.RefusedInvalid, "lti: the registration URL is not valid (its code is missing, expired or used); make a new one in the console")
	// ErrRegistrationConfig: the LMS's OpenID configuration cannot be
	// read or used (another origin's issuer, plain http, a field missing).
	ErrRegistrationConfig = wayin.NewRefusal(views.RefusedInvalid, "lti: the LMS's OpenID configuration cannot be used")
	// ErrRegistrationRefused: the LMS's registration endpoint refused the
	// tool's registration, or answered without a client id.
	ErrRegistrationRefused = wayin.NewRefusal(views.RefusedInvalid, "lti: the LMS did not register the tool")
)

// registrationCode is what a registration URL's code holds, sealed: who
// made it, the rules of the LMS it registers, and until when.
type registrationCode struct {
	ID             string    `json:"id"`
	By             string    `json:"b"`
	EmailDomains   string    `json:"d,omitempty"`
	CreateAccounts bool      `json:"c"`
	Expires        time.Time `json:"e"`
}

// RegistrationURL makes a registration URL for an admin (by), valid for
// RegistrationTTL: the LMS it registers is trusted for emailDomains
// (space-separated) and creates accounts if create.
func (w *Way) RegistrationURL(c echo.Context, by, emailDomains string, create bool) (string, time.Time, error) {
	code := registrationCode{ID: randid.Token(16), By: by, EmailDomains: emailDomains, CreateAccounts: create, Expires: w.k.Now().Add(RegistrationTTL)}
	sealed, err := w.sealer.SealJSON("registration", code)
	if err != nil {
		return "", time.Time{}, err
	}
	return strings.TrimRight(w.k.BaseURL(c), "/") + RegisterPath + "?" + url.Values{"code": {sealed}}.Encode(), code.Expires, nil
}

// platformConfiguration is what the tool reads of an LMS's OpenID
// configuration.
type platformConfiguration struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	JWKSURI               string `json:"jwks_uri"`
	TokenEndpoint         string `json:"token_endpoint"`
	RegistrationEndpoint  string `json:"registration_endpoint"`
	Platform              struct {
		ProductFamilyCode string `json:"product_family_code"`
	} `json:"https://purl.imsglobal.org/spec/lti-platform-configuration"`
}

// readConfiguration reads and checks an LMS's OpenID configuration
// under the outbound policy: its issuer on the configuration URL's
// origin, its endpoints https.
func (w *Way) readConfiguration(ctx context.Context, raw string) (platformConfiguration, error) {
	var pc platformConfiguration
	origin := Origin(raw)
	if origin == "" {
		return pc, refusedAs(ErrRegistrationConfig, "the configuration URL is not https", nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return pc, refusedAs(ErrRegistrationConfig, "the configuration URL is not a URL", err)
	}
	req.Header.Set("Accept", "application/json")
	if err := w.fetchJSON(req, &pc); err != nil {
		return pc, refusedAs(ErrRegistrationConfig, "it could not be read: "+fetchReason(err), err)
	}
	if Origin(pc.Issuer) != origin && (w.IssuerAt == nil || !w.IssuerAt(origin, pc.Issuer)) {
		return pc, refusedAs(ErrRegistrationConfig, "its issuer is not on the origin of the configuration URL ("+origin+")",
			fmt.Errorf("issuer %s", outside.Quote(pc.Issuer)))
	}
	for _, e := range []struct{ name, u string }{{"authorization_endpoint", pc.AuthorizationEndpoint}, {"jwks_uri", pc.JWKSURI},
		{"token_endpoint", pc.TokenEndpoint}, {"registration_endpoint", pc.RegistrationEndpoint}} {
		if Origin(e.u) == "" {
			return pc, refusedAs(ErrRegistrationConfig, "its "+e.name+" is not an https URL", fmt.Errorf("%s %s", e.name, outside.Quote(e.u)))
		}
	}
	for _, k := range []string{pc.Issuer, pc.AuthorizationEndpoint, pc.JWKSURI, pc.TokenEndpoint} {
		if len(k) > store.MaxKey {
			return pc, refusedAs(ErrRegistrationConfig, fmt.Sprintf("its issuer or an endpoint is longer than %d bytes", store.MaxKey), nil)
		}
	}
	return pc, nil
}

// fetchJSON sends req under the outbound policy and decodes a 200 or 201
// answer of at most maxConfigBytes into v.
func (w *Way) fetchJSON(req *http.Request, v any) error {
	resp, err := w.httpClient().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("%w: it answered %d", errAnswered, resp.StatusCode)
	}
	body, err := outbound.Read(resp, maxConfigBytes)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %w", errNotJSON, err)
	}
	return nil
}

// Failures of a fetch that are not the outbound policy's.
var (
	errAnswered = errors.New("an error status")
	errNotJSON  = errors.New("not the JSON expected")
)

// fetchReason is what a page says of a failed fetch: never the LMS's own
// words, the status it answered, the transport's error or the decoder's.
func fetchReason(err error) string {
	switch {
	case errors.Is(err, errAnswered):
		return "it answered with an error"
	case errors.Is(err, errNotJSON):
		return "its answer is not the JSON expected"
	}
	return outbound.Reason(err)
}

// registrationRefusal is a refused registration: its class (an Err*
// sentinel), what the page says, and the cause only the log keeps.
type registrationRefusal struct {
	class error
	said  string
	cause error
}

func refusedAs(class error, said string, cause error) error {
	return &registrationRefusal{class: class, said: said, cause: cause}
}

func (r *registrationRefusal) Error() string {
	if r.cause == nil {
		return r.class.Error() + ": " + r.said
	}
	return r.class.Error() + ": " + r.said + " (" + outside.Trim(r.cause.Error(), 500) + ")"
}

func (r *registrationRefusal) Unwrap() []error { return []error{r.class, r.cause} }

// publicDetail is what a refusal page says of err: a registration's
// refusal without its cause.
func publicDetail(err error) string {
	var r *registrationRefusal
	if errors.As(err, &r) {
		return r.class.Error() + ": " + r.said
	}
	return err.Error()
}

// toolConfiguration is the tool's registration request.
func toolConfiguration(base string) map[string]any {
	base = strings.TrimRight(base, "/")
	host := base
	if u, err := url.Parse(base); err == nil {
		host = u.Host
	}
	return map[string]any{
		"application_type": "web", "response_types": []string{"id_token"}, "grant_types": []string{"implicit", "client_credentials"},
		"initiate_login_uri": base + LoginPath, "redirect_uris": []string{base + LaunchPath}, "jwks_uri": base + JWKSPath,
		"token_endpoint_auth_method": "private_key_jwt", "scope": NRPSScope, "client_name": "Video editor (ssobridge)",
		claimToolConfig: map[string]any{
			"domain": host, "target_link_uri": base + LaunchPath,
			"claims":   []string{"sub", "email", "given_name", "family_name", "name"},
			"messages": []map[string]any{{"type": messageResourceLink}, {"type": MessageDeepLinking}},
		},
	}
}

// registration is the LMS's answer the tool keeps.
type registration struct {
	ClientID   string `json:"client_id"`
	ToolConfig struct {
		DeploymentID string `json:"deployment_id"`
	} `json:"https://purl.imsglobal.org/spec/lti-tool-configuration"`
}

// postRegistration registers the tool at the LMS's registration endpoint
// with the registration token as bearer.
func (w *Way) postRegistration(ctx context.Context, pc platformConfiguration, token, base string) (registration, error) {
	var reg registration
	body, err := json.Marshal(toolConfiguration(base))
	if err != nil {
		return reg, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, pc.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return reg, refusedAs(ErrRegistrationRefused, "its registration endpoint is not a URL", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if err := w.fetchJSON(req, &reg); err != nil {
		return reg, refusedAs(ErrRegistrationRefused, "its registration endpoint refused or could not be reached: "+fetchReason(err), err)
	}
	// A client id with a line break could not be told apart in the
	// record's key (lti.Records), so it is no client id to keep.
	if reg.ClientID == "" || len(reg.ClientID) > store.MaxKey || len(reg.ToolConfig.DeploymentID) > store.MaxKey || strings.ContainsAny(reg.ClientID, "\r\n") {
		return reg, refusedAs(ErrRegistrationRefused, "its answer holds no usable client_id", nil)
	}
	return reg, nil
}

// register is GET /lti/register: the LMS opens the registration URL with
// openid_configuration and registration_token. The code is spent at its
// first use, so a URL reaches and registers one LMS at most; every
// refusal keeps nothing.
func (w *Way) register(c echo.Context) error {
	ctx := c.Request().Context()
	q := c.QueryParams()
	cfgURL := q.Get("openid_configuration")
	frameable(c, nonEmpty(Origin(cfgURL))) // the LMS shows the page in its own
	wayin.NoStore(c)
	var code registrationCode
	if err := w.sealer.OpenJSON("registration", q.Get("code"), &code); err != nil || !w.k.Now().Before(code.Expires) {
		return w.registrationRefused(c, ErrRegistrationCode)
	}
	// Spent at its first use, whatever comes of it: a code makes the
	// bridge reach one LMS once, never again.
	switch err := w.k.UseOnce(ctx, registrationKind, code.ID, code.Expires); {
	case errors.Is(err, store.ErrUsed):
		return w.registrationRefused(c, fmt.Errorf("%w: it was used already", ErrRegistrationCode))
	case err != nil:
		return err
	}
	pc, err := w.readConfiguration(ctx, cfgURL)
	if err != nil {
		return w.registrationRefused(c, err)
	}
	reg, err := w.postRegistration(ctx, pc, q.Get("registration_token"), w.k.BaseURL(c))
	if err != nil {
		return w.registrationRefused(c, err)
	}
	name := store.Cut(strings.TrimSpace(pc.Platform.ProductFamilyCode), maxProductCode)
	if name == "" {
		name = "LMS"
	}
	name += " (" + strings.TrimPrefix(strings.TrimPrefix(Origin(pc.Issuer), "https://"), "http://") + ")"
	p := Registered{Name: name, Issuer: pc.Issuer, ClientID: reg.ClientID, DeploymentID: reg.ToolConfig.DeploymentID,
		AuthURL: pc.AuthorizationEndpoint, JWKSURL: pc.JWKSURI, TokenURL: pc.TokenEndpoint, EmailDomains: code.EmailDomains,
		CreateAccounts: code.CreateAccounts, RegisteredAt: w.k.Now(), RegisteredBy: code.By}
	if err := w.Registry.AddPlatform(ctx, p); err != nil {
		if errors.Is(err, ErrPlatformTaken) {
			return w.registrationRefused(c, refusedAs(ErrRegistrationRefused, "this LMS (its issuer and client id) is registered already", nil))
		}
		return err
	}
	w.logger().Info("LTI: an LMS registered the tool (Dynamic Registration)", "lms", p.Name, "issuer", p.Issuer, "client_id", p.ClientID, "by", p.RegisteredBy)
	ownScript(c)
	noSwitch(c)
	return w.k.Render(c, http.StatusOK, locale.Msg("The video editor is registered"), func(pg views.Page) templ.Component {
		pg.Script = "/static/register-close.js"
		return registeredPage(pg, registeredData{LMS: p.Name})
	})
}

// registrationRefused records a refused registration and answers its
// page (400; the reason is the LMS admin's to read).
func (w *Way) registrationRefused(c echo.Context, err error) error {
	noSwitch(c)
	r := wayin.Refused(err, "lti_registration_refused")
	r.Status, r.Info.Refusal, r.Info.Wording = http.StatusBadRequest, views.RefusedInvalid, registrationWording()
	r.Info.Detail, r.Info.Public = publicDetail(err), true
	return w.k.Refuse(c, "LTI registration refused", "LTI registration", "", r)
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
