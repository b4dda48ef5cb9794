package samlsso_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	dsig "github.com/russellhaering/goxmldsig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/internal/samlidptest"
	"github.com/ssobridge/ssobridge/store"
	"github.com/ssobridge/ssobridge/store/sqlstore"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

const (
	entityID = "https://bridge.test/saml/metadata"
	acsURL   = "https://bridge.test/saml/acs"
	email    = "ada.lovelace@school.test"
)

type fixture struct {
	idp   *samlidptest.IdP
	store store.Store
	sp    *samlsso.SP
	cfg   samlsso.Config
}

// setup runs an IdP with one user, Ada, and a service provider registered
// at it; mod changes the SP's configuration.
func setup(t testing.TB, mod func(*samlsso.Config)) *fixture {
	t.Helper()
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "s.db"), time.Now)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	f := &fixture{idp: samlidptest.Start(t), store: st}
	f.idp.AddUser(t, samlidptest.User{Name: "ada", Password: "analytical", Email: email, GivenName: "Ada", Surname: "Lovelace",
		Groups: []string{"staff", "bridge-admins"}})
	f.cfg = samlsso.Config{MetadataURL: f.idp.MetadataURL(), EntityID: entityID, ACSURL: acsURL, GroupsAttribute: "eduPersonAffiliation",
		AdminGroup: "bridge-admins", Skew: 30 * time.Second, Used: st, RetryEvery: time.Millisecond}
	if mod != nil {
		mod(&f.cfg)
	}
	f.sp = f.newSP(t, f.cfg)
	md, err := f.sp.Metadata()
	require.NoError(t, err)
	f.idp.AddService(t, "bridge", md)
	require.NoError(t, f.sp.Refresh(context.Background()))
	return f
}

func (f *fixture) newSP(t testing.TB, cfg samlsso.Config) *samlsso.SP {
	t.Helper()
	sp, err := samlsso.New(cfg)
	require.NoError(t, err)
	return sp
}

// signIn starts a sign-in at sp and signs Ada in at the IdP in a browser
// of its own: the flow and the response form.
func signIn(t testing.TB, sp *samlsso.SP) (samlsso.Flow, url.Values) {
	t.Helper()
	u, flow, err := sp.Start(context.Background(), "/editor/projects/1")
	require.NoError(t, err)
	form, err := samlidptest.SignIn(browser(t), u, "ada", "analytical")
	require.NoError(t, err)
	assert.Equal(t, acsURL, form.Action)
	assert.Equal(t, flow.Relay, form.Values.Get("RelayState"), "the RelayState comes back as sent")
	return flow, form.Values
}

func browser(t testing.TB) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second}
}

func TestSignIn(t *testing.T) {
	f := setup(t, nil)
	flow, form := signIn(t, f.sp)
	assert.LessOrEqual(t, len(flow.Relay), 80, "RelayState fits the binding's 80 bytes")
	id, err := f.sp.Finish(context.Background(), []samlsso.Flow{{Relay: "other", RequestID: "id-other"}, flow}, form)
	require.NoError(t, err)
	assert.Equal(t, email, id.Email, "the emailAddress NameID")
	assert.Equal(t, "Ada", id.GivenName, "givenName by its OID")
	assert.Equal(t, "Lovelace", id.FamilyName, "sn by its OID")
	assert.Equal(t, []string{"staff", "bridge-admins"}, id.Groups)
	assert.True(t, id.Admin)
	assert.False(t, id.Unsolicited)
	assert.Equal(t, "/editor/projects/1", id.Flow.Next)
}

func TestAssertionSignedAlone(t *testing.T) {
	f := setup(t, nil)
	flow, form := signIn(t, f.sp)
	doc := decode(t, form)
	require.NotNil(t, signature(doc.Root()), "the IdP signs the Response")
	doc.Root().RemoveChild(signature(doc.Root()))
	id, err := f.sp.Finish(context.Background(), []samlsso.Flow{flow}, encode(t, form, doc))
	require.NoError(t, err)
	assert.Equal(t, email, id.Email)
}

