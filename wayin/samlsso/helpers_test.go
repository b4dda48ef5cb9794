package samlsso_test

import (
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"os"
	"testing"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
	"github.com/stretchr/testify/require"
)

// decode is the response XML of a form.
func decode(t testing.TB, form url.Values) *etree.Document {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(form.Get("SAMLResponse"))
	require.NoError(t, err)
	doc := etree.NewDocument()
	require.NoError(t, doc.ReadFromBytes(raw))
	return doc
}

// encode is form with doc as its response.
func encode(t testing.TB, form url.Values, doc *etree.Document) url.Values {
	t.Helper()
	b, err := doc.WriteToBytes()
	require.NoError(t, err)
	out := url.Values{}
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	out.Set("SAMLResponse", base64.StdEncoding.EncodeToString(b))
	return out
}

// signature is el's own enveloped signature, nil when it has none.
func signature(el *etree.Element) *etree.Element {
	for _, c := range el.ChildElements() {
		if c.Tag == "Signature" {
			return c
		}
	}
	return nil
}

func assertion(t testing.TB, doc *etree.Document) *etree.Element {
	t.Helper()
	for _, c := range doc.Root().ChildElements() {
		if c.Tag == "Assertion" {
			return c
		}
	}
	t.Fatal("no assertion in the response")
	return nil
}

func nameID(t testing.TB, doc *etree.Document) *etree.Element {
	t.Helper()
	el := assertion(t, doc).FindElement("./Subject/NameID")
	require.NotNil(t, el)
	return el
}

// evil is an unsigned copy of the assertion a, for Mallory.
func evil(a *etree.Element) *etree.Element {
	e := a.Copy()
	e.RemoveChild(signature(e))
	e.CreateAttr("ID", "id-evil")
	if n := e.FindElement("./Subject/NameID"); n != nil {
		n.SetText("mallory@evil.test")
	}
	return e
}

// resign signs the assertion a again, enveloped, with a key and
// certificate of the attacker's own (the certificate in its KeyInfo).
func resign(t testing.TB, doc *etree.Document, a *etree.Element) {
	t.Helper()
	ctx := dsig.NewDefaultSigningContext(dsig.RandomKeyStoreForTest())
	ctx.Canonicalizer = dsig.MakeC14N10ExclusiveCanonicalizerWithPrefixList("")
	signed, err := ctx.SignEnveloped(a)
	require.NoError(t, err)
	doc.Root().InsertChildAt(a.Index(), signed)
	doc.Root().RemoveChild(a)
}

// writeMetadata saves the IdP's metadata as it is now to a file.
func writeMetadata(from, file string) error {
	resp, err := http.Get(from)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o600)
}

func xmlUnmarshal(b []byte, v any) error { return xml.Unmarshal(b, v) }
