package samlsso_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ssobridge/ssobridge/config"
	"github.com/ssobridge/ssobridge/config/configtest"
	"github.com/ssobridge/ssobridge/wayin/samlsso"
)

func TestSettingsRefusals(t *testing.T) {
	configtest.AssertRefused(t, []config.Sectioner{samlsso.Section()}, []configtest.Refusal{
		configtest.Refused("saml metadata twice", "saml:\n  idp_metadata_url: https://idp.example/md\n  idp_metadata_file: /etc/hosts\n", nil, "saml.idp_metadata_url", "not both"),
		configtest.Refused("saml metadata over http", "saml:\n  idp_metadata_url: http://idp.example/md\n", nil, "saml.idp_metadata_url", "https URL"),
		configtest.Refused("saml metadata file missing", "saml:\n  idp_metadata_file: /nonexistent/idp.xml\n", nil, "saml.idp_metadata_file", "cannot read"),
		configtest.Refused("saml email domain with an @", "saml:\n  idp_metadata_url: https://idp.example/md\n  email_domains: partner.example kim@school.test\n", nil,
			"saml.email_domains", `"kim@school.test" is not a domain`),
		configtest.Refused("saml refresh too often", "saml:\n  idp_metadata_url: https://idp.example/md\n  metadata_refresh: 5s\n", nil, "saml.metadata_refresh", "1m to 24h"),
		configtest.Refused("saml certificate without its key", "saml:\n  idp_metadata_url: https://idp.example/md\n  sp_cert_file: /etc/hosts\n", nil, "saml.sp_cert_file", "both"),
		configtest.Refused("saml no display name", "saml:\n  idp_metadata_url: https://idp.example/md\n  display_name: \" \"\n", nil, "saml.display_name", "sign-in button"),
		configtest.Refused("saml refresh from the environment, not a duration", "", []string{"SSOBRIDGE_SAML_METADATA_REFRESH=hourly"}, "saml.metadata_refresh", "duration"),
	})
}

// The bridge's entity ID is saml.entity_id, else its metadata URL on the
// public URL; the ACS is on the public URL too.
func TestEntityIDAndACS(t *testing.T) {
	cfg, err := config.Parse([]byte("server:\n  public_url: https://sso.partner.example\nsaml:\n  idp_metadata_url: https://idp.example/md\n"), nil, samlsso.Section())
	require.NoError(t, err)
	assert.Equal(t, "https://sso.partner.example/saml/metadata", samlsso.EntityID(cfg))
	assert.Equal(t, "https://sso.partner.example/saml/acs", samlsso.ACSURL(cfg))
	assert.Equal(t, []string{"saml"}, []string{samlsso.Module{}.Sources(cfg)[0].ID})
	cfg, err = config.Parse([]byte("saml:\n  idp_metadata_url: https://idp.example/md\n  entity_id: urn:bridge\n"), nil, samlsso.Section())
	require.NoError(t, err)
	assert.Equal(t, "urn:bridge", samlsso.EntityID(cfg))
	assert.Empty(t, samlsso.Module{}.Sources(config.Defaults(samlsso.Section())), "off: no source")
}