func TestAttributeNames(t *testing.T) {
	f := setup(t, func(c *samlsso.Config) {
		c.EmailAttribute, c.FirstNameAttribute, c.LastNameAttribute, c.GroupsAttribute = "mail", "cn", "uid", "groups"
	})
	flow, form := signIn(t, f.sp)
	id, err := f.sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
	require.NoError(t, err)
	assert.Equal(t, email, id.Email, "mail by its FriendlyName")
	assert.Equal(t, "", id.GivenName, "the IdP sends no cn")
	assert.Equal(t, "ada", id.FamilyName, "uid, as configured")
	assert.Empty(t, id.Groups, "no attribute named groups")
	assert.False(t, id.Admin)

	f = setup(t, func(c *samlsso.Config) { c.EmailAttribute = "workEmail" })
	flow, form = signIn(t, f.sp)
	_, err = f.sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
	assert.ErrorIs(t, err, samlsso.ErrInvalid)
	assert.ErrorContains(t, err, "saml.email_attribute")
}

// TestRefusals: each answer the bridge must not take, built from a real
// response of the IdP, is refused with its class.
// refusal is a response the SP must refuse, and why.
type refusal struct {
	name  string
	alter func(t testing.TB, doc *etree.Document) // the response XML
	flows func(flow samlsso.Flow) []samlsso.Flow  // what the browser holds
	form  func(form url.Values)
	want  error
	why   error // the library's reason, when it names one
}

func TestRefusals(t *testing.T) {
	f := setup(t, nil)
	for _, tt := range refusals() {
		t.Run(tt.name, func(t *testing.T) { refuse(t, f, tt) })
	}
}

// refusals are the forged, replayed, misdirected and malformed responses.
func refusals() []refusal {
	return []refusal{
		{name: "content edited", want: samlsso.ErrInvalid, why: saml.ErrInvalidSignature, alter: func(t testing.TB, doc *etree.Document) {
			nameID(t, doc).SetText("mallory@evil.test")
		}},
		{name: "content edited, assertion signed alone", want: samlsso.ErrInvalid, why: saml.ErrInvalidSignature, alter: func(t testing.TB, doc *etree.Document) {
			doc.Root().RemoveChild(signature(doc.Root()))
			nameID(t, doc).SetText("mallory@evil.test")
		}},
		{name: "signatures stripped", want: samlsso.ErrInvalid, alter: func(t testing.TB, doc *etree.Document) {
			doc.Root().RemoveChild(signature(doc.Root()))
			a := assertion(t, doc)
			a.RemoveChild(signature(a))
		}},
		{name: "signed by another key", want: samlsso.ErrInvalid, why: saml.ErrInvalidSignature, alter: func(t testing.TB, doc *etree.Document) {
			doc.Root().RemoveChild(signature(doc.Root()))
			a := assertion(t, doc)
			a.RemoveChild(signature(a))
			nameID(t, doc).SetText("mallory@evil.test")
			resign(t, doc, a)
		}},
		{name: "wrapping: an unsigned assertion before the signed one", want: samlsso.ErrInvalid, alter: func(t testing.TB, doc *etree.Document) {
			doc.Root().RemoveChild(signature(doc.Root()))
			a := assertion(t, doc)
			doc.Root().InsertChildAt(a.Index(), evil(a))
		}},
		{name: "wrapping: an unsigned assertion after the signed one", want: samlsso.ErrInvalid, alter: func(t testing.TB, doc *etree.Document) {
			doc.Root().RemoveChild(signature(doc.Root()))
			doc.Root().AddChild(evil(assertion(t, doc)))
		}},
		{name: "wrapping: the signed assertion inside an unsigned one", want: samlsso.ErrInvalid, alter: func(t testing.TB, doc *etree.Document) {
			doc.Root().RemoveChild(signature(doc.Root()))
			a := assertion(t, doc)
			e := evil(a)
			doc.Root().InsertChildAt(a.Index(), e)
			doc.Root().RemoveChild(a)
			e.CreateElement("saml:Advice").AddChild(a)
		}},
		{name: "wrapping: the signed response inside an unsigned one", want: samlsso.ErrInvalid, alter: func(t testing.TB, doc *etree.Document) {
			signed := doc.Root()
			e := evil(assertion(t, doc))
			outer := signed.Copy()
			for _, c := range outer.ChildElements() {
				if c.Tag == "Signature" || c.Tag == "Assertion" {
					outer.RemoveChild(c)
				}
			}
			outer.CreateAttr("ID", "id-outer")
			outer.CreateElement("samlp:Extensions").AddChild(signed)
			outer.AddChild(e)
			doc.SetRoot(outer)
		}},
		{name: "a DTD", want: samlsso.ErrInvalid, alter: func(t testing.TB, doc *etree.Document) {
			doc.InsertChildAt(0, etree.NewDirective(`DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]`))
		}},
		{name: "another browser's sign-in", want: samlsso.ErrBadState, flows: func(samlsso.Flow) []samlsso.Flow {
			return []samlsso.Flow{{Relay: "elsewhere", RequestID: "id-elsewhere", Expires: time.Now().Add(time.Minute)}}
		}},
		{name: "another request under this RelayState", want: samlsso.ErrBadState, why: saml.ErrRequestIDMismatch, flows: func(f samlsso.Flow) []samlsso.Flow {
			f.RequestID = "id-elsewhere"
			return []samlsso.Flow{f}
		}},
		{name: "no flow cookie", want: samlsso.ErrBadState, flows: func(samlsso.Flow) []samlsso.Flow { return nil }},
		{name: "a flow past its time", want: samlsso.ErrFlowExpired, flows: func(f samlsso.Flow) []samlsso.Flow {
			f.Expires = time.Now().Add(-time.Second)
			return []samlsso.Flow{f}
		}},
		{name: "an oversized body", want: samlsso.ErrInvalid, form: func(form url.Values) {
			form.Set("SAMLResponse", strings.Repeat("A", samlsso.MaxResponseBytes+4))
		}},
		{name: "not base64", want: samlsso.ErrInvalid, form: func(form url.Values) { form.Set("SAMLResponse", "<Response/>") }},
		{name: "an artifact", want: samlsso.ErrInvalid, form: func(form url.Values) { form.Set("SAMLart", "AAQAAA") }},
	}
}

