package lti_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/ssobridge/ssobridge/wayin/lti"
)

// refusals are the classes every refused login or launch is one of.
var refusals = []error{lti.ErrUnknownPlatform, lti.ErrBadRequest, lti.ErrBadState, lti.ErrReplayed, lti.ErrFlowExpired,
	lti.ErrInvalid, lti.ErrClock, lti.ErrNoEmail, lti.ErrKeysUnavailable}

func refusedWithAClass(err error) bool {
	for _, r := range refusals {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

// Any login parameters either go to the platform's authorization endpoint
// (its origin, with state and nonce) or are refused with a class.
func FuzzLogin(f *testing.F) {
	fx := setup(f)
	f.Add(fx.plat.Issuer, "learner", base+"/lti/launch", "hint", fx.plat.ClientID, fx.plat.DeploymentID)
	f.Add(fx.plat.Issuer, "x", "https://bridge.test:443/x", "", "", "")
	f.Add("", "", "", "", "", "")
	f.Add(fx.plat.Issuer, "a&b=c", "https://bridge.test/open?return_to=/editor#x", "\x00", fx.plat.ClientID, "deployment-0")
	f.Fuzz(func(t *testing.T, iss, hint, target, msgHint, clientID, deployment string) {
		q := url.Values{"iss": {iss}, "login_hint": {hint}, "target_link_uri": {target}, "lti_message_hint": {msgHint},
			"client_id": {clientID}, "lti_deployment_id": {deployment}}
		to, flow, err := fx.tool.Login(context.Background(), base, q)
		if err != nil {
			if !refusedWithAClass(err) {
				t.Fatalf("refused without a class: %v", err)
			}
			return
		}
		u, perr := url.Parse(to)
		if perr != nil || !strings.HasPrefix(to, fx.plat.AuthURL()+"?") {
			t.Fatalf("sent elsewhere: %q", to)
		}
		got := u.Query()
		if got.Get("state") != flow.State || got.Get("nonce") != flow.Nonce || got.Get("login_hint") != hint || got.Get("redirect_uri") != base+"/lti/launch" {
			t.Fatalf("the request does not carry the flow and hint: %q", to)
		}
	})
}

// Any posted id_token and state is refused with a class, unless it is a
// launch the platform signed for this browser's login, which names the
// platform's user.
func FuzzLaunch(f *testing.F) {
	fx := setup(f)
	flow, err := loginFlow(fx)
	if err != nil {
		f.Fatal(err)
	}
	good := fx.plat.IDToken(learner, flow.Nonce)
	f.Add(good, flow.State)
	f.Add(good[:len(good)-3], flow.State)
	f.Add(strings.Replace(good, ".", "..", 1), flow.State)
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", flow.State)
	f.Add("", "")
	f.Fuzz(func(t *testing.T, token, state string) {
		id, err := fx.tool.Launch(context.Background(), base, []lti.Flow{flow}, url.Values{"id_token": {token}, "state": {state}})
		if err != nil {
			if !refusedWithAClass(err) {
				t.Fatalf("refused without a class: %v", err)
			}
			return
		}
		if id.Subject == "" || id.Email == "" || id.Platform.Issuer != fx.plat.Issuer {
			t.Fatalf("accepted a launch that names no one: %+v", id)
		}
	})
}

func loginFlow(fx fixture) (lti.Flow, error) {
	_, flow, err := fx.tool.Login(context.Background(), base, fx.plat.LoginForm("learner"))
	return flow, err
}