// refuse signs in at the IdP, alters what the browser would post as tt
// says, and checks that Finish refuses it for tt's reason.
func refuse(t *testing.T, f *fixture, tt refusal) {
	flow, form := signIn(t, f.sp)
	if tt.alter != nil {
		doc := decode(t, form)
		tt.alter(t, doc)
		form = encode(t, form, doc)
	}
	if tt.form != nil {
		tt.form(form)
	}
	flows := []samlsso.Flow{flow}
	if tt.flows != nil {
		flows = tt.flows(flow)
	}
	id, err := f.sp.Finish(context.Background(), flows, form)
	require.Error(t, err, "accepted as %q", id.Email)
	t.Logf("refused: %v", err)
	assert.ErrorIs(t, err, tt.want)
	if tt.why != nil {
		assert.ErrorIs(t, err, tt.why)
	}
}

func TestAudienceDestinationRecipient(t *testing.T) {
	t.Run("another audience", func(t *testing.T) {
		f := setup(t, nil)
		// Another service provider at the same IdP, whose ACS is the
		// bridge's: its response reaches the bridge, for another audience.
		other := f.cfg
		other.EntityID = "https://other.test/saml/metadata"
		osp := f.newSP(t, other)
		md, err := osp.Metadata()
		require.NoError(t, err)
		f.idp.AddService(t, "other", md)
		require.NoError(t, osp.Refresh(context.Background()))
		flow, form := signIn(t, osp)
		_, err = f.sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
		assert.ErrorIs(t, err, samlsso.ErrInvalid)
		assert.ErrorIs(t, err, saml.ErrAudienceMismatch)
	})
	t.Run("another destination and recipient", func(t *testing.T) {
		// The IdP knows the bridge's entity with another ACS: its
		// response is addressed there, and posted here.
		f := setup(t, func(c *samlsso.Config) { c.ACSURL = "https://elsewhere.test/saml/acs" })
		here := f.cfg
		here.ACSURL = acsURL
		sp := f.newSP(t, here)
		require.NoError(t, sp.Refresh(context.Background()))
		u, flow, err := f.sp.Start(context.Background(), "/")
		require.NoError(t, err)
		form, err := samlidptest.SignIn(browser(t), u, "ada", "analytical")
		require.NoError(t, err)
		require.Equal(t, "https://elsewhere.test/saml/acs", form.Action)
		_, err = sp.Finish(context.Background(), []samlsso.Flow{flow}, form.Values)
		assert.ErrorIs(t, err, samlsso.ErrInvalid)
		assert.ErrorIs(t, err, saml.ErrDestinationMismatch)
		// Signed alone, the assertion's Recipient is what is checked.
		doc := decode(t, form.Values)
		doc.Root().RemoveChild(signature(doc.Root()))
		doc.Root().RemoveAttr("Destination")
		_, err = sp.Finish(context.Background(), []samlsso.Flow{flow}, encode(t, form.Values, doc))
		assert.ErrorIs(t, err, samlsso.ErrInvalid)
		assert.ErrorContains(t, err, "Recipient")
	})
}

func TestTimes(t *testing.T) {
	tests := []struct {
		name  string
		shift time.Duration // the bridge's clock against the IdP's
		want  error
	}{
		{"within the skew allowance, behind", -20 * time.Second, nil},
		{"within the skew allowance, ahead", 20 * time.Second, nil},
		{"expired", 4 * time.Minute, samlsso.ErrExpired},
		{"not yet valid", -10 * time.Minute, samlsso.ErrNotYetValid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := setup(t, nil)
			shifted := f.cfg
			shifted.Now = func() time.Time { return time.Now().Add(tt.shift) }
			sp := f.newSP(t, shifted)
			require.NoError(t, sp.Refresh(context.Background()))
			flow, form := signIn(t, f.sp)
			flow.Expires = time.Now().Add(time.Hour) // the flow's own time is not the point here
			_, err := sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

func TestReplay(t *testing.T) {
	f := setup(t, nil)
	flow, form := signIn(t, f.sp)
	_, err := f.sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
	require.NoError(t, err)
	_, err = f.sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
	assert.ErrorIs(t, err, samlsso.ErrReplayed, "the same browser")
	// Another instance on the same store.
	other := f.newSP(t, f.cfg)
	require.NoError(t, other.Refresh(context.Background()))
	_, err = other.Finish(context.Background(), []samlsso.Flow{flow}, form)
	assert.ErrorIs(t, err, samlsso.ErrReplayed, "another instance")
}

func TestIdPInitiated(t *testing.T) {
	for _, allowed := range []bool{false, true} {
		f := setup(t, func(c *samlsso.Config) { c.AllowIDPInitiated = allowed })
		form := unsolicited(t, f)
		id, err := f.sp.Finish(context.Background(), nil, form)
		if !allowed {
			assert.ErrorIs(t, err, samlsso.ErrBadState, "unsolicited while IdP-initiated sign-in is off")
			continue
		}
		require.NoError(t, err)
		assert.True(t, id.Unsolicited)
		assert.Equal(t, email, id.Email)
	}
}

// unsolicited signs Ada in at the IdP and has it send an IdP-initiated
// response (its shortcut for the bridge).
func unsolicited(t testing.TB, f *fixture) url.Values {
	t.Helper()
	c := browser(t)
	u, _, err := f.sp.Start(context.Background(), "/")
	require.NoError(t, err)
	_, err = samlidptest.SignIn(c, u, "ada", "analytical") // opens the IdP's session
	require.NoError(t, err)
	f.idp.AddShortcut(t, "bridge", entityID)
	form, err := samlidptest.Unsolicited(c, f.idp.URL+"/login/bridge")
	require.NoError(t, err)
	require.Empty(t, decode(t, form.Values).Root().SelectAttrValue("InResponseTo", ""))
	return form.Values
}

func TestMetadataUnavailableThenBack(t *testing.T) {
	f := setup(t, nil)
	f.idp.SetDown(true)
	sp := f.newSP(t, f.cfg)
	assert.ErrorIs(t, sp.Refresh(context.Background()), samlsso.ErrUnavailable)
	_, _, err := sp.Start(context.Background(), "/")
	assert.ErrorIs(t, err, samlsso.ErrUnavailable)
	assert.ErrorIs(t, sp.Ready(context.Background()), samlsso.ErrUnavailable)

	f.idp.SetDown(false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	back := make(chan error, 1)
	go sp.Watch(ctx, time.Hour, func(err error) { back <- err })
	select {
	case err := <-back:
		require.NoError(t, err, "the watch reports the metadata readable")
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not read the metadata again")
	}
	require.NoError(t, sp.Ready(context.Background()))
	flow, form := signIn(t, sp)
	_, err = sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
	assert.NoError(t, err)

	// Down again: the metadata read last stays in use.
	f.idp.SetDown(true)
	assert.ErrorIs(t, sp.Refresh(context.Background()), samlsso.ErrUnavailable)
	assert.NoError(t, sp.Ready(context.Background()))
}

func TestCertificateRollover(t *testing.T) {
	f := setup(t, nil)
	f.idp.Rollover(t)
	// The IdP now signs with a key the metadata read at start does not
	// list: the signature failure reads the metadata again, and the
	// response is taken without a restart.
	flow, form := signIn(t, f.sp)
	id, err := f.sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
	require.NoError(t, err)
	assert.Equal(t, email, id.Email)

	// From a file, the file is the truth: a response signed with a key
	// it does not list stays refused.
	g := setup(t, nil)
	file := filepath.Join(t.TempDir(), "idp.xml")
	require.NoError(t, writeMetadata(g.idp.MetadataURL(), file))
	fromFile := g.cfg
	fromFile.MetadataURL, fromFile.MetadataFile = "", file
	sp := g.newSP(t, fromFile)
	require.NoError(t, sp.Refresh(context.Background()))
	g.idp.Rollover(t)
	flow, form = signIn(t, sp)
	_, err = sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
	assert.ErrorIs(t, err, saml.ErrInvalidSignature)
	require.NoError(t, writeMetadata(g.idp.MetadataURL(), file))
	_, err = sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
	assert.NoError(t, err, "the file, replaced, is read again after the failure")
}

func TestMetadata(t *testing.T) {
	f := setup(t, nil)
	md, err := f.sp.Metadata()
	require.NoError(t, err)
	var ed saml.EntityDescriptor
	require.NoError(t, xmlUnmarshal(md, &ed))
	assert.Equal(t, entityID, ed.EntityID)
	require.Len(t, ed.SPSSODescriptors, 1)
	d := ed.SPSSODescriptors[0]
	require.Len(t, d.AssertionConsumerServices, 1)
	assert.Equal(t, saml.HTTPPostBinding, d.AssertionConsumerServices[0].Binding)
	assert.Equal(t, acsURL, d.AssertionConsumerServices[0].Location)
	assert.Equal(t, []saml.NameIDFormat{saml.EmailAddressNameIDFormat}, d.NameIDFormats)
	assert.Empty(t, d.KeyDescriptors, "no key configured: none published")
	assert.True(t, ed.ValidUntil.IsZero(), "no validUntil: a saved copy does not expire")
	assert.NotZero(t, ed.CacheDuration)
	assert.False(t, *d.AuthnRequestsSigned)

	key, cert := samlidptest.KeyPair(t, "bridge")
	signed := f.cfg
	signed.Key, signed.Certificate = key, cert
	sp := f.newSP(t, signed)
	md, err = sp.Metadata()
	require.NoError(t, err)
	var signedED saml.EntityDescriptor
	require.NoError(t, xmlUnmarshal(md, &signedED))
	assert.True(t, *signedED.SPSSODescriptors[0].AuthnRequestsSigned)
	assert.Contains(t, string(md), base64.StdEncoding.EncodeToString(cert.Raw))
	// Its AuthnRequests are signed, and the IdP checks them against the
	// metadata it was given. (The test IdP's login form drops the
	// redirect's signature, so the browser signs in there first.)
	c := browser(t)
	u, _, err := f.sp.Start(context.Background(), "/")
	require.NoError(t, err)
	_, err = samlidptest.SignIn(c, u, "ada", "analytical")
	require.NoError(t, err)
	f.idp.AddService(t, "bridge", md)
	require.NoError(t, sp.Refresh(context.Background()))
	u, flow, err := sp.Start(context.Background(), "/")
	require.NoError(t, err)
	q, _ := url.Parse(u)
	assert.Equal(t, dsig.RSASHA256SignatureMethod, q.Query().Get("SigAlg"))
	assert.NotEmpty(t, q.Query().Get("Signature"))
	form, err := samlidptest.SignIn(c, u, "", "")
	require.NoError(t, err)
	_, err = sp.Finish(context.Background(), []samlsso.Flow{flow}, form.Values)
	assert.NoError(t, err)
	// A request whose signature does not verify is refused by the IdP.
	tampered := strings.Replace(u, "Signature=", "Signature=AAAA", 1)
	_, err = samlidptest.SignIn(c, tampered, "", "")
	assert.ErrorContains(t, err, "400")
}

func TestCheckXML(t *testing.T) {
	tests := []struct {
		name, doc string
		ok        bool
	}{
		{"plain", `<?xml version="1.0"?><a><b/></a>`, true},
		{"doctype", `<!DOCTYPE a><a/>`, false},
		{"entity", `<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>`, false},
		{"processing instruction", `<a><?php x ?></a>`, false},
		{"deep", strings.Repeat("<a>", 65) + strings.Repeat("</a>", 65), false},
		{"not XML", `<a>`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := samlsso.CheckXML([]byte(tt.doc))
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, samlsso.ErrInvalid)
			}
		})
	}
}

// FuzzFinish: whatever arrives as the SAMLResponse, the parse ends with
// one of the refusal classes and never takes it.
func FuzzFinish(f *testing.F) {
	// Signature failures read the metadata again at most once a minute
	// here, as they would in service.
	fx := setup(f, func(c *samlsso.Config) { c.RetryEvery = time.Minute })
	flow, form := signIn(f, fx.sp)
	seed := decode(f, form).Root()
	doc := etree.NewDocument()
	doc.SetRoot(seed)
	genuine, err := doc.WriteToBytes()
	require.NoError(f, err)
	taken := 0
	f.Add(genuine)
	f.Add([]byte(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol"/>`))
	f.Add([]byte(`<!DOCTYPE a [<!ENTITY a "b">]><a>&a;</a>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		form := url.Values{"SAMLResponse": {base64.StdEncoding.EncodeToString(doc)}, "RelayState": {flow.Relay}}
		id, err := fx.sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
		if err == nil {
			// What the IdP signed, once.
			if taken++; taken > 1 || id.Email != email {
				t.Fatalf("took %q (%d times): %q", id.Email, taken, doc)
			}
			return
		}
		for _, class := range []error{samlsso.ErrInvalid, samlsso.ErrBadState, samlsso.ErrExpired, samlsso.ErrNotYetValid,
			samlsso.ErrReplayed, samlsso.ErrDenied} {
			if errors.Is(err, class) {
				return
			}
		}
		t.Fatalf("an error of no class: %v", err)
	})
}

// BenchmarkFinishHostile: how long the refusal of a hostile body of the
// largest size taken (256 KiB of base64) takes, beside a genuine response
// checked in full (its replay refused after the first).
func BenchmarkFinishHostile(b *testing.B) {
	fx := setup(b, nil)
	flow, form := signIn(b, fx.sp)
	raw := (samlsso.MaxResponseBytes / 4) * 3
	bodies := map[string][]byte{
		"deep nesting":        []byte(strings.Repeat("<a>", raw/3)),
		"entity declarations": []byte(`<!DOCTYPE r [` + strings.Repeat(`<!ENTITY a "&a;&a;">`, raw/21) + `]><r>&a;</r>`),
		"many attributes":     []byte(`<r ` + strings.Repeat(`a="1" `, raw/6-2) + `/>`),
		"one long text":       []byte(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">` + strings.Repeat("x", raw-120) + `</samlp:Response>`),
		"many unsigned assertions": []byte(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion">` +
			strings.Repeat(`<saml:Assertion ID="x"><saml:Subject/></saml:Assertion>`, raw/60) + `</samlp:Response>`),
	}
	for name, doc := range bodies {
		b.Run(name, func(b *testing.B) {
			f := url.Values{"SAMLResponse": {base64.StdEncoding.EncodeToString(doc)}, "RelayState": {flow.Relay}}
			require.LessOrEqual(b, len(f.Get("SAMLResponse")), samlsso.MaxResponseBytes)
			for b.Loop() {
				if _, err := fx.sp.Finish(context.Background(), []samlsso.Flow{flow}, f); err == nil {
					b.Fatal("taken")
				}
			}
		})
	}
	b.Run("genuine response", func(b *testing.B) {
		for b.Loop() {
			_, _ = fx.sp.Finish(context.Background(), []samlsso.Flow{flow}, form)
		}
	})
}

func TestLoadKeyPair(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, blockType string, der []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o600))
		return p
	}
	key, cert := samlidptest.KeyPair(t, "bridge")
	other, _ := samlidptest.KeyPair(t, "other")
	certFile := write("cert.pem", "CERTIFICATE", cert.Raw)
	keyFile := write("key.pem", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key))
	otherFile := write("other.pem", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(other))

	signer, got, err := samlsso.LoadKeyPair(certFile, keyFile)
	require.NoError(t, err)
	assert.Equal(t, cert.Raw, got.Raw)
	assert.Equal(t, &key.PublicKey, signer.Public())
	_, _, err = samlsso.LoadKeyPair(certFile, otherFile)
	assert.ErrorContains(t, err, "does not match", "a key that is not the certificate's")
	_, _, err = samlsso.LoadKeyPair(certFile, filepath.Join(dir, "missing.pem"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
